/**
 * The two validation protocols (docs/compliance-protocols.md) on hand-written cases, one per
 * difference between JSONSchemaBench's validation (Python `jsonschema`, Draft 2020-12, its
 * format checker) and the dialect reading: in process, then through `sob score` as a user runs it.
 * Each expected Python verdict was checked with jsonschema 4.26 and the paper's harness code.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { compileSchema, type Protocol, validateCompiled } from '../../src/core/validator.ts';
import { responseLine } from '../compliance/fixtures.ts';
import { reportData, sob } from '../report/run.ts';

/** 'valid' | 'invalid' | 'schema-invalid' (the schema admits no answer: it does not compile). */
function verdict(schema: unknown, answer: unknown, protocol: Protocol): string {
  const c = compileSchema(schema, { protocol });
  if (!c.ok) return 'schema-invalid';
  return validateCompiled(c.compiled, answer).valid ? 'valid' : 'invalid';
}

interface Case {
  name: string;
  schema: unknown;
  answer: unknown;
  jsonschemabench: string;
  dialect: string;
}

const DEPENDENCIES = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { name: { type: 'string' }, unit: { type: 'string' } },
  dependencies: { name: ['unit'] },
};
const LAZY_REF = {
  type: 'object',
  properties: { a: { type: 'integer' }, b: { $ref: '#/definitions/missing' } },
};
const TWO_FRAGMENTS = {
  type: 'object',
  properties: {
    a: { $ref: 'https://example.com/defs.json#/a' },
    b: { $ref: 'https://example.com/defs.json#/b' },
    c: { type: 'integer' },
  },
};
const DRAFT4_EXCLUSIVE = {
  $schema: 'http://json-schema.org/draft-04/schema#',
  type: 'number',
  maximum: 5,
  exclusiveMaximum: true,
};

const D4_MULTIPLE_OF = {
  type: 'object',
  properties: { m: { $ref: 'http://json-schema.org/draft-04/schema#/properties/multipleOf' } },
};

