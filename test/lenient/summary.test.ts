/**
 * The summary's `lenient` block: means of the records' lenient numbers, plain and weighted, with
 * percentile bootstrap intervals from generators of their own, as the README documents them:
 * `random.Random(seed + 100)` for the plain block and `seed + 101` for the weighted one, drawn
 * metric after metric in the block's order (the exact metrics' streams, seeds 42 and 43, are not
 * touched). Checked against a bootstrap written out here step by step.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLenientSummary, LENIENT_METRICS, LenientAccumulator } from '../../metrics/lenient-summary.ts';
import { PyRandom } from '../../src/core/pyrandom.ts';
import { floatSum } from '../../src/core/pysum.ts';

/** The SPEC's bootstrap, literally: S resamples of n `randrange(n)` draws, summed as Python 3.12 sums, sorted, order statistics. */
function byHand(
  values: number[],
  weights: number[] | null,
  rng: PyRandom,
  samples: number,
): [number, number] {
  const n = values.length;
  const est: number[] = [];
  for (let s = 0; s < samples; s++) {
    const terms: number[] = [];
    const ws: number[] = [];
    for (let i = 0; i < n; i++) {
      const j = rng.randrange(n);
      const w = weights ? weights[j] : 1;
      terms.push(values[j] * w);
      ws.push(w);
    }
    // Python 3.12's sum() of floats (docs/scoring.md "Sums"), as the summaries' every mean.
    const sum = floatSum(terms);
    const tw = weights ? floatSum(ws) : n;
    est.push(tw === 0 ? 0 : sum / tw);
  }
  est.sort((a, b) => a - b);
  return [est[Math.floor(0.025 * (samples - 1))], est[Math.ceil(0.975 * (samples - 1))]];
}

const N = 37;
const values = Array.from({ length: N }, (_, i) =>
  LENIENT_METRICS.map((_, k) => ((i * 7 + k * 3) % 11) / 10),
);
const weights = Array.from({ length: N }, (_, i) => 1 + (i % 3));

function summary(judge: string | null) {
  const acc = new LenientAccumulator();
  values.forEach((v, i) => {
    acc.add(
      {
        values: v,
        ...(judge ? { noJudge: v.map((x) => x / 2) } : {}),
        counts: [4, 3, 1, i % 2, 0, 0],
        matchers: i % 2 ? { exact: 2, text: 1 } : { exact: 3 },
      },
      weights[i],
    );
  });
  return buildLenientSummary(acc.data('default', judge), { bootstrapSamples: 200, seed: 42 }) as {
    // biome-ignore lint/suspicious/noExplicitAny: the summary block, read field by field
    [k: string]: any;
  };
}

test('lenient intervals: own generators, seed + 100 (plain) and + 101 (weighted), metric after metric', () => {
  const s = summary(null);
  for (const [weighted, seed, block] of [
    [false, 142, s.summary.overall],
    [true, 143, s.summary.overall_weighted],
  ] as const) {
    const rng = new PyRandom(seed);
    LENIENT_METRICS.forEach(([key], k) => {
      const col = values.map((v) => v[k]);
      const [lo, hi] = byHand(col, weighted ? weights : null, rng, 200);
      const m = block.metrics[key];
      assert.equal(m.ci95_low, lo, `${key} low`);
      assert.equal(m.ci95_high, hi, `${key} high`);
      const w = weighted ? weights : col.map(() => 1);
      const mean = col.reduce((a, x, i) => a + x * w[i], 0) / w.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(m.mean - mean) < 1e-12, `${key} mean`);
    });
  }
  assert.equal(s.bootstrap.seeds.overall, 142n);
  assert.equal(s.bootstrap.seeds.overall_weighted, 143n);
  assert.equal(s.without_judge, undefined);
});

test('the block counts leaves and matchers; with a judge it has the "without judge" means (seed + 102)', () => {
  const s = summary('openai:j');
  assert.deepEqual(s.leaves, {
    gold: 148n,
    accepted: 111n,
    missed: 37n,
    invented: 18n,
    pending: 0n,
    unscored: 0n,
  });
  assert.deepEqual(s.matcher_counts, { exact: 93n, text: 18n });
  assert.equal(s.judge, 'openai:j');
  const nj = s.without_judge.overall.metrics.lenient_value_accuracy;
  const col = values.map((v) => v[0] / 2);
  assert.ok(Math.abs(nj.mean - col.reduce((a, b) => a + b, 0) / N) < 1e-12);
  const [lo, hi] = byHand(col, null, new PyRandom(144), 200);
  assert.deepEqual([nj.ci95_low, nj.ci95_high], [lo, hi]);
});
