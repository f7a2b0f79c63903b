/**
 * Exact and lenient side by side on the leaderboard (issue 10): each model's lenient Value
 * Accuracy and Faithfulness aggregated over sources as the exact ones are (Eq. 4: W_u-weighted
 * over the sources it has), a lenient Overall (the seven aggregates with the lenient Value
 * Accuracy and Faithfulness in place of the exact ones, times the same coverage), the **gap**
 * (lenient minus exact Value Accuracy: the part of the loss that is formatting; what is left,
 * 1 - lenient, is wrong values), the rank shift between the two rankings, and the sensitivity of
 * the ranking to the policy (exact, lenient, lenient without judge: Kendall's tau and the models
 * that move). Pure math over summaries.
 */
import { MODALITIES, type Modality } from '../src/core/record.ts';
import type {
  BenchmarkTotals,
  LeaderboardRow,
  LenientColumns,
  SourceMetrics,
  SourceResult,
} from './leaderboard.ts';
import { compareRankings, kendallTau, type RankComparison, ranksOf } from './match/rank.ts';

function aggregate(pairs: [number, number][]): number {
  let tw = 0;
  let t = 0;
  for (const [v, w] of pairs) {
    tw += w;
    t += v * w;
  }
  return tw > 0 ? t / tw : 0;
}

/** The lenient Overall (raw and coverage-adjusted) with these lenient aggregates in place. */
function lenientOverall(row: LeaderboardRow, va: number, faith: number): { raw: number; overall: number } {
  const rest = [row.json_pass, row.path_recall, row.structure_coverage, row.type_safety, row.perfect];
  const avail = [va, faith, ...rest.filter((v): v is number => v !== null)];
  const raw = avail.reduce((a, b) => a + b, 0) / avail.length;
  return { raw, overall: raw * row.coverage };
}

/**
 * A model's lenient columns, when every source it has carries a lenient block (a model scored
 * leniently on some sources only gets none: its aggregate would not compare).
 */
export function lenientColumns(
  row: LeaderboardRow,
  sources: Partial<Record<Modality, SourceResult>>,
  totals: BenchmarkTotals,
): LenientColumns | undefined {
  const present = MODALITIES.filter((m) => sources[m] !== undefined);
  if (present.length === 0 || present.some((m) => !sources[m]!.lenient)) return undefined;
  const L = (m: Modality) => sources[m]!.lenient!;
  const agg = (get: (m: Modality) => number | undefined) =>
    aggregate(
      present
        .filter((m) => get(m) !== undefined)
        .map((m) => [get(m) as number, totals.weight[m]] as [number, number]),
    );
  const va = agg((m) => L(m).weighted.lenient_value_accuracy);
  const faith = agg((m) => L(m).weighted.lenient_faithfulness);
  const hasF1 = present.every((m) => L(m).weighted.field_f1 !== undefined);
  const exactVa = row.value_accuracy ?? 0;
  const { raw, overall } = lenientOverall(row, va, faith);
  const perModality: LenientColumns['per_modality'] = {};
  for (const m of present) {
    const w = L(m).weighted;
    perModality[m] = {
      value_accuracy: w.lenient_value_accuracy ?? 0,
      faithfulness: w.lenient_faithfulness ?? 0,
      field_f1: w.field_f1 ?? null,
      gap: (w.lenient_value_accuracy ?? 0) - (sources[m]!.weighted.leaf_value_em ?? 0),
      ci: L(m).ci,
    };
  }
  const policies = [...new Set(present.map((m) => L(m).policy))].sort();
  const judges = [...new Set(present.map((m) => L(m).judge ?? ''))].filter((j) => j !== '').sort();
  const out: LenientColumns = {
    policy: policies.join(', '),
    judge: judges.length > 0 ? judges.join(', ') : null,
    value_accuracy: va,
    faithfulness: faith,
    field_f1: hasF1 ? agg((m) => L(m).weighted.field_f1) : null,
    overall,
    overall_raw: raw,
    gap: va - exactVa,
    gap_share: exactVa < 1 ? (va - exactVa) / (1 - exactVa) : null,
    per_modality: perModality,
  };
  if (present.some((m) => L(m).withoutJudge)) {
    const nj = (m: Modality, k: string) => (L(m).withoutJudge ?? L(m).weighted)[k];
    const njVa = agg((m) => nj(m, 'lenient_value_accuracy'));
    const njFaith = agg((m) => nj(m, 'lenient_faithfulness'));
    out.without_judge = {
      value_accuracy: njVa,
      faithfulness: njFaith,
      overall: lenientOverall(row, njVa, njFaith).overall,
    };
  }
  return out;
}

/** Sets each lenient row's exact and lenient rank by Overall (among rows with lenient columns). */
export function rankLenient(rows: LeaderboardRow[]): RankComparison | null {
  const withL = rows.filter((r) => r.lenient);
  if (withL.length === 0) return null;
  const cmp = compareRankings(
    new Map(withL.map((r) => [r.model, r.overall])),
    new Map(withL.map((r) => [r.model, r.lenient!.overall])),
  );
  const byModel = new Map(cmp.shifts.map((s) => [s.model, s]));
  for (const r of withL) {
    const s = byModel.get(r.model)!;
    r.lenient!.rank_exact = s.rank_a;
    r.lenient!.rank_lenient = s.rank_b;
    r.lenient!.rank_shift = s.shift;
  }
  return cmp;
}

