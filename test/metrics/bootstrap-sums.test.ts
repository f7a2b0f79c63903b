/**
 * The bootstrap's sums in WebAssembly (metrics/bootstrap-sums.ts) give the same bits as the
 * JavaScript loop: every interval of every summary, for any number of summaries (padding lanes),
 * weighted or not, with zero weights and constant columns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SumsKernel } from '../../metrics/bootstrap-sums.ts';
import { bootstrapIntervals, PASSES, withCategories } from '../../metrics/summary.ts';

/** A small deterministic generator (the test's data, not the bootstrap's draws). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

test('WebAssembly SIMD is there: the kernel is used on this Node', () => {
  assert.notEqual(SumsKernel.create(209, 34), null);
});

test('the kernel sums a resample exactly as the scalar loop, lane by lane, in draw order', () => {
  const k = SumsKernel.create(5, 3)!;
  assert.equal(k.maxStride, 8);
  // Column 0: terms whose sum depends on the order (0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1 in doubles).
  const col0 = [0.1, 0.2, 0.3, 1e16, -1e16];
  for (let j = 0; j < 5; j++) {
    k.terms[j * 8] = col0[j];
    k.terms[j * 8 + 1] = j;
    k.terms[j * 8 + 2] = -j / 3;
  }
  k.idx.set([0, 1, 2, 3, 4]);
  k.run(8);
  assert.equal(k.sums[0], 0.1 + 0.2 + 0.3 + 1e16 + -1e16);
  assert.equal(k.sums[1], 10);
  k.idx.set([4, 3, 2, 1, 0]);
  k.run(8);
  assert.equal(k.sums[0], -1e16 + 1e16 + 0.3 + 0.2 + 0.1);
  assert.notEqual(k.sums[0], 0.1 + 0.2 + 0.3 + 1e16 + -1e16);
  assert.equal(k.sums[2], -4 / 3 + -3 / 3 + -2 / 3 + -1 / 3 + -0 / 3);
});

test('bootstrap intervals: WebAssembly and JavaScript give the same bits (1 to 34 summaries, n 1 to 2090)', () => {
  const r = lcg(7);
  let compared = 0;
  for (const F of [1, 2, 3, 7, 8, 9, 34]) {
    for (const n of [1, 2, 209, 2090]) {
      for (const weighted of [false, true]) {
        const weights = Float64Array.from({ length: n }, () => [0, 0.5, 1, 1.5, 2][Math.floor(r() * 5)]);
        const inputs = Array.from({ length: F }, (_, f) =>
          withCategories({
            columns: Array.from({ length: 10 }, (_, c) =>
              Float64Array.from({ length: n }, () =>
                c < 2 ? 1 : c < 4 ? (r() < 0.9 ? 1 : 0) : r() * (f + 1),
              ),
            ),
            weights: weighted ? (f % 3 === 2 ? Float64Array.from(weights, (x) => x * 2) : weights) : null,
          }),
        );
        const a = bootstrapIntervals(inputs, 42 + F, n > 1000 ? 50 : 200, true);
        const b = bootstrapIntervals(inputs, 42 + F, n > 1000 ? 50 : 200, false);
        for (let f = 0; f < F; f++) {
          for (let p = 0; p < a[f].low.length; p++) {
            assert.ok(Object.is(a[f].low[p], b[f].low[p]), `F=${F} n=${n} summary ${f} pass ${p} low`);
            assert.ok(Object.is(a[f].high[p], b[f].high[p]), `F=${F} n=${n} summary ${f} pass ${p} high`);
            compared++;
          }
        }
      }
    }
  }
  assert.equal(compared, 2 * 4 * (1 + 2 + 3 + 7 + 8 + 9 + 34) * PASSES);
});
