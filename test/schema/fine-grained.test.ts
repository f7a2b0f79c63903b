/**
 * Fine-grained validation (SchemaBench): every violation with its paths, and partial validity on
 * hand-worked cases (each case's comment counts the constraints).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { complianceOfRecord, parseAnswerText, type RecordCompliance } from '../../metrics/compliance.ts';
import { compileSchema, localRemotes, type ValidatorOptions } from '../../src/core/validator.ts';
import { needsData } from '../kit/shared-data.ts';
import { SUITE } from './suite-runner.ts';

function check(schema: unknown, answer: unknown, opts: ValidatorOptions = {}): RecordCompliance {
  return complianceOfRecord({ schema, answer: { parsed: true, value: answer } }, opts);
}

const person = {
  type: 'object',
  required: ['name', 'age', 'tags'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 2 },
    age: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
    email: { type: 'string', format: 'email' },
  },
};

test('every violation of a planted invalid answer is listed with its instance path, schema path and keyword', () => {
  const c = check(person, { name: 'A', age: -3, tags: ['x', 1, 'z'], extra: true });
  assert.equal(c.valid, false);
  assert.equal(c.violation_count, 5);
  const got = c.violations.map((v) => `${v.instance_path} ${v.schema_path} ${v.keyword}`).sort();
  assert.deepEqual(got, [
    '/age #/properties/age/minimum minimum',
    '/extra #/additionalProperties additionalProperties',
    '/name #/properties/name/minLength minLength',
    '/tags #/properties/tags/maxItems maxItems',
    '/tags/1 #/properties/tags/items/type type',
  ]);
  assert.deepEqual(c.violation_keywords, {
    additionalProperties: 1,
    minLength: 1,
    minimum: 1,
    maxItems: 1,
    type: 1,
  });
  assert.ok(c.violations.every((v) => v.message.length > 0));
});

test('partial validity counts (place, keyword) constraints: 9 of 14 met', () => {
  // root: type ok, required name/age/tags ok (3), additionalProperties:false broken by "extra";
  // name: type ok, minLength broken; age: type ok, minimum broken; tags: type ok, maxItems
  // broken, items: "x" ok, 1 broken, "z" ok. email is absent: nothing. 14 applicable, 9 met.
  const c = check(person, { name: 'A', age: -3, tags: ['x', 1, 'z'], extra: true });
  assert.deepEqual(c.constraints, {
    applicable: 14,
    satisfied: 9,
    truncated: false,
    atomic: false,
    disagrees: false,
  });
  assert.equal(c.partial_validity, 9 / 14);
});

test('a valid answer meets every constraint and scores 1', () => {
  // root: type, 3 required, additionalProperties (5); name 2, age 2, tags: type, maxItems, one
  // item (3); email: type, format (2). 14.
  const c = check(person, { name: 'Al', age: 3, tags: ['x'], email: 'a@b.co' });
  assert.equal(c.valid, true);
  assert.deepEqual(c.violations, []);
  assert.deepEqual(c.constraints, {
    applicable: 14,
    satisfied: 14,
    truncated: false,
    atomic: false,
    disagrees: false,
  });
  assert.equal(c.partial_validity, 1);
});

test('$ref is followed into definitions; anyOf is one constraint', () => {
  const schema = {
    definitions: { pos: { type: 'number', exclusiveMinimum: 0 } },
    type: 'object',
    properties: {
      a: { $ref: '#/definitions/pos' },
      b: { anyOf: [{ type: 'string' }, { $ref: '#/definitions/pos' }] },
    },
  };
  // root type ok; a: type ok, exclusiveMinimum broken; b: anyOf broken. 2 of 4.
  const c = check(schema, { a: -1, b: -2 });
  assert.equal(c.constraints?.applicable, 4);
  assert.equal(c.constraints?.satisfied, 2);
  assert.equal(c.partial_validity, 0.5);
  // ajv lists the failed branches' errors too.
  const got = c.violations.map((v) => `${v.instance_path} ${v.schema_path}`).sort();
  assert.deepEqual(got, [
    '/a #/definitions/pos/exclusiveMinimum',
    '/b #/definitions/pos/exclusiveMinimum',
    '/b #/properties/b/anyOf',
    '/b #/properties/b/anyOf/0/type',
  ]);
});

test('if selects the branch whose constraints count; the condition itself is not one', () => {
  // JSON Schema's keyword is called `then` (biome would rather no object had one).
  const schema = JSON.parse(
    '{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}',
  );
  const a = check(schema, { kind: 'a', y: 1 });
  assert.deepEqual([a.constraints?.applicable, a.constraints?.satisfied, a.partial_validity], [1, 0, 0]);
  const b = check(schema, { kind: 'b', y: 1 });
  assert.deepEqual(
    [b.constraints?.applicable, b.constraints?.satisfied, b.partial_validity, b.valid],
    [1, 1, 1, true],
  );
});

test('tuple items and additionalItems: false (draft-07)', () => {
  // items/0 type ok, items/1 type broken, additionalItems broken (3 items, 2 positions).
  const c = check({ items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false }, [
    'a',
    'b',
    3,
  ]);
  assert.deepEqual([c.constraints?.applicable, c.constraints?.satisfied], [3, 1]);
});

test('a recursive $ref walks the answer, not the schema forever', () => {
  const schema = {
    $ref: '#/definitions/node',
    definitions: {
      node: {
        type: 'object',
        required: ['name'],
        properties: { children: { type: 'array', items: { $ref: '#/definitions/node' } } },
      },
    },
  };
  // root: type, required name (ok); children: type (ok); child 0: type ok, required name broken;
  // its children: type ok. 5 of 6.
  const c = check(schema, { name: 'r', children: [{ children: [] }] });
  assert.deepEqual([c.constraints?.applicable, c.constraints?.satisfied], [6, 5]);
  assert.deepEqual(
    c.violations.map((v) => v.instance_path),
    ['/children/0/name'],
  );
});

test("draft-04's boolean exclusiveMaximum is part of maximum", () => {
  const c = check(
    {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'number',
      maximum: 10,
      exclusiveMaximum: true,
    },
    10,
  );
  assert.equal(c.dialect, 'draft-04');
  assert.deepEqual([c.constraints?.applicable, c.constraints?.satisfied], [2, 1]);
  assert.deepEqual(
    c.violations.map((v) => v.keyword),
    ['maximum'],
  );
});

test('format counts only when formats are asserted', () => {
  const on = check({ type: 'string', format: 'email' }, 'nope');
  assert.deepEqual([on.valid, on.constraints?.applicable, on.constraints?.satisfied], [false, 2, 1]);
  const off = check({ type: 'string', format: 'email' }, 'nope', { assertFormats: false });
  assert.deepEqual([off.valid, off.constraints?.applicable, off.constraints?.satisfied], [true, 1, 1]);
});

test('unevaluatedProperties makes its subschema one constraint (2020-12)', () => {
  const c = check(
    {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
      unevaluatedProperties: false,
    },
    { a: 'x', b: 1 },
  );
  assert.deepEqual(
    [c.valid, c.constraints?.applicable, c.constraints?.satisfied, c.partial_validity],
    [false, 1, 0, 0],
  );
});

test('remote $refs resolve from the local folder only, never the network', {
  skip: needsData('json-schema-test-suite'),
}, () => {
  const remotes = localRemotes(join(SUITE, 'remotes'), 'http://localhost:1234/');
  const c = check({ $ref: 'http://localhost:1234/integer.json' }, 'x', { remotes });
  assert.equal(c.schema_compiles, true);
  assert.deepEqual(
    c.violations.map((v) => v.keyword),
    ['type'],
  );
  assert.deepEqual([c.constraints?.applicable, c.constraints?.satisfied], [1, 0]);
  const far = compileSchema({ $ref: 'https://example.com/s.json' }, { remotes });
  assert.equal(far.ok, false);
  assert.match(far.ok ? '' : far.reason, /https:\/\/example\.com\/s\.json is not available offline/);
  // A URI under the base that climbs out of the folder resolves to nothing.
  assert.equal(remotes('http://localhost:1234/../LICENSE'), undefined);
  assert.equal(remotes('http://localhost:1234/%2e%2e/LICENSE'), undefined);
});

test('no answer, a refused schema and an uncompilable schema', () => {
  const unparsed = complianceOfRecord({ schema: person, answer: parseAnswerText('{"name": ') });
  assert.deepEqual([unparsed.parses, unparsed.valid, unparsed.partial_validity], [false, false, 0]);
  assert.match(unparsed.parse_error ?? '', /^not JSON/);
  const refused = complianceOfRecord({ schema: person, answer: parseAnswerText(null), schemaRejected: true });
  assert.deepEqual([refused.schema_rejected, refused.valid, refused.partial_validity], [true, false, null]);
  const broken = complianceOfRecord({
    schema: { type: 'string', pattern: '(' },
    answer: parseAnswerText('"x"'),
  });
  assert.deepEqual([broken.schema_compiles, broken.valid, broken.partial_validity], [false, false, null]);
  assert.match(broken.schema_error ?? '', /pattern|Invalid regular expression/);
});

test('parseAnswerText: strict JSON, fences only when asked', () => {
  assert.deepEqual(parseAnswerText(' {"a": 1} \n'), { parsed: true, value: { a: 1 } });
  const fenced = '```json\n{"a": 1}\n```';
  assert.equal(parseAnswerText(fenced).parsed, false);
  assert.deepEqual(parseAnswerText(fenced, { fences: true }), { parsed: true, value: { a: 1 } });
});

test('$schema picks the draft; none means draft-07; draft-04 `id` is ignored elsewhere', () => {
  assert.equal(
    check({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }, 'x').dialect,
    '2020-12',
  );
  assert.equal(
    check({ $schema: 'http://json-schema.org/draft-06/schema#', type: 'string' }, 'x').dialect,
    'draft-06',
  );
  assert.equal(check({ type: 'string' }, 'x').dialect, 'draft-07');
  // ajv refuses a draft-04 `id` in a draft-07 schema; ours reads it as an unknown keyword.
  const c = check({ id: 'thing', type: 'object', properties: { id: { type: 'integer' } } }, { id: 'no' });
  assert.equal(c.schema_compiles, true);
  assert.deepEqual(
    c.violations.map((v) => v.instance_path),
    ['/id'],
  );
});

test('in drafts 4-7 a $ref ignores its siblings; in 2020-12 they apply', () => {
  const defs = { definitions: { s: { type: 'string' } } };
  const d7 = check({ properties: { a: { $ref: '#/definitions/s', maxLength: 1 } }, ...defs }, { a: 'long' });
  assert.equal(d7.valid, true);
  const d2020 = check(
    {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      properties: { a: { $ref: '#/definitions/s', maxLength: 1 } },
      ...defs,
    },
    { a: 'long' },
  );
  assert.equal(d2020.valid, false);
  assert.deepEqual([d2020.constraints?.applicable, d2020.constraints?.satisfied], [2, 1]);
});

test('multipleOf: floats by quotient, integers exactly, an infinite quotient fails', () => {
  assert.equal(check({ multipleOf: 0.01 }, 19.99).valid, true);
  assert.equal(check({ multipleOf: 0.01 }, 0.3 + 0.6).valid, true);
  assert.equal(check({ multipleOf: 0.01 }, 19.995).valid, false);
  assert.equal(check({ multipleOf: 0.5 }, 1e308).valid, true);
  assert.equal(check({ multipleOf: 0.0001 }, 0.0075).valid, true);
  assert.equal(check({ multipleOf: 1 }, 1e22).valid, true);
  assert.equal(check({ multipleOf: 3 }, 1e20).valid, false);
  assert.equal(check({ type: 'integer', multipleOf: 0.123456789 }, 1e308).valid, false);
});

test('a $ref cycle that never reaches a schema is named; a recursive schema that constrains compiles', () => {
  const why = (s: unknown) => {
    const r = compileSchema(s);
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(
    why({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $ref: '#/$defs/a',
      $defs: {
        a: { description: 'alias', $ref: '#/$defs/b' },
        b: { $ref: '#/$defs/c' },
        c: { $ref: '#/$defs/a' },
      },
    }),
    'schema cannot be compiled: $ref cycle that never reaches a schema: #/$defs/a -> #/$defs/b -> #/$defs/c -> #/$defs/a',
  );
  const tree = {
    $ref: '#/definitions/node',
    definitions: {
      node: {
        type: 'object',
        properties: { kids: { type: 'array', items: { $ref: '#/definitions/alias' } } },
      },
      alias: { $ref: '#/definitions/node' },
    },
  };
  assert.equal(why(tree), 'ok');
  assert.equal(check(tree, { kids: [{ kids: [] }, { kids: 3 }] }).valid, false);
  assert.equal(check(tree, { kids: [{ kids: [] }] }).valid, true);
});
