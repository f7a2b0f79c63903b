/**
 * The strict profile's Poisson bootstrap (metrics/poisson-bootstrap.ts): counts with Poisson(1)'s
 * distribution, resamples reproducible whatever the split, intervals that agree with the
 * reference's draws on the same data, the method chosen by profile and size, refused under the
 * sob profile, and named in the summary `sob score` writes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  bootstrapMethodFor,
  POISSON_FROM_RECORDS,
  poissonCounts,
  poissonEstimates,
} from '../../metrics/poisson-bootstrap.ts';
import { bootstrapIntervals, withCategories } from '../../metrics/summary.ts';

const SOB = resolve(import.meta.dirname, '../../bin/sob.js');

test('the counts follow Poisson(1): mean 1, variance 1, P(0) = e^-1, over 200,000 draws', () => {
  const n = 200_000;
  const c = new Uint8Array(n);
  const total = poissonCounts(7, 0, c, n);
  let sum = 0;
  let sq = 0;
  let zeros = 0;
  for (const x of c) {
    sum += x;
    sq += x * x;
    if (x === 0) zeros++;
  }
  assert.equal(total, sum);
  const mean = sum / n;
  const variance = sq / n - mean * mean;
  // Standard errors at n = 200,000: mean 0.0022, P(0) 0.0011; 4 of them as the margin.
  assert.ok(Math.abs(mean - 1) < 0.009, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 0.02, `variance ${variance}`);
  assert.ok(Math.abs(zeros / n - Math.exp(-1)) < 0.0045, `P(0) ${zeros / n}`);
});

test('a resample depends on (seed, resample) only: split into ranges, it gives the same estimates', () => {
  const n = 5000;
  const v = Float64Array.from({ length: n }, (_, j) => ((j * 37) % 11) / 10);
  const w = Float64Array.from({ length: n }, (_, j) => 1 + (j % 3));
  const inputs = [{ columns: [v], weights: w }];
  const whole = poissonEstimates(inputs, 42, 40)[0];
  const a = poissonEstimates(inputs, 42, 40, 0, 13)[0];
  const b = poissonEstimates(inputs, 42, 40, 13, 40)[0];
  for (let s = 0; s < 40; s++) assert.equal(s < 13 ? a[s] : b[s], whole[s]);
  // Another seed draws other counts.
  const other = poissonEstimates(inputs, 43, 40)[0];
  assert.notDeepEqual([...other], [...whole]);
  // Two resamples of one seed differ from each other.
  const c0 = new Uint8Array(n);
  const c1 = new Uint8Array(n);
  poissonCounts(42, 0, c0, n);
  poissonCounts(42, 1, c1, n);
  assert.notDeepEqual(c0, c1);
});

test('on 20,000 records its intervals are within 10% of the width of the reference draws, plain and weighted', () => {
  const n = 20_000;
  // A 0/1 metric at 70% and a graded one: the shapes the SOB metrics take.
  const hit = Float64Array.from({ length: n }, (_, j) => ((j * 2654435761) % 1000 < 700 ? 1 : 0));
  const graded = Float64Array.from({ length: n }, (_, j) => ((j * 7919) % 101) / 100);
  const weights = Float64Array.from({ length: n }, (_, j) => [1, 2, 3][j % 3]);
  for (const w of [null, weights]) {
    const input = { columns: [hit, graded], weights: w };
    const [cp] = bootstrapIntervals([input], 42, 400, true, 'cpython');
    const [po] = bootstrapIntervals([input], 42, 400, true, 'poisson');
    for (let p = 0; p < 2; p++) {
      const width = cp.high[p] - cp.low[p];
      assert.ok(width > 0);
      assert.ok(Math.abs(po.low[p] - cp.low[p]) < 0.1 * width, `low ${po.low[p]} vs ${cp.low[p]}`);
      assert.ok(Math.abs(po.high[p] - cp.high[p]) < 0.1 * width, `high ${po.high[p]} vs ${cp.high[p]}`);
    }
  }
});

test('constant columns are their constant; the same inputs and seed give the same intervals twice', () => {
  const n = 1000;
  const ones = new Float64Array(n).fill(1);
  const zeros = new Float64Array(n);
  const v = Float64Array.from({ length: n }, (_, j) => (j % 4) / 3);
  const inputs = [withCategories({ columns: [ones, zeros, v, v, v, v, v, v, v, v], weights: null })];
  const a = bootstrapIntervals(inputs, 5, 200, true, 'poisson')[0];
  const b = bootstrapIntervals(inputs, 5, 200, true, 'poisson')[0];
  assert.deepEqual([...a.low], [...b.low]);
  assert.deepEqual([...a.high], [...b.high]);
  assert.equal(a.low[0], 1);
  assert.equal(a.high[0], 1);
  assert.equal(a.low[1], 0);
  assert.equal(a.high[1], 0);
  assert.ok(a.low[2] < 0.5 && a.high[2] > 0.5);
});

test('the method: sob always CPython, strict Poisson above 50,000 records under auto, or as asked', () => {
  assert.equal(POISSON_FROM_RECORDS, 50_000);
  assert.equal(bootstrapMethodFor('auto', 'sob', 10_000_000), 'cpython');
  assert.equal(bootstrapMethodFor('poisson', 'sob', 10), 'cpython');
  assert.equal(bootstrapMethodFor('auto', 'strict', 50_000), 'cpython');
  assert.equal(bootstrapMethodFor('auto', 'strict', 50_001), 'poisson');
  assert.equal(bootstrapMethodFor(undefined, 'strict', 50_001), 'poisson');
  assert.equal(bootstrapMethodFor('cpython', 'strict', 1_000_000), 'cpython');
  assert.equal(bootstrapMethodFor('poisson', 'strict', 10), 'poisson');
});

/** 60 response lines, every third answer's total wrong. */
function responses(dir: string): string {
  const schema = {
    type: 'object',
    properties: { total: { type: 'number' }, name: { type: 'string' } },
    required: ['total', 'name'],
  };
  const lines = Array.from({ length: 60 }, (_, i) =>
    JSON.stringify({
      metadata: { record_id: `r${i}`, source: 'text', model_id: 'm' },
      input: { context: `r${i} totals ${i}`, question: 'Extract.', json_schema: schema },
      output: {
        ground_truth: { total: i, name: `r${i}` },
        candidate_response: { total: i % 3 === 0 ? i + 1 : i, name: `r${i}` },
      },
    }),
  );
  const file = join(dir, 'response_m.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

test('sob score --bootstrap-method poisson: named in the summary; the sob profile refuses it (exit 2)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-poisson-'));
  const file = responses(dir);
  const run = (out: string, ...args: string[]) =>
    spawnSync(process.execPath, [SOB, 'score', file, '--out', join(dir, out), ...args], { encoding: 'utf8' });
  const p = run('p', '--profile', 'strict', '--bootstrap-method', 'poisson');
  assert.equal(p.status, 0, p.stderr);
  const c = run('c', '--profile', 'strict');
  assert.equal(c.status, 0, c.stderr);
  const ps = JSON.parse(readFileSync(join(dir, 'p/text/m/eval_summary.json'), 'utf8'));
  const cs = JSON.parse(readFileSync(join(dir, 'c/text/m/eval_summary.json'), 'utf8'));
  assert.equal(ps.bootstrap_method, 'poisson');
  // 60 records: under auto the reference's draws, and no key for them.
  assert.equal(cs.bootstrap_method, undefined);
  const pm = ps.summary.overall.metrics.leaf_value_em;
  const cm = cs.summary.overall.metrics.leaf_value_em;
  assert.equal(pm.mean, cm.mean);
  // Other draws: at 60 records some bounds coincide (means are multiples of 1/60), not all.
  const bounds = (x: typeof ps) =>
    Object.values(x.summary.overall.metrics as Record<string, { ci95_low: number; ci95_high: number }>)
      .map((m) => `${m.ci95_low}/${m.ci95_high}`)
      .join(' ');
  assert.notEqual(bounds(ps), bounds(cs));
  assert.ok(pm.ci95_low < pm.mean && pm.mean < pm.ci95_high);
  const s = run('s', '--profile', 'sob', '--bootstrap-method', 'poisson');
  assert.equal(s.status, 2);
  assert.match(s.stderr, /--bootstrap-method poisson needs --profile strict/);
});

