/**
 * The schema compliance track in `sob score`'s files (issue 11, items 3 and 4): what a schema
 * record's row holds, the `schema/<model>/eval_summary.json` of a file's schema records, and the
 * leaderboard over those summaries (`sob leaderboard --track compliance`, JSONSchemaBench's table
 * shape: datasets as columns). Pure: no I/O.
 *
 * How schema records meet the seven SOB metrics: a schema record (`metadata.source` `schema`)
 * has no value to compare unless it carries a ground truth (`metadata.track` `both`, the probes),
 * so it is scored on the compliance track only and written to its own folder, `schema/<model>/`.
 * It never enters a text, image or audio summary, so it can neither drag Value Accuracy to 0 nor
 * count as a Perfect Response, and the unified leaderboard (which reads the three SOB sources)
 * never sees it. A record with a ground truth is also scored with the SOB metrics (the text
 * source's rules: its coverage gate), and the schema folder's summary then has a `summary` block
 * over those records alone.
 */

import type { EvalSummaryOut, SchemaSummaryOut } from '../src/core/formats/eval-summary.ts';
import { aggregateCompliance, type ComplianceRow, type ComplianceSummary } from './compliance.ts';
import { type BenchmarkSummary, benchmarkBlock } from './summary.ts';
import type { Usage } from './usage.ts';

/** Fields that hold counts: written as JSON integers (bigints for `dumpsPy`), as Python would. */
const INT_KEYS = new Set([
  'n',
  'count',
  'of',
  'records',
  'violation_count',
  'applicable',
  'satisfied',
  'samples',
  'seed',
]);
/** Objects whose values are all counts. */
const INT_MAPS = new Set(['violation_keywords']);

/**
 * A plain JSON value with its counts as bigints, so `dumpsPy` writes `3`, not `3.0`; rates and
 * means stay floats. Objects are rebuilt without a prototype: a dataset named `__proto__` or
 * `constructor` is a key like any other.
 */
export function withIntCounts(value: unknown, key = '', parent = ''): unknown {
  if (typeof value === 'number')
    return Number.isInteger(value) && (INT_KEYS.has(key) || INT_MAPS.has(parent)) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map((x) => withIntCounts(x, key, parent));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(value)) out[k] = withIntCounts(v, k, key);
    return out;
  }
  return value;
}

/** The data quality of one file's schema records. */
export interface TrackCounts {
  /** Answers that do not parse as JSON (refused schemas not counted). */
  parse_failures: number;
  /** eval_info.schema_rejected: the provider refused the schema in constrained mode. */
  schema_rejected: number;
  /** Schemas our validator cannot compile: no answer to them can be shown valid. */
  uncompilable: number;
  /** Records whose scoring ran out of time or memory (counted as invalid). */
  scoring_errors: number;
}

export function emptyTrackCounts(): TrackCounts {
  return { parse_failures: 0, schema_rejected: 0, uncompilable: 0, scoring_errors: 0 };
}

export interface SchemaFolderInput {
  responseFile: string;
  profile: string;
  /** How the schemas were read (`jsonschemabench`, `dialect`, or `mixed`). */
  protocol: string;
  /** Why (src/core/validator-protocols.ts `protocolReason`). */
  protocolReason?: string;
  /** Records whose schema has a format no value satisfies under its protocol (the first 1,000). */
  unsatisfiable?: { record_id: string; formats: string[] }[];
  unsatisfiableCount?: number;
  modelIds: string[];
  /** One per schema record, in file order. */
  rows: ComplianceRow[];
  counts: TrackCounts;
  distinctIds: number;
  malformedLines: number;
  /** The known benchmark's counts for this folder's source, when one was known. */
  benchmark?: BenchmarkSummary;
  /**
   * `buildSummary` over the records that also have a ground truth (`track: both`), when any:
   * its `summary` block is kept (the SOB metrics of those records).
   */
  sob?: EvalSummaryOut;
  bootstrapSamples: number;
  seed: number;
}

/**
 * `schema/<model>/eval_summary.json`: the record counts, the data quality, and `compliance`:
 * declared coverage, empirical coverage and compliance with bootstrap intervals, partial
 * validity, violation keywords and efficiency, per dataset and overall (`aggregateCompliance`).
 */
