/**
 * One writer per run directory, eval directory and judge output folder (issue 9, item 4): a
 * second `sob run`, `sob eval` or `sob judge` on the same folder is refused with one line
 * before it asks anything, so no record is asked twice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, type SeenRequest, startProtocolServer } from '../helpers/protocol-server.ts';
import { exampleRecords, readLines, sob, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;

function script(r: SeenRequest) {
  if (r.model === 'judge')
    return {
      kind: 'answer' as const,
      delayMs: 1000,
      text: JSON.stringify({
        accuracy: 90,
        grounding: 90,
        schema_quality: 90,
        needs_multiple_turns: null,
        rationale: 'ok',
      }),
    };
  return { kind: 'answer' as const, delayMs: 400, text: JSON.stringify({ id: r.key }) };
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-locks-'));
  server = await startProtocolServer({ script });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-locks' };
const REFUSAL =
  /^sob: (run|eval) directory .* is in use by another sob process \(pid \d+ on \S+, since .*\)|^sob: judge output folder .* is in use by another sob process/;

/** Requests the server saw for `keys` in this test, and how many keys were asked more than once. */
function asked(keys: string[], before: Map<string, number>) {
  let total = 0;
  let twice = 0;
  for (const k of keys) {
    const n = (server.counts.get(k) ?? 0) - (before.get(k) ?? 0);
    total += n;
    if (n > 1) twice++;
  }
  return { total, twice };
}

test('two concurrent sob run on one --run-dir: the second refuses with one line, no record is asked twice', async () => {
  const ids = Array.from({ length: 40 }, (_, i) => `L${i}`);
  const bench = writeBenchmark(join(tmp, 'lock.jsonl'), ids);
  const dir = join(tmp, 'lock-run');
  const args = ['run', '--model', 'openai:m', '--base-url', server.openaiBaseUrl, '--benchmark', bench];
  const before = new Map(server.counts);
  const a = sob([...args, '--run-dir', dir, '--concurrency', '2'], { cwd: tmp, env });
  await until(() => readLines(join(dir, 'responses.jsonl')).length >= 2, 30_000, 'first answers');
  const b = await sob([...args, '--run-dir', dir, '--concurrency', '2'], { cwd: tmp, env }).done;
  assert.equal(b.code, 1, b.stderr);
  assert.equal(b.stderr.trim().split('\n').length, 1, b.stderr);
  assert.match(b.stderr.trim(), REFUSAL);
  const ra = await a.done;
  assert.equal(ra.code, 0, ra.stderr);
  assert.deepEqual(asked(ids, before), { total: 40, twice: 0 });
  const lines = readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l).metadata.record_id);
  assert.equal(lines.length, 40);
  assert.equal(new Set(lines).size, 40);
  // The refused run left no session in the manifest; the lock is gone after the first finished.
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(m.sessions.length, 1);
  assert.equal(m.status, 'complete');
  const again = await sob([...args, '--run-dir', dir], { cwd: tmp, env }).done;
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(asked(ids, before), { total: 40, twice: 0 });
});

test('two concurrent sob eval on one --eval-dir: the second refuses with one line, no record is asked twice', async () => {
  const ids = Array.from({ length: 30 }, (_, i) => `E${i}`);
  const bench = writeBenchmark(join(tmp, 'lock-eval.jsonl'), ids);
  const dir = join(tmp, 'lock-eval');
  const args = [
    'eval',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--eval-dir',
    dir,
    '--concurrency',
    '2',
    '--bootstrap-samples',
    '10',
    '--no-report',
  ];
  const before = new Map(server.counts);
  const a = sob(args, { cwd: tmp, env });
  await until(() => readLines(join(dir, 'runs/openai_m/responses.jsonl')).length >= 2, 30_000, 'answers');
  const b = await sob(args, { cwd: tmp, env }).done;
  assert.equal(b.code, 1, b.stderr);
  assert.equal(b.stderr.trim().split('\n').length, 1, b.stderr);
  assert.match(b.stderr.trim(), REFUSAL);
  const ra = await a.done;
  assert.equal(ra.code, 0, ra.stderr);
  assert.deepEqual(asked(ids, before), { total: 30, twice: 0 });
});

test('two concurrent sob judge on one --out: the second refuses with one line, no judgment is asked twice', async () => {
  const records = join(tmp, 'judge-records.jsonl');
  const ids = await exampleRecords(records);
  assert.ok(ids.length >= 4, `${ids.length} records`);
  const out = join(tmp, 'judged');
  const args = [
    'judge',
    records,
    '--judge',
    'openai:judge',
    '--base-url',
    server.openaiBaseUrl,
    '--out',
    out,
    '--concurrency',
    '1',
  ];
  const before = new Map(server.counts);
  const a = sob(args, { cwd: tmp, env });
  await until(() => readLines(join(out, 'judgments.jsonl')).length >= 1, 30_000, 'a judgment');
  const b = await sob(args, { cwd: tmp, env }).done;
  assert.equal(b.code, 1, b.stderr);
  assert.equal(b.stderr.trim().split('\n').length, 1, b.stderr);
  assert.match(b.stderr.trim(), REFUSAL);
  const ra = await a.done;
  assert.equal(ra.code, 0, ra.stderr);
  assert.deepEqual(asked(ids, before), { total: ids.length, twice: 0 });
});
