/**
 * Bad input to `sob score`: one clear line, the documented counts, nothing already done lost,
 * and no untrusted answer or schema can crash or hang a run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const SOB = join(ROOT, 'bin/sob.js');
const tmp = mkdtempSync(join(tmpdir(), 'sob-bad-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function sob(args: string[], timeoutMs = 120_000) {
  const r = spawnSync(process.execPath, [SOB, ...args], { encoding: 'utf8', timeout: timeoutMs, cwd: tmp });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, n: { type: 'integer' } },
  required: ['name'],
};

function record(id: string, candidate: unknown, schema: unknown = SCHEMA, gt: unknown = { name: 'x', n: 1 }) {
  return JSON.stringify({
    metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy' },
    input: { context: 'name x, n 1', question: 'q', json_schema: schema },
    output: { ground_truth: gt, candidate_response: candidate },
  });
}

function readOut(out: string, modality: string, model: string) {
  const dir = join(out, modality, model);
  const rows = readFileSync(join(dir, 'eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const summary = JSON.parse(readFileSync(join(dir, 'eval_summary.json'), 'utf8')) as {
    num_records: number;
    data_quality: Record<string, number>;
  };
  return { rows, summary };
}

test('a malformed JSONL line is counted, named as file:line, and skipped', () => {
  const f = join(tmp, 'response_mal.jsonl');
  writeFileSync(
    f,
    `${record('a', { name: 'x', n: 1 })}\n{"broken": \n\n${record('b', { name: 'y', n: 1 })}\n`,
  );
  const out = join(tmp, 'out-mal');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /response_mal\.jsonl:2: skipped: not JSON/);
  const { rows, summary } = readOut(out, 'text', 'mal');
  assert.equal(rows.length, 2);
  assert.equal(summary.num_records, 2);
  assert.equal(summary.data_quality.malformed_jsonl_line_count, 1);
});

test('a line whose schema is not well-formed JSON is malformed, even though the scorer skips building it', () => {
  const f = join(tmp, 'response_badschema.jsonl');
  const good = record('a', { name: 'x', n: 1 });
  const broken = good
    .replace('"required":["name"]}', '"required":["name"],}')
    .replace('"id":"a"', '"id":"b"');
  assert.notEqual(broken, good);
  writeFileSync(f, `${good}\n${broken}\n${good.replace('"record_id":"a"', '"record_id":"c"')}\n`);
  const out = join(tmp, 'out-badschema');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /response_badschema\.jsonl:2: skipped: not JSON/);
  const { rows, summary } = readOut(out, 'text', 'badschema');
  assert.deepEqual(
    rows.map((x) => x.record_id),
    ['a', 'c'],
  );
  assert.equal(summary.data_quality.malformed_jsonl_line_count, 1);
});

test('a malformed ground truth is a malformed line; a scalar ground truth is read from its text', () => {
  const f = join(tmp, 'response_badgt.jsonl');
  const good = record('a', { name: 'x', n: 1 });
  const broken = record('b', { name: 'x', n: 1 }).replace(
    '"ground_truth":{"name":"x","n":1}',
    '"ground_truth":{"name":"x","n":1,}',
  );
  const scalar = record('c', { name: 'x', n: 1 }, SCHEMA, 'just text');
  assert.notEqual(broken, record('b', { name: 'x', n: 1 }));
  writeFileSync(f, `${good}\n${broken}\n${scalar}\n`);
  const out = join(tmp, 'out-badgt');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /response_badgt\.jsonl:2: skipped: not JSON/);
  const { rows } = readOut(out, 'text', 'badgt');
  assert.deepEqual(
    rows.map((x) => x.record_id),
    ['a', 'c'],
  );
  // A scalar ground truth has no leaves: the reference's rules give Path Recall 0 and (text gate
  // shut) Value Accuracy 0; a structured answer is never the same as the string.
  assert.equal(rows[1].hier_path_recall, 0);
  assert.equal(rows[1].strict_json_em, 0);
});

test('a missing file is one clear line and exit 1', () => {
  const r = sob(['score', join(tmp, 'nope.jsonl')]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /^sob: no such file or directory: .*nope\.jsonl$/m);
});

test('an empty folder is one clear line and exit 1', () => {
  const d = join(tmp, 'empty');
  mkdirSync(d);
  const r = sob(['score', d]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /sob: no \*\.jsonl response files in .*empty/);
});

test('a file with no records fails that file only; the other file is still scored', () => {
  const d = join(tmp, 'mixed');
  mkdirSync(d);
  writeFileSync(join(d, 'response_empty.jsonl'), '\n\n');
  writeFileSync(join(d, 'response_good.jsonl'), `${record('a', { name: 'x', n: 1 })}\n`);
  const out = join(tmp, 'out-mixed');
  const r = sob(['score', d, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /response_empty\.jsonl: no records to score/);
  assert.equal(readOut(out, 'text', 'good').summary.num_records, 1);
});

test('a json_schema that is not an object counts as invalid schema input', () => {
  const f = join(tmp, 'response_schema.jsonl');
  writeFileSync(
    f,
    `${record('a', { name: 'x' }, 'not a schema')}\n${record('b', { name: 'x' }, [1, 2])}\n${record('c', { name: 'x', n: 1 })}\n`,
  );
  const out = join(tmp, 'out-schema');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  const { rows, summary } = readOut(out, 'text', 'schema');
  assert.equal(summary.data_quality.invalid_schema_input_count, 2);
  assert.deepEqual(
    rows.map((x) => x.schema_valid_input),
    [0, 0, 1],
  );
  assert.deepEqual(
    rows.map((x) => x.schema_compliance),
    [0, 0, 1],
  );
});

test('an answer nested 100,000 levels deep and a 50 MB answer are scored without crashing', () => {
  const f = join(tmp, 'response_huge.jsonl');
  const depth = 100_000;
  const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const deepLine = record('deep', { name: 'x', n: 1 }).replace('{"name":"x","n":1}}}', `${deep}}}`);
  const big = 'word '.repeat(10_000_000); // 50 MB
  writeFileSync(
    f,
    `${deepLine}\n${record('big', { name: big, n: 1 })}\n${record('ok', { name: 'x', n: 1 })}\n`,
  );
  const out = join(tmp, 'out-huge');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  const { rows } = readOut(out, 'text', 'huge');
  assert.deepEqual(
    rows.map((x) => x.record_id),
    ['deep', 'big', 'ok'],
  );
  // The deep answer is an object without the required "name": it fails the schema.
  assert.equal(rows[0].json_parse_success, 1);
  assert.equal(rows[0].schema_compliance, 0);
  // The 50 MB name is schema-valid but wrong: "word word ..." vs "x".
  assert.equal(rows[1].schema_compliance, 1);
  assert.equal(rows[1].leaf_value_em, 0.5);
  assert.equal(rows[2].leaf_value_em, 1);
});

test('a catastrophic pattern is stopped at the record time budget and reported, the rest scored', () => {
  const f = join(tmp, 'response_redos.jsonl');
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(a+)+$' } },
    required: ['name'],
  };
  const evil = `${'a'.repeat(40)}b`;
  writeFileSync(
    f,
    `${record('before', { name: 'x', n: 1 })}\n${record('redos', { name: evil }, schema, { name: 'aaa' })}\n${record('after', { name: 'x', n: 1 })}\n`,
  );
  const out = join(tmp, 'out-redos');
  const started = Date.now();
  const r = sob(
    ['score', f, '--out', out, '--bootstrap-samples', '10', '--record-timeout-ms', '1500'],
    60_000,
  );
  const elapsed = Date.now() - started;
  assert.equal(r.code, 0, r.stderr);
  assert.ok(elapsed < 30_000, `took ${elapsed} ms`);
  assert.match(
    r.stderr,
    /response_redos\.jsonl:2 \(record redos\): scoring exceeded 1500 ms; reported with scoring_error/,
  );
  const { rows, summary } = readOut(out, 'text', 'redos');
  assert.deepEqual(
    rows.map((x) => x.record_id),
    ['before', 'redos', 'after'],
  );
  assert.equal((rows[1].explanation as { scoring_error: string }).scoring_error, 'scoring exceeded 1500 ms');
  assert.equal(rows[1].schema_compliance, 0);
  assert.equal(rows[2].leaf_value_em, 1);
  assert.equal(summary.data_quality.scoring_error_count, 1);
});

test('usage errors exit 2', () => {
  assert.equal(sob(['score']).code, 2);
  assert.equal(sob(['score', 'x.jsonl', '--bootstrap-samples', 'many']).code, 2);
  assert.equal(sob(['frobnicate']).code, 2);
  assert.equal(sob(['--help']).code, 0);
});

test('records naming no schema_complexity are said to weigh 0 (why the weighted means read 0.000)', () => {
  const d = join(tmp, 'unweighted');
  mkdirSync(d);
  const bare = (id: string) => {
    const o = JSON.parse(record(id, { name: 'x', n: 1 }));
    delete o.metadata.schema_complexity;
    return JSON.stringify(o);
  };
  // All three records without a weight: every weighted mean is 0 although every answer is right.
  writeFileSync(join(d, 'response_bare.jsonl'), `${['a', 'b', 'c'].map(bare).join('\n')}\n`);
  // Two of three without: the one with a weight decides the weighted means.
  writeFileSync(
    join(d, 'response_some.jsonl'),
    `${[bare('a'), bare('b'), record('c', { name: 'x', n: 1 })].join('\n')}\n`,
  );
  // Every record weighted: nothing said.
  writeFileSync(join(d, 'response_full.jsonl'), `${record('a', { name: 'x', n: 1 })}\n`);
  const out = join(tmp, 'out-unweighted');
  const r = sob(['score', d, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /response_bare\.jsonl \(text\): none of its 3 records names schema_complexity .*every weighted mean is 0\.000/,
  );
  assert.match(
    r.stderr,
    /response_some\.jsonl \(text\): 2 of its 3 records name no schema_complexity .*left out of the weighted means/,
  );
  assert.doesNotMatch(r.stderr, /response_full\.jsonl \(text\): .*schema_complexity/);
  const bareSummary = readOut(out, 'text', 'bare').summary as unknown as {
    data_quality: Record<string, number>;
    summary: {
      overall: { metrics: Record<string, { mean: number }> };
      overall_weighted: { metrics: Record<string, { mean: number }> };
    };
  };
  assert.equal(bareSummary.data_quality.unknown_difficulty_count, 3);
  assert.equal(bareSummary.summary.overall.metrics.leaf_value_em.mean, 1);
  assert.equal(bareSummary.summary.overall_weighted.metrics.leaf_value_em.mean, 0);
});

test('node started with V8 flags (--max-semi-space-size, --stack-size) still scores: the workers take only Node options', () => {
  const d = join(tmp, 'v8flags');
  mkdirSync(d);
  writeFileSync(
    join(d, 'response_m.jsonl'),
    `${record('a', { name: 'x', n: 1 })}\n${record('b', { name: 'y' })}\n`,
  );
  const out = join(tmp, 'out-v8flags');
  const r = spawnSync(
    process.execPath,
    [
      '--max-semi-space-size=16',
      '--stack-size=2000',
      SOB,
      'score',
      d,
      '--out',
      out,
      '--bootstrap-samples',
      '10',
    ],
    { encoding: 'utf8', timeout: 60_000, cwd: tmp },
  );
  assert.equal(r.status, 0, `${r.signal ?? ''} ${r.stderr}`);
  assert.equal(readOut(out, 'text', 'm').summary.num_records, 2);
});
