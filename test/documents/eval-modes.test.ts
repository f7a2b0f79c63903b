/**
 * `sob eval --input text,document`: one leaderboard row per model and mode, each its own
 * resumable run directory (`runs/openai_m`, `runs/openai_m@document`), the mode in the run
 * manifests, the response lines, leaderboard.{md,csv,json} and the report; a re-run asks nothing;
 * a record without attachments is refused by name before the first request of any mode; with
 * text only, folders and names are what they always were. The real `sob` against the local server
 * speaking OpenAI's wire protocol, on a benchmark the test writes.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  documentBenchmark,
  documentsOf,
  type ProtocolServer,
  pngOf,
  rows,
  sobIn,
  startProtocolServer,
  tempDir,
  userTextOf,
} from '../kit/index.ts';

let server: ProtocolServer;
const dir = tempDir('sob-eval-modes-');
let bench: string;

before(async () => {
  // The answer names the record only when a transcript came: text is right, document wrong (the
  // id is in the transcript and nowhere else), so the two rows' figures differ.
  server = await startProtocolServer({
    answer: (r) =>
      JSON.stringify({
        id: r.userText.includes('TRANSCRIPT-OF-') ? r.key : 'unknown',
        total: null,
        vendor: null,
      }),
  });
  bench = join(dir, 'bench');
  documentBenchmark(bench, [
    { id: 'a1', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(32, 24, 1) }] },
    { id: 'a2', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(32, 24, 2) }] },
    { id: 'a3', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(32, 24, 3) }] },
  ]);
});
after(() => server.close());

function sobEval(evalDir: string, benchmark: string, ...extra: string[]) {
  return sobIn(
    [
      'eval',
      '--model',
      'openai:m',
      '--benchmark',
      benchmark,
      '--base-url',
      server.openaiBaseUrl,
      '--eval-dir',
      evalDir,
      '--bootstrap-samples',
      '50',
      ...extra,
    ],
    { cwd: dir, env: { OPENAI_API_KEY: 'k' } },
  );
}

const json = (f: string) => JSON.parse(readFileSync(f, 'utf8'));

test('two modes: two rows, two run directories, the mode in manifests, answers, md, csv, json and the report', async () => {
  const evalDir = join(dir, 'two');
  const from = server.requests.length;
  const r = await sobEval(evalDir, bench, '--input', 'text,document');
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 6, 'three records in each of two modes');
  const withDocs = seen.filter((s) => documentsOf(s).length === 1);
  assert.equal(withDocs.length, 3);
  assert.ok(
    withDocs.every((s) => !userTextOf(s).includes('TRANSCRIPT-OF-')),
    'document: no transcript',
  );
  assert.ok(
    seen.filter((s) => documentsOf(s).length === 0).every((s) => userTextOf(s).includes('TRANSCRIPT-OF-')),
  );

  for (const [folder, mode] of [
    ['openai_m', 'text'],
    ['openai_m@document', 'document'],
  ]) {
    const runDir = join(evalDir, 'runs', folder);
    assert.equal(json(join(runDir, 'manifest.json')).settings.input, mode, folder);
    const lines = rows(join(runDir, 'responses.jsonl'));
    assert.equal(lines.length, 3);
    assert.ok(
      lines.every((l) => l.eval_info.input_mode === mode),
      `${folder}: input_mode on every answer`,
    );
  }

  const board = json(join(evalDir, 'leaderboard.json')) as {
    model: string;
    display_name: string;
    input: string;
    per_modality: { image: { value_accuracy: number } };
  }[];
  assert.deepEqual(
    board.map((b) => [
      b.model,
      b.display_name,
      b.input,
      Number(b.per_modality.image.value_accuracy.toFixed(3)),
    ]),
    [
      // id right, two nulls right: 3 of 3 leaves; under document the id is wrong: 2 of 3.
      ['openai_m', 'openai:m · text', 'text', 1],
      ['openai_m@document', 'openai:m · document', 'document', 0.667],
    ],
  );
  const md = readFileSync(join(evalDir, 'leaderboard.md'), 'utf8');
  assert.match(md, /\| 1 \| openai:m · text \| /);
  assert.match(md, /\| 2 \| openai:m · document \| /);
  const csv = readFileSync(join(evalDir, 'leaderboard.csv'), 'utf8').trim().split('\n');
  const header = csv[0].split(',');
  assert.equal(header.indexOf('input'), header.indexOf('display_name') + 1);
  assert.deepEqual(
    csv.slice(1).map((l) => l.split(',')[header.indexOf('input')]),
    ['text', 'document'],
  );
  const report = readFileSync(join(evalDir, 'report.html'), 'utf8');
  assert.match(report, /openai:m · document/);
  assert.match(report, /"input":"document"/);
  assert.deepEqual(json(join(evalDir, 'evaluation/display_names.json')), {
    openai_m: 'openai:m · text',
    'openai_m@document': 'openai:m · document',
  });
});

test('the same two-mode command again asks nothing and writes the same leaderboard', async () => {
  const evalDir = join(dir, 'two');
  const before = readFileSync(join(evalDir, 'leaderboard.json'), 'utf8');
  const answers = readFileSync(join(evalDir, 'runs/openai_m@document/responses.jsonl'), 'utf8');
  const total = server.total;
  // Given as a repeated flag this time: the same rows.
  const r = await sobEval(evalDir, bench, '--input', 'text', '--input', 'document', '--no-report');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.total, total, 'no request');
  assert.equal(readFileSync(join(evalDir, 'runs/openai_m@document/responses.jsonl'), 'utf8'), answers);
  assert.equal(readFileSync(join(evalDir, 'leaderboard.json'), 'utf8'), before);
});

test('a suite file whose model lists its own modes makes the same two rows: resumed, nothing asked', async () => {
  const evalDir = join(dir, 'two');
  const before = readFileSync(join(evalDir, 'leaderboard.json'), 'utf8');
  writeFileSync(
    join(dir, 'modes.yaml'),
    `benchmark: bench\neval_dir: two\nbootstrap_samples: 50\nreport: false\nmodels:\n  - model: openai:m\n    base_url: ${server.openaiBaseUrl}\n    input: [text, document]\n`,
  );
  const total = server.total;
  const r = await sobIn(['eval', '--config', 'modes.yaml'], { cwd: dir, env: { OPENAI_API_KEY: 'k' } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.total, total, 'no request');
  assert.equal(readFileSync(join(evalDir, 'leaderboard.json'), 'utf8'), before);
});

test('a record without attachments is refused by name before the first request of any mode', async () => {
  const mixed = join(dir, 'mixed');
  documentBenchmark(mixed, [
    { id: 'has', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(16, 16, 4) }] },
    { id: 'bare', docs: [] },
  ]);
  const total = server.total;
  const evalDir = join(dir, 'mixed-eval');
  const r = await sobEval(evalDir, mixed, '--input', 'text,document', '--no-report');
  assert.equal(r.code, 2, r.stderr);
  assert.equal(server.total, total, 'not even the text row was asked');
  assert.match(
    r.stderr,
    /1 record without attachments cannot be asked with --input document: bare \(line 2\)/,
  );
  assert.ok(!existsSync(join(evalDir, 'runs')), 'no run directory made');
});

test('text only: the folders and names of today (no display names, no input column)', async () => {
  const evalDir = join(dir, 'text-only');
  const r = await sobEval(evalDir, bench, '--no-report');
  assert.equal(r.code, 0, r.stderr);
  const board = json(join(evalDir, 'leaderboard.json')) as Record<string, unknown>[];
  assert.deepEqual(
    board.map((b) => [b.model, b.display_name, 'input' in b]),
    [['openai_m', 'openai_m', false]],
  );
  assert.ok(!existsSync(join(evalDir, 'evaluation/display_names.json')));
  assert.ok(
    !readFileSync(join(evalDir, 'leaderboard.csv'), 'utf8').split('\n')[0].split(',').includes('input'),
  );
  assert.ok(existsSync(join(evalDir, 'runs/openai_m/responses.jsonl')));
});

test('adding document to the text-only eval later asks only the document row: the text run resumes as it is', async () => {
  const evalDir = join(dir, 'text-only');
  const textAnswers = readFileSync(join(evalDir, 'runs/openai_m/responses.jsonl'), 'utf8');
  const from = server.requests.length;
  const r = await sobEval(evalDir, bench, '--input', 'text,document', '--no-report');
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 3, 'the three records, once, under document');
  assert.ok(seen.every((s) => documentsOf(s).length === 1));
  assert.equal(readFileSync(join(evalDir, 'runs/openai_m/responses.jsonl'), 'utf8'), textAnswers);
  assert.deepEqual(
    (json(join(evalDir, 'leaderboard.json')) as { display_name: string }[]).map((b) => b.display_name),
    ['openai:m · text', 'openai:m · document'],
  );
});

test('an unknown mode is a usage error naming the choices', async () => {
  const r = await sobEval(join(dir, 'bad'), bench, '--input', 'text,pdf');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /expected text, document, both \(repeat it, or a comma list\); got "pdf"/);
});
