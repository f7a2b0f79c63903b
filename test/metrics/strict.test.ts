/**
 * The strict profile: each fix of docs/scoring.md's list, shown against the sob profile on the same input.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { scoreRecord } from '../../metrics/record.ts';
import { displayPath, parseAnswer, pointerLeaves, scoreRecordStrict } from '../../metrics/strict.ts';
import { type PyObject, parsePyJson } from '../../src/core/pyjson.ts';
import type { Modality } from '../../src/core/record.ts';
import { prepareStrict } from '../../src/core/schema.ts';

before(async () => {
  await prepareStrict(false);
  await prepareStrict(true);
});

function both(
  gt: string,
  cand: string,
  schema: string,
  opts: { modality?: Modality; raw?: string; assertFormats?: boolean } = {},
) {
  const view = {
    metadata: new Map() as PyObject,
    schema: parsePyJson(schema),
    groundTruth: parsePyJson(gt),
    candidate: parsePyJson(cand),
    raw: opts.raw,
  };
  const modality = opts.modality ?? 'image';
  return {
    sob: scoreRecord(view, { modality }),
    strict: scoreRecordStrict(view, { modality, assertFormats: opts.assertFormats ?? false }),
  };
}

test('1. Type Safety resolves $ref and anyOf; a null where null is allowed is type-safe', () => {
  const schema = JSON.stringify({
    type: 'object',
    $defs: { name: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    properties: { a: { $ref: '#/$defs/name' }, b: { type: ['integer', 'null'] } },
  });
  const { sob, strict } = both('{"a":"x","b":1}', '{"a":null,"b":null}', schema);
  assert.equal(strict.typeSafety, 1);
  assert.equal(sob.typeSafety, 0);
});

test('1. an integral float is an integer; additionalProperties gives a key its schema', () => {
  const schema = JSON.stringify({
    type: 'object',
    properties: { i: { type: 'integer' } },
    additionalProperties: { type: 'string' },
  });
  const { sob, strict } = both('{"i":2,"x":"y"}', '{"i":2.0,"x":"y"}', schema);
  assert.equal(strict.typeSafety, 1);
  assert.equal(sob.typeSafety, 0); // 2.0 is not an integer, and "x" has no declared type
});

test('2. booleans never equal numbers in strict; numbers still equal by value', () => {
  const schema = '{"type":"object","properties":{"x":{},"y":{}}}';
  const { sob, strict } = both('{"x":1,"y":2}', '{"x":true,"y":2.0}', schema);
  assert.equal(sob.valueAccuracy, 1);
  assert.equal(strict.valueAccuracy, 0.5);
});

test('2. numbers equal by value are equal for Faithfulness too: 1500000.0 vs 1500000 is 1 in strict (the sob profile keeps the reference: 2/3)', () => {
  const schema =
    '{"type":"object","properties":{"price":{"type":"number"},"lot":{"type":"number"},"unit":{"type":"string"}}}';
  const { sob, strict } = both(
    '{"price":1500000.0,"lot":7,"unit":"EUR"}',
    '{"price":1500000,"lot":7.0,"unit":"EUR"}',
    schema,
    {
      modality: 'text',
    },
  );
  assert.equal(strict.valueAccuracy, 1);
  assert.equal(strict.faithfulness, 1);
  // Before: "1500000.0" -> tokens 1500000, 0 against 1500000: F1 2/3; "7" against "7.0" the same.
  assert.equal(sob.valueAccuracy, 1);
  assert.equal(sob.faithfulness, (2 / 3 + 2 / 3 + 1) / 3);
});

test('3. a missing path is not a null: Faithfulness 0 for it in strict', () => {
  const schema = '{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["string","null"]}}}';
  const { sob, strict } = both('{"a":"x","b":null}', '{"a":"x"}', schema);
  const gate = (2 / 3 / 0.9) ** 2;
  assert.equal(sob.faithfulness, 1 * gate);
  assert.equal(strict.faithfulness, 0.5 * gate);
});

test('4. empty arrays are leaves: [] versus ["x"] is seen', () => {
  const schema =
    '{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"n":{"type":"integer"}}}';
  const { sob, strict } = both('{"tags":[],"n":1}', '{"tags":["x"],"n":1}', schema, { modality: 'text' });
  assert.deepEqual([...pointerLeaves(parsePyJson('{"tags":[],"n":1}')).keys()], ['/tags', '/n']);
  assert.equal(sob.pathRecall, 1); // the reference sees only n
  assert.equal(strict.pathRecall, 0.5);
  assert.deepEqual(strict.missingGtPaths, ['tags']);
});

test('5. paths are JSON Pointers: a dotted key does not collide with a nested one', () => {
  const schema = '{"type":"object"}';
  const { sob, strict } = both('{"a.b":1,"a":{"b":2}}', '{"a.b":1,"a":{"b":2}}', schema);
  assert.deepEqual([...pointerLeaves(parsePyJson('{"a.b":1,"a":{"b":2}}')).keys()], ['/a.b', '/a/b']);
  assert.equal(sob.structureCoverage, 1);
  assert.equal(strict.structureCoverage, 1);
  const wrong = both('{"a.b":1,"a":{"b":2}}', '{"a":{"b":2}}', schema);
  assert.equal(wrong.sob.pathRecall, 1); // the reference cannot tell the two apart
  assert.equal(wrong.strict.pathRecall, 0.5);
  assert.equal(displayPath('/a~1b/0/c~0d'), 'a/b[0].c~d');
});

test('6. the validator follows $schema; --assert-formats checks formats', () => {
  const d4 = JSON.stringify({
    $schema: 'http://json-schema.org/draft-04/schema#',
    type: 'object',
    properties: { n: { type: 'number', minimum: 0, exclusiveMinimum: true } },
  });
  const a = both('{"n":1}', '{"n":0}', d4);
  assert.equal(a.sob.schemaValidInput, 0); // a boolean exclusiveMinimum is not draft-07
  assert.equal(a.strict.schemaValidInput, 1);
  assert.equal(a.strict.jsonPass, 0); // 0 is not > 0 under draft-04
  const email = '{"type":"object","properties":{"e":{"type":"string","format":"email"}}}';
  assert.equal(both('{"e":"a@b.c"}', '{"e":"nope"}', email).strict.jsonPass, 1);
  assert.equal(both('{"e":"a@b.c"}', '{"e":"nope"}', email, { assertFormats: true }).strict.jsonPass, 0);
});

test('7. a code-fenced answer is recovered and flagged lenient_parse', () => {
  const schema = '{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}';
  const raw = 'Here you go:\n```json\n{"a": "x"}\n```';
  const { sob, strict } = both('{"a":"x"}', JSON.stringify(raw), schema);
  assert.equal(sob.jsonParse, 0);
  assert.equal(sob.valueAccuracy, 0);
  assert.equal(strict.jsonParse, 0);
  assert.equal(strict.lenientParse, 1);
  assert.equal(strict.valueAccuracy, 1);
  assert.equal(strict.explanation.lenient_parse, true);
  assert.equal(parseAnswer('{"a": 1}', undefined).strict, true);
  assert.equal(parseAnswer('Answer: {"a": 1} done', undefined).lenient, true);
  assert.equal(parseAnswer('no json here', undefined).value, undefined);
});
