/**
 * Issue 20, item 4: `sob eval` has every control of `sob run` and `sob score`, from the same
 * definitions, and they reach the requests: the local protocol server checks each one. With
 * `--match` the leaderboard and the report carry the lenient columns.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildProgram } from '../../src/cli/main.ts';
import { type ProtocolServer, type SeenRequest, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-eval-controls-'));
  server = await startProtocolServer({
    script: (r: SeenRequest) => {
      // e1: too slow the first time (over --timeout-ms 2000), answered the second.
      if (r.key === 'e1' && r.n === 1) return { kind: 'slow', delayMs: 3500, text: '{}' };
      if (r.key === 'e1') return { kind: 'answer', text: '{"name": "Ann", "age": 41, "city": "Oslo"}' };
      // e2: right values in another case: exact comparison misses, lenient matching accepts.
      if (r.key === 'e2') return { kind: 'answer', text: '{"name": "BOB", "age": 7, "city": "ROME"}' };
      // e3: a server error every time: asked once and retried once (--max-retries 1).
      return { kind: 'status', status: 500, message: 'boom' };
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
};
const record = (id: string, gt: Record<string, unknown>) =>
  JSON.stringify({
    metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
    input: { context: `${gt.name}, ${gt.age}, ${gt.city}.`, question: 'Who?', json_schema: SCHEMA },
    output: { ground_truth: gt },
  });

test('eval shares run and score option definitions: every control of either is on eval', async () => {
  const program = await buildProgram();
  const longs = (name: string) =>
    new Set(program.commands.find((c) => c.name() === name)!.options.map((o) => o.long));
  const evalOpts = longs('eval');
  for (const flag of [
    '--temperature',
    '--max-tokens',
    '--timeout-ms',
    '--max-retries',
    '--no-stream',
    '--prompt-template',
    '--cache',
    '--source',
    '--limit',
    '--concurrency',
    '--base-url',
    '--skip-invalid',
    '--allow-invalid-ground-truth',
  ]) {
    assert.ok(longs('run').has(flag), `run ${flag}`);
    assert.ok(evalOpts.has(flag), `eval ${flag}`);
  }
  for (const flag of ['--match', '--profile', '--bootstrap-samples', '--seed']) {
    assert.ok(longs('score').has(flag), `score ${flag}`);
    assert.ok(evalOpts.has(flag), `eval ${flag}`);
  }
});

test('eval --match default --temperature 0 --max-retries 1 --timeout-ms 2000 (and the other controls) reach the server; lenient columns in the leaderboard and the report', async () => {
  const bench = join(tmp, 'records.jsonl');
  writeFileSync(
    bench,
    `${[
      record('e1', { name: 'Ann', age: 41, city: 'Oslo' }),
      record('e2', { name: 'Bob', age: 7, city: 'Rome' }),
      record('e3', { name: 'Cy', age: 9, city: 'Lima' }),
      record('e4', { name: 'Di', age: 3, city: 'Kyiv' }),
    ].join('\n')}\n`,
  );
  const tpl = join(tmp, 'tpl.txt');
  writeFileSync(
    tpl,
    '[system]\nAnswer in JSON.\n[user]\nTEMPLATE [rid:{{record_id}}]\n{{context}}\n{{question}}\n{{schema}}',
  );
  const dir = join(tmp, 'eval');
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
      '--match',
      'default',
      '--temperature',
      '0',
      '--max-retries',
      '1',
      '--timeout-ms',
      '2000',
      '--max-tokens',
      '77',
      '--no-stream',
      '--prompt-template',
      tpl,
      '--limit',
      '3',
      '--concurrency',
      '2',
      '--bootstrap-samples',
      '10',
      '--seed',
      '7',
      '--profile',
      'strict',
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'sk-controls' } },
  ).done;
  // e3 failed every attempt: the run is incomplete (exit 1), the others are scored and shown.
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /1 run\(s\) incomplete/);
  // --limit 3: e4 never asked. --max-retries 1: e3 asked twice (the default, 5, asks it 6 times).
  // --timeout-ms 2000: e1's 3.5 s first answer is abandoned and asked again.
  assert.deepEqual(
    ['e1', 'e2', 'e3', 'e4'].map((id) => server.counts.get(id) ?? 0),
    [2, 1, 2, 0],
  );
  const errors = readFileSync(join(dir, 'runs/openai_m/errors.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(errors.map((e) => [e.record_id, e.error_class, e.outcome]).sort(), [
    ['e1', 'timeout', 'retrying'],
    ['e3', 'server', 'gave_up'],
    ['e3', 'server', 'retrying'],
  ]);
  for (const req of server.requests) {
    assert.equal(req.body.temperature, 0);
    assert.equal(req.body.max_tokens, 77);
    assert.ok(!req.body.stream, 'not streamed (--no-stream)');
    assert.match(req.userText, /^TEMPLATE \[rid:e\d\]/);
    assert.equal(req.systemText, 'Answer in JSON.');
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'runs/openai_m/manifest.json'), 'utf8'));
  assert.deepEqual(
    [
      manifest.settings.timeout_ms,
      manifest.settings.max_retries,
      manifest.settings.limit,
      manifest.settings.concurrency,
    ],
    [2000, 1, 3, 2],
  );

  // Scoring: --profile, --seed, --bootstrap-samples reach the summary; --match adds the lenient block.
  const summary = JSON.parse(readFileSync(join(dir, 'evaluation/text/openai_m/eval_summary.json'), 'utf8'));
  assert.equal(summary.profile, 'strict');
  assert.equal(summary.profile_reason, 'as asked');
  assert.ok(summary.lenient, 'lenient block');
  // e1 exact; e2 right up to case (name, city): exact Value Accuracy below 1, lenient 1.
  const [row] = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  assert.ok(row.lenient, 'leaderboard.json has the lenient columns');
  assert.equal(row.lenient.value_accuracy, 1);
  assert.ok(row.value_accuracy < 1, `exact ${row.value_accuracy}`);
  const md = readFileSync(join(dir, 'leaderboard.md'), 'utf8');
  assert.match(md.split('\n')[0], /Len\.VA/);
  assert.match(readFileSync(join(dir, 'leaderboard.csv'), 'utf8').split('\n')[0], /lenient_value_accuracy/);
  assert.match(r.stdout, /Len\.VA/);
  const html = readFileSync(join(dir, 'report.html'), 'utf8');
  const data = JSON.parse(
    /<script type="application\/json" id="sob-data">([\s\S]*?)<\/script>/
      .exec(html)![1]
      .replace(/\\u003c/g, '<'),
  );
  assert.ok(data.lenient, 'the report carries the lenient data');
  assert.equal(data.lenient.policy, 'default');
  // The report's header names the profile and why.
  assert.equal(data.profile, 'Profile: strict (as asked)');
});
