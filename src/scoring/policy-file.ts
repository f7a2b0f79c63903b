/**
 * Reads a match policy file (YAML or JSON; `.json` is read as JSON, anything else as YAML,
 * which also reads JSON) and compiles it. Every problem is one line naming the file, the line
 * when known, and the path inside the policy:
 *
 *   policy.yaml:7: fields["line_items[*].amount"].abs_tol: Number must be greater than or equal to 0
 *
 * `default` (or an empty name) is the built-in default policy.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import type { LineCounter, parseDocument } from 'yaml';
import { compilePolicy, defaultPolicy, type Policy, PolicyError } from '../../metrics/match/policy.ts';
import { UserError } from '../core/errors.ts';

/** The YAML library, loaded on first use (a scoring worker without a policy file never needs it). */
const yaml = (): typeof import('yaml') => createRequire(import.meta.url)('yaml');

/** 1-based line of the node at `path` in the document (the deepest that exists), if any. */
function lineOf(
  doc: ReturnType<typeof parseDocument>,
  lc: LineCounter,
  path: (string | number)[],
): number | undefined {
  const { isMap, isSeq } = yaml();
  let node: unknown = doc.contents;
  let line: number | undefined;
  const at = (n: unknown) => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    if (range) line = lc.linePos(range[0]).line;
  };
  at(node);
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === step);
      if (!pair) break;
      at(pair.key);
      node = pair.value;
      at(node);
    } else if (isSeq(node) && typeof step === 'number') {
      node = node.items[step];
      at(node);
    } else break;
  }
  return line;
}

/** Parses and validates a policy document from text; `file` names it in messages. */
export function parsePolicyText(text: string, file: string): Policy {
  const { LineCounter, parseDocument } = yaml();
  const lc = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  let value: unknown;
  if (file.toLowerCase().endsWith('.json')) {
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new UserError(`${file}: not valid JSON: ${(e as Error).message}`);
    }
    doc = parseDocument(text, { lineCounter: lc, uniqueKeys: false });
  } else {
    doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
    const err = doc.errors[0];
    if (err) {
      const line = lc.linePos(err.pos[0]).line;
      throw new UserError(`${file}${line ? `:${line}` : ''}: not valid YAML: ${err.message.split('\n')[0]}`);
    }
    value = doc.toJS({ maxAliasCount: 100 });
  }
  try {
    return compilePolicy(value, basename(file));
  } catch (e) {
    if (!(e instanceof PolicyError)) throw e;
    const line = lineOf(doc, lc, e.problem.path);
    throw new UserError(`${file}${line ? `:${line}` : ''}: ${e.message}`);
  }
}

/** The policy named on a command line: `default`, or a file. */
export function loadPolicy(nameOrFile: string): Policy {
  if (nameOrFile === '' || nameOrFile === 'default') return defaultPolicy();
  if (!existsSync(nameOrFile)) throw new UserError(`no such policy file: ${nameOrFile} (or use "default")`);
  if (!statSync(nameOrFile).isFile()) throw new UserError(`not a file: ${nameOrFile}`);
  return parsePolicyText(readFileSync(nameOrFile, 'utf8'), nameOrFile);
}
