/**
 * Issue 20, items 1-3: records in, validated once; a user's own data in one command; one number
 * per answer file. Each test runs the real `sob` on records it writes, against the local
 * protocol server where a model is asked.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
/** What the server answers per record id (default: `{}`). */
const answers = new Map<string, string>();
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-records-'));
  server = await startProtocolServer({
    script: (r) => ({ kind: 'answer', text: answers.get(r.key ?? '') ?? '{}' }),
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = () => ({ OPENAI_API_KEY: 'sk-records', OPENAI_BASE_URL: '' });
const asked = (id: string) => server.counts.get(id) ?? 0;

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
  required: ['name', 'age'],
};
const ORDER = {
  type: 'object',
  properties: {
    lot: { type: 'integer' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
    },
    paid: { type: 'boolean' },
  },
};
const NESTED = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    author: { type: 'object', properties: { first: { type: 'string' }, last: { type: 'string' } } },
  },
};

/** Records as a person writes them: no schema_complexity, no difficulty. */
function handWritten(prefix: string): string[] {
  return [
    {
      metadata: { record_id: `${prefix}1`, source: 'text' },
      input: { context: `[rid:${prefix}1] Ann, 41, of Oslo.`, question: 'Who?', json_schema: PERSON },
      output: { ground_truth: { name: 'Ann', age: 41, city: 'Oslo' } },
    },
    {
      metadata: { record_id: `${prefix}2`, source: 'text' },
      input: {
        context: `[rid:${prefix}2] Lot 7: 2 x A-1, 5 x B-2, paid.`,
        question: 'The order?',
        json_schema: ORDER,
      },
      output: {
        ground_truth: {
          lot: 7,
          items: [
            { sku: 'A-1', qty: 2 },
            { sku: 'B-2', qty: 5 },
          ],
          paid: true,
        },
      },
    },
    {
      metadata: { record_id: `${prefix}3`, source: 'text' },
      input: { context: `[rid:${prefix}3] Emma by Jane Austen.`, question: 'The book?', json_schema: NESTED },
      output: { ground_truth: { title: 'Emma', author: { first: 'Jane', last: 'Austen' } } },
    },
  ].map((r) => JSON.stringify(r));
}

function write(name: string, lines: string[]): string {
  const file = join(tmp, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

test('hand-written records without schema_complexity through sob eval --model baseline:gold: 1.000 on all seven metrics; the complexity derived as build does, and the manifest says so', async () => {
  const bench = write('hand.jsonl', handWritten('h'));
  const dir = join(tmp, 'eval-hand');
  const r = await sob(
    ['eval', '--model', 'baseline:gold', '--benchmark', bench, '--eval-dir', dir, '--bootstrap-samples', '0'],
    { cwd: tmp, env: env() },
  ).done;
  // Before: 0.000 on every metric with exit 0 (every record weighed 0).
  assert.equal(r.code, 0, r.stderr);
  const [row] = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  for (const k of [
    'overall',
    'value_accuracy',
    'faithfulness',
    'json_pass',
    'path_recall',
    'structure_coverage',
    'type_safety',
    'perfect',
  ])
    assert.equal(row[k], 1, `${k} = ${row[k]}`);
  // easy (an object of scalars) 1 + hard (an array of objects) 3 + medium (a nested object) 2.
  const manifest = JSON.parse(readFileSync(join(dir, 'evaluation/manifest.json'), 'utf8'));
  assert.deepEqual(manifest.sources.text, { records: 3, weight: 6 });
  assert.equal(manifest.schema_complexity_derived, 3);
  const run = JSON.parse(readFileSync(join(dir, 'runs/baseline_gold/manifest.json'), 'utf8'));
  assert.equal(run.benchmark.schema_complexity_derived, 3);
  const lines = readFileSync(join(dir, 'runs/baseline_gold/responses.jsonl'), 'utf8').trim().split('\n');
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).metadata.schema_complexity),
    ['easy', 'hard', 'medium'],
  );
  assert.match(
    r.stderr,
    /hand\.jsonl: 3 records without schema_complexity: derived from the schema \(easy 1, medium 2, hard 3\), as sob build does/,
  );
});

