#!/usr/bin/env node
/**
 * The longest functions of the product, by lines, read with the TypeScript compiler's parser.
 *
 *   node scripts/longest-functions.mjs [--top N] [--over LINES] [folder ...]
 *
 * Folders default to src, sources, judges and metrics. A function is every function declaration,
 * method, constructor, accessor, function expression and arrow function; its length runs from its
 * first line to its last, the lines of functions nested in it included (a closure that holds
 * twenty helpers is as long as all of them). One line a function, longest first:
 * `lines  file:line  name`. `--over LINES` lists every function longer than LINES instead of the
 * top N and exits 1 when there is one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
let top = 5;
let over;
const folders = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--over') over = Number(args[++i]);
  else folders.push(args[i]);
}
if (folders.length === 0) folders.push('src', 'sources', 'judges', 'metrics');

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

/** A readable name for a function node: its own, its variable's or property's, or `(anonymous)`. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    return p.name.getText();
  if (p && ts.isCallExpression(p))
    return `(callback of ${p.expression.getText().replace(/\s+/g, ' ').slice(0, 40)})`;
  return '(anonymous)';
}

const found = [];
for (const folder of folders) {
  for (const file of files(join(ROOT, folder))) {
    const text = readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        found.push({ lines: end - start + 1, where: `${relative(ROOT, file)}:${start}`, name: nameOf(node) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}
found.sort((a, b) => b.lines - a.lines || a.where.localeCompare(b.where));
const shown = over === undefined ? found.slice(0, top) : found.filter((f) => f.lines > over);
for (const f of shown) console.log(`${String(f.lines).padStart(5)}  ${f.where}  ${f.name}`);
if (over !== undefined) process.exitCode = shown.length > 0 ? 1 : 0;
