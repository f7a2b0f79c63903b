/**
 * Issue 9 item 9 (the schema part): untrusted schemas cannot stall a run.
 * - A 200,000-value `enum` is checked in linear time (ajv's meta-schema `uniqueItems` compared
 *   every pair: 2e10 comparisons, far over the 20 s record budget).
 * - A time-out is remembered only for the work that depends on the schema alone (its checks and
 *   compile): an answer that runs over while it is validated is reported alone, and the records
 *   that share its schema are run (issue 21 finding 2).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-schema-budget-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const N = 200_000;
const values = Array.from({ length: N }, (_, i) => `value-${i}`);
const enumSchema = (vals: unknown[]) => ({
  type: 'object',
  properties: { pick: { type: 'string', enum: vals } },
  required: ['pick'],
});

for (const profile of ['sob', 'strict']) {
  test(`a 200,000-value enum is checked within the record budget (${profile} profile), and a repeat in it is found`, () => {
    const f = join(tmp, `response_enum-${profile}.jsonl`);
    const schema = enumSchema(values);
    const dup = enumSchema([...values.slice(0, N - 1), 'value-17']);
    writeFileSync(
      f,
      [
        responseLine('a', { pick: 'value-5' }, { schema, gt: { pick: 'value-5' } }),
        responseLine('b', { pick: 'value-199999' }, { schema, gt: { pick: 'value-3' } }),
        responseLine('c', { pick: 'nope' }, { schema, gt: { pick: 'value-3' } }),
        responseLine('d', { pick: 'value-5' }, { schema: dup, gt: { pick: 'value-5' } }),
      ].join('\n'),
    );
    const out = join(tmp, `out-enum-${profile}`);
    const r = sob(['score', f, '--out', out, '--bootstrap-samples', '0', '--profile', profile], tmp, 300_000);
    assert.equal(r.code, 0, r.stderr);
    const { rows, summary } = readOut(out, 'text', `enum-${profile}`);
    assert.equal(summary.data_quality.scoring_error_count, undefined, r.stderr);
    assert.deepEqual(
      rows.map((x) => [x.record_id, x.schema_valid_input, x.schema_compliance, x.leaf_value_em]),
      [
        ['a', 1, 1, 1],
        ['b', 1, 1, 0],
        ['c', 1, 0, 0],
        ['d', 0, 0, 0],
      ],
    );
    assert.match(
      (rows[3].explanation as { schema_error: string }).schema_error,
      /must NOT have duplicate items \(items ## 17 and 199999 are identical\)/,
    );
  });
}

test('an answer that runs over the time budget while it is validated is reported alone: records that share its schema are run (issue 21 finding 2)', () => {
  const redos = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(a+)+$' } },
    required: ['name'],
  };
  const evil = `${'a'.repeat(40)}b`;
  const gt = { name: 'aaa' };
  const first = join(tmp, 'response_redos1.jsonl');
  const second = join(tmp, 'response_redos2.jsonl');
  writeFileSync(
    first,
    [
      responseLine('ok-before', { name: 'x', n: 1 }),
      responseLine('evil-1', { name: evil }, { schema: redos, gt }),
      responseLine('harmless-same-schema', { name: 'aaa' }, { schema: redos, gt }),
      responseLine('ok-after', { name: 'x', n: 1 }),
    ].join('\n'),
  );
  writeFileSync(
    second,
    [
      responseLine('evil-2', { name: evil }, { schema: redos, gt }),
      responseLine('harmless', { name: 'aaa' }, { schema: redos, gt }),
    ].join('\n'),
  );
  const out = join(tmp, 'out-redos');
  const r = sob(
    [
      'score',
      first,
      second,
      '--out',
      out,
      '--bootstrap-samples',
      '0',
      '--record-timeout-ms',
      '1500',
      '--jobs',
      '1',
    ],
    tmp,
    120_000,
  );
  assert.equal(r.code, 0, r.stderr);
  // One time-out per slow answer; nothing remembered for the schema.
  assert.equal(
    r.stderr.match(/scoring exceeded 1500 ms; reported with scoring_error\n/g)?.length,
    2,
    r.stderr,
  );
  assert.doesNotMatch(r.stderr, /share a schema that ran over the time budget/);
  const a = readOut(out, 'text', 'redos1');
  const errors = a.rows.map(
    (x) => (x.explanation as { scoring_error?: string } | undefined)?.scoring_error ?? null,
  );
  assert.deepEqual(errors, [null, 'scoring exceeded 1500 ms', null, null]);
  assert.equal(a.summary.data_quality.scoring_error_count, 1);
  assert.deepEqual(
    a.rows.map((x) => x.leaf_value_em),
    [1, 0, 1, 1],
  );
  const b = readOut(out, 'text', 'redos2');
  assert.equal(
    (b.rows[0].explanation as { scoring_error?: string }).scoring_error,
    'scoring exceeded 1500 ms',
  );
  assert.equal(b.rows[1].leaf_value_em, 1);
});

test('a schema-track record that runs out of time: named with its record id, and its compliance does not claim the schema compiles', () => {
  const redos = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(a+)+$' } },
    required: ['name'],
  };
  const f = join(tmp, 'response_schema-redos.jsonl');
  writeFileSync(
    f,
    [
      responseLine('fine', { name: 'aaa' }, { schema: redos, metadata: { source: 'schema' } }),
      responseLine(
        'stuck',
        { name: `${'a'.repeat(40)}b` },
        { schema: redos, metadata: { source: 'schema' } },
      ),
    ].join('\n'),
  );
  const out = join(tmp, 'out-schema-redos');
  const r = sob(
    ['score', f, '--out', out, '--bootstrap-samples', '0', '--record-timeout-ms', '1500', '--jobs', '1'],
    tmp,
    120_000,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /response_schema-redos\.jsonl:2 \(record stuck\): scoring exceeded 1500 ms/);
  const { rows } = readOut(out, 'schema', 'schema-redos');
  const blocks = rows.map((x) => x.compliance as { schema_compiles: boolean | null; valid: boolean });
  assert.deepEqual(
    blocks.map((b) => [b.schema_compiles, b.valid]),
    [
      [true, true],
      [null, false],
    ],
  );
});
