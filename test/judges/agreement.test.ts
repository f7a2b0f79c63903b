/** Judge agreement on a hand-checked example, and the combination rules. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  averageRanks,
  cohensKappa,
  combine,
  meanAbsoluteDifference,
  spearman,
} from '../../judges/agreement.ts';

test("Cohen's kappa on a hand-checked 10-record example", () => {
  // A and B each accept 6; they agree on 8 of 10 (5 both accept, 3 both reject).
  const a = [true, true, true, true, true, true, false, false, false, false];
  const b = [true, true, true, true, true, false, false, false, false, true];
  // po = 0.8; pe = 0.6*0.6 + 0.4*0.4 = 0.52; kappa = (0.8 - 0.52) / 0.48 = 7/12
  assert.ok(Math.abs(cohensKappa(a, b) - 7 / 12) < 1e-12);
  assert.equal(cohensKappa(a, a), 1);
});

test('Spearman with ties uses average ranks', () => {
  assert.deepEqual(averageRanks([10, 20, 20, 30]), [1, 2.5, 2.5, 4]);
  // x ranks [1,2.5,2.5,4], y ranks [1,2,3,4]: sxy = 4.5, sxx = 4.5, syy = 5 -> 4.5/sqrt(22.5)
  assert.ok(Math.abs(spearman([10, 20, 20, 30], [1, 2, 3, 4]) - 4.5 / Math.sqrt(22.5)) < 1e-12);
  assert.equal(spearman([1, 2, 3], [3, 2, 1]), -1);
  assert.equal(meanAbsoluteDifference([80, 60, 90], [70, 65, 90]), 5);
});

test('agreement is undefined (NaN) without spread, and paired lists must pair', () => {
  // Both judges accept everything: chance agreement pe = 1, so kappa is 0/0.
  assert.ok(Number.isNaN(cohensKappa([true, true, true], [true, true, true])));
  // One judge rejects everything, the other varies: po = 2/3, pe = 0*1/3 + 1*2/3 = 2/3 -> kappa 0.
  assert.equal(cohensKappa([false, false, false], [true, false, false]), 0);
  assert.ok(Number.isNaN(spearman([70, 70, 70], [10, 20, 30])));
  assert.throws(() => spearman([1, 2], [1, 2, 3]), /differ in length/);
  assert.throws(() => cohensKappa([true], []), /differ in length/);
});

test('combination rules: all, majority, mean', () => {
  const hi = { accuracy: 90, grounding: 80, schema_quality: 70 };
  const lo = { accuracy: 90, grounding: 40, schema_quality: 70 };
  assert.equal(combine([hi, lo], 60, 'all'), false);
  assert.equal(combine([hi, lo], 60, 'majority'), false); // 1 of 2 is not more than half
  assert.equal(combine([hi, hi, lo], 60, 'majority'), true);
  assert.equal(combine([hi, lo], 60, 'mean'), true); // grounding mean 60
  assert.equal(combine([lo, lo], 60, 'mean'), false);
});
