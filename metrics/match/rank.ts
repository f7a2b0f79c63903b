/**
 * How stable a ranking is under another scoring: Kendall's tau between two rankings, and each
 * model's rank shift. Pure.
 */
import { compareCodePoints } from '../../src/core/pyjson.ts';

/**
 * Kendall's tau-b between two score lists over the same items (higher is better in both; only
 * the order matters). Ties count as neither concordant nor discordant and shrink the
 * denominator: tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1 and n2 the tied
 * pairs in each list. Null when either list is all ties (or has fewer than two items).
 */
export function kendallTau(a: readonly number[], b: readonly number[]): number | null {
  if (a.length !== b.length) throw new Error(`kendallTau: ${a.length} vs ${b.length} scores`);
  const n = a.length;
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const x = Math.sign(a[i] - a[j]);
      const y = Math.sign(b[i] - b[j]);
      if (x === 0) tiesA++;
      if (y === 0) tiesB++;
      if (x !== 0 && y !== 0) {
        if (x === y) concordant++;
        else discordant++;
      }
    }
  }
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - tiesA) * (n0 - tiesB));
  return denom === 0 ? null : (concordant - discordant) / denom;
}

/** Competition ranks (1, 2, 2, 4), best score first. */
export function ranksOf(scores: ReadonlyMap<string, number>): Map<string, number> {
  const sorted = [...scores].sort((x, y) => y[1] - x[1] || compareCodePoints(x[0], y[0]));
  const out = new Map<string, number>();
  sorted.forEach(([model, score], i) => {
    const prev = i > 0 ? sorted[i - 1] : undefined;
    out.set(model, prev !== undefined && prev[1] === score ? out.get(prev[0])! : i + 1);
  });
  return out;
}

export interface RankShift {
  model: string;
  rank_a: number;
  rank_b: number;
  /** rank_a - rank_b: positive when the model moves up under b. */
  shift: number;
  score_a: number;
  score_b: number;
}

export interface RankComparison {
  /** Kendall's tau-b over the models both rankings have (null: undefined, see kendallTau). */
  tau: number | null;
  models: number;
  /** Every model, largest move first (ties by model name). */
  shifts: RankShift[];
}

/** Compares two rankings (e.g. exact vs lenient Value Accuracy) over their common models. */
export function compareRankings(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
): RankComparison {
  const common = [...a.keys()].filter((m) => b.has(m)).sort(compareCodePoints);
  const sa = new Map(common.map((m) => [m, a.get(m)!]));
  const sb = new Map(common.map((m) => [m, b.get(m)!]));
  const ra = ranksOf(sa);
  const rb = ranksOf(sb);
  const shifts = common.map((model) => ({
    model,
    rank_a: ra.get(model)!,
    rank_b: rb.get(model)!,
    shift: ra.get(model)! - rb.get(model)!,
    score_a: sa.get(model)!,
    score_b: sb.get(model)!,
  }));
  shifts.sort((x, y) => Math.abs(y.shift) - Math.abs(x.shift) || compareCodePoints(x.model, y.model));
  return {
    tau: kendallTau(
      common.map((m) => sa.get(m)!),
      common.map((m) => sb.get(m)!),
    ),
    models: common.length,
    shifts,
  };
}
