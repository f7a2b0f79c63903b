/**
 * Rows under the user's own column names reach `sob eval`, `sob run` and `sob score --benchmark`
 * through `--map` (as `sob build records --map`); rows no column of which is a required field
 * stop with one line naming the `--map` to pass (exit 2); and `sob score` handed benchmark
 * records (no answers) says so and exits 1 instead of scoring zeros. The real command, in this
 * process, on files the test writes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';

let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-map-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, company: { type: 'string' } },
  required: ['name', 'age', 'company'],
};
const q = (v: unknown) => `"${JSON.stringify(v).replaceAll('"', '""')}"`;
/** Three employees in a CSV whose columns are doc_id, passage, prompt, json_shape, answer. */
function theirCsv(file: string): void {
  const people = [
    [
      'e1',
      'Alice Smith, 34, joined Acme Corp in 2019.',
      { name: 'Alice Smith', age: 34, company: 'Acme Corp' },
    ],
    ['e2', 'Bob Jones, 51, has led Initech since 2001.', { name: 'Bob Jones', age: 51, company: 'Initech' }],
    ['e3', 'Carol White (28) works at Globex.', { name: 'Carol White', age: 28, company: 'Globex' }],
  ] as const;
  writeFileSync(
    file,
    [
      'doc_id,passage,prompt,json_shape,answer',
      ...people.map(([id, ctx, gt]) => `${id},"${ctx}",Extract the employee.,${q(SCHEMA)},${q(gt)}`),
    ].join('\n'),
  );
}
const MAP = 'id=doc_id,context=passage,question=prompt,schema=json_shape,ground_truth=answer';
type Row = { model: string; value_accuracy: number; n?: number };
const rowsOf = (dir: string): Row[] => {
  const json = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8')) as Row[] | { rows: Row[] };
  return Array.isArray(json) ? json : json.rows;
};

test('sob eval --map on a CSV under other column names: the three rows become records, gold scores 1.000', async () => {
  const csv = join(tmp, 'theirs.csv');
  theirCsv(csv);
  const dir = join(tmp, 'eval-map');
  const r = await sobIn([
    'eval',
    csv,
    '--map',
    MAP,
    '--model',
    'baseline:gold',
    '--eval-dir',
    dir,
    '--no-report',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const records = readFileSync(join(dir, 'benchmark/records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    records.map((x) => x.metadata.record_id),
    ['e1', 'e2', 'e3'],
  );
  assert.deepEqual(records[2].output.ground_truth, { name: 'Carol White', age: 28, company: 'Globex' });
  const gold = rowsOf(dir).find((x) => x.model === 'baseline_gold');
  assert.ok(gold, r.stdout);
  assert.equal(gold.value_accuracy.toFixed(3), '1.000');
});

test('no column is a required field in any row: one line naming the --map to pass, exit 2, nothing asked', async () => {
  const csv = join(tmp, 'unmapped.csv');
  theirCsv(csv);
  const dir = join(tmp, 'eval-nomap');
  const r = await sobIn(['eval', csv, '--model', 'baseline:gold', '--eval-dir', dir, '--no-report']);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('sob:'));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0],
    /none of your columns \(doc_id, passage, prompt, json_shape, answer\) is `id`, `context`, `question`, `schema`, `ground_truth`; use --map id=doc_id,context=passage,question=prompt,schema=json_shape,ground_truth=answer$/,
  );
  // Not one rejection per row, each listing the five fields.
  assert.doesNotMatch(r.stderr, /--skip-invalid/);
  assert.equal(existsSync(join(dir, 'runs')), false);
});

test('sob run --map and sob score --benchmark --map read the same rows: 3 of 3 answered, then scored 1.000', async () => {
  const csv = join(tmp, 'theirs-run.csv');
  theirCsv(csv);
  const runDir = join(tmp, 'run-map');
  const run = await sobIn([
    'run',
    '--model',
    'baseline:gold',
    '--benchmark',
    csv,
    '--map',
    MAP,
    '--run-dir',
    runDir,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /3\/3 answered/);
  const out = join(tmp, 'score-map');
  const score = await sobIn([
    'score',
    join(runDir, 'responses.jsonl'),
    '--benchmark',
    csv,
    '--map',
    MAP,
    '--out',
    out,
  ]);
  assert.equal(score.code, 0, score.stderr);
  const line = score.stdout.split('\n').find((l) => l.startsWith('run-map') || /\btext\b/.test(l));
  assert.ok(line, score.stdout);
  // n = 3, JSON Pass 1.000, Value Accuracy 1.000
  assert.match(line, /text\s+3\s+1\.000\s+1\.000/);
});

test('--map without --benchmark on sob score is a usage error (exit 2)', async () => {
  const r = await sobIn(['score', join(tmp, 'x.jsonl'), '--map', 'id=doc_id']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--map .* goes with --benchmark/);
});

test('sob score on benchmark records (no answers): exit 1 with "did you mean `sob eval`", nothing scored', async () => {
  const csv = join(tmp, 'theirs-rec.csv');
  theirCsv(csv);
  const bench = join(tmp, 'bench', 'records.jsonl');
  const b = await sobIn(['build', 'records', csv, '--map', MAP, '--out', bench]);
  assert.equal(b.code, 0, b.stderr);
  const out = join(tmp, 'score-records');
  const r = await sobIn(['score', bench, '--out', out]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /records\.jsonl: these are benchmark records, not model answers: did you mean `sob eval --benchmark .*records\.jsonl`\?/,
  );
  assert.doesNotMatch(r.stdout, /0\.000/);
  assert.equal(existsSync(out), false);
});
