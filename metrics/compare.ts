/**
 * Is model B better than model A? A paired bootstrap over the records both answered: the
 * per-record differences are resampled together, so record difficulty cancels out. Pure math.
 *
 * - difference = weighted mean of (B - A) per record (schema-complexity weights, as the
 *   leaderboard's within-source means; unweighted when no record has a known weight);
 * - 95% interval = the 2.5% / 97.5% order statistics of the resampled differences (SPEC's rule);
 * - p-value (two-sided, bootstrap) = 2 x the smaller share of resampled differences on either
 *   side of zero, at most 1; a difference that is exactly 0 everywhere has p = 1;
 * - several pairs: Holm-Bonferroni adjusted p-values.
 */
import { PyRandom } from '../src/core/pyrandom.ts';

export interface PairedInput {
  /** Per-record values of A and B (same order: the records both answered). */
  a: Float64Array;
  b: Float64Array;
  /** Per-record weights (all 0 means unweighted). */
  weights: Float64Array;
}

export interface PairedResult {
  n: number;
  meanA: number;
  meanB: number;
  /** B - A */
  difference: number;
  ciLow: number;
  ciHigh: number;
  pValue: number;
}

export interface BootstrapOptions {
  samples: number;
  seed: number;
}

function weightedMean(values: Float64Array, weights: Float64Array | null, idx?: Uint32Array): number {
  const n = idx ? idx.length : values.length;
  if (n === 0) return 0;
  let s = 0;
  let tw = 0;
  for (let k = 0; k < n; k++) {
    const i = idx ? idx[k] : k;
    const w = weights ? weights[i] : 1;
    s += values[i] * w;
    tw += w;
  }
  return tw === 0 ? 0 : s / tw;
}

/** The paired bootstrap of B - A. */
export function pairedBootstrap(input: PairedInput, opts: BootstrapOptions): PairedResult {
  const n = input.a.length;
  let anyWeight = false;
  for (let i = 0; i < n; i++) if (input.weights[i] > 0) anyWeight = true;
  const w = anyWeight ? input.weights : null;
  const diff = new Float64Array(n);
  // Equal values differ by exactly 0 (two NaNs included: NaN - NaN would make p = 0).
  for (let i = 0; i < n; i++) {
    const a = input.a[i];
    const b = input.b[i];
    diff[i] = a === b || (Number.isNaN(a) && Number.isNaN(b)) ? 0 : b - a;
  }
  const difference = weightedMean(diff, w);
  const result = {
    n,
    meanA: weightedMean(input.a, w),
    meanB: weightedMean(input.b, w),
    difference,
  };
  if (n === 0 || opts.samples <= 0) return { ...result, ciLow: difference, ciHigh: difference, pValue: 1 };
  const rng = new PyRandom(opts.seed);
  const idx = new Uint32Array(n);
  const est = new Float64Array(opts.samples);
  let below = 0;
  let above = 0;
  for (let s = 0; s < opts.samples; s++) {
    rng.fillRandrange(n, idx);
    const e = weightedMean(diff, w, idx);
    est[s] = e;
    if (e <= 0) below++;
    if (e >= 0) above++;
  }
  est.sort();
  const last = est.length - 1;
  const ciLow = est[Math.max(0, Math.floor(0.025 * last))];
  const ciHigh = est[Math.min(last, Math.ceil(0.975 * last))];
  const pValue = Math.min(1, (2 * Math.min(below, above)) / opts.samples);
  return { ...result, ciLow, ciHigh, pValue };
}

/** Holm-Bonferroni: adjusted p-values in the input order (monotone, capped at 1). */
export function holm(pValues: number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0]);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    out[i] = running;
  });
  return out;
}
