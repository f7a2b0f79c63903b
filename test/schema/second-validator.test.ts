/**
 * The second validator (src/core/validator-hyperjump.ts): which Draft 2020-12 schemas go to
 * hyperjump (a static scan at compile time), that it agrees with ajv wherever ajv is right (the
 * official suite's routed schemas, and hand-written ones under both protocols: Python's formats,
 * patterns and `multipleOf` are still the protocol's), that its violations have ajv's shape, that
 * it reads no file and no network, that its compile is bounded, and that a scoring worker's
 * per-record budget covers its validation.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  type CompileResult,
  compileSchema,
  localRemotes,
  type Protocol,
  validateCompiled,
} from '../../src/core/validator.ts';
import { compileHyperjump, routedFeatures } from '../../src/core/validator-hyperjump.ts';
import { jsonl, type Line, responseLine } from '../compliance/fixtures.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { sob } from '../report/run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-second-validator-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const verdict = (c: CompileResult, x: unknown): boolean => c.ok && validateCompiled(c.compiled, x).valid;

test('the static scan sends $dynamicRef, $dynamicAnchor, unevaluated* and $id beside $ref to hyperjump, in Draft 2020-12 only', () => {
  assert.deepEqual(routedFeatures({ type: 'object', properties: { a: { $ref: '#/$defs/a' } } }), []);
  assert.deepEqual(
    routedFeatures({
      $defs: { n: { $dynamicAnchor: 'n', items: { $dynamicRef: '#n' } } },
      properties: { a: { unevaluatedItems: false }, b: { $id: 'b.json', $ref: '#/$defs/x' } },
      unevaluatedProperties: false,
    }),
    ['$dynamicAnchor', '$dynamicRef', '$id beside $ref', 'unevaluatedItems', 'unevaluatedProperties'],
  );
  const schema = { properties: { a: { type: 'string' } }, unevaluatedProperties: false };
  const cases: [string, CompileResult, string][] = [
    [
      '2020-12 declared',
      compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema }),
      'hyperjump',
    ],
    [
      'jsonschemabench (every schema is 2020-12)',
      compileSchema(schema, { protocol: 'jsonschemabench' }),
      'hyperjump',
    ],
    ['draft-07 (no such keyword there)', compileSchema(schema), 'ajv'],
    ['routing off', compileSchema(schema, { protocol: 'jsonschemabench', route: false }), 'ajv'],
    [
      'nothing to route',
      compileSchema({ properties: { a: { type: 'string' } } }, { protocol: 'jsonschemabench' }),
      'ajv',
    ],
  ];
  for (const [name, c, want] of cases) {
    assert.ok(c.ok, name);
    assert.equal(c.compiled.validator, want, name);
  }
  const c = cases[1][1];
  assert.ok(c.ok);
  assert.deepEqual(c.compiled.routed, ['unevaluatedProperties']);
  assert.deepEqual(
    [{ a: 'x' }, { a: 'x', b: 1 }, { a: 1 }].map((x) => verdict(c, x)),
    [true, false, false],
  );
});

test('on the suite schemas it takes, hyperjump agrees with ajv wherever ajv is right, and is right where ajv is not', {
  skip: needsData('json-schema-test-suite'),
}, () => {
  const SUITE = sharedData('json-schema-test-suite');
  const remotes = localRemotes(join(SUITE, 'remotes'), 'http://localhost:1234/');
  const dir = join(SUITE, 'tests', 'draft2020-12');
  let groups = 0;
  let tests = 0;
  let ajvRight = 0;
  let hyperjumpRight = 0;
  const disagreeWhereAjvRight: string[] = [];
  const ajvWrong = new Map<string, number>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'format.json')) {
    for (const g of JSON.parse(readFileSync(join(dir, file), 'utf8'))) {
      const opts = { defaultDialect: '2020-12' as const, assertFormats: false, remotes };
      const routed = compileSchema(g.schema, opts);
      if (!routed.ok || routed.compiled.validator !== 'hyperjump') continue;
      const plain = compileSchema(g.schema, { ...opts, route: false });
      groups++;
      for (const t of g.tests as { description: string; data: unknown; valid: boolean }[]) {
        tests++;
        const h = verdict(routed, t.data);
        const a = verdict(plain, t.data);
        if (h === t.valid) hyperjumpRight++;
        if (a === t.valid) {
          ajvRight++;
          if (h !== a) disagreeWhereAjvRight.push(`${file} | ${g.description} | ${t.description}`);
        } else ajvWrong.set(file, (ajvWrong.get(file) ?? 0) + 1);
      }
    }
  }
  console.log(
    `# routed: ${groups} groups, ${tests} tests; ajv right on ${ajvRight}, hyperjump on ${hyperjumpRight}; ajv wrong by file: ${[...ajvWrong].map(([f, n]) => `${f} ${n}`).join(', ')}`,
  );
  assert.deepEqual([groups, tests], [108, 273]);
  assert.deepEqual(disagreeWhereAjvRight, []);
  assert.equal(hyperjumpRight, 273);
  // What ajv gets wrong among them, the reason they are routed.
  assert.equal(ajvRight, 235);
  assert.deepEqual(Object.fromEntries(ajvWrong), {
    'dynamicRef.json': 20,
    'ref.json': 3,
    'unevaluatedItems.json': 11,
    'unevaluatedProperties.json': 4,
  });
});

const SHAPES = {
  type: 'object',
  properties: {
    ip: { type: 'string', format: 'ipv4' },
    day: { type: 'string', format: 'date' },
    code: { type: 'string', pattern: '^ab\\d+$' },
    price: { type: 'number', multipleOf: 0.01 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
  },
  required: ['code'],
};
const ANSWERS: unknown[] = [
  { code: 'ab12', price: 19.5, tags: ['x'] },
  { code: 'ab12', ip: '1.2.3.4' },
  { code: 'ab12', day: '2024-02-30' },
  { code: 'ab12', day: '2024-02-29' },
  { code: 'ab12\n' },
  { code: 'xab12' },
  { code: 'ab12', price: 19.99 },
  { code: 'ab12', price: 0.3 },
  { code: 'ab12', tags: ['x', 3, 'y'] },
  { code: 'ab12', extra: 1 },
  { tags: [] },
];

for (const [protocol, want] of [
  // Python: the harness's ipv4 check fails every value; `$` matches before a final newline;
  // 19.99 / 0.01 is not a whole number.
  ['jsonschemabench', [true, false, false, true, true, false, false, true, false, false, false]],
  // ECMA-262 `$`, ajv-formats, multipleOf within 1e-9.
  ['dialect', [true, true, false, true, false, false, true, true, false, false, false]],
] as [Protocol, boolean[]][]) {
  test(`${protocol}: a routed schema keeps the protocol's formats, patterns and multipleOf (hyperjump and ajv agree answer by answer)`, () => {
    const routedSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      ...SHAPES,
      unevaluatedProperties: false,
    };
    const h = compileSchema(routedSchema, { protocol });
    const a = compileSchema(
      { ...routedSchema, unevaluatedProperties: undefined, additionalProperties: false },
      {
        protocol,
        route: false,
      },
    );
    assert.ok(h.ok && a.ok);
    assert.equal(h.compiled.validator, 'hyperjump');
    assert.equal(a.compiled.validator, 'ajv');
    assert.deepEqual(
      ANSWERS.map((x) => verdict(h, x)),
      want,
    );
    assert.deepEqual(
      ANSWERS.map((x) => verdict(a, x)),
      want,
    );
  });
}

test("a routed schema's violations have ajv's shape: instance path, schema path, keyword", () => {
  const c = compileSchema(
    { ...SHAPES, unevaluatedProperties: false },
    { protocol: 'dialect', defaultDialect: '2020-12' },
  );
  assert.ok(c.ok);
  assert.equal(c.compiled.validator, 'hyperjump');
  const r = validateCompiled(c.compiled, { code: 'zz', tags: ['x', 3], extra: true });
  assert.equal(r.valid, false);
  assert.deepEqual(r.violations.map((v) => [v.instance_path, v.schema_path, v.keyword]).sort(), [
    ['/code', '#/properties/code/pattern', 'pattern'],
    ['/extra', '#/unevaluatedProperties', 'unevaluatedProperties'],
    ['/tags/1', '#/properties/tags/items/type', 'type'],
  ]);
});

test('hyperjump reads no file and no network: such a $ref leaves the schema to ajv, which fails only the answers reaching it', () => {
  const c = compileSchema(
    {
      unevaluatedProperties: false,
      properties: { a: { $ref: 'file:///etc/hostname' }, b: { $ref: 'http://127.0.0.1:9/x.json' }, c: {} },
    },
    { protocol: 'jsonschemabench' },
  );
  assert.ok(c.ok);
  assert.equal(c.compiled.validator, 'ajv');
  assert.match(
    c.compiled.routeFallback ?? '',
    /remote \$ref (file:\/\/\/etc\/hostname|http:\/\/127\.0\.0\.1:9\/x\.json) is not available offline/,
  );
  assert.deepEqual(
    [{ c: 1 }, { a: 1 }, { b: 1 }, { d: 1 }].map((x) => verdict(c, x)),
    [true, false, false, false],
  );
});

test('a compile over its budget is abandoned with the reason, and the next schema compiles on a new helper', () => {
  // 20,000 properties: hyperjump takes far more than 1 ms to compile them.
  const properties = Object.fromEntries(
    Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
  );
  const slow = compileHyperjump({ properties, unevaluatedProperties: false }, () => undefined, 64, 1);
  assert.deepEqual(slow, {
    ok: false,
    reason: 'hyperjump did not compile the schema within 1 ms',
    timedOut: true,
  });
  const next = compileHyperjump({ unevaluatedItems: false }, () => undefined);
  assert.equal(next.ok, true);
});

test("sob score: a routed schema's answer that runs over the record budget is reported alone, the next record is scored", () => {
  // The budget leaves room for a new worker's first hyperjump compile (about 1 s on a busy machine).
  // Draft 2020-12 named: a schema without $schema is read as draft-07 (the dialect protocol), where
  // unevaluatedProperties is not a keyword.
  const redos = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(a+)+$' } },
    unevaluatedProperties: false,
  };
  const lines: Line[] = [
    { id: 'slow', category: 'D', schema: redos, raw: JSON.stringify({ name: `${'a'.repeat(36)}b` }) },
    { id: 'next', category: 'D', schema: redos, raw: '{"name": "aaa"}' },
    { id: 'extra', category: 'D', schema: redos, raw: '{"name": "aaa", "x": 1}' },
  ];
  const dir = join(tmp, 'redos');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'response_m.jsonl');
  writeFileSync(file, `${lines.map(responseLine).join('\n')}\n`);
  const out = join(tmp, 'eval-redos');
  const r = sob('score', file, '--out', out, '--bootstrap-samples', '0', '--record-timeout-ms', '5000');
  assert.match(r.stderr, /\(record slow\): scoring exceeded 5000 ms; reported with scoring_error/);
  const rows = jsonl(join(out, 'schema/m/eval_records.jsonl'));
  assert.deepEqual(
    rows.map((x) => [x.record_id, x.compliance.valid, x.explanation?.scoring_error ?? null]),
    [
      ['slow', false, 'scoring exceeded 5000 ms'],
      ['next', true, null],
      ['extra', false, null],
    ],
  );
  assert.deepEqual(
    rows[2].compliance.violations.map((v: { instance_path: string; keyword: string }) => [
      v.instance_path,
      v.keyword,
    ]),
    [['/x', 'unevaluatedProperties']],
  );
});
