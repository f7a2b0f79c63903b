/**
 * Scorers of your own (`--scorer ./my-scorer.mjs`): each module's default export is called with
 * the record and the parsed answer and returns an object of named numbers in [0, 1]
 * (metrics/custom.ts checks it). They run in the scoring workers, inside the record's time
 * budget: a scorer that throws, returns a bad value or runs over the budget is that record's
 * `scoring_error`, naming the scorer; the run goes on.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkCustomScores } from '../../metrics/custom.ts';
import { UserError } from '../core/errors.ts';

/** A scorer as the workers are handed it: what it is called in messages, and its module's URL. */
export interface ScorerSpec {
  name: string;
  url: string;
}

/** What a scorer is given of a record (plain JSON values). */
export interface ScorerRecord {
  record_id: unknown;
  metadata: Record<string, unknown>;
  context: unknown;
  question: unknown;
  schema: unknown;
  ground_truth: unknown;
}

export type ScorerFn = (record: ScorerRecord, answer: unknown) => unknown;

export interface LoadedScorer {
  name: string;
  fn: ScorerFn;
}

/** `--scorer` paths as specs; a file that does not exist is one line (exit 2). */
export function scorerSpecs(paths: string[], cwd = process.cwd()): ScorerSpec[] {
  const seen = new Set<string>();
  return paths.map((p) => {
    const file = resolve(cwd, p);
    if (!existsSync(file) || !statSync(file).isFile())
      throw new UserError(`--scorer ${p}: no such file (${file})`, 2);
    if (seen.has(file)) throw new UserError(`--scorer ${p}: given twice`, 2);
    seen.add(file);
    return { name: basename(file), url: pathToFileURL(file).href };
  });
}

/** The scorers' default exports; a module that does not load or exports no function throws, naming it. */
export async function loadScorers(specs: ScorerSpec[]): Promise<LoadedScorer[]> {
  const out: LoadedScorer[] = [];
  for (const s of specs) {
    let mod: { default?: unknown };
    try {
      // In a bundle's worker, code from the V8 code cache has no import(): its loader's is used.
      const g = globalThis as { __sobImport?: (url: string) => Promise<unknown> };
      mod = (await (g.__sobImport ? g.__sobImport(s.url) : import(s.url))) as { default?: unknown };
    } catch (e) {
      throw new UserError(
        `--scorer ${s.name}: cannot load it: ${e instanceof Error ? e.message : String(e)}`,
        2,
      );
    }
    if (typeof mod.default !== 'function')
      throw new UserError(
        `--scorer ${s.name}: its default export is ${mod.default === undefined ? 'missing' : typeof mod.default}, not a function (export default function (record, answer) { return { name: 0.5 }; })`,
        2,
      );
    out.push({ name: s.name, fn: mod.default as ScorerFn });
  }
  return out;
}

/** Every scorer's numbers for one record, or an Error whose message names the scorer and what it did. */
export function runScorers(
  scorers: LoadedScorer[],
  record: ScorerRecord,
  answer: unknown,
  phase?: (scorer: number) => void,
): Record<string, number> {
  const out: Record<string, number> = {};
  scorers.forEach((s, i) => {
    phase?.(i);
    let got: unknown;
    try {
      got = s.fn(record, answer);
    } catch (e) {
      throw new Error(
        `scorer ${s.name} threw: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
      );
    }
    let values: Record<string, number>;
    try {
      values = checkCustomScores(got);
    } catch (e) {
      throw new Error(`scorer ${s.name} ${e instanceof Error ? e.message : String(e)}`);
    }
    for (const [k, v] of Object.entries(values)) {
      if (Object.hasOwn(out, k)) throw new Error(`scorer ${s.name}: "${k}" is named by another scorer too`);
      out[k] = v;
    }
  });
  return out;
}
