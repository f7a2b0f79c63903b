/**
 * `eval_summary.json`: one evaluation folder's summary, the reference evaluator's (weighted and
 * plain means with bootstrap intervals, `data_quality`, `error_analysis`) with ours beside it
 * (`profile`, `benchmark`, `compliance`, `lenient`) and `format_version` first (docs/formats.md
 * "eval_summary.json").
 */
import { dumpsPy } from '../pyjson.ts';
import { checkVersion, type Format, VERSION_KEY } from './version.ts';

export const EVAL_SUMMARY: Format = { name: 'eval-summary', version: 1 };

/** One metric's block: its mean and, with the bootstrap, its interval. */
export interface MetricBlock {
  mean: number;
  ci95_low?: number;
  ci95_high?: number;
  [k: string]: unknown;
}

/** A summary as read (plain JSON; the reference's files carry no version). */
export interface EvalSummary {
  format_version?: number;
  response_file?: string;
  profile?: string;
  profile_reason?: string;
  /** `poisson` when the strict profile resampled with the Poisson bootstrap (absent: CPython's draws). */
  bootstrap_method?: string;
  num_records: number;
  model_ids?: string[];
  data_quality?: Record<string, unknown>;
  benchmark?: {
    path?: string;
    sha256?: string;
    records?: number;
    missing_ids?: number;
    unknown_ids?: number;
  };
  summary: {
    overall?: { metrics?: Record<string, MetricBlock> };
    overall_weighted: { metrics: Record<string, MetricBlock> };
  };
  error_analysis?: Record<string, unknown>;
  compliance?: Record<string, unknown>;
  lenient?: Record<string, unknown>;
  [k: string]: unknown;
}

// -- As the scorer builds it (lossless: counts are Python ints, `bigint`) ---------------------

/** One metric of a summary block, as written. */
export type MetricOut = { mean: number; ci95_low: number; ci95_high: number; metric_name: string };

/** One category score (a mean of metrics), as written. */
export type CategoryOut = {
  mean: number;
  ci95_low: number;
  ci95_high: number;
  category_name: string;
  components: readonly string[];
};

/** `summary.overall` or `summary.overall_weighted`, as written. */
export type SummaryBlockOut = {
  n: bigint;
  metrics: Record<string, MetricOut>;
  category_scores: Record<string, CategoryOut>;
  /** The weighted block only. */
  weighting?: string;
  weight_field_priority?: string[];
  difficulty_weights?: Record<string, number>;
};

/** The `benchmark` block (`sob score --benchmark`), as written. */
export type BenchmarkBlockOut = {
  path: string;
  sha256: string;
  records: bigint;
  missing_ids: bigint;
  unknown_ids: bigint;
};

/** A `lenient` block's `overall` / `overall_weighted` (`sob score --match`), as written. */
export type LenientBlockOut = { n: bigint; metrics: Record<string, MetricOut>; weighting?: string };

/** Where the exact Value Accuracy's loss goes (`lenient.loss`), as written. */
export type LossOut = {
  weighting: string;
  exact_loss: number;
  formatting: number;
  held_by_hardening: number;
  rest: number;
  formatting_share: number | null;
  held_by_hardening_share: number | null;
  type_slip_leaves: bigint;
};

/** The summary's `lenient` block (`sob score --match`), as written. */
export type LenientSummaryOut = {
  policy: string;
  judge: string | null;
  summary: { overall: LenientBlockOut; overall_weighted: LenientBlockOut };
  without_judge?: { overall: LenientBlockOut; overall_weighted: LenientBlockOut };
  loss?: LossOut;
  leaves?: Record<string, bigint>;
  matcher_counts?: Record<string, bigint>;
  bootstrap?: { samples: bigint; seeds: Record<string, bigint> };
};

/** A SOB folder's summary as the scorer builds it, before `evalSummaryText` stamps and writes it. */
export type EvalSummaryOut = {
  response_file: string;
  profile?: string;
  profile_reason?: string;
  num_records: bigint;
  model_ids: string[];
  data_quality: Record<string, bigint>;
  benchmark?: BenchmarkBlockOut;
  summary: { overall: SummaryBlockOut; overall_weighted: SummaryBlockOut };
  error_analysis?: {
    top_missing_gt_paths?: { path: string; count: bigint }[];
    top_missing_required_paths?: { path: string; count: bigint }[];
  };
  /** `--match`: the lenient block (`metrics/lenient-summary.ts`). */
  lenient?: LenientSummaryOut;
  /** Schema records beside SOB ones: the compliance track's block. */
  compliance?: unknown;
  /** `--scorer`: the scorers of your own, their means and intervals (metrics/custom.ts). */
  custom_scores?: {
    scorers: string[];
    overall: { n: bigint; metrics: Record<string, MetricOut> };
    overall_weighted: { n: bigint; metrics: Record<string, MetricOut> };
  };
};

/** A `schema/<model>/` folder's summary (the compliance track), as the scorer builds it. */
export type SchemaSummaryOut = {
  response_file: string;
  num_records: bigint;
  model_ids: string[];
  profile: string;
  track: 'compliance';
  protocol: string;
  /** Why that protocol (the default for the data, or --protocol as asked). */
  protocol_reason?: string;
  data_quality: Record<string, bigint>;
  /** Records whose schema has a format no value satisfies under the protocol (the first 1,000). */
  unsatisfiable_formats?: { record_id: string; formats: string[] }[];
  benchmark?: BenchmarkBlockOut;
  /** The SOB metrics of the schema records that also have a ground truth (`track: both`). */
  summary?: EvalSummaryOut['summary'];
  compliance?: unknown;
  lenient?: LenientSummaryOut;
};

/** Any evaluation folder's summary as the scorer builds it. */
export type SummaryOut = EvalSummaryOut | SchemaSummaryOut;

/** The summary file's text: `format_version` first, then the payload (lossless: ints as bigint), indented 2. */
export function evalSummaryText(payload: SummaryOut): string {
  const doc = { [VERSION_KEY]: BigInt(EVAL_SUMMARY.version), ...payload };
  return `${dumpsPy(doc, { indent: 2 })}\n`;
}

/** Checks a parsed summary's version (`where`: the file); throws `FormatVersionError`. */
export function checkEvalSummary(value: unknown, where: string): number {
  return checkVersion(value, EVAL_SUMMARY, where);
}
