/**
 * Coverage, compliance and efficiency over records (JSONSchemaBench), on hand-counted rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  aggregateCompliance,
  answerFromRow,
  type ComplianceRow,
  complianceOfRecord,
  complianceRow,
  parseAnswerText,
  quantile,
  SchemaCache,
} from '../../metrics/compliance.ts';

// Dataset A: 4 records, 3 declared, 2 valid; dataset B: 2 records, both declared and valid.
const rows: ComplianceRow[] = [
  {
    dataset: 'A',
    declared: true,
    valid: true,
    partial_validity: 1,
    ttft_ms: 100,
    tpot_ms: 10,
    latency_ms: 1000,
  },
  {
    dataset: 'A',
    declared: true,
    valid: false,
    partial_validity: 0.5,
    violation_keywords: { type: 2, required: 1 },
    ttft_ms: 300,
    tpot_ms: 20,
    latency_ms: 3000,
  },
  {
    dataset: 'A',
    declared: true,
    valid: true,
    partial_validity: 1,
    ttft_ms: 200,
    tpot_ms: null,
    latency_ms: 2000,
  },
  { dataset: 'A', declared: false, valid: false, partial_validity: null, latency_ms: 50 },
  { dataset: 'B', declared: true, valid: true, partial_validity: 1, violation_keywords: {}, latency_ms: 500 },
  {
    dataset: 'B',
    declared: true,
    valid: true,
    partial_validity: 1,
    violation_keywords: { type: 1 },
    latency_ms: 700,
  },
];

test('declared coverage, empirical coverage and compliance per dataset and overall equal the hand counts', () => {
  const s = aggregateCompliance(rows, { bootstrapSamples: 200, seed: 7 });
  assert.deepEqual(Object.keys(s.datasets), ['A', 'B']);
  const a = s.datasets.A;
  assert.equal(a.n, 4);
  assert.deepEqual(
    [a.declared_coverage.count, a.declared_coverage.of, a.declared_coverage.rate],
    [3, 4, 0.75],
  );
  assert.deepEqual(
    [a.empirical_coverage.count, a.empirical_coverage.of, a.empirical_coverage.rate],
    [2, 4, 0.5],
  );
  assert.deepEqual([a.compliance.count, a.compliance.of, a.compliance.rate], [2, 3, 2 / 3]);
  const b = s.datasets.B;
  assert.deepEqual([b.declared_coverage.rate, b.empirical_coverage.rate, b.compliance.rate], [1, 1, 1]);
  const o = s.overall;
  assert.deepEqual(
    [o.n, o.declared_coverage.rate, o.empirical_coverage.rate, o.compliance.rate],
    [6, 5 / 6, 4 / 6, 4 / 5],
  );
  // Partial validity: mean over measured records (A: 1, 0.5, 1; B: 1, 1).
  assert.deepEqual(a.partial_validity, { n: 3, mean: 2.5 / 3 });
  assert.deepEqual(o.partial_validity, { n: 5, mean: 4.5 / 5 });
  // Records with each violation keyword, commonest first.
  assert.deepEqual(o.violation_keywords, [
    { keyword: 'type', records: 2 },
    { keyword: 'required', records: 1 },
  ]);
});

test('bootstrap intervals: constant columns are exact, others bracket the rate, same seed same interval', () => {
  const s = aggregateCompliance(rows, { bootstrapSamples: 500, seed: 7 });
  assert.deepEqual(s.datasets.B.compliance.ci95, [1, 1]);
  for (const r of [s.datasets.A.declared_coverage, s.datasets.A.empirical_coverage, s.overall.compliance]) {
    assert.ok(r.ci95);
    const [lo, hi] = r.ci95;
    assert.ok(lo >= 0 && hi <= 1 && lo <= r.rate && r.rate <= hi, JSON.stringify(r));
    assert.ok(hi > lo, 'a mixed column has a non-degenerate interval');
  }
  const again = aggregateCompliance(rows, { bootstrapSamples: 500, seed: 7 });
  assert.deepEqual(again.overall.compliance.ci95, s.overall.compliance.ci95);
  const none = aggregateCompliance(rows, { bootstrapSamples: 0 });
  assert.equal(none.overall.compliance.ci95, null);
});

test('efficiency: medians and 90th percentiles of the declared records that carry timings', () => {
  const a = aggregateCompliance(rows, { bootstrapSamples: 0 }).datasets.A.efficiency;
  // ttft 100, 300, 200 -> sorted 100 200 300: median 200, p90 at rank 1.8 = 200 + 0.8 x 100.
  assert.deepEqual(a.ttft_ms, { n: 3, median: 200, p90: 280 });
  // tpot 10, 20 (the third has none): median 15, p90 = 10 + 0.9 x 10.
  assert.deepEqual(a.tpot_ms, { n: 2, median: 15, p90: 19 });
  // latency: the refused record's 50 ms is not a generation.
  assert.deepEqual(a.latency_ms, { n: 3, median: 2000, p90: 2800 });
  const b = aggregateCompliance(rows, { bootstrapSamples: 0 }).datasets.B.efficiency;
  assert.deepEqual(b.ttft_ms, { n: 0, median: null, p90: null });
  assert.equal(quantile([5], 0.9), 5);
  assert.equal(quantile([], 0.5), null);
});

test('complianceRow carries a record block and eval_info into the aggregate', () => {
  const schema = { type: 'object', required: ['a'] };
  const ok = complianceOfRecord({ schema, answer: parseAnswerText('{"a": 1}') });
  const bad = complianceOfRecord({ schema, answer: parseAnswerText('{}') });
  const refused = complianceOfRecord({ schema, answer: parseAnswerText(null), schemaRejected: true });
  const r = [
    complianceRow('X', ok, { ttft_ms: 12.5, tpot_ms: 3, latency_ms: 40 }),
    complianceRow('X', bad, { latency_ms: 'n/a' }),
    complianceRow('X', refused, {}),
  ];
  assert.deepEqual(
    r.map((x) => [x.declared, x.valid, x.partial_validity, x.latency_ms]),
    [
      [true, true, 1, 40],
      [true, false, 0.5, null], // type met, required broken
      [false, false, null, null],
    ],
  );
  const s = aggregateCompliance(r, { bootstrapSamples: 0 }).overall;
  assert.deepEqual(
    [s.declared_coverage.rate, s.empirical_coverage.rate, s.compliance.rate],
    [2 / 3, 1 / 3, 1 / 2],
  );
  assert.deepEqual(s.violation_keywords, [{ keyword: 'required', records: 1 }]);
  // The record blocks are plain JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(bad)), bad);
});

test('answerFromRow reads raw_response first, then candidate_response', () => {
  assert.deepEqual(answerFromRow('{"a": 1}', { a: 2 }), { parsed: true, value: { a: 1 } });
  assert.deepEqual(answerFromRow(undefined, { a: 2 }), { parsed: true, value: { a: 2 } });
  assert.equal(answerFromRow(undefined, 'Sure! {"a": 1}').parsed, false);
  assert.equal(answerFromRow(undefined, null).parsed, false);
  assert.equal(answerFromRow('```json\n{"a": 1}\n```', null, { fences: true }).parsed, true);
});

test('SchemaCache compiles a schema text once and keeps the most recent ones', () => {
  const cache = new SchemaCache(2);
  let built = 0;
  const get = (k: string) =>
    cache.get(k, () => {
      built++;
      return JSON.parse(k);
    });
  const a = get('{"type": "string"}');
  assert.equal(get('{"type": "string"}'), a);
  get('{"type": "integer"}');
  get('{"type": "string"}');
  get('{"type": "null"}'); // evicts integer, the least recently used
  get('{"type": "string"}');
  assert.equal(built, 3);
  get('{"type": "integer"}');
  assert.equal(built, 4);
});