test("a typo'd key: exit 2 with the did-you-mean line naming file, line and record, and nothing asked", async () => {
  const [a, b, c] = handWritten('t');
  const bench = write('typo.jsonl', [a, b.replace('"ground_truth"', '"ground_truht"'), c]);
  const dir = join(tmp, 'eval-typo');
  const before = server.total;
  const r = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      dir,
    ],
    { cwd: tmp, env: env() },
  ).done;
  // Before: read as a null ground truth, exit 0, gold's JSON Pass 0.500.
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `^rejected ${bench.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2 \\(record t2\\): unknown key \`ground_truht\` in output; did you mean \`ground_truth\`\\?$`,
      'm',
    ),
  );
  assert.match(r.stderr, /typo\.jsonl: 1 record rejected \(listed above\): nothing was asked;/);
  assert.equal(server.total, before, 'no request at all');
  assert.equal(existsSync(join(dir, 'runs/openai_m/responses.jsonl')), false);
});

test('an invalid schema is rejected before any request: the server counts 0 requests for it (exit 2 asks nothing; --skip-invalid asks the rest)', async () => {
  const [a, b, c] = handWritten('s');
  const badSchema = b.replace('"type":"object","properties":{"lot"', '"type":"objekt","properties":{"lot"');
  assert.notEqual(badSchema, b);
  const bench = write('bad-schema.jsonl', [a, badSchema, c]);
  const before = server.total;
  const stop = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      join(tmp, 'eval-schema-stop'),
    ],
    { cwd: tmp, env: env() },
  ).done;
  assert.equal(stop.code, 2, stop.stderr);
  assert.match(
    stop.stderr,
    /bad-schema\.jsonl:2 \(record s2\): invalid draft-07 schema: schema\/type must be/,
  );
  assert.equal(server.total, before);

  answers.set('s1', JSON.stringify({ name: 'Ann', age: 41, city: 'Oslo' }));
  answers.set('s3', JSON.stringify({ title: 'Emma', author: { first: 'Jane', last: 'Austen' } }));
  const dir = join(tmp, 'eval-schema-skip');
  const go = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      dir,
      '--skip-invalid',
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp, env: env() },
  ).done;
  assert.equal(go.code, 0, go.stderr);
  assert.equal(asked('s2'), 0, 'the record with the invalid schema is never sent');
  assert.equal(asked('s1'), 1);
  assert.equal(asked('s3'), 1);
  // Scored on what was asked: the benchmark's fault is not charged to the model (before:
  // scored 0 on six metrics and Perfect Response 1.0).
  const [row] = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  assert.equal(row.value_accuracy, 1);
  assert.equal(row.perfect, 1);
  const rec = readFileSync(join(dir, 'evaluation/text/openai_m/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.deepEqual(
    rec.map((l) => JSON.parse(l).record_id),
    ['s1', 's3'],
  );
  const manifest = JSON.parse(readFileSync(join(dir, 'evaluation/manifest.json'), 'utf8'));
  assert.deepEqual(manifest.sources.text, { records: 2, weight: 3 });
});

