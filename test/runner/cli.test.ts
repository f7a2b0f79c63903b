/**
 * `sob run` as a user runs it (a child process), against the local protocol server: crash
 * safety under SIGKILL, the 209 SOB image records end to end through scoring, and the two
 * baselines scored.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { dumpsPy, type PyObject, parsePyJson } from '../../src/core/pyjson.ts';
import { validateInstance } from '../../src/core/schema.ts';
import { runDirTargets } from '../../src/runner/run-dir.ts';
import { scoreFiles } from '../../src/scoring/score-files.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const SOB = sharedData('sob');
const PHI4 = join(SOB, 'images_responses/response_phi-4_image.jsonl');
const KEY = 'sk-cli-test-key-77c1';

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-cli-'));
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

function sob(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }>;
} {
  const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], {
    cwd: tmp,
    env: { ...process.env, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d) => (stderr += d));
  child.stdout?.on('data', (d) => (stdout += d));
  const done = new Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr, stdout })),
  );
  return { child, done };
}

function readLinesOf(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

/** The SOB image records as a benchmark: phi-4's file without candidate_response, plus the answers. */
function sobBenchmark(): { file: string; answers: Map<string, string> } {
  const out: string[] = [];
  const answers = new Map<string, string>();
  for (const line of readFileSync(PHI4, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const rec = parsePyJson(line) as PyObject;
    const output = rec.get('output') as PyObject;
    const cand = output.get('candidate_response') ?? null;
    const id = (rec.get('metadata') as PyObject).get('record_id') as string;
    answers.set(id, typeof cand === 'string' ? cand : dumpsPy(cand, { ensureAscii: false }));
    output.delete('candidate_response');
    out.push(dumpsPy(rec));
  }
  const file = join(tmp, 'sob-image.jsonl');
  writeFileSync(file, `${out.join('\n')}\n`);
  return { file, answers };
}

test('SIGKILL at random points, then resume: every record answered exactly once, no torn line, nothing asked after it was written', async () => {
  const n = 60;
  const ids = Array.from({ length: n }, (_, i) => `k${i}`);
  const bench = join(tmp, 'crash.jsonl');
  writeFileSync(
    bench,
    `${ids
      .map((id) =>
        JSON.stringify({
          metadata: { record_id: id, schema_complexity: 'easy', source: 'text' },
          input: {
            context: `[rid:${id}] value ${id}`,
            question: 'id?',
            json_schema: { type: 'object', properties: { id: { type: 'string' } } },
          },
          output: { ground_truth: { id } },
        }),
      )
      .join('\n')}\n`,
  );
  script = (r) => ({
    kind: 'answer',
    text: JSON.stringify({ id: r.key }),
    delayMs: 10 + Math.floor(Math.random() * 50),
  });
  const dir = join(tmp, 'crash-run');
  const file = join(dir, 'responses.jsonl');
  const args = [
    'run',
    '--model',
    'openai:crash-model',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--run-dir',
    dir,
    '--concurrency',
    '4',
  ];
  const kills: { time: number; written: Set<string> }[] = [];
  for (let round = 0; round < 4; round++) {
    const before = readLinesOf(file).length;
    const target = before + 2 + Math.floor(Math.random() * 6);
    const { child, done } = sob(args);
    // Kill once a few more answers are written, at a random moment after that.
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      if (readLinesOf(file).length >= target) break;
    }
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
    const killedAt = Date.now();
    child.kill('SIGKILL');
    const res = await done;
    assert.equal(res.signal, 'SIGKILL');
    const text = readFileSync(file, 'utf8');
    assert.ok(text.endsWith('\n'), `round ${round}: the file ends in a torn line`);
    const written = readLinesOf(file).map((l) => JSON.parse(l).metadata.record_id as string);
    assert.equal(new Set(written).size, written.length, `round ${round}: a record written twice`);
    assert.ok(written.length < n, `round ${round}: the run finished before the kill`);
    kills.push({ time: killedAt, written: new Set(written) });
  }
  const last = sob([...args, '--progress-interval-ms', '20']);
  const res = await last.done;
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /resuming .*crash-run: \d+\/60 records already answered/);
  // Plain progress lines (stderr is not a terminal).
  assert.match(
    res.stderr,
    /^60\/60 \(100\.0%\) {2}[\d.]+ rec\/s {2}ETA \S+ {2}errors 0 {2}tokens \S+ in \/ \S+ out$/m,
  );
  const all = readLinesOf(file).map((l) => JSON.parse(l).metadata.record_id as string);
  assert.equal(all.length, n);
  assert.deepEqual([...new Set(all)].sort(), [...ids].sort());
  assert.ok(readFileSync(file, 'utf8').endsWith('\n'));
  // No record was asked again once its answer was on disk.
  let violations = 0;
  for (const k of kills) {
    for (const q of server.requests) if (q.time > k.time && q.key && k.written.has(q.key)) violations++;
  }
  assert.equal(violations, 0);
  assert.equal(kills.length, 4);
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(m.status, 'complete');
  assert.equal(m.sessions.length, 5);
});