/** A source's lenient metrics for its per-source table row (our names -> mean and interval). */
export function lenientSourceMetrics(s: SourceResult): SourceMetrics {
  const out: SourceMetrics = {};
  const l = s.lenient;
  if (!l) return out;
  for (const k of ['lenient_value_accuracy', 'lenient_faithfulness', 'field_f1', 'value_accuracy_gap']) {
    const ci = l.ci[k];
    out[k] = { mean: l.weighted[k] ?? null, ci95_low: ci ? ci[0] : null, ci95_high: ci ? ci[1] : null };
  }
  return out;
}

// -- Sensitivity (`sob leaderboard --sensitivity`) -------------------------------------------

export type RankBy = 'overall' | 'value_accuracy';

export interface SensitivityModel {
  model: string;
  display_name: string;
  /** Score and competition rank under each ranking (null: that ranking has no score). */
  scores: Record<string, number | null>;
  ranks: Record<string, number | null>;
  /** Largest rank change between any two rankings. */
  max_shift: number;
}

export interface Sensitivity {
  rank_by: RankBy;
  /** Rankings compared, in order: `exact`, `lenient`, `lenient_without_judge`. */
  rankings: { name: string; label: string }[];
  /** Kendall's tau-b between each pair of rankings, over the models both rank. */
  tau: { a: string; b: string; tau: number | null; models: number }[];
  /** Every model, biggest mover first (ties by name). */
  models: SensitivityModel[];
  /** Models left out (no lenient scores on every source they have). */
  left_out: string[];
}

/** Re-ranks the rows under exact, lenient and lenient-without-judge scores. */
export function sensitivity(rows: LeaderboardRow[], rankBy: RankBy = 'overall'): Sensitivity {
  const withL = rows.filter((r) => r.lenient);
  const policy = [...new Set(withL.map((r) => r.lenient!.policy))].join(', ') || 'none';
  const judge = [...new Set(withL.map((r) => r.lenient!.judge).filter((j) => j))].join(', ');
  const score = {
    exact: (r: LeaderboardRow) => (rankBy === 'overall' ? r.overall : r.value_accuracy),
    lenient: (r: LeaderboardRow) => (rankBy === 'overall' ? r.lenient!.overall : r.lenient!.value_accuracy),
    lenient_without_judge: (r: LeaderboardRow) => {
      const nj = r.lenient!.without_judge;
      if (!nj) return rankBy === 'overall' ? r.lenient!.overall : r.lenient!.value_accuracy;
      return rankBy === 'overall' ? nj.overall : nj.value_accuracy;
    },
  };
  const rankings = [
    { name: 'exact', label: 'exact (SOB)' },
    { name: 'lenient', label: `lenient (${policy}${judge ? ` + judge ${judge}` : ''})` },
    { name: 'lenient_without_judge', label: `lenient without judge (${policy})` },
  ];
  const scoreMaps = new Map<string, Map<string, number>>();
  for (const { name } of rankings) {
    const get = score[name as keyof typeof score];
    const m = new Map<string, number>();
    for (const r of withL) {
      const v = get(r);
      if (v !== null && v !== undefined) m.set(r.model, v);
    }
    scoreMaps.set(name, m);
  }
  const rankMaps = new Map([...scoreMaps].map(([k, m]) => [k, ranksOf(m)]));
  const tau: Sensitivity['tau'] = [];
  for (let i = 0; i < rankings.length; i++)
    for (let j = i + 1; j < rankings.length; j++) {
      const a = scoreMaps.get(rankings[i].name)!;
      const b = scoreMaps.get(rankings[j].name)!;
      const common = [...a.keys()].filter((k) => b.has(k)).sort();
      tau.push({
        a: rankings[i].name,
        b: rankings[j].name,
        tau: kendallTau(
          common.map((k) => a.get(k)!),
          common.map((k) => b.get(k)!),
        ),
        models: common.length,
      });
    }
  const models: SensitivityModel[] = withL.map((r) => {
    const scores: Record<string, number | null> = {};
    const ranks: Record<string, number | null> = {};
    for (const { name } of rankings) {
      scores[name] = scoreMaps.get(name)!.get(r.model) ?? null;
      ranks[name] = rankMaps.get(name)!.get(r.model) ?? null;
    }
    const known = Object.values(ranks).filter((x): x is number => x !== null);
    return {
      model: r.model,
      display_name: r.display_name,
      scores,
      ranks,
      max_shift: known.length > 0 ? Math.max(...known) - Math.min(...known) : 0,
    };
  });
  models.sort((a, b) => b.max_shift - a.max_shift || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return {
    rank_by: rankBy,
    rankings,
    tau,
    models,
    left_out: rows.filter((r) => !r.lenient).map((r) => r.model),
  };
}