test('sob build records: a CSV with other column names and --map becomes a benchmark sob eval takes directly', async () => {
  const csv = join(tmp, 'mine.csv');
  const cell = (v: unknown) => `"${JSON.stringify(v).replace(/"/g, '""')}"`;
  writeFileSync(
    csv,
    [
      'id,passage,question,schema,answer,category',
      `c1,"[rid:c1] Ann, 41, of Oslo.",Who?,${cell(PERSON)},${cell({ name: 'Ann', age: 41, city: 'Oslo' })},people`,
      `c2,"[rid:c2] Emma by Jane Austen.",The book?,${cell(NESTED)},${cell({ title: 'Emma', author: { first: 'Jane', last: 'Austen' } })},books`,
    ].join('\n'),
  );
  const out = join(tmp, 'mine/records.jsonl');
  const b = await sob(
    ['build', 'records', csv, '--map', 'context=passage,ground_truth=answer', '--out', out],
    { cwd: tmp },
  ).done;
  assert.equal(b.code, 0, b.stderr);
  assert.match(b.stdout, /^2 records written, 0 rejected/);
  const recs = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    recs.map((x) => [
      x.metadata.record_id,
      x.metadata.source,
      x.metadata.schema_complexity,
      x.metadata.category,
    ]),
    [
      ['c1', 'text', 'easy', 'people'],
      ['c2', 'text', 'medium', 'books'],
    ],
  );
  assert.deepEqual(recs[1].output.ground_truth, { title: 'Emma', author: { first: 'Jane', last: 'Austen' } });
  const manifest = JSON.parse(readFileSync(join(tmp, 'mine/manifest.json'), 'utf8'));
  assert.deepEqual(manifest.sources.text, { records: 2, weight: 3 });
  assert.equal(manifest.schema_complexity_derived, 2);

  const dir = join(tmp, 'eval-mine');
  const e = await sob(
    [
      'eval',
      '--model',
      'baseline:gold',
      '--benchmark',
      join(tmp, 'mine'),
      '--eval-dir',
      dir,
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp },
  ).done;
  assert.equal(e.code, 0, e.stderr);
  const [row] = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  assert.equal(row.overall, 1);
  assert.equal(row.coverage, 1);
});

test('sob build records: a misspelt column is rejected naming it, file and line, with the --map that would fix it', async () => {
  const file = join(tmp, 'typo-rows.jsonl');
  writeFileSync(
    file,
    `${JSON.stringify({ id: 'x1', context: 'Ann, 41.', question: 'Who?', schema: PERSON, ground_truht: { name: 'Ann', age: 41 } })}\n`,
  );
  const r = await sob(['build', 'records', file, '--out', join(tmp, 'typo-out/records.jsonl')], { cwd: tmp })
    .done;
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /^rejected x1: unknown column `ground_truht`; did you mean `ground_truth`\? \(or --map ground_truth=ground_truht\) \(.*typo-rows\.jsonl:1\)$/m,
  );
  const usage = await sob(
    ['build', 'records', file, '--map', 'contxt=passage', '--out', join(tmp, 'x/r.jsonl')],
    {
      cwd: tmp,
    },
  ).done;
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--map: unknown field "contxt"; did you mean "context"\?/);
});

test('sob build records: a --map naming a column no row has is one usage line (exit 2) with the nearest column, not a rejection per row', async () => {
  const file = join(tmp, 'mapped-rows.jsonl');
  const rows = ['p1', 'p2'].map((id) =>
    JSON.stringify({
      id,
      passage: 'Ann, 41.',
      question: 'Who?',
      schema: PERSON,
      answer: { name: 'Ann', age: 41 },
    }),
  );
  writeFileSync(file, `${rows.join('\n')}\n`);
  const out = join(tmp, 'mapped-out/records.jsonl');
  const r = await sob(
    ['build', 'records', file, '--map', 'context=pasage,ground_truth=answer', '--out', out],
    { cwd: tmp },
  ).done;
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^sob: --map context=pasage: no column `pasage` in .*mapped-rows\.jsonl; did you mean `passage`\? \(columns: id, passage, question, schema, answer\)$/m,
  );
  assert.doesNotMatch(r.stderr, /^rejected/m);
  assert.equal(existsSync(out), false);
});

