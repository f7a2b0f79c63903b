/**
 * issue 33 item 1: a schema widened exactly where a gold violates it (sources/widen-schema.ts),
 * on schemas written here: the exact widened schema, each place listed, and ajv then admits the
 * gold; the schema given is not changed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { widenSchema } from '../../sources/widen-schema.ts';

const valid = (schema: unknown, value: unknown) =>
  new Ajv({ strict: false, allErrors: true }).compile(schema as object)(value);

test('type gains null and number, a required property dropped, enum and const admit the value', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      year: { type: 'string', pattern: '^[0-9]{4}$' },
      code: { type: 'string', pattern: '^[A-Z]+$' },
      kind: { enum: ['a', 'b'] },
      v: { const: 1 },
      age: { type: 'integer', minimum: 18 },
    },
    required: ['name', 'year', 'missing'],
    additionalProperties: false,
  };
  const before = JSON.stringify(schema);
  const gold = { name: null, year: 2024, code: 'ab', kind: 'c', v: 2, age: 7, extra: true };
  assert.equal(valid(schema, gold), false);
  const r = widenSchema(schema, gold);
  assert.equal(r.valid, true);
  assert.equal(JSON.stringify(schema), before, 'the schema given is unchanged');
  assert.deepEqual(r.schema, {
    type: 'object',
    properties: {
      name: { type: ['string', 'null'] },
      // A pattern says nothing of a number: kept.
      year: { type: ['string', 'integer'], pattern: '^[0-9]{4}$' },
      code: { type: 'string' },
      kind: { enum: ['a', 'b', 'c'] },
      v: { enum: [1, 2] },
      age: { type: 'integer' },
      extra: {},
    },
    required: ['name', 'year'],
    additionalProperties: false,
  });
  assert.ok(valid(r.schema, gold));
  const by = Object.fromEntries(r.widened.map((w) => [w.schema_path, w.admitted]));
  assert.deepEqual(by, {
    '/properties/name/type': 'null',
    '/properties/year/type': 'integer',
    '/properties/code/pattern': 'ab',
    '/properties/kind/enum': 'c',
    '/properties/v/const': 2,
    '/properties/age/minimum': 7,
    '/required': 'missing',
    '/additionalProperties': 'extra',
  });
  assert.equal(r.widened.length, 8);
});

test("a $ref'd def is widened once for every item through it; a nested array item gains its type", () => {
  const schema = {
    type: 'object',
    $defs: { unit: { type: 'string' } },
    properties: {
      rows: {
        type: 'array',
        items: {
          type: 'object',
          properties: { unit: { $ref: '#/$defs/unit' }, tags: { type: 'array', items: { type: 'object' } } },
          required: ['unit'],
        },
      },
    },
  };
  const gold = {
    rows: [
      { unit: null, tags: ['x'] },
      { unit: 'USD', tags: [{}, 'y'] },
      { unit: null, tags: [] },
    ],
  };
  assert.equal(valid(schema, gold), false);
  const r = widenSchema(schema, gold);
  assert.equal(r.valid, true);
  assert.deepEqual(r.schema, {
    type: 'object',
    $defs: { unit: { type: ['string', 'null'] } },
    properties: {
      rows: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            unit: { $ref: '#/$defs/unit' },
            tags: { type: 'array', items: { type: ['object', 'string'] } },
          },
          required: ['unit'],
        },
      },
    },
  });
  assert.deepEqual(r.widened, [
    { schema_path: '/$defs/unit/type', keyword: 'type', admitted: 'null' },
    { schema_path: '/properties/rows/items/properties/tags/items/type', keyword: 'type', admitted: 'string' },
  ]);
  assert.ok(valid(r.schema, gold));
});

test('an anyOf no branch admits: the closest branch widened; a gold already valid: nothing widened', () => {
  const schema = {
    type: 'object',
    properties: {
      skills: {
        anyOf: [
          { type: 'array', items: { type: 'string' } },
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] },
        ],
      },
    },
  };
  const gold = { skills: { a: 'x' } };
  const r = widenSchema(schema, gold);
  assert.equal(r.valid, true);
  assert.deepEqual(r.widened, [
    { schema_path: '/properties/skills/anyOf/1/required', keyword: 'required', admitted: 'b' },
  ]);
  assert.deepEqual(
    (r.schema as { properties: { skills: { anyOf: unknown[] } } }).properties.skills.anyOf[1],
    {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    },
  );
  assert.ok(valid(r.schema, gold));
  const ok = widenSchema(schema, { skills: ['x'] });
  assert.deepEqual([ok.valid, ok.widened.length], [true, 0]);
});
