/**
 * Each trap of docs/scoring.md's `sob` profile, pinned with numbers. Every case here fails on the naive
 * implementation (JSON.parse numbers, JS equality, ASCII \b, JS number formatting, recursion).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flattenLeaves } from '../../metrics/paths.ts';
import { coverageGate, type RecordScore, scoreRecord } from '../../metrics/record.ts';
import { normalizeTokens, tokenF1 } from '../../metrics/values.ts';
import { type PyObject, parsePyJson, pyFloatRepr } from '../../src/core/pyjson.ts';
import type { Modality } from '../../src/core/record.ts';

function score(
  gt: string,
  cand: string,
  schema: string,
  modality: Modality = 'text',
  meta = '{}',
): RecordScore {
  return scoreRecord(
    {
      metadata: parsePyJson(meta) as PyObject,
      schema: parsePyJson(schema),
      groundTruth: parsePyJson(gt),
      candidate: parsePyJson(cand),
    },
    { modality },
  );
}

const OBJ3 =
  '{"type":"object","properties":{"company":{"type":"string"},"year":{"type":"integer"},"ceo":{"type":"string"}},"required":["company","year","ceo"]}';

test('Appendix F worked example: one wrong value of three gives Value Accuracy and Faithfulness 2/3', () => {
  const s = score(
    '{"company":"Acme Corp","year":2021,"ceo":"Jane Doe"}',
    '{"company":"Acme Corp","year":2021,"ceo":"John Smith"}',
    OBJ3,
  );
  assert.equal(s.valueAccuracy, 2 / 3);
  assert.equal(s.faithfulness, 2 / 3);
  assert.equal(s.pathRecall, 1);
  assert.equal(s.structureCoverage, 1);
  assert.equal(s.typeSafety, 1);
  assert.equal(s.jsonPass, 1);
  assert.equal(s.perfect, 0);
});

test('1 vs 1.0: equal for Value Accuracy, different tokens for Faithfulness, not a Perfect Response', () => {
  const schema = '{"type":"object","properties":{"x":{"type":"number"}}}';
  const s = score('{"x": 1}', '{"x": 1.0}', schema);
  assert.equal(s.valueAccuracy, 1); // Python: 1 == 1.0
  assert.equal(s.faithfulness, 2 / 3); // tokens ["1"] vs ["1", "0"]: P 1/2, R 1
  assert.equal(s.perfect, 0); // canonical "1" vs "1.0"
  assert.equal(score('{"x": 1.0}', '{"x": 1.0}', schema).perfect, 1);
  assert.deepEqual(normalizeTokens(parsePyJson('1.0')), ['1', '0']);
  assert.deepEqual(normalizeTokens(parsePyJson('1')), ['1']);
});

test('true == 1 in Value Accuracy (Python bool is an int), but not in Perfect Response', () => {
  const schema = '{"type":"object","properties":{"x":{}}}';
  const s = score('{"x": 1}', '{"x": true}', schema);
  assert.equal(s.valueAccuracy, 1);
  assert.equal(s.faithfulness, 0); // "1" vs "true"
  assert.equal(s.perfect, 0);
  assert.equal(score('{"x": 0}', '{"x": false}', schema).valueAccuracy, 1);
  assert.equal(score('{"x": "1"}', '{"x": 1}', schema).valueAccuracy, 0); // strings never equal numbers
});

test('a null ground truth the answer omits: Value Accuracy 0, Faithfulness 1 (missing reads as null)', () => {
  const schema = '{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["string","null"]}}}';
  const s = score('{"a":"x","b":null}', '{"a":"x"}', schema, 'image');
  // Structure F1 = 2*1*0.5/1.5 = 2/3; image gate = min(1, (2/3 / 0.9)^2)
  const f = 2 / 3;
  const gate = (f / 0.9) ** 2;
  assert.equal(s.structureCoverage, f);
  assert.equal(s.valueAccuracy, 0.5 * gate);
  assert.equal(s.faithfulness, 1 * gate);
});

test('empty arrays and objects produce no leaf', () => {
  const leaves = flattenLeaves(parsePyJson('{"a":[],"b":{},"c":[[]],"d":1}'));
  assert.deepEqual([...leaves.keys()], ['d']);
  const schema = '{"type":"object","properties":{"a":{"type":"array"},"d":{"type":"integer"}}}';
  const s = score('{"a":[],"d":1}', '{"a":["x"],"d":1}', schema);
  // The candidate's extra leaf a[0] lowers structure F1 to 2/3: the text gate (>= 0.95) shuts.
  assert.equal(s.structureCoverage, 2 / 3);
  assert.equal(s.valueAccuracy, 0);
  assert.equal(s.perfect, 0);
});

test('keys containing dots collide with nested keys; the later value wins', () => {
  const leaves = flattenLeaves(parsePyJson('{"a.b": 1, "a": {"b": 2}}'));
  assert.equal(leaves.size, 1);
  assert.equal(leaves.get('a.b'), 2n);
  const rev = flattenLeaves(parsePyJson('{"a": {"b": 2}, "a.b": 1}'));
  assert.equal(rev.get('a.b'), 1n);
  // Integer-like keys keep document order (a JS object would move "1" first).
  const order = flattenLeaves(parsePyJson('{"1.5": "x", "1": {"5": "y"}}'));
  assert.equal(order.get('1.5'), 'y');
});

test('nested arrays index as [i][j]', () => {
  const leaves = flattenLeaves(parsePyJson('{"m":[[1,2],[3]]}'));
  assert.deepEqual([...leaves.keys()], ['m[0][0]', 'm[0][1]', 'm[1][0]']);
  const schema =
    '{"type":"object","properties":{"m":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}}';
  const s = score('{"m":[[1,2],[3]]}', '{"m":[[1,2],[4]]}', schema);
  assert.equal(s.typeSafety, 1);
  assert.equal(s.valueAccuracy, 2 / 3);
});

test('articles are removed only between Unicode word boundaries; combining marks are not word characters', () => {
  assert.deepEqual(normalizeTokens('The café a la carte'), ['café', 'la', 'carte']);
  assert.deepEqual(normalizeTokens('théâtre an ñandú'), ['théâtre', 'ñandú']);
  // "é" written as e + U+0301: the mark becomes a space, so "the" + mark is the article "the".
  assert.deepEqual(normalizeTokens('the\u0301 end'), ['end']);
  // Non-ASCII letters next to an article keep it a word: "áthe" and "theá" are not articles.
  assert.deepEqual(normalizeTokens('áthe theá'), ['áthe', 'theá']);
  assert.equal(tokenF1('The Eiffel Tower', 'Eiffel tower'), 1);
});

test('floats tokenize with Python repr: 1e-05, 1e+16, 1.5e-07, 1e+16 vs 1e16 int', () => {
  assert.equal(pyFloatRepr(0.00001), '1e-05');
  assert.equal(pyFloatRepr(1e16), '1e+16');
  assert.equal(pyFloatRepr(1.5e-7), '1.5e-07');
  assert.equal(pyFloatRepr(0.0001), '0.0001');
  assert.equal(pyFloatRepr(1e15), '1000000000000000.0');
  assert.equal(pyFloatRepr(123456789.125), '123456789.125');
  assert.equal(pyFloatRepr(-0), '-0.0');
  assert.equal(pyFloatRepr(1.7976931348623157e308), '1.7976931348623157e+308');
  assert.deepEqual(normalizeTokens(parsePyJson('1e-05')), ['1e', '05']);
  assert.deepEqual(normalizeTokens(parsePyJson('1E16')), ['1e', '16']);
  const schema = '{"type":"object","properties":{"x":{"type":"number"}}}';
  // 1e16 (float) == 10000000000000000 (int) by value, but their tokens differ.
  const s = score('{"x": 10000000000000000}', '{"x": 1e16}', schema);
  assert.equal(s.valueAccuracy, 1);
  assert.equal(s.faithfulness, 0);
});

test('a leaf type list with two non-null types does not crash: counted as a type mismatch', () => {
  const schema =
    '{"type":"object","properties":{"x":{"type":["string","integer"]},"y":{"type":["string","null"]}}}';
  const s = score('{"x":"a","y":"b"}', '{"x":"a","y":null}', schema);
  assert.equal(s.jsonPass, 1);
  assert.equal(s.typeSafety, 0); // x: no single type; y: null is a mismatch for "string"
  assert.equal(score('{"x":"a","y":"b"}', '{"x":"a","y":"b"}', schema).typeSafety, 0.5);
});

test('integer does not accept a float, not even 2.0; number accepts an integer', () => {
  const schema = '{"type":"object","properties":{"i":{"type":"integer"},"n":{"type":"number"}}}';
  const s = score('{"i":2,"n":3}', '{"i":2.0,"n":3}', schema);
  assert.equal(s.jsonPass, 1); // jsonschema draft-07 accepts 2.0 as an integer
  assert.equal(s.typeSafety, 0.5);
});

test('a string candidate is a parse failure even with JSON inside a code fence', () => {
  const s = score(
    '{"company":"A","year":1,"ceo":"B"}',
    '"```json\\n{\\"company\\":\\"A\\",\\"year\\":1,\\"ceo\\":\\"B\\"}\\n```"',
    OBJ3,
  );
  assert.equal(s.jsonParse, 0);
  assert.equal(s.jsonPass, 0);
  assert.equal(s.valueAccuracy, 0);
  assert.equal(s.requiredKeyRecall, 0);
  assert.deepEqual(s.missingRequiredPaths, ['company', 'year', 'ceo']); // unsorted, as the reference
});

test('coverage gate: text needs 0.95; image and audio are quadratic below 0.9', () => {
  assert.equal(coverageGate('text', 0.95), 1);
  assert.equal(coverageGate('text', 0.9499), 0);
  assert.equal(coverageGate('image', 0.45), 0.25);
  assert.equal(coverageGate('audio', 0.9), 1);
  assert.equal(coverageGate('image', 0), 0);
});

test('weights: schema_complexity first, then difficulty; unknown weighs 0', () => {
  const w = (meta: string) => score('{}', '{}', '{"type":"object"}', 'text', meta);
  assert.equal(w('{"schema_complexity":"hard","difficulty":"easy"}').weight, 3);
  assert.equal(w('{"schema_complexity":"bogus","difficulty":"medium"}').weightingBasis, 'difficulty');
  const u = w('{"schema_complexity":""}');
  assert.equal(u.weight, 0);
  assert.equal(u.schemaComplexity, 'unknown');
  assert.equal(u.knownDifficulty, false);
});

test('a pattern must compile as a Python regex: (unclosed and \\p{L} make the schema invalid', () => {
  const withPattern = (p: string) =>
    score(
      '{"s":"a"}',
      '{"s":"a"}',
      JSON.stringify({ type: 'object', properties: { s: { type: 'string', pattern: p } } }),
    );
  assert.equal(withPattern('(unclosed').schemaValidInput, 0);
  assert.equal(withPattern('\\p{L}+').schemaValidInput, 0);
  assert.equal(withPattern('(?<=a)b|a').schemaValidInput, 1);
  assert.equal(withPattern('^[a-z]+$').jsonPass, 1);
  assert.equal(withPattern('^[0-9]+$').jsonPass, 0);
});
