import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { buildBenchmark } from '../../sources/build.ts';
import {
  checkRecord,
  countProperties,
  deriveComplexity,
  GroundingIndex,
  ungroundedPaths,
} from '../../sources/checks.ts';

const S = { type: 'string' };
const I = { type: 'integer' };

function good(id = 'r1'): Record<string, unknown> {
  return {
    metadata: { record_id: id, source: 'text', schema_complexity: 'hard' },
    input: {
      context:
        'The Merrow was built in 1998 and carries 38 cars. The Tidewright was built in 2011 and carries 64 cars.',
      question: 'List the ships.',
      json_schema: {
        type: 'object',
        properties: {
          ships: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: S, built: I, cars: I },
              required: ['name', 'built'],
            },
          },
        },
        required: ['ships'],
      },
    },
    output: {
      ground_truth: {
        ships: [
          { name: 'Merrow', built: 1998, cars: 38 },
          { name: 'Tidewright', built: 2011, cars: 64 },
        ],
      },
    },
  };
}

type Rec = ReturnType<typeof good> & {
  input: { json_schema: Record<string, unknown>; context: string };
  output: { ground_truth: { ships: Record<string, unknown>[] } };
  metadata: Record<string, unknown>;
};

describe('record checks', () => {
  test('a good record passes with no errors and no warnings', () => {
    const r = checkRecord(good());
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.ok, true);
    assert.equal(r.derivedComplexity, 'hard');
  });

  test('planted: ground truth violating its schema is rejected', () => {
    const rec = good() as Rec;
    rec.output.ground_truth.ships[1].built = 'twenty eleven';
    const r = checkRecord(rec);
    assert.equal(r.ok, false);
    assert.equal(r.errors.length, 1);
    assert.match(
      r.errors[0],
      /ground truth does not validate against the schema: \/ships\/1\/built must be integer/,
    );
  });

  test('planted: an ungrounded value is a warning naming its path', () => {
    const rec = good() as Rec;
    rec.output.ground_truth.ships[1].name = 'Sea Lantern';
    const r = checkRecord(rec);
    assert.equal(r.ok, true);
    assert.deepEqual(r.warnings, [
      'ground truth value at ships[1].name is not found in the context (no normaliser matched: tried as written)',
    ]);
  });

  test('planted: a schema with fewer than three properties is rejected', () => {
    const rec = good() as Rec;
    rec.input.json_schema = { type: 'object', properties: { ships: { type: 'array', items: S } } };
    rec.output.ground_truth = { ships: ['Merrow'] } as never;
    rec.metadata.schema_complexity = 'medium';
    const r = checkRecord(rec);
    assert.equal(r.ok, false);
    assert.deepEqual(r.errors, ['the schema declares 1 property; at least 3 are needed']);
  });

  test('planted: a duplicate record id is rejected, the first one kept', () => {
    const seenIds = new Set<string>();
    assert.equal(checkRecord(good('dup'), { seenIds }).ok, true);
    const second = checkRecord(good('dup'), { seenIds });
    assert.equal(second.ok, false);
    assert.deepEqual(second.errors, ['duplicate record_id "dup"']);
    assert.equal(checkRecord(good('other'), { seenIds }).ok, true);
    assert.deepEqual([...seenIds], ['dup', 'other']);
  });

  test('planted: an invalid draft-07 schema is rejected', () => {
    const rec = good() as Rec;
    rec.input.json_schema = { type: 'objekt', properties: { a: S, b: S, c: S } };
    const r = checkRecord(rec);
    assert.equal(r.ok, false);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], /^invalid draft-07 schema: /);
  });

  test('planted: a record of the wrong shape is rejected', () => {
    const rec = good() as Rec;
    delete (rec.input as Record<string, unknown>).question;
    const r = checkRecord(rec);
    assert.equal(r.ok, false);
    assert.deepEqual(r.errors, ['record shape: input.question: Required']);
  });

  test('planted: a given complexity that differs from the derived one is a warning', () => {
    const rec = good() as Rec;
    rec.metadata.schema_complexity = 'easy';
    const r = checkRecord(rec);
    assert.equal(r.ok, true);
    assert.deepEqual(r.warnings, ['schema_complexity is "easy" but the schema\'s shape makes it "hard"']);
  });
});

