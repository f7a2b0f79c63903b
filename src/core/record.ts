/**
 * The response record (docs/scoring.md "Input: a response record") and the benchmark record (the same
 * without `candidate_response`).
 *
 * Two views:
 * - `scoringView`: what the scorer needs from a lossless PyValue line, as lenient as the
 *   reference (a missing block is empty), but a block of the wrong type is an error, not a crash.
 * - `BenchmarkRecord` / `ResponseRecord` (zod, in record-shape.ts): the strict shape our own
 *   builder and runner write. Apart, so the scorer's threads never load zod.
 */
import type { PyObject, PyValue } from './pyjson.ts';

export const MODALITIES = ['text', 'image', 'audio'] as const;
export type Modality = (typeof MODALITIES)[number];
export const COMPLEXITIES = ['easy', 'medium', 'hard'] as const;
export type Complexity = (typeof COMPLEXITIES)[number];

export function isModality(v: unknown): v is Modality {
  return typeof v === 'string' && (MODALITIES as readonly string[]).includes(v);
}

/**
 * A benchmark record's `metadata.source`: a modality, or `schema` for the schema track's records
 * (JSONSchemaBench, a user's own schemas, the SchemaBench-style probes), scored for compliance.
 */
export const SOURCES = [...MODALITIES, 'schema'] as const;
export type Source = (typeof SOURCES)[number];

export function isSource(v: unknown): v is Source {
  return typeof v === 'string' && (SOURCES as readonly string[]).includes(v);
}

export interface ScoringView {
  metadata: PyObject;
  schema: PyValue | undefined;
  groundTruth: PyValue | undefined;
  candidate: PyValue | undefined;
  /** The schema's and the candidate's source text, when the reader kept them (a cache key and a
   * fast path to the plain form). */
  schemaText?: string;
  candidateText?: string;
  /** `output.raw_response`, the model's exact text, when the runner kept it. */
  raw?: PyValue;
  /** The schema as a plain JS value, when the reader already has it (see `SCORING_SKIP_KEYS`). */
  schemaPlain?: unknown;
  /** The ground truth's source text, when the reader skipped building it (`SCORING_SKIP_KEYS`). */
  groundTruthText?: string;
  /** `eval_info.schema_rejected`: the provider refused the schema (no answer to score). */
  schemaRejected?: boolean;
}

/** The second-level keys whose raw text the scorer can use (see `parseLine`). */
export const SCORING_SPAN_KEYS: ReadonlySet<string> = new Set([
  'input.json_schema',
  'output.candidate_response',
  'output.ground_truth',
]);
/**
 * Second-level values the scorer does not build: the context and question (never read; checked as
 * JSON, not decoded), the schema and the ground truth (built from their raw text once per distinct
 * text: every model's file repeats them).
 */
export const SCORING_SKIP_KEYS: ReadonlySet<string> = new Set([
  'input.context',
  'input.question',
  'input.json_schema',
  'output.ground_truth',
]);

const EMPTY: PyObject = new Map();

/** The parts of a response line the scorer reads, or an error saying what is wrong. */
export function scoringView(
  line: PyValue,
  spans?: Map<string, string>,
): { ok: true; view: ScoringView } | { ok: false; error: string } {
  if (!(line instanceof Map)) return { ok: false, error: 'a response record must be a JSON object' };
  // Each block optional (the reference reads them with `.get(key, {})`), an object when present;
  // checked by hand, not by zod: this runs once per record on the hot path.
  const block = (key: 'metadata' | 'input' | 'output'): PyObject | string => {
    const v = line.get(key);
    if (v === undefined || v === null) return EMPTY;
    return v instanceof Map ? v : `"${key}" must be a JSON object`;
  };
  const metadata = block('metadata');
  if (typeof metadata === 'string') return { ok: false, error: metadata };
  const input = block('input');
  if (typeof input === 'string') return { ok: false, error: input };
  const output = block('output');
  if (typeof output === 'string') return { ok: false, error: output };
  const evalInfo = line.get('eval_info');
  return {
    ok: true,
    view: {
      schemaRejected: evalInfo instanceof Map && evalInfo.get('schema_rejected') === true,
      metadata,
      schema: input.get('json_schema'),
      groundTruth: output.get('ground_truth'),
      candidate: output.get('candidate_response'),
      raw: output.get('raw_response'),
      schemaText: spans?.get('input.json_schema'),
      candidateText: spans?.get('output.candidate_response'),
      groundTruthText: spans?.get('output.ground_truth'),
      // Set later for a schema seen for the first time: present from the start, every view has
      // one shape (a field added to some views made the scorer's optimized code start over).
      schemaPlain: undefined,
    },
  };
}
