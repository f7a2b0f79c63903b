/**
 * Issue 9 item 3: the baseline ceiling is a ceiling. A user's own benchmark (`sob eval`, `sob
 * score` of a run directory) is scored with the strict profile by default, response files with
 * sob; the profile is printed and written to the summary; the sob profile's rows name the leaves
 * its quirks decided (`explanation.sob_quirks`). Gold scores 1.000 on all seven metrics.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, type Summary, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-profile-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SEVEN = [
  'value_accuracy',
  'faithfulness',
  'json_pass',
  'path_recall',
  'structure_coverage',
  'type_safety',
  'perfect',
] as const;

interface Row {
  model: string;
  coverage: number;
  [k: string]: unknown;
}

function leaderboard(evalDir: string): Row[] {
  return JSON.parse(readFileSync(join(evalDir, 'leaderboard.json'), 'utf8')) as Row[];
}

test('sob eval with no arguments: gold scores 1.000 on all seven metrics, with the strict profile', () => {
  const cwd = join(tmp, 'default');
  mkdirSync(cwd);
  const r = sob(['eval', '--bootstrap-samples', '10', '--no-report'], cwd, 300_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^profile: strict /m);
  const gold = leaderboard(join(cwd, 'runs/eval')).find((x) => x.model === 'baseline_gold')!;
  for (const k of SEVEN) assert.equal(gold[k], 1, `gold ${k}`);
  assert.equal(gold.overall, 1);
  for (const m of ['text', 'image', 'audio']) {
    const s = JSON.parse(
      readFileSync(join(cwd, 'runs/eval/evaluation', m, 'baseline_gold/eval_summary.json'), 'utf8'),
    ) as Summary;
    assert.equal(s.profile, 'strict', m);
  }
});

/** Ground truths that trip the reference's literal walk or equality, each valid under its schema. */
const TRICKY: { id: string; schema: object; gt: string }[] = [
  {
    id: 'type-list-null',
    schema: {
      type: 'object',
      properties: { year: { type: ['integer', 'null'] }, name: { type: ['string', 'null'] } },
      required: ['year', 'name'],
    },
    gt: '{"year": null, "name": "Ada"}',
  },
  {
    id: 'nullable-anyof-ref',
    schema: {
      type: 'object',
      definitions: { maybeText: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      properties: { a: { $ref: '#/definitions/maybeText' }, b: { $ref: '#/definitions/maybeText' } },
      required: ['a', 'b'],
    },
    gt: '{"a": null, "b": "x"}',
  },
  {
    id: 'empty-arrays',
    schema: {
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' } }, tags: { type: 'array' } },
      required: ['items', 'tags'],
    },
    gt: '{"items": [], "tags": ["t"]}',
  },
  {
    id: 'integral-floats',
    schema: {
      type: 'object',
      properties: { n: { type: 'integer' }, x: { type: 'number' }, y: { type: 'number' } },
      required: ['n', 'x', 'y'],
    },
    gt: '{"n": 17.0, "x": 17, "y": -0.0}',
  },
  {
    id: 'type-list-container',
    schema: {
      type: ['object', 'null'],
      properties: {
        rows: {
          type: ['array', 'null'],
          items: { type: 'object', additionalProperties: { type: 'boolean' } },
        },
      },
    },
    gt: '{"rows": [{"ok": true, "dotted.key": false}]}',
  },
  {
    id: 'empty-root',
    schema: { type: 'array', items: { type: 'string' } },
    gt: '[]',
  },
];

test('gold scores 1.000 on all seven metrics on ground truths with type lists, nullable, $ref, empty arrays and floats', () => {
  const cwd = join(tmp, 'tricky');
  mkdirSync(cwd);
  const bench = join(cwd, 'records.jsonl');
  writeFileSync(
    bench,
    `${TRICKY.map(({ id, schema, gt }) =>
      JSON.stringify({
        metadata: { record_id: id, source: 'image', schema_complexity: 'medium' },
        input: { context: 'c', question: 'q', json_schema: schema },
        output: { ground_truth: '@GT@' },
      }).replace('"@GT@"', gt),
    ).join('\n')}\n`,
  );
  const r = sob(
    ['eval', '--benchmark', bench, '--model', 'baseline:gold', '--bootstrap-samples', '10', '--no-report'],
    cwd,
    300_000,
  );
  assert.equal(r.code, 0, r.stderr);
  const gold = leaderboard(join(cwd, 'runs/eval')).find((x) => x.model === 'baseline_gold')!;
  for (const k of SEVEN) assert.equal(gold[k], 1, `gold ${k}`);
  const { rows } = readOut(join(cwd, 'runs/eval/evaluation'), 'image', 'baseline_gold');
  assert.equal(rows.length, TRICKY.length);
  for (const row of rows)
    for (const k of [
      'leaf_value_em',
      'value_token_f1',
      'schema_compliance',
      'hier_path_recall',
      'path_set_f1',
      'type_precision',
      'strict_json_em',
    ])
      assert.equal(row[k], 1, `${row.record_id} ${k}`);

  // The same answers under the sob profile: the reference's quirks, each named in the row.
  const sobOut = join(cwd, 'sob-out');
  const s = sob(
    [
      'score',
      join(cwd, 'runs/eval/runs/baseline_gold'),
      '--profile',
      'sob',
      '--out',
      sobOut,
      '--bootstrap-samples',
      '0',
    ],
    cwd,
  );
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stderr, /^profile: sob \(as asked\)/m);
  const sobRows = new Map(
    readOut(sobOut, 'image', 'baseline_gold').rows.map((x) => [x.record_id as string, x]),
  );
  const quirks = (id: string) =>
    (
      (sobRows.get(id)!.explanation as { sob_quirks?: { path: string; quirk: string }[] })?.sob_quirks ?? []
    ).map((q) => `${q.path}:${q.quirk}`);
  assert.equal(sobRows.get('type-list-null')!.type_precision, 0.5);
  assert.deepEqual(quirks('type-list-null'), ['year:type_list']);
  assert.equal(sobRows.get('nullable-anyof-ref')!.type_precision, 0);
  assert.deepEqual(quirks('nullable-anyof-ref'), ['a:schema_walk', 'b:schema_walk']);
  assert.equal(sobRows.get('integral-floats')!.type_precision, 2 / 3);
  assert.deepEqual(quirks('integral-floats'), ['n:integral_float']);
  assert.deepEqual(quirks('type-list-container'), [
    'rows[0].ok:schema_walk',
    'rows[0].dotted.key:schema_walk',
  ]);
  assert.deepEqual(quirks('empty-arrays'), ['tags[0]:schema_walk']); // an array schema without `items`
});