const CASES: Case[] = [
  // `dependencies` is not a Draft 2020-12 keyword: ignored by Python, enforced by draft 7.
  {
    name: 'dependencies, dependent key missing',
    schema: DEPENDENCIES,
    answer: { name: 'x' },
    jsonschemabench: 'valid',
    dialect: 'invalid',
  },
  {
    name: 'dependencies, dependent key present',
    schema: DEPENDENCIES,
    answer: { name: 'x', unit: 'kg' },
    jsonschemabench: 'valid',
    dialect: 'valid',
  },
  // A format Python does not know is not checked; ajv-formats checks `url`.
  {
    name: 'unknown format url',
    schema: { type: 'string', format: 'url' },
    answer: 'not a url',
    jsonschemabench: 'valid',
    dialect: 'invalid',
  },
  {
    name: 'known format email',
    schema: { type: 'string', format: 'email' },
    answer: 'no at sign',
    jsonschemabench: 'invalid',
    dialect: 'invalid',
  },
  // A `$ref` that resolves nowhere fails only the answers that reach it.
  {
    name: 'lazy $ref not reached',
    schema: LAZY_REF,
    answer: { a: 1 },
    jsonschemabench: 'valid',
    dialect: 'schema-invalid',
  },
  {
    name: 'lazy $ref reached',
    schema: LAZY_REF,
    answer: { a: 1, b: 2 },
    jsonschemabench: 'invalid',
    dialect: 'schema-invalid',
  },
  {
    name: 'remote $ref not reached',
    schema: { type: 'object', properties: { r: { $ref: 'https://example.com/x.json' } } },
    answer: {},
    jsonschemabench: 'valid',
    dialect: 'schema-invalid',
  },
  // Several places in one missing document: each fails only the answers that reach it.
  {
    name: 'missing document, two fragments, neither reached',
    schema: TWO_FRAGMENTS,
    answer: { c: 1 },
    jsonschemabench: 'valid',
    dialect: 'schema-invalid',
  },
  {
    name: 'missing document, two fragments, one reached',
    schema: TWO_FRAGMENTS,
    answer: { b: 1 },
    jsonschemabench: 'invalid',
    dialect: 'schema-invalid',
  },
  // Draft 4's boolean exclusiveMaximum fails the Draft 2020-12 meta-schema: no answer is compliant.
  {
    name: 'draft-04 exclusiveMaximum, below',
    schema: DRAFT4_EXCLUSIVE,
    answer: 4,
    jsonschemabench: 'schema-invalid',
    dialect: 'valid',
  },
  {
    name: 'draft-04 exclusiveMaximum, at the bound',
    schema: DRAFT4_EXCLUSIVE,
    answer: 5,
    jsonschemabench: 'schema-invalid',
    dialect: 'invalid',
  },
  // The harness's ipv4 / ipv6 / uuid checks return None: every value fails them.
  {
    name: 'ipv4, a valid address',
    schema: { format: 'ipv4' },
    answer: '127.0.0.1',
    jsonschemabench: 'invalid',
    dialect: 'valid',
  },
  {
    name: 'uuid, a valid uuid',
    schema: { format: 'uuid' },
    answer: '123e4567-e89b-12d3-a456-426614174000',
    jsonschemabench: 'invalid',
    dialect: 'valid',
  },
  {
    name: 'ipv6 on a number',
    schema: { format: 'ipv6' },
    answer: 6,
    jsonschemabench: 'invalid',
    dialect: 'valid',
  },
  // FormatChecker()'s `time` is draft 3's strptime("%H:%M:%S").
  {
    name: 'time with an offset',
    schema: { type: 'string', format: 'time' },
    answer: '12:00:00Z',
    jsonschemabench: 'invalid',
    dialect: 'valid',
  },
  {
    name: 'time without seconds fraction',
    schema: { type: 'string', format: 'time' },
    answer: '1:2:3',
    jsonschemabench: 'valid',
    dialect: 'invalid',
  },
  // rfc3339_validator matches ASCII digits only (a Bengali digit in the date).
  {
    name: 'date-time with a non-ASCII digit',
    schema: { type: 'string', format: 'date-time' },
    answer: '1963-06-1৪T00:00:00Z',
    jsonschemabench: 'invalid',
    dialect: 'invalid',
  },
  // Python's multipleOf with a float divisor: the quotient must be whole exactly.
  {
    name: 'multipleOf 0.01',
    schema: { type: 'number', multipleOf: 0.01 },
    answer: 19.99,
    jsonschemabench: 'invalid',
    dialect: 'valid',
  },
  // Python `re.search`: `$` also matches before a final newline.
  {
    name: 'pattern $ before a newline',
    schema: { type: 'string', pattern: '^ab$' },
    answer: 'ab\n',
    jsonschemabench: 'valid',
    dialect: 'invalid',
  },
  // An empty enum admits nothing (ajv refuses the schema).
  { name: 'enum []', schema: { enum: [] }, answer: 1, jsonschemabench: 'invalid', dialect: 'schema-invalid' },
  // Draft 2020-12 reads every schema: an array-valued `items` fails its meta-schema.
  {
    name: 'tuple items (draft 7)',
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }],
    },
    answer: ['a'],
    jsonschemabench: 'schema-invalid',
    dialect: 'valid',
  },
  // A pattern Python cannot compile fails check_schema (format "regex").
  {
    name: 'pattern Python cannot compile',
    schema: { type: 'string', pattern: '\\p{L}+' },
    answer: 'abc',
    jsonschemabench: 'schema-invalid',
    dialect: 'valid',
  },
  // A remote document in draft 4 (its meta-schema, known offline): its boolean
  // exclusiveMinimum is compared as the number 1 by Python, so 1 fails and 2 passes; the
  // dialect reading (draft 7 here) cannot compile that document.
  {
    name: 'draft-04 meta-schema fragment, 1',
    schema: D4_MULTIPLE_OF,
    answer: { m: 1 },
    jsonschemabench: 'invalid',
    dialect: 'schema-invalid',
  },
  {
    name: 'draft-04 meta-schema fragment, 2',
    schema: D4_MULTIPLE_OF,
    answer: { m: 2 },
    jsonschemabench: 'valid',
    dialect: 'schema-invalid',
  },
];

for (const c of CASES) {
  test(`protocols: ${c.name}: jsonschemabench ${c.jsonschemabench}, dialect ${c.dialect}`, () => {
    assert.equal(verdict(c.schema, c.answer, 'jsonschemabench'), c.jsonschemabench, 'jsonschemabench');
    assert.equal(verdict(c.schema, c.answer, 'dialect'), c.dialect, 'dialect');
  });
}

