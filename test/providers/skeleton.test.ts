/** baseline:skeleton: a placeholder answer derived from the schema alone must pass the schema. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { validateInstance } from '../../src/core/schema.ts';
import { skeletonFor } from '../../src/providers/baseline.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const PHI4 = sharedData('sob/images_responses/response_phi-4_image.jsonl');

const CASES: [string, Record<string, unknown>, unknown][] = [
  ['string', { type: 'string' }, ''],
  ['string minLength', { type: 'string', minLength: 3 }, 'xxx'],
  ['number with minimum', { type: 'number', minimum: 2.5 }, 2.5],
  ['integer exclusiveMinimum + multipleOf', { type: 'integer', exclusiveMinimum: 0, multipleOf: 5 }, 5],
  ['integer maximum below zero', { type: 'integer', maximum: -3 }, -3],
  ['boolean', { type: 'boolean' }, false],
  ['null', { type: 'null' }, null],
  ['enum', { enum: ['red', 'green'] }, 'red'],
  ['const', { const: 42 }, 42],
  ['type list prefers the non-null type', { type: ['null', 'integer'] }, 0],
  [
    'object: every property, required ones outside properties too',
    { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a', 'c'] },
    { a: '', b: 0, c: null },
  ],
  [
    'array minItems 3 with uniqueItems',
    { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true },
    ['', '1', '2'],
  ],
  ['array with no minItems has one item', { type: 'array', items: { type: 'boolean' } }, [false]],
  ['array maxItems 0', { type: 'array', items: { type: 'string' }, maxItems: 0 }, []],
  [
    '$ref into definitions',
    {
      type: 'object',
      properties: { p: { $ref: '#/definitions/P' } },
      definitions: { P: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
    },
    { p: { n: 0 } },
  ],
  ['anyOf picks the non-null branch', { anyOf: [{ type: 'null' }, { type: 'string', minLength: 1 }] }, 'x'],
  [
    'allOf merges properties',
    {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } } },
        { properties: { b: { type: 'boolean' } }, required: ['b'] },
      ],
    },
    { a: '', b: false },
  ],
  [
    'array of objects with uniqueItems differs per item',
    {
      type: 'array',
      minItems: 2,
      uniqueItems: true,
      items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] },
    },
    [{ k: '' }, { k: '1' }],
  ],
];

for (const [name, schema, expected] of CASES) {
  test(`skeleton: ${name}`, () => {
    const value = skeletonFor(schema);
    assert.deepEqual(value, expected);
    const check = validateInstance(schema, value);
    assert.equal(check.valid, true, check.valid ? '' : check.reason);
  });
}

test('skeleton passes the schema of all 209 SOB image records', { skip: needsData('sob') }, () => {
  const lines = readFileSync(PHI4, 'utf8').trim().split('\n');
  let valid = 0;
  const failures: string[] = [];
  for (const line of lines) {
    const rec = JSON.parse(line) as {
      metadata: { record_id: string };
      input: { json_schema: Record<string, unknown> };
    };
    const check = validateInstance(rec.input.json_schema, skeletonFor(rec.input.json_schema));
    if (check.valid) valid++;
    else failures.push(`${rec.metadata.record_id}: ${check.reason}`);
  }
  assert.equal(lines.length, 209);
  assert.deepEqual(failures.slice(0, 5), []);
  assert.equal(valid, 209);
});