test('Ctrl-C (SIGINT) on sob run: exit 130, whole lines, status interrupted, one line saying how to resume', async () => {
  const bench = join(tmp, 'sigint.jsonl');
  writeFileSync(
    bench,
    Array.from(
      { length: 80 },
      (_, i) =>
        `${JSON.stringify({ metadata: { record_id: `q${i}` }, input: { context: `[rid:q${i}]`, question: 'q', json_schema: { type: 'object' } }, output: { ground_truth: {} } })}\n`,
    ).join(''),
  );
  script = (r) => ({ kind: 'answer', text: JSON.stringify({ id: r.key }), delayMs: 50 });
  const dir = join(tmp, 'sigint-run');
  const file = join(dir, 'responses.jsonl');
  const { child, done } = sob([
    'run',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--run-dir',
    dir,
    '--concurrency',
    '2',
  ]);
  while (readLinesOf(file).length < 5) await new Promise((r) => setTimeout(r, 10));
  child.kill('SIGINT');
  const res = await done;
  assert.equal(res.code, 130, res.stderr);
  assert.match(res.stderr, /interrupted: \d+\/80 answered; re-run the same command to resume/);
  assert.ok(readFileSync(file, 'utf8').endsWith('\n'));
  const n = readLinesOf(file).length;
  assert.ok(n >= 5 && n < 80, `${n} answered`);
  assert.equal(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status, 'interrupted');
});

test('a bad key: exit 1 with one clear line naming the variable; no key at all: the same before any request', async () => {
  const bench = join(tmp, 'auth.jsonl');
  writeFileSync(
    bench,
    `${JSON.stringify({ metadata: { record_id: 'z1' }, input: { context: '[rid:z1]', question: 'q', json_schema: { type: 'object' } }, output: { ground_truth: {} } })}\n`,
  );
  script = () => ({ kind: 'status', status: 401, message: 'Incorrect API key provided' });
  const bad = await sob([
    'run',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--run-dir',
    join(tmp, 'auth-run'),
  ]).done;
  assert.equal(bad.code, 1);
  const errLines = bad.stderr.trim().split('\n');
  assert.equal(
    errLines.at(-1),
    'sob: openai:m: authentication failed (HTTP 401); check the API key in the environment (OPENAI_API_KEY)',
  );
  assert.ok(!bad.stderr.includes(KEY) && !bad.stdout.includes(KEY));
  const before = server.total;
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'run',
      '--model',
      'openai:m',
      '--benchmark',
      bench,
      '--run-dir',
      join(tmp, 'nokey'),
    ],
    {
      cwd: tmp,
      env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 1);
  assert.equal(
    stderr.trim(),
    'sob: OPENAI_API_KEY is not set (or give --base-url for a server that needs no key)',
  );
  assert.equal(server.total, before);
});

test('all 209 SOB image records through sob run against the local server, then scored: the reference means for phi-4', {
  skip: needsData('sob'),
}, async () => {
  const { file, answers } = sobBenchmark();
  const tpl = join(tmp, 'tpl.txt');
  writeFileSync(tpl, '[rid:{{record_id}}]\n{{context}}\n\n{{question}}\n\n{{schema}}');
  script = (r) => ({ kind: 'answer', text: answers.get(r.key ?? '') ?? 'missing' });
  const dir = join(tmp, 'sob209');
  const before = server.total;
  const r = sob([
    'run',
    '--model',
    'openai:phi-4',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    file,
    '--source',
    'image',
    '--run-dir',
    dir,
    '--concurrency',
    '16',
    '--prompt-template',
    tpl,
    // One record's ground truth fails its own schema; the reference scores it, so it is asked.
    '--allow-invalid-ground-truth',
  ]);
  const res = await r.done;
  assert.equal(res.code, 0, res.stderr);
  assert.equal(server.total - before, 209);
  assert.match(res.stdout, /\tcomplete\t209\/209 answered\t0 failed/);
  const targets = runDirTargets(dir);
  assert.ok(targets);
  const [scored] = await scoreFiles(targets, {
    outDir: join(dir, 'evaluation'),
    summary: { bootstrapSamples: 0, seed: 42, topKErrors: 20 },
  });
  assert.equal(scored.error, undefined);
  assert.equal(scored.outputs.length, 1);
  assert.equal(scored.outputs[0].modality, 'image');
  assert.equal(scored.outputs[0].records, 209);
  assert.ok(existsSync(join(dir, 'evaluation/image/openai_phi-4/eval_summary.json')));
  const ours = (
    scored.outputs[0].summary.summary as Record<string, { metrics: Record<string, { mean: number }> }>
  ).overall_weighted.metrics;
  const ref = JSON.parse(readFileSync(join(SOB, 'evaluation/image/phi-4/eval_summary.json'), 'utf8')).summary
    .overall_weighted.metrics;
  for (const k of [
    'schema_compliance',
    'leaf_value_em',
    'value_token_f1',
    'hier_path_recall',
    'path_set_f1',
    'type_precision',
    'strict_json_em',
  ]) {
    assert.ok(ours[k].mean === ref[k].mean, `${k}: ours ${ours[k].mean}, reference ${ref[k].mean}`);
  }
});

