/**
 * The formats at the commands (docs/formats.md): `sob score`, `sob report`, `sob leaderboard` and
 * the resume of `sob run` meet a file from a newer sob-eval with one line and exit 2, having
 * written nothing; folders written before versions were stamped (no `format_version` anywhere)
 * are read as version 1 and give the same numbers.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { ROOT, sobIn } from '../kit/cli.ts';
import { writeBenchmark } from '../kit/fixtures.ts';
import { tempDir } from '../kit/temp.ts';

const EXAMPLES = join(ROOT, 'examples/responses/response_example-model.jsonl');
const tmp = tempDir('sob-formats-');
const NEWER = (file: string, name: string, v: number) =>
  `sob: ${file}: format ${name} version ${v} is newer than this sob-eval reads (1); upgrade sob-eval\n`;

/** Every file under `dir` (relative path -> bytes). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(p.slice(dir.length + 1), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

/** A file with `format_version` taken out of every object that starts with it (an older sob-eval's file). */
function unversion(file: string): void {
  const text = readFileSync(file, 'utf8');
  const out = text
    .replace(/\{"format_version": 1, /g, '{')
    .replace(/\{"format_version":1,/g, '{')
    .replace(/\{\n(\s*)"format_version": 1,\n\s*/g, '{\n$1');
  assert.ok(!out.includes('format_version'), `${file} still has a format_version`);
  writeFileSync(file, out);
}

/** `text` with the first `"format_version": 1` made `v`. */
const bump = (text: string, v: number) =>
  text.replace(/"format_version": ?1/, (m) => m.replace('1', String(v)));

let evalDir: string;
before(async () => {
  evalDir = join(tmp, 'ev');
  const r = await sobIn(['score', EXAMPLES, '--out', evalDir, '--bootstrap-samples', '50']);
  assert.equal(r.code, 0, r.stderr);
});

test('sob score writes format_version 1 first in every row and summary', () => {
  const rows = readFileSync(join(evalDir, 'text/example-model/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.equal(rows.length, 6);
  for (const r of rows) assert.ok(r.startsWith('{"format_version": 1, "record_id": '), r.slice(0, 60));
  const summary = readFileSync(join(evalDir, 'text/example-model/eval_summary.json'), 'utf8');
  assert.ok(summary.startsWith('{\n  "format_version": 1,\n  "response_file": '));
});

test('sob score: a response file from a newer sob-eval is one line, exit 2, and no folder is written', async () => {
  const file = join(tmp, 'newer.jsonl');
  const lines = readFileSync(EXAMPLES, 'utf8').trim().split('\n');
  writeFileSync(
    file,
    `${lines.map((l, i) => (i === 0 ? `{"format_version": 4, ${l.slice(1)}` : l)).join('\n')}\n`,
  );
  const out = join(tmp, 'ev-newer');
  const r = await sobIn(['score', file, '--out', out]);
  assert.equal(r.code, 2);
  assert.ok(r.stderr.endsWith(NEWER(`${file}:1`, 'response-line', 4)), r.stderr);
  assert.equal(r.stderr.match(/^sob: /gm)?.length, 1);
  assert.ok(!existsSync(join(out, 'text')), 'nothing scored');
});

for (const cmd of ['leaderboard', 'report'] as const) {
  test(`sob ${cmd}: a summary from a newer sob-eval is one line, exit 2 (not a folder quietly left out)`, async () => {
    const dir = join(tmp, `ev-${cmd}`);
    cpSync(evalDir, dir, { recursive: true });
    const summary = join(dir, 'image/example-model/eval_summary.json');
    writeFileSync(summary, bump(readFileSync(summary, 'utf8'), 3));
    const args =
      cmd === 'report' ? ['report', dir, '--out', join(tmp, `r-${cmd}.html`)] : ['leaderboard', dir];
    const r = await sobIn(args);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, NEWER(summary, 'eval-summary', 3));
    assert.equal(r.stdout, '');
    if (cmd === 'report') assert.ok(!existsSync(join(tmp, `r-${cmd}.html`)));
  });
}

test('sob leaderboard: rows from a newer sob-eval are one line naming the file and line, exit 2', async () => {
  const dir = join(tmp, 'ev-rows');
  cpSync(evalDir, dir, { recursive: true });
  const rows = join(dir, 'text/example-model/eval_records.jsonl');
  const lines = readFileSync(rows, 'utf8').split('\n');
  lines[2] = bump(lines[2], 2);
  writeFileSync(rows, lines.join('\n'));
  const r = await sobIn(['leaderboard', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, NEWER(`${rows}:3`, 'eval-row', 2));
});

test('an evaluation folder an older sob-eval wrote (no format_version) gives the same leaderboard as this one', async () => {
  const dir = join(tmp, 'ev-old');
  cpSync(evalDir, dir, { recursive: true });
  for (const m of ['text', 'image', 'audio'])
    for (const f of ['eval_records.jsonl', 'eval_summary.json']) unversion(join(dir, m, 'example-model', f));
  const now = await sobIn(['leaderboard', evalDir, '--format', 'json']);
  const old = await sobIn(['leaderboard', dir, '--format', 'json']);
  assert.equal(old.code, 0, old.stderr);
  assert.equal(old.stdout, now.stdout);
  const [row] = JSON.parse(old.stdout);
  assert.equal(row.format_version, 1);
  assert.equal(row.model, 'example-model');
  // The bundled examples' numbers (`sob leaderboard examples`): overall 0.584, Value Accuracy 0.439.
  assert.equal(row.overall.toFixed(3), '0.584');
  assert.equal(row.value_accuracy.toFixed(3), '0.439');
});

// -- sob run: the resume ------------------------------------------------------------------------

const bench = join(tmp, 'bench.jsonl');
const run = (dir: string) =>
  sobIn(['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', dir]);

async function freshRun(name: string): Promise<string> {
  const dir = join(tmp, name);
  if (!existsSync(bench)) writeBenchmark(bench, ['a', 'b', 'c']);
  const r = await run(dir);
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

test('sob run writes format_version 1 first in the manifest and every response line', async () => {
  const dir = await freshRun('run-v1');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.deepEqual(Object.keys(manifest).slice(0, 2), ['format_version', 'tool']);
  assert.equal(manifest.format_version, 1);
  const lines = readFileSync(join(dir, 'responses.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 3);
  for (const l of lines) assert.ok(l.startsWith('{"format_version": 1, "metadata": '), l.slice(0, 50));
});

for (const [file, name] of [
  ['manifest.json', 'run-manifest'],
  ['responses.jsonl', 'response-line'],
  ['batches.json', 'batches'],
] as const) {
  test(`resuming sob run over a ${file} from a newer sob-eval: one line, exit 2, the run directory untouched`, async () => {
    const dir = await freshRun(`run-newer-${name}`);
    const path = join(dir, file);
    if (file === 'batches.json')
      writeFileSync(
        path,
        `${JSON.stringify({ format_version: 2, version: 1, model: 'baseline:gold', batches: [] })}\n`,
      );
    else writeFileSync(path, bump(readFileSync(path, 'utf8'), 2));
    const before = snapshot(dir);
    const r = await run(dir);
    assert.equal(r.code, 2, r.stderr);
    const where = file === 'responses.jsonl' ? `${path}:1` : path;
    assert.ok(r.stderr.endsWith(NEWER(where, name, 2)), r.stderr);
    assert.equal(r.stderr.match(/^sob: /gm)?.length, 1);
    const after = snapshot(dir);
    for (const [k, v] of before) if (!k.startsWith('.')) assert.equal(after.get(k), v, `${k} changed`);
  });
}

test('a run directory an older sob-eval wrote (no format_version) resumes with nothing asked again, and scores', async () => {
  const dir = await freshRun('run-old');
  unversion(join(dir, 'manifest.json'));
  unversion(join(dir, 'responses.jsonl'));
  const before = readFileSync(join(dir, 'responses.jsonl'), 'utf8');
  const r = await run(dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /3\/3 records already answered/);
  assert.equal(readFileSync(join(dir, 'responses.jsonl'), 'utf8'), before, 'no line appended');
  const s = await sobIn(['score', dir]);
  assert.equal(s.code, 0, s.stderr);
  const rows = readFileSync(join(dir, 'evaluation/text/baseline_gold/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.equal(rows.length, 3);
  for (const row of rows) assert.equal(JSON.parse(row).leaf_value_em, 1);
});

test("this build's responses.jsonl (format_version on every line) still serves as a benchmark", async () => {
  const dir = await freshRun('run-as-bench');
  const again = join(tmp, 'run-from-responses');
  const r = await sobIn([
    'run',
    '--model',
    'baseline:gold',
    '--benchmark',
    join(dir, 'responses.jsonl'),
    '--run-dir',
    again,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /unknown key/);
  assert.equal(readFileSync(join(again, 'responses.jsonl'), 'utf8').trim().split('\n').length, 3);
});

test('--model replay: over a response file from a newer sob-eval: one line, exit 2, nothing answered', async () => {
  const dir = await freshRun('run-replay-source');
  const file = join(tmp, 'replay-newer.jsonl');
  writeFileSync(file, bump(readFileSync(join(dir, 'responses.jsonl'), 'utf8'), 5));
  const out = join(tmp, 'run-replay');
  const r = await sobIn(['run', '--model', `replay:${file}`, '--benchmark', bench, '--run-dir', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(r.stderr.endsWith(NEWER(`${file}:1`, 'response-line', 5)), r.stderr);
  assert.ok(
    !existsSync(join(out, 'responses.jsonl')) || readFileSync(join(out, 'responses.jsonl'), 'utf8') === '',
  );
});
