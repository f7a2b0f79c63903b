/**
 * The bootstrap's interval bounds are two order statistics of its estimates. They are found by
 * selection, not by sorting all of them: each must be the very value `Float64Array.prototype.sort`
 * puts at that index (bit for bit: -0 before +0, NaN last), on estimates with many ties (a metric
 * few records score on has few distinct means) as on distinct ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapMeanInterval, select } from '../../metrics/summary.ts';

/** A seeded generator (Park-Miller), so a failure names a reproducible case. */
function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
}

const rnd = generator(11);
const kinds: [string, () => number][] = [
  ['distinct', () => rnd()],
  ['few values (k/209)', () => Math.floor(rnd() * 3) / 209],
  ['mostly zero', () => (rnd() < 0.98 ? 0 : rnd())],
  ['constant', () => 0.25],
  ['+0, -0 and NaN', () => [0, -0, 0.5, Number.NaN, 1][Math.floor(rnd() * 5)]],
];

test('select puts at k the value a full sort puts there, for every k of arrays of every kind', () => {
  let cases = 0;
  for (const [kind, value] of kinds) {
    for (let t = 0; t < 300; t++) {
      const n = 1 + Math.floor(rnd() * (t % 10 === 0 ? 1500 : 30));
      const v = Float64Array.from({ length: n }, value);
      const sorted = v.slice().sort();
      const k = Math.floor(rnd() * n);
      const w = v.slice();
      select(w, k, 0, n - 1);
      assert.ok(Object.is(w[k], sorted[k]), `${kind}, n ${n}, k ${k}: ${w[k]} where a sort has ${sorted[k]}`);
      // Nothing before k comes after it, nothing after k before it (the same multiset around it).
      const left = [...w.subarray(0, k)].sort((a, b) => a - b);
      const right = [...w.subarray(k + 1)].sort((a, b) => a - b);
      assert.deepEqual(
        left.map(String),
        [...sorted.subarray(0, k)].sort((a, b) => a - b).map(String),
        `${kind}, n ${n}, k ${k}: the values before k`,
      );
      assert.equal(right.length, n - k - 1);
      cases++;
    }
  }
  assert.equal(cases, 1500);
});

test('the 2.5% and 97.5% bounds of a bootstrap equal those of the sorted estimates', () => {
  // A column with a few 1s: its 1,000 resampled means take few distinct values (many ties).
  const values = Float64Array.from({ length: 209 }, (_, i) => (i % 50 === 0 ? 1 : i % 7 === 0 ? 0.5 : 0));
  const iv = bootstrapMeanInterval(values, 1000, 42);
  // The same draws, sorted in full (PyRandom as the bootstrap uses it).
  const est = estimates(values, 1000, 42);
  est.sort();
  assert.equal(iv.low, est[Math.floor(0.025 * 999)]);
  assert.equal(iv.high, est[Math.ceil(0.975 * 999)]);
  assert.ok(iv.low < iv.high, `${iv.low} < ${iv.high}`);
});

import { PyRandom } from '../../src/core/pyrandom.ts';

function estimates(values: Float64Array, samples: number, seed: number): Float64Array {
  const rng = new PyRandom(seed);
  const n = values.length;
  const idx = new Uint16Array(n);
  const est = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    rng.fillRandrange(n, idx);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[idx[i]];
    est[s] = sum / n;
  }
  return est;
}
