/**
 * The Poisson bootstrap: the `strict` profile's resampling for large summaries (pure, no I/O).
 *
 * The reference draws each resample as `n` indices with `random.randrange(n)`, one metric after
 * another (`bootstrapIntervals`): bit for bit CPython's, but `metrics x samples x n` draws from one
 * sequential generator, each a random read (68 s of a 79 s `sob score` at 100,000 records). A
 * Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012, "Estimating uncertainty for
 * massive data streams") gives each record a count `c ~ Poisson(1)` per resample instead of
 * drawing indices: the estimate is `sum(c v) / sum(c)` (weighted: `sum(c w v) / sum(c w)`), the
 * records are read in order, every metric of a resample shares its counts, and the counts come
 * from a generator seeded per resample (`seed`, resample number), so a resample is the same
 * whichever worker computes it and in whatever order: the intervals for the same data and seed
 * are reproducible. For large n it estimates the same sampling distribution as drawing n of n.
 *
 * Method named in the summary (`bootstrap_method: "poisson"`); docs/scoring.md and
 * docs/performance.md state when it is used and what it costs.
 */

/** The records above which `--bootstrap-method auto` uses the Poisson bootstrap (strict only). */
export const POISSON_FROM_RECORDS = 50_000;

export type BootstrapMethod = 'cpython' | 'poisson';
export type BootstrapMethodChoice = BootstrapMethod | 'auto';

/**
 * The method a summary of `n` records uses: the `sob` profile always CPython's draws (parity);
 * `strict` the Poisson bootstrap above `POISSON_FROM_RECORDS` under `auto`, or as asked.
 */
export function bootstrapMethodFor(
  choice: BootstrapMethodChoice | undefined,
  profile: 'sob' | 'strict' | undefined,
  n: number,
): BootstrapMethod {
  if (profile === 'sob') return 'cpython';
  if (choice === 'cpython' || choice === 'poisson') return choice;
  return profile === 'strict' && n > POISSON_FROM_RECORDS ? 'poisson' : 'cpython';
}

/** P(X <= k) for X ~ Poisson(1), as 32-bit thresholds: a uniform u32 below T[k] means X <= k. */
const THRESHOLDS: Uint32Array = (() => {
  const t: number[] = [];
  let p = Math.exp(-1);
  let cdf = 0;
  for (let k = 0; k < 16; k++) {
    cdf += p;
    p /= k + 1;
    t.push(Math.min(0xffffffff, Math.floor(cdf * 2 ** 32)));
  }
  t[t.length - 1] = 0xffffffff;
  return Uint32Array.from(t);
})();
const T0 = THRESHOLDS[0];
const T1 = THRESHOLDS[1];
const T2 = THRESHOLDS[2];

/** splitmix32's finaliser: a well-mixed 32-bit value of `x`. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * The Poisson(1) counts of one resample, for `n` records: xoshiro128** (Blackman & Vigna) seeded
 * from (seed, resample) through splitmix32, one 32-bit output per record, inverted through the
 * cumulative probabilities. Returns the sum of the counts.
 */