test('score <run> and score <run>/responses.jsonl give byte-identical rows, with the profile and its reason named', async () => {
  // `flag` takes an integer or a boolean: the answer's `true` for the gold `1` is equal under the
  // sob profile (Python's True == 1) and not under strict, so the two profiles give two numbers.
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, flag: { type: ['integer', 'boolean'] }, n: { type: 'number' } },
  };
  const bench = write('profile.jsonl', [
    JSON.stringify({
      metadata: { record_id: 'p1', source: 'text' },
      input: { context: '[rid:p1] Ann: flag 1, n 2.', question: 'q', json_schema: schema },
      output: { ground_truth: { name: 'Ann', flag: 1, n: 2 } },
    }),
  ]);
  answers.set('p1', '{"name": "Ann", "flag": true, "n": 2}');
  const run = join(tmp, 'run-profile');
  const r = await sob(
    [
      'run',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--run-dir',
      run,
    ],
    { cwd: tmp, env: env() },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  const rows = join(run, 'evaluation/text/openai_m/eval_records.jsonl');
  const summary = join(run, 'evaluation/text/openai_m/eval_summary.json');
  const score = async (arg: string) => {
    const s = await sob(['score', arg, '--bootstrap-samples', '0'], { cwd: tmp }).done;
    assert.equal(s.code, 0, s.stderr);
    return {
      stdout: s.stdout,
      stderr: s.stderr,
      rows: readFileSync(rows, 'utf8'),
      summary: JSON.parse(readFileSync(summary, 'utf8')),
    };
  };
  const dirWise = await score(run);
  rmSync(join(run, 'evaluation'), { recursive: true });
  const fileWise = await score(join(run, 'responses.jsonl'));
  assert.equal(fileWise.rows, dirWise.rows);
  assert.equal(fileWise.stdout, dirWise.stdout);
  // Before: the file was scored with the sob profile into runs/evaluation/text/responses/ (VA 1).
  assert.equal(JSON.parse(dirWise.rows).leaf_value_em, 2 / 3);
  for (const s of [dirWise, fileWise]) {
    assert.equal(s.summary.profile, 'strict');
    assert.match(
      s.summary.profile_reason,
      /^the default for a run's answers \(its directory or its responses\.jsonl\): your own benchmark/,
    );
    assert.match(
      s.stderr,
      /^profile: strict \(the default for a run's answers \(its directory or its responses\.jsonl\): your own benchmark, the reference's defects fixed; --profile sob for parity\)$/m,
    );
    assert.match(
      s.stderr,
      /^scored 1\/1 files in .* \(weighted means shown; profile: strict \(the default for a run's answers/m,
    );
  }
  // --profile sob is said as asked, and gives the other number.
  const asSob = await sob(['score', run, '--profile', 'sob', '--bootstrap-samples', '0'], { cwd: tmp }).done;
  assert.equal(asSob.code, 0, asSob.stderr);
  assert.match(asSob.stderr, /^profile: sob \(as asked\)$/m);
  assert.equal(JSON.parse(readFileSync(rows, 'utf8')).leaf_value_em, 1);
});

test('score --benchmark checks the benchmark with the same loader: exit 2 before scoring, --skip-invalid leaves the rejected record out', async () => {
  const [a, b, c] = handWritten('k');
  const bench = write('score-bench.jsonl', [a, b.replace('"ground_truth"', '"ground_truht"'), c]);
  // Answers for all three (the gold answers, as a response file).
  const answersFile = write(
    'response_k.jsonl',
    [a, b, c].map((l) => {
      const r = JSON.parse(l);
      r.metadata.model_id = 'k';
      r.output.candidate_response = r.output.ground_truth;
      return JSON.stringify(r);
    }),
  );
  const out = join(tmp, 'score-k');
  const stop = await sob(['score', answersFile, '--benchmark', bench, '--out', out], { cwd: tmp }).done;
  assert.equal(stop.code, 2, stop.stderr);
  assert.match(
    stop.stderr,
    /score-bench\.jsonl:2 \(record k2\): unknown key `ground_truht` in output; did you mean `ground_truth`\?/,
  );
  assert.match(stop.stderr, /nothing was scored; fix it, or pass --skip-invalid/);
  assert.equal(existsSync(out), false);
  const go = await sob(
    ['score', answersFile, '--benchmark', bench, '--out', out, '--skip-invalid', '--bootstrap-samples', '0'],
    { cwd: tmp },
  ).done;
  assert.equal(go.code, 0, go.stderr);
  const rows = readFileSync(join(out, 'text/k/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  // k2's answer is not in the (checked) benchmark: not scored; k1 and k3 weigh what their schemas give.
  assert.deepEqual(
    rows.map((r) => [r.record_id, r.schema_complexity, r.leaf_value_em]),
    [
      ['k1', 'easy', 1],
      ['k3', 'medium', 1],
    ],
  );
});