test('sob score: response files default to sob, run directories to strict; the summary says which', () => {
  const cwd = join(tmp, 'defaults');
  mkdirSync(cwd);
  const f = join(cwd, 'response_m_image.jsonl');
  writeFileSync(f, `${responseLine('a', { name: 'x', n: 1 })}\n`);
  const out = join(cwd, 'out');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '0'], cwd);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^profile: sob \(the default for response files/m);
  assert.equal(readOut(out, 'image', 'm').summary.profile, 'sob');
  const strict = sob(['score', f, '--out', out, '--bootstrap-samples', '0', '--profile', 'strict'], cwd);
  assert.equal(strict.code, 0, strict.stderr);
  assert.equal(readOut(out, 'image', 'm').summary.profile, 'strict');
});

test('the sob profile names the leaves its quirks decided: true == 1, a missing null, dotted keys, 1 vs 1.0', () => {
  const cwd = join(tmp, 'quirks');
  mkdirSync(cwd);
  const f = join(cwd, 'response_q_image.jsonl');
  const any = { type: 'object' };
  writeFileSync(
    f,
    [
      responseLine('bool', null, {
        schema: any,
        gtText: '{"a": 1, "b": "x"}',
        candText: '{"a": true, "b": "x"}',
      }),
      responseLine('missing', null, { schema: any, gtText: '{"a": null, "b": "x"}', candText: '{"b": "x"}' }),
      responseLine('dotted', null, {
        schema: any,
        gtText: '{"a": {"b": 1}}',
        candText: '{"a": {"b": 2}, "a.b": 1}',
      }),
      responseLine('lexeme', null, {
        schema: any,
        gtText: '{"a": 1, "b": "x"}',
        candText: '{"a": 1.0, "b": "x"}',
      }),
      responseLine('plain', null, { schema: any, gtText: '{"a": 1}', candText: '{"a": 2}' }),
    ].join('\n'),
  );
  const out = join(cwd, 'out');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '0'], cwd);
  assert.equal(r.code, 0, r.stderr);
  const rows = new Map(readOut(out, 'image', 'q').rows.map((x) => [x.record_id as string, x]));
  const q = (id: string) =>
    (
      (rows.get(id)!.explanation as { sob_quirks?: { path: string; quirk: string }[] } | undefined)
        ?.sob_quirks ?? []
    )
      // (`{"type": "object"}` gives no leaf a type in the literal walk: every leaf also has a
      // schema_walk note, left out here)
      .flatMap((x) => (x.quirk === 'schema_walk' ? [] : [`${x.path}:${x.quirk}`]));
  assert.equal(rows.get('bool')!.leaf_value_em, 1);
  assert.deepEqual(q('bool'), ['a:bool_equals_number']);
  // Token F1 1.0 on both leaves (the missing null read as null), times the coverage gate of
  // path-set F1 2/3.
  const gate = (2 / 3 / 0.9) ** 2;
  assert.ok(Math.abs((rows.get('missing')!.value_token_f1 as number) - gate) < 1e-12);
  assert.deepEqual(q('missing'), ['a:missing_is_null']);
  assert.equal(rows.get('dotted')!.leaf_value_em, 1);
  assert.deepEqual(q('dotted'), ['a.b:dotted_key_collision']);
  assert.equal(rows.get('lexeme')!.strict_json_em, 0);
  assert.deepEqual(q('lexeme'), ['a:int_float_lexeme']);
  assert.deepEqual(q('plain'), []);
});