export function schemaFolderSummary(input: SchemaFolderInput): SchemaSummaryOut {
  const n = input.rows.length;
  const c = input.counts;
  const out: SchemaSummaryOut = {
    response_file: input.responseFile,
    num_records: BigInt(n),
    model_ids: [...input.modelIds].sort(),
    profile: input.profile,
    track: 'compliance',
    protocol: input.protocol,
    ...(input.protocolReason !== undefined ? { protocol_reason: input.protocolReason } : {}),
    data_quality: {
      json_parse_fail_count: BigInt(c.parse_failures),
      schema_rejected_count: BigInt(c.schema_rejected),
      uncompilable_schema_count: BigInt(c.uncompilable),
      scoring_error_count: BigInt(c.scoring_errors),
      malformed_jsonl_line_count: BigInt(input.malformedLines),
      duplicate_record_id_count: BigInt(n - input.distinctIds),
      distinct_record_ids: BigInt(input.distinctIds),
    },
  };
  if (input.unsatisfiableCount) {
    out.data_quality.unsatisfiable_format_schema_count = BigInt(input.unsatisfiableCount);
    out.unsatisfiable_formats = input.unsatisfiable ?? [];
  }
  if (input.benchmark) out.benchmark = benchmarkBlock(input.benchmark);
  if (input.sob && input.sob.summary !== undefined) out.summary = input.sob.summary;
  out.compliance = withIntCounts(
    aggregateCompliance(input.rows, { bootstrapSamples: input.bootstrapSamples, seed: input.seed }),
  );
  return out;
}

// -- The leaderboard (`sob leaderboard --track compliance`) -------------------------------------

/** One model's compliance summary as read back from its folder. */
export interface ComplianceEntry {
  model: string;
  display_name: string;
  summary: ComplianceSummary;
  /** The folder's `num_records`. */
  records: number;
  profile: string | null;
  /** The response file the summary was scored from (`response_file`), when it says. */
  responseFile?: string;
  /** The summary's `protocol` (null in summaries written before there was a choice: dialect). */
  protocol?: string | null;
  /** The summary's `protocol_reason`, when it says. */
  protocolReason?: string;
  /** The summary's `unsatisfiable_formats`, when any. */
  unsatisfiable?: { record_id: string; formats: string[] }[];
}

export type ComplianceGroup = ComplianceSummary['overall'];

export interface ComplianceBoardRow {
  model: string;
  display_name: string;
  records: number;
  profile: string | null;
  protocol: string | null;
  protocolReason?: string;
  unsatisfiable?: { record_id: string; formats: string[] }[];
  overall: ComplianceGroup;
  /** By dataset name (a Map: names are the user's). */
  datasets: Map<string, ComplianceGroup>;
  /** Tokens, cost and timings of the model's answers, where its response file was found. */
  usage?: Usage;
}

export interface ComplianceBoard {
  /** Every dataset any model has, in code-point order: the table's columns. */
  datasets: string[];
  rows: ComplianceBoardRow[];
  /** Whether any model recorded timings (the efficiency table is shown only then). */
  timed: boolean;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Rows sorted by overall empirical coverage, then compliance, then declared coverage (all
 * descending), then model folder name; the datasets are the union of every model's.
 */
export function complianceBoard(entries: ComplianceEntry[]): ComplianceBoard {
  const names = new Set<string>();
  let timed = false;
  const rows: ComplianceBoardRow[] = entries.map((e) => {
    const datasets = new Map<string, ComplianceGroup>();
    for (const [name, g] of Object.entries(e.summary.datasets)) {
      datasets.set(name, g);
      names.add(name);
    }
    const eff = e.summary.overall.efficiency;
    if (eff.ttft_ms.n + eff.tpot_ms.n + eff.latency_ms.n > 0) timed = true;
    return {
      model: e.model,
      display_name: e.display_name,
      records: e.records,
      profile: e.profile,
      protocol: e.protocol ?? null,
      ...(e.protocolReason ? { protocolReason: e.protocolReason } : {}),
      ...(e.unsatisfiable ? { unsatisfiable: e.unsatisfiable } : {}),
      overall: e.summary.overall,
      datasets,
    };
  });
  rows.sort(
    (a, b) =>
      b.overall.empirical_coverage.rate - a.overall.empirical_coverage.rate ||
      b.overall.compliance.rate - a.overall.compliance.rate ||
      b.overall.declared_coverage.rate - a.overall.declared_coverage.rate ||
      cmp(a.model, b.model),
  );
  return { datasets: [...names].sort(cmp), rows, timed };
}

/** The three rates of the paper's coverage table, in its order. */
export const RATES = [
  ['declared_coverage', 'Declared coverage'],
  ['empirical_coverage', 'Empirical coverage'],
  ['compliance', 'Compliance'],
] as const;
export type RateKey = (typeof RATES)[number][0];

/** The timings of the efficiency table. */
export const TIMINGS = [
  ['ttft_ms', 'Time to first token (ms)'],
  ['tpot_ms', 'Time per output token (ms)'],
  ['latency_ms', 'Total time (ms)'],
] as const;
export type TimingKey = (typeof TIMINGS)[number][0];
