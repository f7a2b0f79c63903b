/**
 * Agreement between judges and the rule that combines their verdicts. Pure math.
 */

/** Cohen's kappa of two raters' accept/reject decisions (1 = perfect, 0 = chance). */
export function cohensKappa(a: boolean[], b: boolean[]): number {
  const n = Math.min(a.length, b.length);
  if (n === 0) return 0;
  let agree = 0;
  let aYes = 0;
  let bYes = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) agree++;
    if (a[i]) aYes++;
    if (b[i]) bYes++;
  }
  const po = agree / n;
  const pe = (aYes / n) * (bYes / n) + ((n - aYes) / n) * ((n - bYes) / n);
  return pe === 1 ? (po === 1 ? 1 : 0) : (po - pe) / (1 - pe);
}

/** Ranks 1..n, ties sharing their average rank. */
export function averageRanks(x: number[]): number[] {
  const order = x.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]);
  const ranks = new Array<number>(x.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = r;
    i = j + 1;
  }
  return ranks;
}

/** Spearman's rank correlation (Pearson correlation of average ranks). */
export function spearman(x: number[], y: number[]): number {
  const n = Math.min(x.length, y.length);
  if (n < 2) return 0;
  const rx = averageRanks(x.slice(0, n));
  const ry = averageRanks(y.slice(0, n));
  const mx = rx.reduce((s, v) => s + v, 0) / n;
  const my = ry.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) ** 2;
    syy += (ry[i] - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy);
}

export function meanAbsoluteDifference(x: number[], y: number[]): number {
  const n = Math.min(x.length, y.length);
  if (n === 0) return 0;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.abs(x[i] - y[i]);
  return s / n;
}

export const DIMENSIONS = ['accuracy', 'grounding', 'schema_quality'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export type Scores = Record<Dimension, number>;
export type CombineRule = 'all' | 'majority' | 'mean';

/** One judge's verdict: accepted when every dimension reaches the threshold. */
export function accepts(s: Scores, threshold: number): boolean {
  return DIMENSIONS.every((d) => s[d] >= threshold);
}

/**
 * Several judges' verdict: `all` needs every judge to accept, `majority` more than half,
 * `mean` the per-dimension mean of their scores to reach the threshold.
 */
export function combine(scores: Scores[], threshold: number, rule: CombineRule): boolean {
  if (scores.length === 0) return false;
  if (rule === 'all') return scores.every((s) => accepts(s, threshold));
  if (rule === 'majority') return scores.filter((s) => accepts(s, threshold)).length * 2 > scores.length;
  const mean = Object.fromEntries(
    DIMENSIONS.map((d) => [d, scores.reduce((t, s) => t + s[d], 0) / scores.length]),
  ) as Scores;
  return accepts(mean, threshold);
}
