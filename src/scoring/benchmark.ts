/**
 * A benchmark known to `sob score` (a run directory's manifest names it, `sob eval` passes it,
 * `--benchmark <records.jsonl>` gives it): the answers are matched to its records by id, each
 * record's ground truth, schema and weight come from the benchmark (not from the response file),
 * and ids on either side without a partner are reported.
 *
 * The selection is the runner's: records of `source` (a record without a source takes it), the
 * first occurrence of each id, at most `limit`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { deriveComplexity, isObj } from '../core/complexity.ts';
import { UserError } from '../core/errors.ts';
import { parseLine, readLinesSync } from '../core/jsonl.ts';
import type { PyObject } from '../core/pyjson.ts';
import { isSource, type Modality, type Source } from '../core/record.ts';

/** The side file listing a folder's unanswered and unknown ids, when a benchmark is known. */
export const BENCHMARK_IDS = 'benchmark_ids.json';

export interface BenchmarkRef {
  path: string;
  /** The run's `sob run --source`. */
  source?: Source;
  /** The run's `sob run --limit`. */
  limit?: number;
  /** Lines the benchmark check rejected (src/core/benchmark-records.ts): left out, as the run left them. */
  exclude?: number[];
}

/** What the scorer takes from a benchmark record. */
export interface BenchmarkRecord {
  /** Its `metadata.source` (or the run's `--source`): a modality or `schema` (a schema record,
   * scored on the compliance track); unset when it names none. */
  modality?: Source;
  schemaText?: string;
  groundTruthText?: string;
  /** The record's weight fields and source, put over the answer's metadata. */
  schemaComplexity?: unknown;
  difficulty?: unknown;
  /** `metadata.accepted_alternatives` (sob review --apply): right in lenient scoring only. */
  acceptedAlternatives?: unknown;
  /** `metadata.gold_version` (sob review --apply). */
  goldVersion?: unknown;
}

export interface Benchmark {
  path: string;
  /** Computed on first use (`benchmarkSha256`): the workers never need it. */
  sha256?: string;
  records: Map<string, BenchmarkRecord>;
  /** Selected ids per modality, in file order; '' holds the records that name no source (they
   * go with the answers' own modality). */
  ids: Map<Source | '', string[]>;
}

const SPANS: ReadonlySet<string> = new Set(['input.json_schema', 'output.ground_truth']);
const SKIP: ReadonlySet<string> = new Set([
  'input.context',
  'input.question',
  'input.json_schema',
  'output.ground_truth',
]);

const cache = new Map<string, Benchmark>();

/** Reads (once per file version and selection) a benchmark's selected records. */
export function loadBenchmark(ref: BenchmarkRef): Benchmark {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(ref.path);
  } catch {
    throw new UserError(`no such benchmark: ${ref.path}`);
  }
  if (!st.isFile()) throw new UserError(`not a benchmark file: ${ref.path}`);
  const key = `${ref.path}\0${st.size}\0${st.mtimeMs}\0${ref.source ?? ''}\0${ref.limit ?? ''}\0${ref.exclude?.join(',') ?? ''}`;
  const exclude = new Set(ref.exclude ?? []);
  const hit = cache.get(key);
  if (hit) return hit;
  const records = new Map<string, BenchmarkRecord>();
  const ids = new Map<Source | '', string[]>();
  for (const l of readLinesSync(ref.path)) {
    if (ref.limit !== undefined && records.size >= ref.limit) break;
    if (exclude.has(l.line)) continue;
    const p = parseLine(l, SPANS, SKIP);
    if (!p.ok) throw new UserError(`${ref.path}:${l.line}: not JSON: ${p.error}`);
    const md = p.value instanceof Map ? p.value.get('metadata') : undefined;
    const id = md instanceof Map ? md.get('record_id') : undefined;
    if (typeof id !== 'string' || id === '')
      throw new UserError(
        `${ref.path}:${l.line}: not a benchmark record: metadata.record_id must be a string`,
      );
    const meta = md as PyObject;
    const src = meta.get('source');
    if (ref.source && src !== undefined && src !== ref.source) continue;
    if (records.has(id)) continue;
    const modality = isSource(src) ? src : ref.source;
    const schemaText = p.spans?.get('input.json_schema');
    records.set(id, {
      modality,
      schemaText,
      groundTruthText: p.spans?.get('output.ground_truth'),
      schemaComplexity: meta.get('schema_complexity') ?? derivedComplexity(schemaText),
      difficulty: meta.get('difficulty'),
      acceptedAlternatives: meta.get('accepted_alternatives'),
      goldVersion: meta.get('gold_version'),
    });
    const list = ids.get(modality ?? '');
    if (list) list.push(id);
    else ids.set(modality ?? '', [id]);
  }
  const b: Benchmark = { path: ref.path, records, ids };
  if (cache.size >= 4) cache.clear();
  cache.set(key, b);
  return b;
}

/** A record without `schema_complexity` weighs what its schema's shape gives, as `sob build` derives it. */
function derivedComplexity(schemaText: string | undefined): string | undefined {
  if (schemaText === undefined) return undefined;
  try {
    const schema: unknown = JSON.parse(schemaText);
    return isObj(schema) ? deriveComplexity(schema) : undefined;
  } catch {
    return undefined;
  }
}

/** The sha256 of a file (to check a run's benchmark is still the one it answered). */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function benchmarkSha256(b: Benchmark): string {
  b.sha256 ??= fileSha256(b.path);
  return b.sha256;
}

/**
 * The selected ids per modality for one answer file: records that name no source go with
 * `fallback` (the modality the file's own records take: `--modality`, else its path).
 */
export function idsByModality(b: Benchmark, fallback: Modality): Map<Source, string[]> {
  const out = new Map<Source, string[]>();
  for (const [m, ids] of b.ids) {
    const key = m === '' ? fallback : m;
    out.set(key, [...(out.get(key) ?? []), ...ids]);
  }
  return out;
}

/** At most `n` ids for a one-line message, then how many more. */
export function someIds(ids: string[], n = 5): string {
  const shown = ids.slice(0, n).join(', ');
  return ids.length > n ? `${shown}, ... (${ids.length - n} more)` : shown;
}
