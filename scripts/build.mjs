#!/usr/bin/env node
/**
 * Builds the JavaScript that `bin/sob.js` runs: every TypeScript module of the product (src/,
 * metrics/, sources/, judges/) transpiled one to one into dist/, the same tree one folder deeper,
 * its relative `.ts` imports rewritten to `.js` (JSON data imports are inlined); packages stay
 * imports. Then dist/commands.json, what `sob --help` lists without loading any command, and
 * dist/.stamp last: `bin/sob.js` runs dist/ only while no source is newer than that stamp.
 * Run by `npm ci`/`npm install` (prepare) and before `npm test` (pretest); about a second.
 */
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { SOURCE_DIRS } from './dist-fresh.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist');

function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative imports of our own modules stay imports (of the .js beside them); data is inlined. */
const ownModulesExternal = {
  name: 'own-modules-external',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/.*\.(ts|js|mjs)$/ }, (args) =>
      args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
    );
  },
};

const entryPoints = SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d), []));
// Written aside, then swapped in: a `sob` (or another build) running meanwhile never sees half a dist/.
const NEXT = `${OUT}.${process.pid}.tmp`;
rmSync(NEXT, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: NEXT,
  outbase: ROOT,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [ownModulesExternal],
  logLevel: 'warning',
});

// What `sob --help` shows of each command, read from the commands themselves.
const { commandSummaries } = await import(join(NEXT, 'src/cli/main.js'));
writeFileSync(join(NEXT, 'commands.json'), `${JSON.stringify(await commandSummaries(), null, 1)}\n`);
writeFileSync(join(NEXT, '.stamp'), `${new Date().toISOString()}\n`);
const OLD = `${OUT}.${process.pid}.old`;
if (existsSync(OUT)) renameSync(OUT, OLD);
renameSync(NEXT, OUT);
rmSync(OLD, { recursive: true, force: true });
process.stderr.write(`built ${entryPoints.length} modules into ${relative(process.cwd(), OUT) || '.'}\n`);
