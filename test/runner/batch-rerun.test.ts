/**
 * `sob run --batch` as a user goes on from it: records a batch failed and `--batch-fallback
 * online` answered carry the batch's attempt in their count (errors.jsonl and eval_info agree,
 * no attempt numbered twice), and a re-run without `--batch` while the batch is still at the
 * provider says, before asking, that those records are billed twice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { rows, sobRun, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome;
let states: (index: number) => string[];
const answer = (r: SeenRequest): Outcome => ({ kind: 'answer', text: JSON.stringify({ id: r.key }) });

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-batch-rerun-'));
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

const env = { OPENAI_API_KEY: 'sk-rerun', GEMINI_API_KEY: 'gm-rerun' };
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

for (const model of ['openai:gpt-4.1-mini', 'gemini:gemini-2.5-flash']) {
  const p = model[0];
  test(`${model}: --batch-fallback online numbers its attempts after the batch's (attempts 2, errors.jsonl attempt 1 once)`, async () => {
    const keys = ids(`${p}f`, 6);
    const failing = new Set([keys[1], keys[4]]);
    script = (r) =>
      failing.has(r.key!) && r.n === 1 ? { kind: 'status', status: 503, message: 'overloaded' } : answer(r);
    const dir = join(tmp, `${p}-fallback`);
    const res = await sobRun(server, model, writeBenchmark(join(tmp, `${p}f.jsonl`), keys), dir, {
      cwd: tmp,
      env,
      extra: ['--batch', '--batch-poll-ms', '20', '--batch-fallback', 'online', '--no-stream'],
    }).done;
    assert.equal(res.code, 0, res.stderr);
    const answers = rows(join(dir, 'responses.jsonl'));
    assert.equal(answers.length, 6);
    const attempts = Object.fromEntries(answers.map((a) => [a.metadata.record_id, a.eval_info.attempts]));
    assert.deepEqual(attempts, Object.fromEntries(keys.map((k) => [k, failing.has(k) ? 2 : 1])));
    // The online answers are not the batch's.
    for (const a of answers) assert.equal(a.eval_info.batch === undefined, failing.has(a.metadata.record_id));
    const errors = rows(join(dir, 'errors.jsonl'));
    assert.deepEqual(
      errors.map((e) => [e.record_id, e.attempt, e.error_class, e.outcome]).sort(),
      [...failing].sort().map((k) => [k, 1, 'server', 'retrying']),
    );
  });
}

test('a re-run without --batch while the batch is still at the provider warns, naming it and its records, before asking', async () => {
  states = () => ['validating', ...Array(400).fill('in_progress'), 'completed'];
  const keys = ids('w', 5);
  const bench = writeBenchmark(join(tmp, 'w.jsonl'), keys);
  const dir = join(tmp, 'warn');
  const first = server.batches.length;
  const a = sobRun(server, 'openai:gpt-4.1-mini', bench, dir, {
    cwd: tmp,
    env,
    extra: ['--batch', '--batch-poll-ms', '20'],
  });
  await until(() => server.batches.length > first && server.batches[first].polls >= 2, 30_000, 'polling');
  a.child.kill('SIGINT');
  assert.equal((await a.done).code, 130);
  const id = server.batches[first].id;
  const b = await sobRun(server, 'openai:gpt-4.1-mini', bench, dir, { cwd: tmp, env }).done;
  assert.equal(b.code, 0, b.stderr);
  const warning = `warning: batch ${id} (5 records) of an earlier --batch run is still at the provider, not collected: its records are asked online now and billed twice`;
  assert.ok(b.stderr.includes(warning), b.stderr);
  assert.ok(b.stderr.indexOf(warning) < b.stderr.indexOf('1/5'), 'the warning comes before the first answer');
  assert.equal(rows(join(dir, 'responses.jsonl')).length, 5);
  // Once every record is answered there is nothing to warn about.
  const c = await sobRun(server, 'openai:gpt-4.1-mini', bench, dir, { cwd: tmp, env }).done;
  assert.equal(c.code, 0, c.stderr);
  assert.doesNotMatch(c.stderr, /warning: batch/);
  assert.equal(JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8')).batches.length, 1);
});

for (const model of ['openai:gpt-4.1-mini', 'gemini:gemini-2.5-flash']) {
  test(`${model}: 80 status checks of one batch leave no listener behind (no MaxListenersExceededWarning on stderr)`, async () => {
    states = () => ['validating', ...Array(80).fill('in_progress'), 'completed'];
    const keys = ids(`${model[0]}l`, 3);
    const first = server.batches.length;
    const dir = join(tmp, `${model[0]}-listeners`);
    const res = await sobRun(server, model, writeBenchmark(join(tmp, `${model[0]}l.jsonl`), keys), dir, {
      cwd: tmp,
      env,
      extra: ['--batch', '--batch-poll-ms', '5'],
    }).done;
    assert.equal(res.code, 0, res.stderr);
    assert.ok(server.batches[first].polls >= 80, `${server.batches[first].polls} status checks`);
    assert.doesNotMatch(res.stderr, /MaxListenersExceededWarning|memory leak/);
    assert.equal(rows(join(dir, 'responses.jsonl')).length, 3);
  });
}
