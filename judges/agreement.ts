/**
 * Agreement between judges and the rule that combines their verdicts. Pure math.
 *
 * A statistic that is undefined on its input (no records; a judge that gives every record the
 * same verdict or score, so chance agreement is certain or a rank has no spread) is NaN, as in
 * scipy and scikit-learn, and `summary.json` writes it as null: a 0 or a 1 there would be a claim.
 */

function sameLength(a: unknown[], b: unknown[]): number {
  if (a.length !== b.length) throw new Error(`paired lists differ in length: ${a.length} vs ${b.length}`);
  return a.length;
}

/** Cohen's kappa of two raters' accept/reject decisions: (po - pe) / (1 - pe); 1 = perfect, 0 = chance. */
export function cohensKappa(a: boolean[], b: boolean[]): number {
  const n = sameLength(a, b);
  if (n === 0) return Number.NaN;
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
  return pe === 1 ? Number.NaN : (po - pe) / (1 - pe);
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
  const n = sameLength(x, y);
  if (n < 2) return Number.NaN;
  const rx = averageRanks(x);
  const ry = averageRanks(y);
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
  return sxx === 0 || syy === 0 ? Number.NaN : sxy / Math.sqrt(sxx * syy);
}

export function meanAbsoluteDifference(x: number[], y: number[]): number {
  const n = sameLength(x, y);
  if (n === 0) return Number.NaN;
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
