/**
 * `manifest.json`, in two kinds (docs/formats.md "manifest.json"):
 *
 * - the **benchmark manifest**, written by `sob build` beside the records (and copied into a
 *   `sob eval` folder's `evaluation/`): per source the record count and total weight, which the
 *   leaderboard reads as its coverage denominators and weights;
 * - the **run manifest**, written by `sob run` in its run directory (at the start, and again at
 *   the end of each session): the model, the settings that make the run's identity, the
 *   benchmark answered, counts, usage and the sessions.
 *
 * Each carries its own `format_version`; a file without one is version 1.
 */
import { UserError } from '../errors.ts';
import { checkVersion, type Format, stamped } from './version.ts';

export const BENCHMARK_MANIFEST: Format = { name: 'benchmark-manifest', version: 1 };
export const RUN_MANIFEST: Format = { name: 'run-manifest', version: 1 };

export interface SourceTotals {
  records: number;
  weight: number;
}

/** Lines of a records file that no source total counts, by reason. */
export interface Uncounted {
  not_json: number;
  no_source: number;
  no_complexity: number;
}

export interface BenchmarkManifest {
  format_version?: number;
  /** Per source (`text`, `image`, `audio`, `schema`). */
  sources: Record<string, SourceTotals>;
  records: number;
  /** Present when some lines of the file are not counted in `sources` (so `records` is not the line count). */
  uncounted_lines?: Uncounted;
  created: string;
  tool_version: string;
  /** The records file this manifest describes (its name, relative to the manifest). */
  benchmark?: string;
  /** Records that gave no `schema_complexity`: it was derived from their schema's shape. */
  schema_complexity_derived?: number;
  /** Records kept though their ground truth fails their own schema (`sob build extractbench`). */
  ground_truth_invalid?: number;
  /** Of those, records whose schema was widened to admit their gold (`metadata.schema_widened`). */
  schema_widened?: number;
  /** Per document (`sob build extractbench`): its record, pages and transcript length. */
  documents?: { record_id: string; pages: number; transcript_chars: number }[];
  /** The document of most pages and the one of the longest transcript. */
  largest?: Record<string, { record_id: string; pages: number; transcript_chars: number }>;
  /** A version written by `sob review --apply` (docs/review.md): the gold's version, the one it
   * came from, and every change with its decision. */
  gold?: {
    version: number;
    previous?: { benchmark: string; sha256: string; version: number };
    decisions?: string;
    decisions_sha256?: string;
    changes?: unknown[];
  };
}

export type RunStatus = 'running' | 'complete' | 'incomplete' | 'interrupted' | 'failed' | string;

/** One `sob run` session over the directory. */
export interface RunSession {
  started_at?: string;
  ended_at?: string | null;
  status?: RunStatus;
  [k: string]: unknown;
}

export interface RunManifest {
  format_version?: number;
  tool: 'sob-eval' | string;
  tool_version: string;
  git_commit: string | null;
  /** The model id as given (`openai:gpt-4.1-mini`); names the evaluation folder. */
  model: string;
  provider: string;
  provider_model: string;
  provider_settings: Record<string, unknown>;
  /** What a resumed run must match (model, settings, benchmark). */
  identity: Record<string, unknown>;
  settings: {
    temperature?: number;
    max_tokens?: number;
    constrained?: boolean;
    source: string | null;
    epoch?: number;
    limit: number | null;
    [k: string]: unknown;
  };
  benchmark: {
    path: string;
    sha256: string;
    rejected: { line: number; record_id: string | null; reason: string }[];
    schema_complexity_derived: number;
  };
  prompt: { file: string | null; sha256: string; template: string };
  counts: { selected: number; answered: number; failed_this_session: number; pending: number };
  usage_this_session: { input_tokens: number; output_tokens: number; cost: number };
  started_at: string;
  ended_at: string | null;
  status: RunStatus;
  sessions: RunSession[];
}

/** A benchmark manifest as written: `format_version` first. */
export function benchmarkManifestDoc(m: Omit<BenchmarkManifest, 'format_version'>): BenchmarkManifest {
  return stamped(BENCHMARK_MANIFEST, m);
}

/** A run manifest as written: `format_version` first. */
export function runManifestDoc(m: Omit<RunManifest, 'format_version'>): RunManifest {
  return stamped(RUN_MANIFEST, m);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A parsed run manifest, its version checked (`file` names it): a `UserError` when it is not a
 * JSON object, a `FormatVersionError` (exit 2) when a newer sob-eval wrote it. Fields a version-1
 * file may lack (an older writer) are left for the reader to default.
 */
export function readRunManifest(value: unknown, file: string): Partial<RunManifest> {
  if (!isObject(value)) throw new UserError(`${file}: not a run manifest (not a JSON object)`);
  checkVersion(value, RUN_MANIFEST, file);
  return value as Partial<RunManifest>;
}

/** A parsed benchmark manifest's version checked (`file` names it); the shape is the reader's to check. */
export function checkBenchmarkManifest(value: unknown, file: string): number {
  return checkVersion(value, BENCHMARK_MANIFEST, file);
}
