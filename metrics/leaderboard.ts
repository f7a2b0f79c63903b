/**
 * The unified leaderboard (paper Eq. 4-7, SPEC.md "Leaderboard"). Pure math over per
 * (model, modality) weighted summaries and the benchmark's per-source totals.
 */
import { MODALITIES, type Modality } from '../src/core/record.ts';

/** The official SOB set: per-source total schema-complexity weight and record count. */
export const SOB_TOTALS: BenchmarkTotals = {
  weight: { text: 13054, image: 602, audio: 343 },
  records: { text: 5000, image: 209, audio: 115 },
};

export interface BenchmarkTotals {
  weight: Record<Modality, number>;
  records: Record<Modality, number>;
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
  /** Weighted means (`summary.overall_weighted.metrics.<key>.mean`) by summary key. */
  weighted: Record<string, number>;
  /** Their 95% bootstrap intervals, when the summary has them. */
  ci?: Record<string, [number, number]>;
}

export interface LeaderboardRow {
  model: string;
  display_name: string;
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
}

/** Eq. 4: sum_u W_u m_u / sum_u W_u over the sources the model has. */
function aggregate(pairs: [number, number][]): number | null {
  if (pairs.length === 0) return null;
  let tw = 0;
  let t = 0;
  for (const [, w] of pairs) tw += w;
  for (const [v, w] of pairs) t += v * w;
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
  let raw = 0;
  for (const v of avail) raw += v;
  raw /= avail.length;
  // Eq. 7: coverage = records evaluated / records in the benchmark.
  let evaluated = 0;
  let total = 0;
  for (const m of MODALITIES) total += totals.records[m];
  for (const m of present) evaluated += Math.min(sources[m]!.records, totals.records[m]);
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
  };
}

/** Rows sorted by Overall, best first (ties by model name for a stable order). */
export function sortLeaderboard(rows: LeaderboardRow[]): LeaderboardRow[] {
  return [...rows].sort(
    (a, b) => b.overall - a.overall || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
  );
}
