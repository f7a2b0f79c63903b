/**
 * Issue 29, findings 4, 8 and 9, through the real `sob`:
 * - 4: a ground truth that is not an object or array (an integer, a boolean, a JSON-text string)
 *   is rejected by record id with the reason (the gold baseline used to score 0.250 on 4 such rows);
 * - 8: ids are kept as written (`12345678901234567890` and `...891` are two ids, `1.0` is not
 *   `1`, `-0` stays), and a number beyond a double's range (`1e400`) is rejected naming the
 *   record and the field, never written as `Infinity`;
 * - 9: a re-run of `sob eval` whose rows now fail leaves the previous records.jsonl and manifest
 *   byte for byte.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const tmp = tempDir('sob-record-audit-');

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
};
const row = (id: unknown, ground_truth: unknown, schema: unknown = SCHEMA) => ({
  id,
  context: 'Ann, 30, lives in Paris.',
  question: 'Who is it?',
  schema,
  ground_truth,
});
const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

test('scalar ground truths are rejected by record id with the reason; the object row alone would go on', async () => {
  const rows = join(tmp, 'scalars.jsonl');
  writeFileSync(
    rows,
    jsonl([
      row('as-object', { name: 'Ann', age: 30, city: 'Paris' }),
      row('as-integer', 30, { type: 'integer' }),
      row('as-boolean', true, { type: 'boolean' }),
      row('as-json-text', '"Ann"', { type: 'string' }),
    ]),
  );
  const r = await sobAsync(['eval', rows, '--eval-dir', join(tmp, 'eval-scalars'), '--no-report'], {
    cwd: tmp,
  });
  assert.equal(r.code, 2, r.stderr);
  const why = 'not a JSON object or array: the SOB metrics score the leaves of a structured answer';
  assert.match(r.stderr, new RegExp(`^rejected as-integer: the ground truth is the integer 30, ${why}`, 'm'));
  assert.match(
    r.stderr,
    new RegExp(`^rejected as-boolean: the ground truth is the boolean true, ${why}`, 'm'),
  );
  assert.match(
    r.stderr,
    new RegExp(`^rejected as-json-text: the ground truth is the string "Ann", ${why}`, 'm'),
  );
  assert.doesNotMatch(r.stderr, /rejected as-object/);
  assert.match(r.stderr, /3 rows rejected .*nothing was asked/);
});

test('numeric ids kept as written (two 20-digit ids, 1.0 beside 1, -0); 1e400 rejected naming the record and the field', async () => {
  const rows = join(tmp, 'ids.jsonl');
  const gt = '{"name": "Ann", "age": 30, "city": "Paris"}';
  const line = (id: string, truth = gt) =>
    `{"id": ${id}, "context": "Ann, 30, lives in Paris.", "question": "Who?", "schema": ${JSON.stringify(SCHEMA)}, "ground_truth": ${truth}}`;
  writeFileSync(
    rows,
    `${[
      line('12345678901234567890'),
      line('12345678901234567891'),
      line('1.0'),
      line('1'),
      line('-0'),
      line('"huge"', '{"name": "Ann", "age": 30, "city": "Paris", "score": 1e400}'),
    ].join('\n')}\n`,
  );
  const out = join(tmp, 'ids', 'records.jsonl');
  const r = await sobAsync(['build', 'records', rows, '--out', out], { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(out, 'utf8');
  const ids = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).metadata.record_id);
  assert.deepEqual(ids, ['12345678901234567890', '12345678901234567891', '1.0', '1', '-0']);
  assert.match(r.stdout, /^5 records written, 1 rejected/m);
  assert.match(
    r.stderr,
    /^rejected huge: output\.ground_truth\.score: a number beyond the range of a JSON number/m,
  );
  assert.doesNotMatch(text, /Infinity/);
  assert.doesNotMatch(r.stderr, /duplicate record_id/);
});

test('a re-run whose rows now fail leaves the previous records.jsonl and manifest byte for byte', async () => {
  const rows = join(tmp, 'rerun.jsonl');
  const good = [
    row('r1', { name: 'Ann', age: 30, city: 'Paris' }),
    row('r2', { name: 'Bo', age: 31, city: 'Oslo' }),
    row('r3', { name: 'Cy', age: 32, city: 'Rome' }),
  ];
  writeFileSync(rows, jsonl(good));
  const evalDir = join(tmp, 'eval-rerun');
  const args = ['eval', rows, '--eval-dir', evalDir, '--no-report', '--bootstrap-samples', '10'];
  const first = await sobAsync(args, { cwd: tmp });
  assert.equal(first.code, 0, first.stderr);
  const records = join(evalDir, 'benchmark', 'records.jsonl');
  const manifest = join(evalDir, 'benchmark', 'manifest.json');
  const before = [readFileSync(records), readFileSync(manifest)];
  assert.equal(before[0].toString().trim().split('\n').length, 3);
  // One row edited to fail: its ground truth no longer fits its schema.
  writeFileSync(rows, jsonl([good[0], row('r2', { name: 'Bo', age: 'thirty-one', city: 'Oslo' }), good[2]]));
  const second = await sobAsync(args, { cwd: tmp });
  assert.equal(second.code, 2, second.stderr);
  assert.match(second.stderr, /rejected r2: ground truth does not validate against the schema/);
  assert.match(second.stderr, /nothing was asked; .*is left as it was/);
  assert.ok(readFileSync(records).equals(before[0]), 'records.jsonl unchanged');
  assert.ok(readFileSync(manifest).equals(before[1]), 'manifest.json unchanged');
  assert.match(
    readFileSync(join(evalDir, 'benchmark', 'rejected.attempt.jsonl'), 'utf8'),
    /"record_id":"r2"/,
  );
});
