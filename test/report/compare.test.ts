/**
 * `sob compare`: the paired bootstrap on two SOB image models, identical inputs, and the
 * Holm-Bonferroni correction on a hand-checked example.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { holm, pairedBootstrap } from '../../metrics/compare.ts';
import { comparePair, loadModelRows, pairwiseMatrix } from '../../src/report/compare.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const IMAGE = sharedData('sob/evaluation/image');

function weightedMean(model: string, key: string): number {
  const s = JSON.parse(readFileSync(join(IMAGE, model, 'eval_summary.json'), 'utf8')) as {
    summary: { overall_weighted: { metrics: Record<string, { mean: number }> } };
  };
  return s.summary.overall_weighted.metrics[key].mean;
}

test('phi-4 vs gpt-oss on the 209 image records: the interval contains the observed difference', {
  skip: needsData('sob'),
}, async () => {
  const a = await loadModelRows(join(IMAGE, 'phi-4'));
  const b = await loadModelRows(join(IMAGE, 'gpt-oss'));
  const res = comparePair(a, b, 2000, 42);
  assert.equal(res[0].n, 209);
  // Each side's mean is the reference's weighted mean; the difference is B - A.
  assert.ok(Math.abs(res[0].meanA - weightedMean('phi-4', 'leaf_value_em')) < 1e-9);
  assert.ok(Math.abs(res[0].meanB - weightedMean('gpt-oss', 'leaf_value_em')) < 1e-9);
  assert.ok(Math.abs(res[0].difference - (res[0].meanB - res[0].meanA)) < 1e-12);
  for (const r of res) {
    assert.ok(
      r.ciLow <= r.difference && r.difference <= r.ciHigh,
      `${r.difference} in [${r.ciLow}, ${r.ciHigh}]`,
    );
    assert.ok(r.pValue >= 0 && r.pValue <= 1);
  }
  // Value Accuracy: gpt-oss is lower by 0.130, an interval clear of 0, p < 0.001.
  assert.equal(res[0].difference.toFixed(3), '-0.130');
  assert.ok(res[0].ciHigh < 0);
  assert.ok(res[0].pValue < 0.001);
});

test('identical inputs give a difference of exactly 0, the interval [0, 0] and p = 1', {
  skip: needsData('sob'),
}, async () => {
  const a = await loadModelRows(join(IMAGE, 'phi-4'));
  for (const r of comparePair(a, a, 500, 7)) {
    assert.equal(r.difference, 0);
    assert.equal(r.ciLow, 0);
    assert.equal(r.ciHigh, 0);
    assert.equal(r.pValue, 1);
  }
  const m = pairwiseMatrix([a, a], 200, 1);
  assert.equal(m.cells[0][1]!.difference, 0);
});

test('the paired bootstrap is seeded: the same seed gives the same interval', () => {
  const input = {
    a: Float64Array.from([0, 1, 0, 1]),
    b: Float64Array.from([1, 1, 1, 0]),
    weights: Float64Array.from([1, 2, 3, 1]),
  };
  const x = pairedBootstrap(input, { samples: 300, seed: 5 });
  const y = pairedBootstrap(input, { samples: 300, seed: 5 });
  assert.deepEqual(x, y);
  // Weighted: (1*1 + 0*2 + 1*3 + -1*1) / 7
  assert.equal(x.difference, 3 / 7);
});

test('Holm-Bonferroni on a hand-checked example', () => {
  // sorted 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> max(0.06, 0.04) = 0.06
  assert.deepEqual(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06]);
  assert.deepEqual(holm([0.5, 0.6]), [1, 1]);
  assert.deepEqual(holm([]), []);
});

test('sob compare prints the table; usage errors exit 2', { skip: needsData('sob') }, () => {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/sob.js'), 'compare', join(IMAGE, 'phi-4'), join(IMAGE, 'gpt-oss'), '--samples', '300'],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /gpt-oss vs phi-4: 209 records both answered/);
  assert.match(r.stdout, /Value Accuracy\s+0\.557\s+0\.427\s+-0\.130/);
  const bad = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'compare', join(IMAGE, 'phi-4')], {
    encoding: 'utf8',
  });
  assert.equal(bad.status, 2);
});
