/**
 * Issue 29, finding 3: a validator is never chosen by a timer. A Draft 2020-12 schema routed to
 * hyperjump (`unevaluatedProperties`) whose compile runs past its budget (half the record's,
 * `--record-timeout-ms`) is not scored, with that reason, and counted with the uncompilable
 * schemas; it is no longer validated by ajv instead, which reads `{"foo": 1}` under
 * `allOf: [{if: {properties: {foo: {const: 1}}}}]` + `unevaluatedProperties: false` as invalid
 * where hyperjump (and the specification) say valid. Every compliance row names its validator.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';
import { responseLine } from './fixtures.ts';

const tmp = tempDir('sob-compile-budget-');

/** The schema with `n` unused `$defs` (150,000 take hyperjump well over 10 s to compile). */
function schemaWith(n: number) {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) defs[`d${i}`] = { type: 'string' };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    allOf: [{ if: { properties: { foo: { const: 1 } } } }],
    unevaluatedProperties: false,
    $defs: defs,
  };
}

/** `sob score` of one schema record answered `{"foo": 1}`: its row and its folder's summary. */
async function scoreOne(name: string, defs: number, budgetMs: string) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const plain = {
    id: `${name}-rec`,
    schema: schemaWith(defs),
    raw: '{"foo": 1}',
  };
  writeFileSync(join(dir, 'response_m.jsonl'), `${responseLine(plain)}\n`);
  const out = join(tmp, `${name}-out`);
  const r = await sobAsync(
    ['score', dir, '--out', out, '--bootstrap-samples', '10', '--record-timeout-ms', budgetMs],
    { cwd: tmp, timeoutMs: 90_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const row = JSON.parse(readFileSync(join(out, 'schema/m/eval_records.jsonl'), 'utf8').split('\n')[0]);
  const summary = JSON.parse(readFileSync(join(out, 'schema/m/eval_summary.json'), 'utf8'));
  return { row, summary };
}

test('a routed schema over its compile budget is not scored (counted as uncompilable); with 10 $defs hyperjump says valid; each row names its validator', async () => {
  const [big, small] = await Promise.all([
    // 10 s per record: hyperjump gets 5 s (it needs about 12 s here) to compile, then the record is settled as not scored.
    scoreOne('defs150k', 150_000, '10000'),
    scoreOne('defs10', 10, '20000'),
  ]);
  const b = big.row.compliance;
  assert.equal(b.schema_compiles, false, JSON.stringify(b));
  assert.equal(b.valid, false);
  assert.equal(b.validator, null);
  assert.match(
    b.schema_error,
    /^not scored: hyperjump did not compile the schema within 5000 ms \(the schema has unevaluatedProperties, which only hyperjump reads right; ajv is not asked instead\)/,
  );
  assert.equal(big.summary.data_quality.uncompilable_schema_count, 1);
  assert.equal(big.summary.data_quality.scoring_error_count, 0);

  const s = small.row.compliance;
  assert.equal(s.schema_compiles, true);
  assert.equal(s.valid, true);
  assert.equal(s.validator, 'hyperjump');
  assert.equal(small.summary.data_quality.uncompilable_schema_count, 0);
});

test('a schema ajv reads names ajv as its validator', async () => {
  const dir = join(tmp, 'plain');
  mkdirSync(dir, { recursive: true });
  const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
  writeFileSync(
    join(dir, 'response_m.jsonl'),
    `${responseLine({ id: 'ok', schema, raw: '{"a": 1}' })}\n${responseLine({ id: 'bad', schema, raw: '{"a": "x"}' })}\n${responseLine({ id: 'unparsed', schema, raw: 'not json' })}\n`,
  );
  const out = join(tmp, 'plain-out');
  const r = await sobAsync(['score', dir, '--out', out, '--bootstrap-samples', '10'], { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  const rows = readFileSync(join(out, 'schema/m/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    rows.map((x) => [x.record_id ?? x.metadata?.record_id, x.compliance.valid, x.compliance.validator]),
    [
      ['ok', true, 'ajv'],
      ['bad', false, 'ajv'],
      ['unparsed', false, null],
    ],
  );
});
