/**
 * `sob run --batch` (issue 13, item 1) against the local server speaking OpenAI's Files +
 * Batches API and Gemini's batch mode, with scripted states: every record answered once,
 * failed lines retried in a follow-up batch or online, an expired batch's remainder retried, a
 * SIGKILL while polling followed by a re-run submits no second batch, large runs split under
 * the limits, and `sob eval --batch` passes it through.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { readLines, rows, sob, sobRun, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome;
let states: (index: number) => string[];
const answer = (r: SeenRequest): Outcome => ({
  kind: 'answer',
  text: JSON.stringify({ id: r.key }),
  usage: { input: 30, output: 4, cost: 0.0005 },
});

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-batch-'));
  server = await startProtocolServer({ script: (r) => script(r), batch: { states: (i) => states(i) } });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  script = answer;
  states = () => ['validating', 'in_progress', 'completed'];
});

const env = { OPENAI_API_KEY: 'sk-batch', GEMINI_API_KEY: 'gm-batch' };

function run(model: string, bench: string, dir: string, extra: string[] = []) {
  return sobRun(server, model, bench, dir, {
    cwd: tmp,
    env,
    extra: ['--batch', '--batch-poll-ms', '20', ...extra],
  });
}

/** Asked counts for `ids` since `before` (a request inside a batch counts when the batch answers it). */
function asked(ids: string[], before: Map<string, number>): number[] {
  return ids.map((k) => (server.counts.get(k) ?? 0) - (before.get(k) ?? 0));
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

for (const model of ['openai:gpt-4.1-mini', 'gemini:gemini-2.5-flash']) {
  const p = model[0];

  test(`${model}: validating -> in_progress -> completed with failed lines; the failed ones go into one follow-up batch; every record answered once`, async () => {
    const keys = ids(`${p}c`, 12);
    const failing = new Set([keys[3], keys[7]]);
    script = (r) =>
      failing.has(r.key!) && r.n === 1 ? { kind: 'status', status: 503, message: 'overloaded' } : answer(r);
    const dir = join(tmp, `${p}-complete`);
    const before = new Map(server.counts);
    const batchesBefore = server.batches.length;
    const res = await run(model, writeBenchmark(join(tmp, `${p}c.jsonl`), keys), dir, [
      '--progress-interval-ms',
      '10',
    ]).done;
    assert.equal(res.code, 0, res.stderr);
    const made = server.batches.slice(batchesBefore);
    assert.deepEqual(
      made.map((b) => b.requests.length),
      [12, 2],
    );
    assert.deepEqual(
      asked(keys, before),
      keys.map((k) => (failing.has(k) ? 2 : 1)),
    );
    const lines = rows(join(dir, 'responses.jsonl'));
    assert.equal(lines.length, 12);
    assert.equal(new Set(lines.map((l) => l.metadata.record_id)).size, 12);
    for (const l of lines) {
      assert.deepEqual(l.output.candidate_response, { id: l.metadata.record_id });
      assert.equal(l.eval_info.batch, failing.has(l.metadata.record_id) ? made[1].id : made[0].id);
      assert.equal(l.eval_info.attempts, failing.has(l.metadata.record_id) ? 2 : 1);
      assert.equal(l.eval_info.latency_ms, null);
      assert.equal(l.eval_info.input_tokens, 30);
      if (p === 'o') assert.equal(l.eval_info.cost, 0.0005); // the batch price, as the provider reports it
    }
    assert.deepEqual(
      rows(join(dir, 'errors.jsonl'))
        .map((e) => `${e.record_id}:${e.error_class}:${e.outcome}`)
        .sort(),
      [...failing].map((k) => `${k}:server:retrying`).sort(),
    );
    // Progress shows the batch state and counts.
    assert.match(
      res.stderr,
      new RegExp(
        `batch ${made[0].id.replace('/', '\\/')} (validating|in_progress|JOB_STATE_PENDING|JOB_STATE_RUNNING): 0/12 done`,
      ),
    );
    const state = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
    assert.deepEqual(
      state.batches.map((b: { id: string; collected: boolean; requests: number }) => [
        b.id,
        b.collected,
        b.requests,
      ]),
      [
        [made[0].id, true, 12],
        [made[1].id, true, 2],
      ],
    );
  });

  test(`${model}: an expired batch: what it answered is kept, the rest (batch_expired) goes into a follow-up batch`, async () => {
    const firstIndex = server.batches.length;
    states = (i) =>
      i === firstIndex ? ['validating', 'in_progress', 'expired'] : ['in_progress', 'completed'];
    const keys = ids(`${p}x`, 8);
    const dir = join(tmp, `${p}-expired`);
    const before = new Map(server.counts);
    const res = await run(model, writeBenchmark(join(tmp, `${p}x.jsonl`), keys), dir).done;
    assert.equal(res.code, 0, res.stderr);
    const made = server.batches.slice(firstIndex);
    const expired = p === 'o' ? 4 : 8; // OpenAI answers part of an expired batch; Gemini returns nothing
    assert.deepEqual(
      made.map((b) => b.requests.length),
      [8, expired],
    );
    assert.deepEqual(
      asked(keys, before),
      keys.map(() => 1),
    );
    const lines = rows(join(dir, 'responses.jsonl'));
    assert.equal(new Set(lines.map((l) => l.metadata.record_id)).size, 8);
    assert.equal(lines.length, 8);
    const errs = rows(join(dir, 'errors.jsonl'));
    assert.equal(errs.length, expired);
    assert.ok(errs.every((e) => e.error_class === 'batch_expired' && e.outcome === 'retrying'));
  });

  test(`${model}: SIGKILL while polling, then a re-run: it polls the same batch, submits no second one, answers each record once`, async () => {
    const first = server.batches.length;
    states = (i) =>
      i === first ? ['validating', ...Array(40).fill('in_progress'), 'completed'] : ['completed'];
    const keys = ids(`${p}k`, 10);
    const bench = writeBenchmark(join(tmp, `${p}k.jsonl`), keys);
    const dir = join(tmp, `${p}-kill`);
    const before = new Map(server.counts);
    const a = run(model, bench, dir);
    await until(() => server.batches.length > first && server.batches[first].polls >= 3, 30_000, 'polling');
    a.child.kill('SIGKILL');
    assert.equal((await a.done).signal, 'SIGKILL');
    assert.equal(readLines(join(dir, 'responses.jsonl')).length, 0);
    const b = await run(model, bench, dir).done;
    assert.equal(b.code, 0, b.stderr);
    assert.equal(server.batches.length - first, 1, 'batches created');
    assert.deepEqual(
      asked(keys, before),
      keys.map(() => 1),
    );
    assert.equal(readLines(join(dir, 'responses.jsonl')).length, 10);
    assert.match(b.stderr, /collecting its results/);
  });

  test(`${model}: killed between creating a batch and saving its id: the re-run finds it by its key, no second batch`, async () => {
    const first = server.batches.length;
    states = (i) =>
      i === first ? ['validating', ...Array(40).fill('in_progress'), 'completed'] : ['completed'];
    const keys = ids(`${p}f`, 6);
    const bench = writeBenchmark(join(tmp, `${p}f.jsonl`), keys);
    const dir = join(tmp, `${p}-find`);
    const a = run(model, bench, dir);
    await until(() => server.batches.length > first && server.batches[first].polls >= 1, 30_000, 'polling');
    a.child.kill('SIGKILL');
    await a.done;
    // What batches.json holds when the kill lands after the create and before its id is saved.
    const file = join(dir, 'batches.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    state.batches[0].id = null;
    state.batches[0].state = 'creating';
    writeFileSync(file, JSON.stringify(state));
    const b = await run(model, bench, dir).done;
    assert.equal(b.code, 0, b.stderr);
    assert.equal(server.batches.length - first, 1, 'batches created');
    assert.equal(readLines(join(dir, 'responses.jsonl')).length, 6);
  });
}

test('--batch-fallback online: the failed lines of a batch are asked one by one, no follow-up batch', async () => {
  const keys = ids('on', 10);
  const failing = new Set([keys[2], keys[5], keys[9]]);
  script = (r) =>
    failing.has(r.key!) && r.n === 1 ? { kind: 'status', status: 500, message: 'boom' } : answer(r);
  const first = server.batches.length;
  const start = server.requests.length;
  const dir = join(tmp, 'online');
  const res = await run('openai:m', writeBenchmark(join(tmp, 'on.jsonl'), keys), dir, [
    '--batch-fallback',
    'online',
  ]).done;
  assert.equal(res.code, 0, res.stderr);
  assert.equal(server.batches.length - first, 1);
  const online = server.requests.slice(start).filter((q) => q.path === '/v1/chat/completions');
  assert.deepEqual(online.map((q) => q.key).sort(), [...failing].sort());
  const lines = rows(join(dir, 'responses.jsonl'));
  assert.equal(lines.length, 10);
  for (const l of lines)
    assert.equal(l.eval_info.batch === undefined, failing.has(l.metadata.record_id), l.metadata.record_id);
});

test('a whole batch that fails validation is given up with its reason, once, and the run exits 1', async () => {
  const first = server.batches.length;
  states = (i) => (i === first ? ['validating', 'failed'] : ['completed']);
  const dir = join(tmp, 'failed');
  const res = await run('openai:m', writeBenchmark(join(tmp, 'fl.jsonl'), ids('fl', 3)), dir).done;
  assert.equal(res.code, 1, res.stderr);
  assert.equal(server.batches.length - first, 1);
  const errs = rows(join(dir, 'errors.jsonl'));
  assert.deepEqual(
    errs.map((e) => [e.error_class, e.outcome]),
    [
      ['bad_request', 'gave_up'],
      ['bad_request', 'gave_up'],
      ['bad_request', 'gave_up'],
    ],
  );
  assert.match(errs[0].message, /failed: line 1: scripted validation failure/);
});

test('a run over the request or byte limit is split into several batches; requests and bytes per batch are recorded', async () => {
  const keys = ids('sp', 23);
  const bench = writeBenchmark(join(tmp, 'sp.jsonl'), keys);
  const first = server.batches.length;
  const dir = join(tmp, 'split');
  const res = await run('openai:m', bench, dir, ['--batch-max-requests', '10']).done;
  assert.equal(res.code, 0, res.stderr);
  assert.deepEqual(
    server.batches.slice(first).map((b) => b.requests.length),
    [10, 10, 3],
  );
  const state = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
  const perLine = state.batches[0].bytes / 10;
  // By bytes: room for 4 lines per batch.
  const first2 = server.batches.length;
  const res2 = await run('gemini:gemini-2.5-flash', bench, join(tmp, 'split-mb'), [
    '--batch-max-mb',
    String((4.5 * perLine) / 1024 / 1024),
  ]).done;
  assert.equal(res2.code, 0, res2.stderr);
  const sizes = server.batches.slice(first2).map((b) => b.requests.length);
  assert.ok(sizes.length >= 5 && sizes.every((n) => n <= 5), `${sizes}`);
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    23,
  );
  for (const b of state.batches) assert.ok(b.est_tokens > 0 && b.bytes > 0);
  console.log(
    `batch files: ${state.batches.map((b: { requests: number; bytes: number; est_tokens: number }) => `${b.requests} requests ${b.bytes} bytes ~${b.est_tokens} tokens`).join('; ')}`,
  );
});

test('sob eval --batch passes it through: one batch per model, scored', async () => {
  const keys = ids('ev', 6);
  const first = server.batches.length;
  const dir = join(tmp, 'eval');
  const res = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      writeBenchmark(join(tmp, 'ev.jsonl'), keys),
      '--eval-dir',
      dir,
      '--batch',
      '--batch-poll-ms',
      '20',
      '--bootstrap-samples',
      '10',
      '--no-report',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(res.code, 0, res.stderr);
  assert.equal(server.batches.length - first, 1);
  assert.ok(
    rows(join(dir, 'runs/openai_m/responses.jsonl')).every(
      (l) => l.eval_info.batch === server.batches[first].id,
    ),
  );
  assert.ok(JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8')).length === 1);
});

test('Ctrl-C while polling: exit 130, the batch is left running and named; the re-run collects it without a second batch', async () => {
  const first = server.batches.length;
  states = (i) =>
    i === first ? ['validating', ...Array(40).fill('in_progress'), 'completed'] : ['completed'];
  const keys = ids('ci', 5);
  const bench = writeBenchmark(join(tmp, 'ci.jsonl'), keys);
  const dir = join(tmp, 'ctrl-c');
  const a = run('openai:m', bench, dir);
  await until(() => server.batches.length > first && server.batches[first].polls >= 2, 30_000, 'polling');
  a.child.kill('SIGINT');
  const ra = await a.done;
  assert.equal(ra.code, 130, ra.stderr);
  assert.match(
    ra.stderr,
    new RegExp(
      `the batch keeps running at the provider: re-run the same command to collect its answers \\(${server.batches[first].id}\\)`,
    ),
  );
  assert.equal(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status, 'interrupted');
  const rb = await run('openai:m', bench, dir).done;
  assert.equal(rb.code, 0, rb.stderr);
  assert.equal(server.batches.length - first, 1);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 5);
});
