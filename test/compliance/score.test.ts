/**
 * `sob score` on responses to schema records (issue 11 items 3 and 4): per record the compliance
 * block (validity, every violation with instance path, schema path and keyword, partial validity),
 * per dataset and overall the declared and empirical coverage and compliance (hand-counted), the
 * efficiency medians and 90th percentiles, and how schema records meet the SOB metrics: they never
 * enter a text/image/audio summary; the sob profile's SOB rows are unchanged, the strict
 * profile's carry the compliance block; a refused SOB record is left out of the means and counted.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sob } from '../report/run.ts';
import {
  json,
  jsonl,
  type Line,
  PLANTED_ANSWER,
  PLANTED_SCHEMA,
  PLANTED_VIOLATIONS,
  q,
  responseLine,
  violationTriples,
} from './fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-compliance-score-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SIMPLE = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
const TEXT_SCHEMA = { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] };
const REFUSED = {
  latency_ms: 10,
  schema_rejected: true,
  error: "HTTP 400: Invalid schema for response_format 'answer'",
};

const SCHEMA_LINES: Line[] = [
  {
    id: 's1',
    category: 'D1',
    track: 'compliance',
    schema: SIMPLE,
    raw: '{"a": "x"}',
    evalInfo: { latency_ms: 100, ttft_ms: 20, tpot_ms: 5 },
  },
  {
    id: 's2',
    category: 'D1',
    track: 'compliance',
    schema: PLANTED_SCHEMA,
    raw: PLANTED_ANSWER,
    evalInfo: { latency_ms: 300, ttft_ms: 40, tpot_ms: 7 },
  },
  { id: 's3', category: 'D1', track: 'compliance', schema: SIMPLE, raw: null, evalInfo: REFUSED },
  {
    id: 's4',
    category: 'D2',
    track: 'compliance',
    schema: SIMPLE,
    raw: 'Sure! {"a": "x"}',
    evalInfo: { latency_ms: 200, ttft_ms: 30, tpot_ms: 6 },
  },
  {
    id: 's5',
    category: 'D2',
    track: 'compliance',
    schema: SIMPLE,
    raw: '{"a": "y"}',
    evalInfo: { latency_ms: 400, ttft_ms: 50, tpot_ms: 9 },
  },
  {
    id: 's6',
    category: 'D2',
    track: 'compliance',
    schema: { $ref: 'https://example.com/remote.json' },
    raw: '{"a": "x"}',
  },
  { id: 's7', category: '__proto__', track: 'compliance', schema: SIMPLE, raw: '{"a": "z"}' },
  {
    id: 'p1',
    category: 'probes:escape',
    track: 'both',
    schema: { type: 'object', properties: { value: { type: 'string', maxLength: 3 } }, required: ['value'] },
    raw: '{"value": "a\\"b"}',
    groundTruth: { value: 'a"b' },
  },
];
const TEXT_LINES: Line[] = [
  { id: 't1', source: 'text', schema: TEXT_SCHEMA, raw: '{"x": 1}', groundTruth: { x: 1 } },
  { id: 't2', source: 'text', schema: TEXT_SCHEMA, raw: null, groundTruth: { x: 2 }, evalInfo: REFUSED },
  { id: 't3', source: 'text', schema: TEXT_SCHEMA, raw: '{"x": "one"}', groundTruth: { x: 3 } },
];

function writeResponses(dir: string, lines: Line[]): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'response_m.jsonl');
  writeFileSync(file, `${lines.map(responseLine).join('\n')}\n`);
  return file;
}

/**
 * These tests pin the track's counting under the dialect reading (s6's remote `$ref` makes its
 * schema uncompilable there); test/schema/protocol.test.ts covers the jsonschemabench protocol.
 */
function score(input: string, out: string, ...flags: string[]) {
  const r = sob(
    'score',
    input,
    '--out',
    out,
    '--bootstrap-samples',
    '200',
    '--protocol',
    'dialect',
    ...flags,
  );
  assert.equal(r.status, 0, r.stderr);
  return r;
}

const mixed = writeResponses(join(tmp, 'mixed'), [
  ...SCHEMA_LINES.slice(0, 4),
  ...TEXT_LINES,
  ...SCHEMA_LINES.slice(4),
]);

