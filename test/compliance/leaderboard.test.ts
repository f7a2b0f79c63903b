/**
 * `sob leaderboard --track compliance`: JSONSchemaBench's table shape (datasets as columns;
 * declared coverage, empirical coverage, compliance per model; efficiency where recorded) in the
 * four formats, with the numbers of the summaries `sob score` wrote.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sob } from '../report/run.ts';
import { json, type Line, responseLine } from './fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-compliance-lb-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const evalDir = join(tmp, 'evaluation');

const S = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
const valid = '{"a": 1}';
const invalid = '{"a": "one"}';
const refused = { latency_ms: 5, schema_rejected: true, error: 'HTTP 400: Invalid schema' };

/** Model `fast`: 3 datasets, timings; model `slow`: two datasets, no timings, one refusal. */
const MODELS: Record<string, Line[]> = {
  fast: [
    {
      id: 'a1',
      category: 'Alpha',
      schema: S,
      raw: valid,
      evalInfo: { latency_ms: 100, ttft_ms: 10, tpot_ms: 2 },
    },
    {
      id: 'a2',
      category: 'Alpha',
      schema: S,
      raw: invalid,
      evalInfo: { latency_ms: 200, ttft_ms: 20, tpot_ms: 4 },
    },
    {
      id: 'b1',
      category: 'Beta',
      schema: S,
      raw: valid,
      evalInfo: { latency_ms: 300, ttft_ms: 30, tpot_ms: 6 },
    },
    {
      id: 'c1',
      category: 'Gamma',
      schema: S,
      raw: valid,
      evalInfo: { latency_ms: 400, ttft_ms: 40, tpot_ms: 8 },
    },
  ],
  slow: [
    { id: 'a1', category: 'Alpha', schema: S, raw: invalid },
    { id: 'a2', category: 'Alpha', schema: S, raw: null, evalInfo: refused },
    { id: 'b1', category: 'Beta', schema: S, raw: valid },
  ],
};

before(() => {
  const responses = join(tmp, 'responses');
  mkdirSync(responses, { recursive: true });
  for (const [m, lines] of Object.entries(MODELS))
    writeFileSync(
      join(responses, `response_${m}.jsonl`),
      `${lines.map((l) => responseLine({ ...l, model: m })).join('\n')}\n`,
    );
  const r = sob('score', responses, '--out', evalDir, '--bootstrap-samples', '100');
  assert.equal(r.status, 0, r.stderr);
  writeFileSync(join(evalDir, 'display_names.json'), JSON.stringify({ fast: 'Fast Model' }));
  // A model folder without a summary is named, not read.
  mkdirSync(join(evalDir, 'schema', 'broken'), { recursive: true });
  writeFileSync(join(evalDir, 'schema', 'broken', 'eval_records.jsonl'), '{}\n');
});

function lb(...args: string[]) {
  return sob('leaderboard', evalDir, '--track', 'compliance', ...args);
}

