/**
 * The bootstrap's sums in WebAssembly (metrics/bootstrap-sums.ts) give the same bits as the
 * JavaScript loop (Python 3.12's `sum`, `floatSum`): every interval of every summary, for any number of summaries (padding lanes),
 * weighted or not, with zero weights and constant columns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SumsKernel } from '../../metrics/bootstrap-sums.ts';
import { bootstrapIntervals, PASSES, withCategories } from '../../metrics/summary.ts';
import { floatSum } from '../../src/core/pysum.ts';

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

test("the kernel sums a resample as Python 3.12's sum, lane by lane, in draw order", () => {
  const k = SumsKernel.create(5, 5)!;
  assert.equal(k.maxStride, 8);
  const cols = [
    // sum([0.1, 0.2, 0.3, 1e16, -1e16]) is 0.6 in 3.12 (0.0 left to right): test/core/pysum.test.ts
    [0.1, 0.2, 0.3, 1e16, -1e16],
    [0, 1, 2, 3, 4],
    [-0 / 3, -1 / 3, -2 / 3, -3 / 3, -4 / 3],
    // an overflowed sum stays infinite; inf and nan as CPython leaves them
    [1e308, 1e308, -1e308, 1, 1],
    [1, Number.NaN, Infinity, -Infinity, 2],
  ];
  for (let j = 0; j < 5; j++) for (let c = 0; c < cols.length; c++) k.terms[j * 8 + c] = cols[c][j];
  for (const order of [
    [0, 1, 2, 3, 4],
    [4, 3, 2, 1, 0],
    [3, 3, 0, 4, 1],
  ]) {
    k.idx.set(order);
    k.run(8);
    cols.forEach((col, c) => {
      const drawn = order.map((i) => col[i]);
      assert.ok(
        Object.is(k.sums[c], floatSum(drawn)),
        `column ${c}, order ${order}: ${k.sums[c]} vs ${floatSum(drawn)}`,
      );
    });
  }
  k.idx.set([0, 1, 2, 3, 4]);
  k.run(8);
  assert.equal(k.sums[0], 0.6);
  assert.equal(k.sums[3], Infinity);
  k.idx.set([4, 3, 2, 1, 0]);
  k.run(8);
  assert.equal(k.sums[0], 0.6);
  assert.ok(Number.isNaN(k.sums[4]));
});

test('plain additions (run with exact) give the same bits as the compensated kernel on integer terms', () => {
  const k = SumsKernel.create(209, 8)!;
  const r = lcg(3);
  for (let j = 0; j < 209; j++)
    for (let c = 0; c < 8; c++) k.terms[j * 8 + c] = Math.floor(r() * 4) * (c + 1);
  for (let rep = 0; rep < 20; rep++) {
    k.idx.set(Array.from({ length: 209 }, () => Math.floor(r() * 209)));
    k.run(8);
    const compensated = Array.from(k.sums.subarray(0, 8));
    k.run(8, true);
    assert.deepEqual(Array.from(k.sums.subarray(0, 8)), compensated);
  }
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