test('estimates are the counted sums of the terms, bit for bit: plain and weighted inputs, 4-column blocks and the rest', () => {
  // The kernel sums `count * (v w)` without a column of terms: the same doubles, in the same
  // (record) order, as summing the rounded terms one record at a time.
  const n = 3001;
  const cols = Array.from({ length: 6 }, (_, k) =>
    Float64Array.from({ length: n }, (_, j) => ((j * (7 + k)) % 13) / 9),
  );
  const w = Float64Array.from({ length: n }, (_, j) => [0.1, 1.7, 3][j % 3]);
  const inputs = [
    { columns: cols, weights: w },
    { columns: cols.slice(0, 5), weights: null },
  ];
  const samples = 7;
  const got = poissonEstimates(inputs, 9, samples);
  const counts = new Uint8Array(n);
  let checked = 0;
  for (let s = 0; s < samples; s++) {
    poissonCounts(9, s, counts, n);
    inputs.forEach((d, f) => {
      let denom = 0;
      for (let j = 0; j < n; j++) if (counts[j]) denom += counts[j] * (d.weights ? d.weights[j] : 1);
      d.columns.forEach((v, p) => {
        let sum = 0;
        for (let j = 0; j < n; j++)
          if (counts[j]) sum += counts[j] * (d.weights ? v[j] * d.weights[j] : v[j]);
        assert.equal(got[f][p * samples + s], sum / denom, `input ${f}, column ${p}, resample ${s}`);
        checked++;
      });
    });
  }
  assert.equal(checked, 77);
});