test('json: models by empirical coverage, each dataset and overall as the summaries hold them', () => {
  const r = lb('--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /skipped schema\/broken: records without a summary/);
  const rows = JSON.parse(r.stdout);
  assert.deepEqual(
    rows.map((x: { model: string; display_name: string; rank: number }) => [x.rank, x.model, x.display_name]),
    [
      [1, 'fast', 'Fast Model'],
      [2, 'slow', 'slow'],
    ],
  );
  const [fast, slow] = rows;
  assert.deepEqual([fast.declared_coverage, fast.empirical_coverage, fast.compliance], [1, 0.75, 0.75]);
  assert.deepEqual([slow.declared_coverage, slow.empirical_coverage, slow.compliance], [2 / 3, 1 / 3, 0.5]);
  assert.deepEqual(Object.keys(fast.datasets), ['Alpha', 'Beta', 'Gamma']);
  assert.deepEqual(Object.keys(slow.datasets), ['Alpha', 'Beta']);
  assert.deepEqual(slow.datasets.Alpha.compliance, { count: 0, of: 1, rate: 0, ci95: [0, 0] });
  for (const m of ['fast', 'slow']) {
    const s = json(join(evalDir, 'schema', m, 'eval_summary.json')).compliance;
    const row = rows.find((x: { model: string }) => x.model === m);
    assert.deepEqual(row.overall, s.overall);
    assert.deepEqual(row.datasets, s.datasets);
  }
  assert.deepEqual(fast.overall.efficiency.latency_ms, { n: 4, median: 250, p90: 370 });
  assert.equal(slow.overall.efficiency.latency_ms.n, 0, 'the refused record is not declared');
});

test('table: datasets as columns, one block per measure, efficiency where recorded', () => {
  const r = lb();
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const block = (title: string) => {
    const i = lines.findIndex((l) => l.startsWith(title));
    assert.ok(i >= 0, `no ${title} block`);
    return lines.slice(i + 1, i + 4).map((l) => l.trim().split(/\s{2,}/));
  };
  const emp = block('Empirical coverage');
  assert.deepEqual(emp[0], ['#', 'Model', 'n', 'Alpha', 'Beta', 'Gamma', 'Overall']);
  assert.deepEqual(emp[1], ['1', 'Fast Model', '4', '0.500', '1.000', '1.000', '0.750']);
  assert.deepEqual(emp[2], ['2', 'slow', '3', '0.000', '1.000', '-', '0.333']);
  assert.deepEqual(block('Declared coverage')[2], ['2', 'slow', '3', '0.500', '1.000', '-', '0.667']);
  assert.deepEqual(block('Compliance')[2], ['2', 'slow', '3', '0.000', '1.000', '-', '0.500']);
  const ttft = block('Time to first token');
  assert.deepEqual(ttft[1], [
    '1',
    'Fast Model',
    '4',
    '15.0 / 19.0',
    '30.0 / 30.0',
    '40.0 / 40.0',
    '25.0 / 37.0',
  ]);
  assert.deepEqual(ttft[2], ['2', 'slow', '3', '-', '-', '-', '-']);
  assert.deepEqual(block('Total time')[1].slice(-1), ['250 / 370']);
});

test('md and csv: the same numbers, with the 95% intervals', () => {
  const md = lb('--format', 'md');
  assert.equal(md.status, 0, md.stderr);
  const s = json(join(evalDir, 'schema', 'fast', 'eval_summary.json')).compliance.overall.empirical_coverage;
  assert.ok(
    md.stdout.includes(`| 1 | Fast Model | 4 | 0.500 [`) &&
      md.stdout.includes(`0.750 [${s.ci95[0].toFixed(3)}, ${s.ci95[1].toFixed(3)}] |`),
    md.stdout,
  );
  assert.match(md.stdout, /\| # \| Model \| n \| Alpha \| Beta \| Gamma \| Overall \|/);
  const csv = lb('--format', 'csv');
  assert.equal(csv.status, 0, csv.stderr);
  // No value here holds a comma or a quote: a plain split reads it.
  const [head, ...body] = csv.stdout
    .trim()
    .split('\n')
    .map((l) => l.split(','));
  const rows = body.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]])));
  const get = (measure: string, model: string) =>
    rows.find((r) => r.measure === measure && r.model === model)!;
  assert.deepEqual(Object.keys(rows[0]), [
    'measure',
    'rank',
    'model',
    'display_name',
    'records',
    'Alpha',
    'Beta',
    'Gamma',
    'overall',
  ]);
  assert.deepEqual(
    ['Alpha', 'Beta', 'Gamma', 'overall'].map((k) => get('empirical_coverage', 'slow')[k]),
    ['0', '1', '', '0.3333333333333333'],
  );
  assert.equal(Number(get('empirical_coverage_ci95_low', 'fast').overall), s.ci95[0]);
  assert.equal(get('compliance_count', 'slow').overall, '1');
  assert.equal(get('latency_ms_median', 'fast').overall, '250');
  assert.equal(get('latency_ms_p90', 'slow').overall, '');
});

test('usage: value-leaderboard flags are refused with --track compliance; the value track on schema results says where to look', () => {
  const bad = lb('--ranks');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--ranks: not for --track compliance/);
  const plain = sob('leaderboard', evalDir);
  assert.equal(plain.status, 1);
  assert.match(
    plain.stderr,
    /holds schema compliance results only \(schema\/<model>\/\): sob leaderboard .* --track compliance/,
  );
  const none = sob('leaderboard', tmp, '--track', 'compliance');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no schema\/<model>\/eval_summary.json with compliance results under/);
});