describe('schema complexity (docs/design.md rule) and property count', () => {
  const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  test('easy: an object of scalars', () => {
    assert.equal(deriveComplexity(obj({ a: S, b: I, c: { type: ['string', 'null'] } })), 'easy');
  });
  test('medium: a nested object of scalars, or an array of scalars (depth 2)', () => {
    assert.equal(deriveComplexity(obj({ a: S, b: obj({ c: S }) })), 'medium');
    assert.equal(deriveComplexity(obj({ a: S, tags: { type: 'array', items: S } })), 'medium');
  });
  test('hard: an array of objects, or depth 3', () => {
    assert.equal(deriveComplexity(obj({ xs: { type: 'array', items: obj({ a: S }) } })), 'hard');
    assert.equal(deriveComplexity(obj({ a: obj({ b: obj({ c: S }) }) })), 'hard');
    assert.equal(
      deriveComplexity({
        type: 'object',
        properties: { xs: { type: 'array', items: { $ref: '#/definitions/x' } } },
        definitions: { x: obj({ a: S }) },
      }),
      'hard',
    );
    assert.equal(
      deriveComplexity(obj({ a: { anyOf: [{ type: 'null' }, obj({ b: obj({ c: S }) })] } })),
      'hard',
    );
  });
  test('definitions that reference each other many times over (2^40 paths) end in "hard", not a hang', () => {
    const definitions: Record<string, unknown> = { d40: obj({ leaf: S }) };
    for (let i = 39; i >= 0; i--)
      definitions[`d${i}`] = obj({
        a: { $ref: `#/definitions/d${i + 1}` },
        b: { $ref: `#/definitions/d${i + 1}` },
      });
    const schema = { $ref: '#/definitions/d0', definitions };
    assert.equal(deriveComplexity(schema), 'hard');
  });
  test('properties are counted over every level', () => {
    assert.equal(countProperties((good() as Rec).input.json_schema), 4);
    assert.equal(countProperties(obj({ a: S })), 1);
  });
});

describe('grounding', () => {
  test('case, whitespace and punctuation are folded away', () => {
    const g = new GroundingIndex('Dr.  Mirela JOSS opened the  "Fern-Gully" in 1903.');
    assert.equal(g.has('dr mirela joss'), true);
    assert.equal(g.has('Fern Gully'), true);
    assert.equal(g.has('Fern Valley'), false);
  });

  test('OCR noise within the edit window is tolerated, more is not', () => {
    const g = new GroundingIndex('Founded by Emil Brandh0rst and 0tto Brandhorst in Linden Fórd next year.');
    assert.equal(g.has('Emil Brandhorst'), true); // 1 edit in 15 characters
    assert.equal(g.has('Linden Ford'), true); // 1 substitution (ó for o) in 11 characters
    assert.equal(g.has('Otto'), false); // under 5 characters: exact only
    assert.equal(g.has('Emma Brandt'), false);
    assert.equal(g.has('x'), false); // a short value must be a whole word, not a piece of "Linden"
    assert.equal(g.has('in'), true);
  });

  test('paths of every ungrounded string leaf are reported; numbers are not checked', () => {
    assert.deepEqual(
      ungroundedPaths(
        { a: 'Merrow', b: [{ c: 'Nowhere Land' }, { c: 'Tidewright' }], n: 12345 },
        'Merrow and Tidewright',
      ),
      ['b[0].c'],
    );
  });
});

describe('a build keeps the good records and rejects the bad ones with reasons', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-checks-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('5 rows in, 2 written, 3 rejected (bad ground truth, duplicate id, unreadable line)', async () => {
    const bad = good('r2') as Rec;
    bad.output.ground_truth.ships[0].built = 'old';
    const lines = [
      JSON.stringify(good('r1')),
      JSON.stringify(bad),
      JSON.stringify(good('r1')),
      '{not json',
      JSON.stringify(good('r3')),
    ];
    const input = join(dir, 'rows.jsonl');
    writeFileSync(input, lines.join('\n'));
    const out = join(dir, 'out', 'records.jsonl');
    const res = await buildBenchmark({ kind: 'sob', input, out });
    assert.equal(res.written, 2);
    assert.equal(res.rejected, 3);
    const written = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).metadata.record_id);
    assert.deepEqual(written, ['r1', 'r3']);
    const rejected = readFileSync(join(dir, 'out', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { record_id: string | null; reasons: string[]; origin: string });
    assert.equal(rejected.length, 3);
    assert.match(rejected[0].origin, /rows\.jsonl:4$/);
    assert.match(rejected[0].reasons[0], /^not valid JSON/);
    assert.equal(rejected[1].record_id, 'r2');
    assert.match(rejected[1].reasons[0], /ground truth does not validate/);
    assert.equal(rejected[2].record_id, 'r1');
    assert.deepEqual(rejected[2].reasons, ['duplicate record_id "r1"']);
    assert.deepEqual(res.manifest.sources.text, { records: 2, weight: 6 });
    assert.equal(res.manifest.records, 2);
  });
});
