/**
 * The unified leaderboard (paper Eq. 4-7, docs/scoring.md "Leaderboard"). Pure math over per
 * (model, modality) weighted summaries and the benchmark's per-source totals.
 */

import { floatSum } from '../src/core/pysum.ts';
import { MODALITIES, type Modality } from '../src/core/record.ts';
import type { FieldStat } from './field-table.ts';
import type { Usage } from './usage.ts';

/** The official SOB set: per-source total schema-complexity weight and record count. */
export const SOB_TOTALS: BenchmarkTotals = {
  weight: { text: 13054, image: 602, audio: 343 },
  records: { text: 5000, image: 209, audio: 115 },
  origin: { text: 'sob', image: 'sob', audio: 'sob' },
};

/**
 * Per-source totals of the benchmark (the coverage denominators and the source weights W_u), and
 * where each came from: `sob` (the official constants), `manifest:<path>`, `records` (distinct
 * record ids in the eval_records.jsonl files present) or `summaries` (no per-record rows: the
 * largest summary's record count, weight assumed 2 per record).
 */
export interface BenchmarkTotals {
  weight: Record<Modality, number>;
  records: Record<Modality, number>;
  origin?: Record<Modality, string>;
}

/** One source's totals as the leaderboard's outputs state them. */
export interface SourceTotals {
  records: number;
  weight: number;
  origin: string;
}

/**
 * What a folder shows of one source, to tell whether it is the released SOB set's:
 * the models' record counts and the response files their summaries name, and (when per-record
 * rows exist) the distinct record ids and their total weight.
 */
export interface SourceEvidence {
  /** Each model's summary on this source: `num_records` and `response_file`. */
  summaries: { records: number; responseFile?: string }[];
  /** Distinct record ids over the models' eval_records.jsonl, when any exist. */
  distinctIds?: number;
  /** Their total schema-complexity weight (one weight per id). */
  weight?: number;
}

const SOB_RESPONSE_DIR: Record<Modality, string> = {
  text: 'text_responses',
  image: 'images_responses',
  audio: 'audio_responses',
};

/**
 * The rule for applying the SOB constants to a source without being asked: the source is
 * recognisably the released SOB set's when
 *  1. the largest model record count is exactly SOB's (text 5000, image 209, audio 115) and no
 *     model has more; and
 *  2. either the per-record rows present hold exactly SOB's records by count and weight (image:
 *     209 distinct ids of total weight 602), or, with no per-record rows (the SOB release ships
 *     text and audio as summaries only), a summary of that size names a response file in the SOB
 *     repository's layout (`data/text_responses/response_<model>.jsonl`, `data/images_responses/`,
 *     `data/audio_responses/`).
 * Returns why it is (for the user to read), or null.
 */
export function recogniseSobSource(source: Modality, ev: SourceEvidence): string | null {
  const n = SOB_TOTALS.records[source];
  const w = SOB_TOTALS.weight[source];
  let most = -1;
  for (const x of ev.summaries) most = Math.max(most, x.records);
  if (most !== n) return null;
  if (ev.distinctIds !== undefined) {
    if (ev.distinctIds !== n || Math.abs((ev.weight ?? 0) - w) > 1e-9) return null;
    return `${n} distinct record ids of total weight ${w}, as the released SOB ${source} set`;
  }
  const dir = `/data/${SOB_RESPONSE_DIR[source]}/`;
  const inLayout = (f: string | undefined) => {
    if (f === undefined) return false;
    const p = `/${f.replace(/\\/g, '/')}`;
    const at = p.lastIndexOf(dir);
    return at >= 0 && p.endsWith('.jsonl') && !p.slice(at + dir.length).includes('/');
  };
  if (!ev.summaries.some((x) => x.records === n && inLayout(x.responseFile))) return null;
  return `${n} records per model, summaries of the SOB repository's data/${SOB_RESPONSE_DIR[source]}`;
}

/** The six aggregated metrics, as (summary key, our name); Perfect Response is separate. */
export const LEADERBOARD_METRICS = [
  ['leaf_value_em', 'value_accuracy'],
  ['value_token_f1', 'faithfulness'],
  ['schema_compliance', 'json_pass'],
  ['hier_path_recall', 'path_recall'],
  ['path_set_f1', 'structure_coverage'],
  ['type_precision', 'type_safety'],
] as const;
/** Perfect Response aggregates over these sources only (the paper omits audio). */
export const PERFECT_MODALITIES: readonly Modality[] = ['text', 'image'];

export type LeaderboardMetric = (typeof LEADERBOARD_METRICS)[number][1] | 'perfect';

