/** Policies: validation with one clear line, patterns, precedence, schema annotations, files. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { compilePolicy, PolicyError, parsePattern } from '../../metrics/match/policy.ts';
import { UserError } from '../../src/core/errors.ts';
import { loadPolicy } from '../../src/scoring/policy-file.ts';
import { leaf, lenient } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'sob-policy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function problem(doc: unknown): string {
  try {
    compilePolicy(doc);
  } catch (e) {
    assert.ok(e instanceof PolicyError);
    return e.message;
  }
  assert.fail('policy accepted');
}

test('bad policies name the path of the problem', () => {
  assert.equal(
    problem({ fields: { 'line_items[*].amount': { match: 'number', abs_tol: -1 } } }),
    'fields["line_items[*].amount"].abs_tol: Number must be greater than or equal to 0',
  );
  assert.equal(
    problem({ fields: { total: 'numbr' } }),
    'fields.total: unknown matcher "numbr" (use one of default, exact, text, number, date, enum, synonyms, fuzzy, judge, string_exact, string_case_insensitive, string_fuzzy, integer_exact, number_exact, number_tolerance, boolean_exact)',
  );
  assert.equal(
    problem({ fields: { total: { match: 'number', abs_tol: 1, floor: 0.2 } } }),
    'fields.total.floor: unknown option "floor" for match: number',
  );
  assert.equal(problem({ fields: { items: { align: 'match_by' } } }), 'fields.items.keys: Required');
  assert.equal(
    problem({ fields: { 'items[0].x': 'text' } }),
    'fields["items[0].x"]: bad path: array steps are written [*] (a fixed index like [0] is not supported)',
  );
  assert.equal(problem({ fields: { 'a..b': 'text' } }), 'fields["a..b"]: bad path: empty key at character 3');
  assert.equal(problem({ flor: 0.3 }), '(top level): unknown key "flor"');
  assert.equal(problem({ floor: 2 }), 'floor: Number must be less than or equal to 1');
  assert.equal(
    problem({ types: { strng: 'text' } }),
    'types.strng: unknown leaf kind "strng" (use string, number, integer, boolean, null, date, enum)',
  );
  assert.equal(
    problem({ fields: { c: { match: 'synonyms', tables: ['planets'] } } }),
    'fields.c.tables[0]: unknown table "planets" (known: countries, currencies, us_states)',
  );
  assert.equal(
    problem({ fields: { c: { match: 'judge', first: 'judge' } } }),
    'fields.c.first: a judge cannot come first',
  );
});

test('patterns: keys, [*] at any level, * for one key, ** for any depth', () => {
  assert.deepEqual(parsePattern('line_items[*].amount'), [
    { key: 'line_items' },
    { anyIndex: true },
    { key: 'amount' },
  ]);
  assert.deepEqual(parsePattern('[*][*]'), [{ anyIndex: true }, { anyIndex: true }]);
  assert.deepEqual(parsePattern('**.date'), [{ deep: true }, { key: 'date' }]);
  assert.deepEqual(parsePattern('a[].b'), [{ key: 'a' }, { anyIndex: true }, { key: 'b' }]);
  const exact = { match: 'exact' };
  // Root arrays, any key, any depth.
  assert.equal(
    lenient('[{"n": "Ab"}]', '[{"n": "ab"}]', { policy: { fields: { '[*].n': exact } } }).accepted_leaves,
    0,
  );
  assert.equal(
    lenient('{"a": {"n": "Ab"}}', '{"a": {"n": "ab"}}', { policy: { fields: { '*.n': exact } } })
      .accepted_leaves,
    0,
  );
  assert.equal(
    lenient('{"a": [{"b": {"n": "Ab"}}]}', '{"a": [{"b": {"n": "ab"}}]}', {
      policy: { fields: { '**.n': exact } },
    }).accepted_leaves,
    0,
  );
  assert.equal(
    lenient('{"a": {"n": "Ab"}}', '{"a": {"n": "ab"}}', { policy: { fields: { n: exact } } }).accepted_leaves,
    1,
  );
});

test('the most specific pattern wins, then the earlier one', () => {
  const policy = {
    fields: {
      '**.amount': 'exact',
      'items[*].amount': { match: 'number', abs_tol: 1 },
    },
  };
  const r = lenient(
    '{"items": [{"amount": 10}], "amount": 10}',
    '{"items": [{"amount": 10.5}], "amount": 10.5}',
    { policy },
  );
  assert.deepEqual(
    r.leaves.map((l) => [l.path, l.matcher, l.verdict]),
    [
      ['items[0].amount', 'number', 'match'],
      ['amount', 'exact', 'no_match'],
    ],
  );
});

test('precedence: policy field > schema x-sob-match > policy types > built-in default', () => {
  const schema = {
    type: 'object',
    properties: {
      amount: { type: 'number', 'x-sob-match': { match: 'number', abs_tol: 1 } },
      name: { type: 'string' },
    },
  };
  const gold = '{"amount": 10, "name": "Acme Inc"}';
  const pred = '{"amount": 10.9, "name": "ACME INC"}';
  const annotated = lenient(gold, pred, { schema });
  assert.deepEqual(
    annotated.leaves.map((l) => [l.path, l.matcher, l.accepted_by]),
    [
      ['amount', 'number', 'number'],
      ['name', 'default', 'text'],
    ],
  );
  const policyWins = lenient(gold, pred, { schema, policy: { fields: { amount: 'exact' } } });
  assert.equal(policyWins.leaves[0].verdict, 'no_match');
  const types = lenient(gold, pred, { schema, policy: { types: { string: 'exact' } } });
  assert.deepEqual(
    types.leaves.map((l) => [l.matcher, l.verdict]),
    [
      ['number', 'match'],
      ['exact', 'no_match'],
    ],
  );
  // Alignment from an annotation on the array.
  const arr = {
    type: 'object',
    properties: { tags: { type: 'array', items: { type: 'string' }, 'x-sob-match': 'ordered' } },
  };
  const r = lenient('{"tags": ["a1", "b1"]}', '{"tags": ["b1", "a1"]}', { schema: arr });
  assert.equal(r.alignments[0].rule, 'ordered');
  assert.equal(r.alignments[0].source, 'schema');
  assert.equal(r.raw_value_accuracy, 0);
});

test('a bad x-sob-match annotation is reported and ignored, the record still scored', () => {
  const schema = { type: 'object', properties: { n: { type: 'string', 'x-sob-match': { match: 'numbr' } } } };
  const r = lenient('{"n": "Ab"}', '{"n": "ab"}', { schema });
  assert.equal(r.accepted_leaves, 1);
  assert.deepEqual(r.notes, [
    'x-sob-match at n: match: unknown matcher "numbr" (use one of default, exact, text, number, date, enum, synonyms, fuzzy, judge, string_exact, string_case_insensitive, string_fuzzy, integer_exact, number_exact, number_tolerance, boolean_exact) (ignored)',
  ]);
});

test('schema hints are found through $ref and anyOf', () => {
  const schema = {
    type: 'object',
    definitions: { when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] } },
    properties: { issued: { $ref: '#/definitions/when' } },
  };
  assert.equal(
    lenient('{"issued": "20240305"}', '{"issued": "2024-03-05"}', { schema }).leaves[0].accepted_by,
    'date',
  );
  assert.equal(leaf('"20240305"', '"2024-03-05"').verdict, 'no_match');
});

test('policy files: YAML and JSON, one line with file, line and path on a problem', () => {
  const yaml = join(dir, 'policy.yaml');
  writeFileSync(
    yaml,
    [
      'version: 1',
      'fields:',
      '  line_items: {align: match_by, keys: [sku]}',
      '  "line_items[*].amount":',
      '    match: number',
      '    abs_tol: 0.01',
      '',
    ].join('\n'),
  );
  const p = loadPolicy(yaml);
  assert.equal(p.name, 'policy.yaml');
  assert.equal(p.rules.length, 2);
  writeFileSync(yaml, ['fields:', '  total:', '    match: number', '    abs_tol: -1', ''].join('\n'));
  assert.throws(
    () => loadPolicy(yaml),
    (e: Error) =>
      e instanceof UserError &&
      e.message === `${yaml}:4: fields.total.abs_tol: Number must be greater than or equal to 0`,
  );
  writeFileSync(yaml, 'fields:\n  a: [unclosed\n');
  assert.throws(
    () => loadPolicy(yaml),
    (e: Error) => e instanceof UserError && e.message.startsWith(`${yaml}:3: not valid YAML:`),
  );
  const json = join(dir, 'policy.json');
  writeFileSync(
    json,
    '{\n  "fields": {\n    "country": {"match": "synonyms", "tables": ["planets"]}\n  }\n}\n',
  );
  assert.throws(
    () => loadPolicy(json),
    (e: Error) =>
      e.message ===
      `${json}:3: fields.country.tables[0]: unknown table "planets" (known: countries, currencies, us_states)`,
  );
  writeFileSync(json, '{"fields": ');
  assert.throws(
    () => loadPolicy(json),
    (e: Error) => e.message.startsWith(`${json}: not valid JSON:`),
  );
  assert.throws(
    () => loadPolicy(join(dir, 'nope.yaml')),
    (e: Error) => e.message === `no such policy file: ${join(dir, 'nope.yaml')} (or use "default")`,
  );
  assert.equal(loadPolicy('default').name, 'default');
});