test('baseline:gold over a small benchmark scores Value Accuracy 1 and Perfect Response 1 on every record', async () => {
  const bench = join(tmp, 'small.jsonl');
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      price: { type: 'number' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name'],
  };
  const truths = [
    '{"name": "a", "price": 1.0, "tags": ["x"]}',
    '{"name": "b", "price": 2, "tags": []}',
    '{"name": "é", "price": 0.5, "tags": ["p", "q"]}',
  ];
  writeFileSync(
    bench,
    truths
      .map(
        (gt, i) =>
          `{"metadata": {"record_id": "s${i}", "schema_complexity": "medium", "source": "text"}, "input": {"context": "c", "question": "q", "json_schema": ${JSON.stringify(schema)}}, "output": {"ground_truth": ${gt}}}\n`,
      )
      .join(''),
  );
  const dir = join(tmp, 'gold-small');
  const res = await sob(['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', dir]).done;
  assert.equal(res.code, 0, res.stderr);
  const [scored] = await scoreFiles(runDirTargets(dir)!, {
    outDir: join(dir, 'evaluation'),
    summary: { bootstrapSamples: 0, seed: 42, topKErrors: 20 },
  });
  const rows = readLinesOf(join(scored.outputs[0].dir, 'eval_records.jsonl')).map((l) => JSON.parse(l));
  assert.equal(scored.outputs[0].modality, 'text');
  assert.deepEqual(
    rows.map((r) => [r.leaf_value_em, r.strict_json_em]),
    [
      [1, 1],
      [1, 1],
      [1, 1],
    ],
  );
});

test('on the 209 SOB image records: gold scores Value Accuracy 1 wherever the ground truth fits its schema; skeleton passes every schema with near-zero Value Accuracy', {
  skip: needsData('sob'),
}, async () => {
  const { file } = sobBenchmark();
  const results: Record<string, { id: string; va: number; pass: number }[]> = {};
  for (const model of ['baseline:gold', 'baseline:skeleton']) {
    const dir = join(tmp, model.replace(':', '-'));
    const res = await sob([
      'run',
      '--model',
      model,
      '--benchmark',
      file,
      '--source',
      'image',
      '--run-dir',
      dir,
      '--allow-invalid-ground-truth',
    ]).done;
    assert.equal(res.code, 0, res.stderr);
    const [scored] = await scoreFiles(runDirTargets(dir)!, {
      outDir: join(dir, 'evaluation'),
      summary: { bootstrapSamples: 0, seed: 42, topKErrors: 20 },
    });
    assert.equal(scored.error, undefined);
    assert.equal(scored.outputs[0].modality, 'image');
    results[model] = readLinesOf(join(scored.outputs[0].dir, 'eval_records.jsonl'))
      .map((l) => JSON.parse(l))
      .map((r) => ({ id: r.record_id, va: r.leaf_value_em, pass: r.schema_compliance }));
  }
  // Which ground truths break their own schema (the data's, not ours).
  const badTruth = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const rec = JSON.parse(line);
    if (!validateInstance(rec.input.json_schema, rec.output.ground_truth).valid)
      badTruth.add(rec.metadata.record_id);
  }
  assert.equal(badTruth.size, 1);
  const gold = results['baseline:gold'];
  assert.equal(gold.length, 209);
  assert.deepEqual(
    gold.filter((r) => r.va !== 1).map((r) => r.id),
    [...badTruth],
  );
  const skel = results['baseline:skeleton'];
  assert.equal(skel.length, 209);
  assert.equal(skel.filter((r) => r.pass === 1).length, 209, 'skeleton JSON Pass on every record');
  const meanVa = skel.reduce((a, r) => a + r.va, 0) / skel.length;
  console.log(`skeleton on 209 image records: JSON Pass 209/209, mean Value Accuracy ${meanVa.toFixed(4)}`);
  assert.ok(meanVa < 0.05, `skeleton Value Accuracy ${meanVa}`);
});