/** What the leaderboard needs of one model on one source. */
export interface SourceResult {
  /** Records scored (`num_records`). */
  records: number;
  /**
   * Records that count toward coverage: distinct record ids known to the benchmark
   * (`data_quality.distinct_record_ids` less `benchmark.unknown_ids`, when the summary has them);
   * default `records`.
   */
  evaluated?: number;
  /** Weighted means (`summary.overall_weighted.metrics.<key>.mean`) by summary key. */
  weighted: Record<string, number>;
  /** Their 95% bootstrap intervals, when the summary has them. */
  ci?: Record<string, [number, number]>;
  /** The summary's `lenient` block (`sob score --match`), when it has one. */
  lenient?: LenientSource;
  /** `--scorer`: the scorers of your own, weighted means and their 95% intervals by name. */
  custom?: { weighted: Record<string, number>; ci: Record<string, [number, number]> };
}

/** One custom score of a model: aggregated as the six metrics are (Eq. 4), and per source with its interval. */
export interface CustomColumn {
  value: number;
  per_modality: Partial<
    Record<Modality, { mean: number; ci95_low: number | null; ci95_high: number | null }>
  >;
}

export interface LeaderboardRow {
  model: string;
  display_name: string;
  /** The input mode its answers were asked in (`sob eval --input`), when rows' modes differ. */
  input?: string;
  /** Its prompt template's file name (`default`: the built-in), when rows' prompts differ. */
  prompt?: string;
  overall: number;
  overall_raw: number;
  coverage: number;
  modalities: Modality[];
  value_accuracy: number | null;
  faithfulness: number | null;
  json_pass: number | null;
  path_recall: number | null;
  structure_coverage: number | null;
  type_safety: number | null;
  perfect: number | null;
  per_modality: Partial<Record<Modality, Record<LeaderboardMetric | 'n', number | null>>>;
  /** The benchmark totals used for coverage and weights, with where each came from. */
  benchmark_totals: Record<Modality, SourceTotals>;
  /** What each source's summary says about its own scoring, where it says it. */
  data_quality?: Partial<Record<Modality, RowQuality>>;
  /** Exact and lenient side by side, when every source was scored with `--match`. */
  lenient?: LenientColumns;
  /** Tokens, cost and timings of the model's answers, where its response files were found. */
  usage?: Usage;
  /** Which fields to trust: this model's per-field accuracy, worst first (from fields.jsonl). */
  fields?: Omit<FieldStat, 'model'>[];
  /** `--scorer`: each scorer-of-your-own number by name (not in Overall). */
  custom?: Record<string, CustomColumn>;
}

/** Our metric names -> weighted mean and its 95% interval (when the summary has one). */
export type SourceMetrics = Record<
  string,
  { mean: number | null; ci95_low: number | null; ci95_high: number | null }
>;

/** What one summary's `lenient` block says (weighted means by key, their intervals). */
export interface LenientSource {
  policy: string;
  judge: string | null;
  /** `summary.overall_weighted.metrics.<key>.mean` of the lenient block. */
  weighted: Record<string, number>;
  ci: Record<string, [number, number]>;
  /** The same without the judge (only when a judge answered). */
  withoutJudge?: Record<string, number>;
}

export interface LenientModality {
  value_accuracy: number;
  faithfulness: number;
  field_f1: number | null;
  /** Lenient minus exact Value Accuracy on this source. */
  gap: number;
  ci?: Record<string, [number, number]>;
}

export interface LenientColumns {
  /** The policy (and judge) the summaries were scored with; several joined by `, ` if mixed. */
  policy: string;
  judge: string | null;
  value_accuracy: number;
  faithfulness: number;
  field_f1: number | null;
  overall: number;
  overall_raw: number;
  /** Lenient minus exact Value Accuracy: how much of the loss is formatting. */
  gap: number;
  /** gap / (1 - exact Value Accuracy): the share of the loss that is formatting (null: no loss). */
  gap_share: number | null;
  /** Ranks by Overall, exact and lenient, among the models with lenient scores; shift = exact - lenient. */
  rank_exact?: number;
  rank_lenient?: number;
  rank_shift?: number;
  without_judge?: { value_accuracy: number; faithfulness: number; overall: number };
  per_modality: Partial<Record<Modality, LenientModality>>;
}

export interface RowQuality {
  /** `sob` | `strict`; `sob` when the summary names none (the reference evaluator's). */
  profile: string;
  duplicate_record_id_count?: number;
  missing_ids?: number;
  unknown_ids?: number;
  /** strict profile, when non-zero: answers that parsed only after recovery (a code fence, text around). */
  lenient_parse_count?: number;
}

/**
 * Eq. 4: sum_u W_u m_u / sum_u W_u over the sources the model has, summed as the reference's
 * `aggregate` does (Python 3.12's `sum`; its W_u are ints, so their sum is exact either way).
 */