test('schema records: coverage, compliance and efficiency per dataset and overall equal the hand counts', () => {
  const out = join(tmp, 'eval-sob');
  const r = score(mixed, out);
  assert.match(
    r.stdout,
    /response_m\.jsonl\s+schema\s+8\s+declared 0\.875 \(7\/8\)\s+empirical 0\.500 \(4\/8\)\s+compliance 0\.571 \(4\/7\)/,
  );
  const s = json(join(out, 'schema/m/eval_summary.json'));
  assert.equal(s.num_records, 8);
  assert.equal(s.track, 'compliance');
  assert.equal(s.profile, 'sob');
  assert.deepEqual(s.data_quality, {
    json_parse_fail_count: 1,
    schema_rejected_count: 1,
    uncompilable_schema_count: 1,
    scoring_error_count: 0,
    malformed_jsonl_line_count: 0,
    duplicate_record_id_count: 0,
    distinct_record_ids: 8,
  });
  const rates = (g: Record<string, { count: number; of: number }>) =>
    ['declared_coverage', 'empirical_coverage', 'compliance'].map((k) => `${g[k].count}/${g[k].of}`);
  const c = s.compliance;
  assert.deepEqual(rates(c.overall), ['7/8', '4/8', '4/7']);
  assert.deepEqual(Object.keys(c.datasets), ['D1', 'D2', '__proto__', 'probes:escape']);
  assert.deepEqual(rates(c.datasets.D1), ['2/3', '1/3', '1/2']);
  assert.deepEqual(rates(c.datasets.D2), ['3/3', '1/3', '1/3']);
  assert.deepEqual(rates(Object.getOwnPropertyDescriptor(c.datasets, '__proto__')?.value), [
    '1/1',
    '1/1',
    '1/1',
  ]);
  assert.deepEqual(rates(c.datasets['probes:escape']), ['1/1', '1/1', '1/1']);
  assert.equal(c.overall.empirical_coverage.rate, 0.5);
  // Bootstrap intervals bracket the rate.
  for (const k of ['declared_coverage', 'empirical_coverage', 'compliance']) {
    const g = c.overall[k];
    assert.ok(g.ci95[0] <= g.rate && g.rate <= g.ci95[1], `${k} ${g.ci95} vs ${g.rate}`);
  }
  assert.deepEqual(c.bootstrap, { samples: 200, seed: 42 });
  // Efficiency: the declared records that recorded timings (s1, s2, s4, s5), not the refused s3.
  const e = c.overall.efficiency;
  assert.deepEqual(e.latency_ms, {
    n: 4,
    median: q([100, 300, 200, 400], 0.5),
    p90: q([100, 300, 200, 400], 0.9),
  });
  assert.deepEqual([e.latency_ms.median, e.latency_ms.p90], [250, 370]);
  assert.deepEqual(e.ttft_ms, { n: 4, median: 35, p90: q([20, 40, 30, 50], 0.9) });
  assert.deepEqual(e.tpot_ms, { n: 4, median: 6.5, p90: q([5, 7, 6, 9], 0.9) });
  assert.deepEqual(c.datasets.D1.efficiency.latency_ms, { n: 2, median: 200, p90: 280 });
  // Violation keywords: records with at least one violation of each.
  assert.deepEqual(
    c.overall.violation_keywords
      .map((k: { keyword: string; records: number }) => `${k.keyword}:${k.records}`)
      .sort(),
    ['additionalProperties:1', 'format:1', 'maxItems:1', 'minLength:1', 'minimum:1', 'required:1', 'type:1'],
  );
  // The probe (track both) is also scored with the SOB metrics, alone in the summary block.
  assert.equal(s.summary.overall.n, 1);
  assert.equal(s.summary.overall.metrics.leaf_value_em.mean, 1);
  assert.equal(s.summary.overall.metrics.strict_json_em.mean, 1);
});

test('a planted invalid answer: every violation is listed with its instance path, schema path and keyword', () => {
  const rows = jsonl(join(tmp, 'eval-sob/schema/m/eval_records.jsonl'));
  assert.deepEqual(
    rows.map((r) => r.record_id),
    ['s1', 's2', 's3', 's4', 's5', 's6', 's7', 'p1'],
  );
  const byId = new Map(rows.map((r) => [r.record_id, r]));
  const s2 = byId.get('s2');
  assert.equal(s2.compliance.valid, false);
  assert.equal(s2.compliance.violation_count, 7);
  assert.deepEqual(violationTriples(s2.compliance), PLANTED_VIOLATIONS);
  for (const v of s2.compliance.violations) assert.ok(v.message.length > 0);
  const t = s2.compliance.constraints;
  assert.ok(t.applicable > 7 && t.satisfied === t.applicable - 7, JSON.stringify(t));
  assert.equal(s2.compliance.partial_validity, t.satisfied / t.applicable);
  assert.deepEqual(s2.timing, { latency_ms: 300, ttft_ms: 40, tpot_ms: 7 });
  // A schema record has no value to compare: no SOB metric in its row.
  assert.equal(s2.leaf_value_em, undefined);
  assert.equal(s2.strict_json_em, undefined);
  assert.equal(s2.track, 'compliance');
  assert.equal(s2.source_category, 'D1');
  // The refused, unparsable and uncompilable records say so.
  const s3 = byId.get('s3');
  assert.deepEqual(
    [s3.compliance.schema_rejected, s3.compliance.valid, s3.compliance.partial_validity],
    [true, false, null],
  );
  assert.match(s3.explanation.schema_rejected, /Invalid schema/);
  const s4 = byId.get('s4');
  assert.deepEqual([s4.compliance.parses, s4.compliance.partial_validity], [false, 0]);
  assert.match(s4.compliance.parse_error, /not JSON/);
  const s6 = byId.get('s6');
  assert.equal(s6.compliance.schema_compiles, false);
  assert.match(s6.compliance.schema_error, /remote \$ref https:\/\/example.com\/remote.json/);
  // The probe carries both tracks.
  const p1 = byId.get('p1');
  assert.equal(p1.track, 'both');
  assert.deepEqual([p1.leaf_value_em, p1.strict_json_em, p1.compliance.valid], [1, 1, true]);
});

