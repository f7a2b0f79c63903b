/** Kendall's tau and rank shifts on hand-worked rankings. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRankings, kendallTau, ranksOf } from '../../metrics/match/rank.ts';

test("Kendall's tau-b: same order 1, reversed -1, one swap of four 2/3", () => {
  assert.equal(kendallTau([4, 3, 2, 1], [0.9, 0.8, 0.7, 0.1]), 1);
  assert.equal(kendallTau([4, 3, 2, 1], [1, 2, 3, 4]), -1);
  // 6 pairs, one discordant: (5 - 1) / 6.
  assert.equal(kendallTau([4, 3, 2, 1], [4, 3, 1, 2]), 4 / 6);
});

test("Kendall's tau-b with ties: tied pairs shrink the denominator", () => {
  // a = [1, 2, 2, 3]: one tied pair; b strictly ordered; the 5 other pairs concordant.
  // tau_b = 5 / sqrt((6 - 1) * (6 - 0)) = 5 / sqrt(30).
  assert.equal(kendallTau([1, 2, 2, 3], [1, 2, 3, 4]), 5 / Math.sqrt(30));
  assert.equal(kendallTau([1, 1, 1], [1, 2, 3]), null);
  assert.equal(kendallTau([1], [1]), null);
  assert.throws(() => kendallTau([1, 2], [1]), /2 vs 1/);
});

test('ranks share the best place on ties (1, 2, 2, 4)', () => {
  assert.deepEqual(
    [
      ...ranksOf(
        new Map([
          ['a', 0.9],
          ['b', 0.5],
          ['c', 0.5],
          ['d', 0.1],
        ]),
      ),
    ],
    [
      ['a', 1],
      ['b', 2],
      ['c', 2],
      ['d', 4],
    ],
  );
});

test('exact vs lenient: tau over common models and the models that move most', () => {
  const exact = new Map([
    ['m1', 0.6],
    ['m2', 0.55],
    ['m3', 0.5],
    ['m4', 0.45],
    ['only-exact', 0.1],
  ]);
  const lenient = new Map([
    ['m1', 0.7],
    ['m2', 0.62],
    ['m3', 0.75],
    ['m4', 0.6],
  ]);
  const c = compareRankings(exact, lenient);
  assert.equal(c.models, 4);
  // Lenient order m3, m1, m2, m4: pairs (m1,m3) and (m2,m3) flip: (4 - 2) / 6.
  assert.equal(c.tau, 2 / 6);
  assert.deepEqual(
    c.shifts.map((s) => [s.model, s.rank_a, s.rank_b, s.shift]),
    [
      ['m3', 3, 1, 2],
      ['m1', 1, 2, -1],
      ['m2', 2, 3, -1],
      ['m4', 4, 4, 0],
    ],
  );
});