test('the jsonschemabench protocol names the meta-schema failure; the dialect reading is the default in process', () => {
  const c = compileSchema(DRAFT4_EXCLUSIVE, { protocol: 'jsonschemabench' });
  assert.equal(c.ok, false);
  assert.match(!c.ok ? c.reason : '', /Draft 2020-12 meta-schema \(at \/exclusiveMaximum: must be number\)/);
  const d = compileSchema(DRAFT4_EXCLUSIVE);
  assert.ok(d.ok && d.compiled.protocol === 'dialect' && d.compiled.dialect === 'draft-04');
});

// -- Through `sob score` ------------------------------------------------------------------------

const tmp = mkdtempSync(join(tmpdir(), 'sob-protocol-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function rows(file: string): Record<string, { valid: boolean; schema_compiles: boolean; protocol: string }> {
  const out: Record<string, { valid: boolean; schema_compiles: boolean; protocol: string }> = {};
  for (const l of readFileSync(file, 'utf8').trim().split('\n')) {
    const r = JSON.parse(l);
    out[r.record_id] = r.compliance;
  }
  return out;
}

test('sob score: dialect by default on rows not built from JSONSchemaBench, jsonschemabench on request; the summary, the leaderboard and the report name the protocol', () => {
  const dir = join(tmp, 'responses');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'response_m.jsonl');
  const lines = CASES.map((c, i) =>
    responseLine({
      id: `c${i}`,
      category: 'hand',
      track: 'compliance',
      schema: c.schema,
      raw: JSON.stringify(c.answer),
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  const expected = (p: 'jsonschemabench' | 'dialect') => CASES.filter((c) => c[p] === 'valid').length;
  for (const protocol of ['jsonschemabench', 'dialect'] as const) {
    const out = join(tmp, protocol);
    // Rows of no JSONSchemaBench build: dialect by default (the protocol follows the data).
    const flags = protocol === 'jsonschemabench' ? ['--protocol', 'jsonschemabench'] : [];
    const r = sob('score', file, '--out', out, '--bootstrap-samples', '0', ...flags);
    assert.equal(r.status, 0, r.stderr);
    const got = rows(join(out, 'schema/m/eval_records.jsonl'));
    CASES.forEach((c, i) => {
      const row = got[`c${i}`];
      assert.equal(row.protocol, protocol, c.name);
      assert.equal(row.valid, c[protocol] === 'valid', `${protocol}: ${c.name}`);
      assert.equal(row.schema_compiles, c[protocol] !== 'schema-invalid', `${protocol}: ${c.name} compiles`);
    });
    const s = JSON.parse(readFileSync(join(out, 'schema/m/eval_summary.json'), 'utf8'));
    assert.equal(s.protocol, protocol);
    assert.equal(s.compliance.overall.empirical_coverage.count, expected(protocol));
    assert.equal(
      s.data_quality.uncompilable_schema_count,
      CASES.filter((c) => c[protocol] === 'schema-invalid').length,
    );
    const lb = sob('leaderboard', out, '--track', 'compliance', '--format', 'md');
    assert.equal(lb.status, 0, lb.stderr);
    assert.match(
      lb.stdout,
      new RegExp(
        `Validation protocol: ${protocol} \\(${protocol === 'dialect' ? 'the default for schema records not built from JSONSchemaBench' : '--protocol as asked'}`,
      ),
    );
    const js = sob('leaderboard', out, '--track', 'compliance', '--format', 'json');
    assert.equal(JSON.parse(js.stdout)[0].protocol, protocol);
    // The HTML report's compliance section names it too.
    const html = join(tmp, `${protocol}.html`);
    const rep = sob('report', out, '--out', html);
    assert.equal(rep.status, 0, rep.stderr);
    const d = reportData<{ compliance: { summaries: { protocol: string }[] } }>(html);
    assert.equal(d.compliance.summaries[0].protocol, protocol);
  }
  // 9 of the 24 cases are valid under the paper's protocol, 9 under the dialect reading.
  assert.deepEqual([expected('jsonschemabench'), expected('dialect')], [9, 9]);
});