function aggregate(pairs: [number, number][]): number | null {
  if (pairs.length === 0) return null;
  const tw = floatSum(pairs.map(([, w]) => w));
  const t = floatSum(pairs.map(([v, w]) => v * w));
  return tw > 0 ? t / tw : 0;
}

export function leaderboardRow(
  model: string,
  displayName: string,
  sources: Partial<Record<Modality, SourceResult>>,
  totals: BenchmarkTotals = SOB_TOTALS,
): LeaderboardRow | null {
  const present = MODALITIES.filter((m) => sources[m] !== undefined);
  const out: Partial<Record<LeaderboardMetric, number | null>> = {};
  for (const [key, name] of LEADERBOARD_METRICS) {
    out[name] = aggregate(
      present
        .filter((m) => key in sources[m]!.weighted)
        .map((m) => [sources[m]!.weighted[key], totals.weight[m]]),
    );
  }
  out.perfect = aggregate(
    present
      .filter((m) => PERFECT_MODALITIES.includes(m) && 'strict_json_em' in sources[m]!.weighted)
      .map((m) => [sources[m]!.weighted.strict_json_em, totals.weight[m]]),
  );
  const avail = [...LEADERBOARD_METRICS.map(([, n]) => out[n]), out.perfect].filter(
    (v): v is number => v !== null && v !== undefined,
  );
  if (avail.length === 0) return null;
  const raw = floatSum(avail) / avail.length;
  // Eq. 7: coverage = records evaluated / records in the benchmark.
  let evaluated = 0;
  let total = 0;
  for (const m of MODALITIES) total += totals.records[m];
  for (const m of present)
    evaluated += Math.min(sources[m]!.evaluated ?? sources[m]!.records, totals.records[m]);
  const coverage = total > 0 ? evaluated / total : 0;

  const perModality: LeaderboardRow['per_modality'] = {};
  for (const m of present) {
    const w = sources[m]!.weighted;
    const row: Record<string, number | null> = {};
    for (const [key, name] of LEADERBOARD_METRICS) row[name] = w[key] ?? null;
    row.perfect = w.strict_json_em ?? null;
    row.n = sources[m]!.records;
    perModality[m] = row as Record<LeaderboardMetric | 'n', number | null>;
  }
  const custom = customColumns(sources, present, totals);
  return {
    model,
    display_name: displayName,
    overall: raw * coverage,
    overall_raw: raw,
    coverage,
    modalities: present,
    value_accuracy: out.value_accuracy ?? null,
    faithfulness: out.faithfulness ?? null,
    json_pass: out.json_pass ?? null,
    path_recall: out.path_recall ?? null,
    structure_coverage: out.structure_coverage ?? null,
    type_safety: out.type_safety ?? null,
    perfect: out.perfect ?? null,
    per_modality: perModality,
    benchmark_totals: totalsWithOrigin(totals),
    ...(custom ? { custom } : {}),
  };
}

/** `--scorer`: each custom name over the sources that have it, W_u-weighted as the six metrics are. */
function customColumns(
  sources: Partial<Record<Modality, SourceResult>>,
  present: Modality[],
  totals: BenchmarkTotals,
): Record<string, CustomColumn> | undefined {
  const names: string[] = [];
  for (const m of present)
    for (const k of Object.keys(sources[m]!.custom?.weighted ?? {})) if (!names.includes(k)) names.push(k);
  if (names.length === 0) return undefined;
  const out: Record<string, CustomColumn> = Object.create(null);
  for (const k of names) {
    const has = present.filter((m) => Object.hasOwn(sources[m]!.custom?.weighted ?? {}, k));
    const per: CustomColumn['per_modality'] = {};
    for (const m of has) {
      const c = sources[m]!.custom!;
      const ci = Object.hasOwn(c.ci, k) ? c.ci[k] : undefined;
      per[m] = { mean: c.weighted[k], ci95_low: ci ? ci[0] : null, ci95_high: ci ? ci[1] : null };
    }
    out[k] = {
      value: aggregate(has.map((m) => [sources[m]!.custom!.weighted[k], totals.weight[m]])) ?? 0,
      per_modality: per,
    };
  }
  return out;
}

/** Per source `{records, weight, origin}` (origin `unknown` when the caller gave none). */
export function totalsWithOrigin(totals: BenchmarkTotals): Record<Modality, SourceTotals> {
  const out = {} as Record<Modality, SourceTotals>;
  for (const m of MODALITIES)
    out[m] = {
      records: totals.records[m],
      weight: totals.weight[m],
      origin: totals.origin?.[m] ?? 'unknown',
    };
  return out;
}

/** Rows sorted by Overall, best first (ties by model name for a stable order). */
export function sortLeaderboard(rows: LeaderboardRow[]): LeaderboardRow[] {
  return [...rows].sort(
    (a, b) => b.overall - a.overall || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
  );
}