test('schema records leave the SOB summaries alone; a refused SOB record is left out of the means and counted', () => {
  // The text records of the mixed file, scored alone (without the refused one).
  const alone = writeResponses(join(tmp, 'text-only'), [TEXT_LINES[0], TEXT_LINES[2]]);
  const out = join(tmp, 'eval-text-only');
  score(alone, out);
  const expected = json(join(out, 'text/m/eval_summary.json'));
  const got = json(join(tmp, 'eval-sob/text/m/eval_summary.json'));
  assert.equal(got.data_quality.schema_rejected_count, 1);
  delete got.data_quality.schema_rejected_count;
  delete got.response_file;
  delete expected.response_file;
  assert.deepEqual(got, expected);
  assert.equal(got.num_records, 2);
  // The sob profile's rows are the reference's: no compliance block.
  assert.equal(got.summary.overall_weighted.metrics.schema_compliance.mean, 0.5);
  const rows = jsonl(join(tmp, 'eval-sob/text/m/eval_records.jsonl'));
  assert.deepEqual(
    rows.map((r) => r.record_id),
    ['t1', 't3'],
  );
  for (const r of rows) assert.equal(r.compliance, undefined);
  assert.deepEqual(rows, jsonl(join(out, 'text/m/eval_records.jsonl')));
});

test('strict profile: SOB rows also carry the violations and partial validity; schema rows are the same', () => {
  const out = join(tmp, 'eval-strict');
  score(mixed, out, '--profile', 'strict');
  const rows = jsonl(join(out, 'text/m/eval_records.jsonl'));
  const [t1, t3] = rows;
  assert.deepEqual(
    [t1.compliance.valid, t1.compliance.partial_validity, t1.compliance.violation_count],
    [true, 1, 0],
  );
  assert.equal(t3.compliance.valid, false);
  assert.deepEqual(violationTriples(t3.compliance), [['/x', '#/properties/x/type', 'type']]);
  assert.equal(t3.schema_compliance, 0, 'the JSON Pass of the row agrees');
  const strictSchema = jsonl(join(out, 'schema/m/eval_records.jsonl'));
  const sobSchema = jsonl(join(tmp, 'eval-sob/schema/m/eval_records.jsonl'));
  assert.deepEqual(
    strictSchema.map((r) => r.compliance),
    sobSchema.map((r) => r.compliance),
  );
  const s = json(join(out, 'schema/m/eval_summary.json'));
  assert.equal(s.profile, 'strict');
  assert.deepEqual(s.compliance, json(join(tmp, 'eval-sob/schema/m/eval_summary.json')).compliance);
});

test('a schema record whose validation runs over the time budget is invalid with the reason; the next one is scored', () => {
  const slow: Line[] = [
    {
      id: 'slow',
      category: 'D',
      schema: { type: 'string', pattern: '^(a+)+$' },
      raw: JSON.stringify(`${'a'.repeat(36)}b`),
    },
    { id: 'next', category: 'D', schema: SIMPLE, raw: '{"a": "x"}' },
  ];
  const file = writeResponses(join(tmp, 'slow'), slow);
  const out = join(tmp, 'eval-slow');
  const r = score(file, out, '--record-timeout-ms', '1500');
  assert.match(
    r.stderr,
    /response_m.jsonl:1 \(record slow\): scoring exceeded 1500 ms; reported with scoring_error/,
  );
  const [a, b] = jsonl(join(out, 'schema/m/eval_records.jsonl'));
  assert.equal(a.compliance.valid, false);
  assert.match(a.explanation.scoring_error, /exceeded 1500 ms/);
  assert.equal(b.compliance.valid, true);
  const s = json(join(out, 'schema/m/eval_summary.json'));
  assert.equal(s.data_quality.scoring_error_count, 1);
  assert.equal(s.data_quality.json_parse_fail_count, 0);
  assert.deepEqual(
    [s.compliance.overall.declared_coverage.count, s.compliance.overall.empirical_coverage.count],
    [2, 1],
  );
  assert.equal(
    readFileSync(join(out, 'schema/m/eval_records.jsonl'), 'utf8').split('\n').filter(Boolean).length,
    2,
  );
});