export function poissonCounts(seed: number, resample: number, counts: Uint8Array, n: number): number {
  let s0 = mix32(seed ^ 0x5bd1e995);
  let s1 = mix32(s0 ^ resample);
  let s2 = mix32(s1 + 0x6a09e667);
  let s3 = mix32(s2 ^ Math.imul(resample, 0x27d4eb2d));
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
  let total = 0;
  for (let j = 0; j < n; j++) {
    // xoshiro128**: result = rotl(s1 * 5, 7) * 9
    const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    let c: number;
    if (r < T0) c = 0;
    else if (r < T1) c = 1;
    else if (r < T2) c = 2;
    else {
      c = 3;
      while (c < 15 && r >= THRESHOLDS[c]) c++;
    }
    counts[j] = c;
    total += c;
  }
  return total;
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/**
 * A metric's values per record: doubles, or a 0/1 metric's as bytes (metrics/summary.ts
 * `ByteColumn`), read as the same numbers.
 */
export type Values = Float64Array | Uint8Array;

/**
 * The per-record working arrays of the last size drawn for (6 bytes a record: a count fits a
 * byte and reads as the same double), reused by the next bootstrap of that size in this thread:
 * a scoring worker runs a file's plain and weighted bootstraps one after the other, and the first
 * one's arrays were still uncollected garbage when the second made its own. `poissonEstimates` is
 * synchronous: no two calls use them at once.
 */
let scratch: { counts: Uint8Array; drawn: Uint32Array; times: Uint8Array } | undefined;
function scratchOf(n: number): NonNullable<typeof scratch> {
  if (scratch?.counts.length !== n)
    scratch = { counts: new Uint8Array(n), drawn: new Uint32Array(n), times: new Uint8Array(n) };
  return scratch;
}

/** A column the kernel sums: input f's pass p. */
interface Col {
  f: number;
  p: number;
  v: Values;
}

export interface PoissonInput {
  columns: Values[];
  weights: Float64Array | null;
}

/** A column all 0 or all 1: every resample's estimate is that value (with positive weights). */
function constantOf(v: Values, weights: Float64Array | null): number | null {
  const c = v[0];
  if (c !== 0 && c !== 1) return null;
  for (let j = 1; j < v.length; j++) if (v[j] !== c) return null;
  if (c === 1 && weights) for (let j = 0; j < weights.length; j++) if (!(weights[j] > 0)) return null;
  return c;
}

/**
 * The estimates of every column of every input for resamples `from` (inclusive) to `to`
 * (exclusive): `out[f][p * samples + s]`. Inputs share n; each resample's counts are drawn once
 * and used for all of them. Per resample, the records drawn at least once (63% of them) are
 * listed with their counts, and four columns are summed per pass over that list.
 */
export function poissonEstimates(
  inputs: PoissonInput[],
  seed: number,
  samples: number,
  from = 0,
  to = samples,
): Float64Array[] {
  const n = inputs[0]?.columns[0]?.length ?? 0;
  const out = inputs.map((d) => new Float64Array(d.columns.length * samples));
  const { counts, drawn, times } = scratchOf(n);
  // The columns to sum, by the weights they are summed with (null: plain). A weighted term is
  // `w v` rounded, then times the count, as a column of terms would give, without one (n doubles
  // per column: 104 MB for a million records' thirteen passes); constant columns are filled in.
  // Grouped by kind of column too (bytes, doubles): each kernel's loads see one kind.
  const groups: { w: Float64Array | null; bytes: boolean; cols: Col[] }[] = [];
  let active = 0;
  inputs.forEach((d, f) => {
    d.columns.forEach((v, p) => {
      const c = constantOf(v, d.weights);
      if (c !== null) {
        out[f].fill(c, p * samples, (p + 1) * samples);
        return;
      }
      const bytes = v instanceof Uint8Array;
      let g = groups.find((x) => x.w === d.weights && x.bytes === bytes);
      if (!g) groups.push((g = { w: d.weights, bytes, cols: [] }));
      g.cols.push({ f, p, v });
      active++;
    });
  });
  if (active === 0) return out;
  const denoms = new Float64Array(inputs.length);
  // The resample being summed (the kernels and `put` below read it).
  let s = from;
  function sumPlain(cols: Col[], m: number): void {
    let k = 0;
    for (; k + 4 <= cols.length; k += 4) {
      const a = cols[k].v;
      const b = cols[k + 1].v;
      const c = cols[k + 2].v;
      const e = cols[k + 3].v;
      let sa = 0;
      let sb = 0;
      let sc = 0;
      let se = 0;
      for (let i = 0; i < m; i++) {
        const j = drawn[i];
        const t = times[i];
        sa += t * a[j];
        sb += t * b[j];
        sc += t * c[j];
        se += t * e[j];
      }
      put(cols[k], sa);
      put(cols[k + 1], sb);
      put(cols[k + 2], sc);
      put(cols[k + 3], se);
    }
    for (; k < cols.length; k++) {
      const a = cols[k].v;
      let sa = 0;
      for (let i = 0; i < m; i++) sa += times[i] * a[drawn[i]];
      put(cols[k], sa);
    }
  }
  // sumPlain's loops with `v w` terms: a kernel per shape keeps each hot loop free of a branch.
  function sumWeighted(cols: Col[], w: Float64Array, m: number): void {
    let k = 0;
    for (; k + 4 <= cols.length; k += 4) {
      const a = cols[k].v;
      const b = cols[k + 1].v;
      const c = cols[k + 2].v;
      const e = cols[k + 3].v;
      let sa = 0;
      let sb = 0;
      let sc = 0;
      let se = 0;
      for (let i = 0; i < m; i++) {
        const j = drawn[i];
        const t = times[i];
        const wj = w[j];
        sa += t * (a[j] * wj);
        sb += t * (b[j] * wj);
        sc += t * (c[j] * wj);
        se += t * (e[j] * wj);
      }
      put(cols[k], sa);
      put(cols[k + 1], sb);
      put(cols[k + 2], sc);
      put(cols[k + 3], se);
    }
    for (; k < cols.length; k++) {
      const a = cols[k].v;
      let sa = 0;
      for (let i = 0; i < m; i++) sa += times[i] * (a[drawn[i]] * w[drawn[i]]);
      put(cols[k], sa);
    }
  }
  function put(col: { f: number; p: number }, sum: number): void {
    const d = denoms[col.f];
    out[col.f][col.p * samples + s] = d === 0 ? 0 : sum / d;
  }
  for (; s < to; s++) {
    poissonCounts(seed, s, counts, n);
    let m = 0;
    for (let j = 0; j < n; j++) {
      const c = counts[j];
      if (c !== 0) {
        drawn[m] = j;
        times[m++] = c;
      }
    }
    let total = 0;
    for (let i = 0; i < m; i++) total += times[i];
    for (let f = 0; f < inputs.length; f++) {
      const w = inputs[f].weights;
      if (!w) {
        denoms[f] = total;
        continue;
      }
      let d = 0;
      for (let i = 0; i < m; i++) d += times[i] * w[drawn[i]];
      denoms[f] = d;
    }
    for (const { w, cols } of groups) {
      if (w) sumWeighted(cols, w, m);
      else sumPlain(cols, m);
    }
  }
  return out;
}
