/**
 * A benchmark written by hand as flat rows (id, context, question, schema, ground_truth: the
 * input of `sob build records`) is read where a benchmark is expected: `sob eval <file>`,
 * `sob eval --benchmark`, `sob run --benchmark`, `sob score --benchmark`. Each test runs the
 * real command in this process on rows it writes, against the local protocol server where a
 * model is asked.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';
import { type ProtocolServer, startProtocolServer } from '../kit/protocol-server.ts';

let tmp: string;
let server: ProtocolServer;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-flat-'));
  // The model answers every record with the same employee: right for e1, wrong age for e2.
  server = await startProtocolServer({
    script: () => ({ kind: 'answer', text: '{"name":"Alice Smith","age":34,"company":"Acme Corp"}' }),
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, company: { type: 'string' } },
  required: ['name', 'age', 'company'],
};
const ROWS = [
  {
    id: 'e1',
    context: 'Alice Smith, 34, joined Acme Corp in 2019.',
    question: 'Extract the employee.',
    schema: SCHEMA,
    ground_truth: { name: 'Alice Smith', age: 34, company: 'Acme Corp' },
  },
  {
    id: 'e2',
    context: 'Bob Jones, 51, has led Initech since 2001.',
    question: 'Extract the employee.',
    schema: SCHEMA,
    ground_truth: { name: 'Bob Jones', age: 51, company: 'Initech' },
  },
];
const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
const env = () => ({ OPENAI_API_KEY: 'sk-flat', OPENAI_BASE_URL: server.openaiBaseUrl });
type Row = { model: string; value_accuracy: number };
const va = (dir: string, model: string) => {
  const json = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8')) as Row[] | { rows: Row[] };
  const row = (Array.isArray(json) ? json : json.rows).find((r) => r.model === model);
  assert.ok(row, `no ${model} row in ${dir}/leaderboard.json`);
  return row.value_accuracy;
};

test('sob eval <rows.jsonl>: flat rows become records in <eval-dir>/benchmark; gold scores 1.000', async () => {
  const file = join(tmp, 'mine.jsonl');
  writeFileSync(file, jsonl(ROWS));
  const dir = join(tmp, 'e1');
  const r = await sobIn(['eval', file, '--eval-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /mine\.jsonl holds flat rows .* read as `sob build records` reads them/);
  const records = readFileSync(join(dir, 'benchmark/records.jsonl'), 'utf8').trim().split('\n');
  assert.equal(records.length, 2);
  assert.deepEqual(JSON.parse(records[1]).output.ground_truth, ROWS[1].ground_truth);
  assert.equal(va(dir, 'baseline_gold'), 1);
  assert.equal(va(dir, 'baseline_skeleton'), 0);
});

test('a CSV of rows through --benchmark, and a model asked through the server: 1 of 2 employees right', async () => {
  const csv = join(tmp, 'mine.csv');
  const q = (v: unknown) => `"${JSON.stringify(v).replaceAll('"', '""')}"`;
  writeFileSync(
    csv,
    [
      'id,context,question,schema,ground_truth',
      ...ROWS.map((r) => [r.id, q(r.context), r.question, q(r.schema), q(r.ground_truth)].join(',')),
    ].join('\n'),
  );
  const dir = join(tmp, 'e2');
  const r = await sobIn(['eval', '--benchmark', csv, '--eval-dir', dir, '--model', 'openai:gpt-4.1-mini'], {
    env: env(),
  });
  assert.equal(r.code, 0, r.stderr);
  // e1 all three fields right; e2 none: Value Accuracy (1 + 0) / 2 with equal derived weights.
  assert.equal(va(dir, 'openai_gpt-4.1-mini'), 0.5);
});

test('a rejected row stops sob eval (exit 2, its line named, nothing asked); --skip-invalid goes on', async () => {
  const file = join(tmp, 'bad.jsonl');
  writeFileSync(
    file,
    jsonl([...ROWS, { ...ROWS[0], id: 'e3', ground_truth: { name: 'X', age: 'forty', company: 'Y' } }]),
  );
  const dir = join(tmp, 'e3');
  const asked = server.requests?.length ?? 0;
  const r = await sobIn(['eval', file, '--eval-dir', dir, '--model', 'openai:gpt-4.1-mini'], { env: env() });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /rejected e3: ground truth does not validate against the schema: \/age must be integer \(.*bad\.jsonl:3\)/,
  );
  assert.match(r.stderr, /1 row rejected .* nothing was asked/);
  assert.equal(existsSync(join(dir, 'runs')), false);
  assert.equal(server.requests?.length ?? 0, asked);
  const ok = await sobIn(['eval', file, '--eval-dir', dir, '--skip-invalid'], { env: env() });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(va(dir, 'baseline_gold'), 1);
});

test('sob run --benchmark rows: records in runs/benchmarks/<name>-<hash>, a re-run resumes; sob score --benchmark rows', async () => {
  const file = join(tmp, 'people.jsonl');
  writeFileSync(file, jsonl(ROWS));
  const runDir = join(tmp, 'runs/gold');
  const r = await sobIn(['run', '--model', 'baseline:gold', '--benchmark', file, '--run-dir', runDir]);
  assert.equal(r.code, 0, r.stderr);
  const built = readdirSync(join(tmp, 'runs/benchmarks'));
  assert.equal(built.length, 1);
  assert.match(built[0], /^people-[0-9a-f]{12}$/);
  const again = await sobIn(['run', '--model', 'baseline:gold', '--benchmark', file, '--run-dir', runDir]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(join(runDir, 'responses.jsonl'), 'utf8').trim().split('\n').length, 2);
  assert.deepEqual(readdirSync(join(tmp, 'runs/benchmarks')), built);
  const s = await sobIn(['score', join(runDir, 'responses.jsonl'), '--benchmark', file], { cwd: tmp });
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /baseline_gold\s+text\s+2\s+1\.000\s+1\.000/);
});

test('a flat row among records is one reason naming it, not one unknown key per field', async () => {
  const file = join(tmp, 'mixed.jsonl');
  const record = {
    metadata: { record_id: 'n1', source: 'text' },
    input: { context: 'c', question: 'q', json_schema: SCHEMA },
    output: { ground_truth: { name: 'a', age: 1, company: 'b' } },
  };
  writeFileSync(file, jsonl([record, ROWS[0]]));
  const r = await sobIn(['eval', file, '--eval-dir', join(tmp, 'e4')]);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('rejected'));
  assert.equal(lines.length, 1);
  assert.match(
    lines[0],
    /mixed\.jsonl:2: a flat row \(id, context, question, schema, ground_truth\), not a record/,
  );
  assert.doesNotMatch(r.stderr, /unknown key/);
});
