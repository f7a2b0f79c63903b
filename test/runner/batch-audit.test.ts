/**
 * Issue 21, the batch findings, each driven through the real `sob run --batch` against the local
 * Files + Batches server:
 * - 3: a `null` line in the output file raised a TypeError on every re-run (answers paid for,
 *   never collected); now it is named with its line number and the rest is collected once.
 * - 10: killed between creating a batch and saving its id, with the provider's batch list
 *   failing once on the re-run: the failure was read as "not found" and the batch submitted again.
 * - 12: a smaller `--limit` on a re-run dropped the answers of a batch beyond it, and a later run
 *   billed them again (9 requests for 6 records).
 * - 13: custom id `r01` was read as `r1`: record 1 took another line's answer.
 * - 14: a missing output file (404) was reported as `no model "m" there`.
 * - 18: a batch stuck `in_progress` was polled forever; `--batch-deadline` ends the wait with
 *   the records pending, collected by a re-run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { type BatchOptions, type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { readLines, rows, sobRun, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let states: (index: number) => string[];
let fileLines: BatchOptions['fileLines'];
let listStatus: BatchOptions['listStatus'];
let inlined: BatchOptions['inlined'];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-batch-audit-'));
  server = await startProtocolServer({
    batch: {
      states: (i) => states(i),
      fileLines: (b, kind, lines) => (fileLines ? fileLines(b, kind, lines) : lines),
      listStatus: (n) => listStatus?.(n),
      inlined: (b, entries) => (inlined ? inlined(b, entries) : entries),
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  states = () => ['validating', 'in_progress', 'completed'];
  fileLines = undefined;
  listStatus = undefined;
  inlined = undefined;
});

const env = { OPENAI_API_KEY: 'sk-audit' };
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const run = (bench: string, dir: string, extra: string[] = []) =>
  sobRun(server, 'openai:m', bench, dir, {
    cwd: tmp,
    env,
    extra: ['--batch', '--batch-poll-ms', '20', '--no-stream', ...extra],
  });
/** How many times the server was asked each of `keys` (batch lines count when answered). */
const asked = (keys: string[]) => keys.map((k) => server.counts.get(k) ?? 0);
const answers = (dir: string) =>
  Object.fromEntries(
    rows(join(dir, 'responses.jsonl')).map((l) => [l.metadata.record_id, l.output.candidate_response]),
  );

test('a null line in the output file: named with its line number, every record collected once, billed once', async () => {
  const keys = ids('nl', 4);
  const first = server.batches.length;
  fileLines = (_b, kind, lines) => (kind === 'out' ? ['null', ...lines] : lines);
  const dir = join(tmp, 'null-line');
  const res = await run(writeBenchmark(join(tmp, 'nl.jsonl'), keys), dir).done;
  assert.equal(res.code, 0, res.stderr);
  assert.match(
    res.stderr,
    /output file file-out-batch_\d+ line 1: not a batch result line \(the line: Expected object, received null\); skipped/,
  );
  assert.equal(server.batches.length - first, 1, 'batches created');
  assert.deepEqual(asked(keys), [1, 1, 1, 1]);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 4);
  // A re-run has nothing to do: no crash, nothing asked.
  const again = await run(join(tmp, 'nl.jsonl'), dir).done;
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.batches.length - first, 1);
});

test('gemini: a null and a shapeless inlined response are named, every record collected once', async () => {
  const keys = ids('gn', 3);
  const first = server.batches.length;
  inlined = (_b, entries) => [null, { metadata: {} }, ...entries];
  const dir = join(tmp, 'gemini-null');
  const res = await sobRun(
    server,
    'gemini:gemini-2.5-flash',
    writeBenchmark(join(tmp, 'gn.jsonl'), keys),
    dir,
    {
      cwd: tmp,
      env: { GEMINI_API_KEY: 'gm-audit' },
      extra: ['--batch', '--batch-poll-ms', '20', '--no-stream'],
    },
  ).done;
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /inlined response 1: not a batch result \(metadata: Required\); skipped/);
  assert.match(res.stderr, /inlined response 2: not a batch result \(metadata\.key: Required\); skipped/);
  assert.equal(server.batches.length - first, 1, 'batches created');
  assert.deepEqual(asked(keys), [1, 1, 1]);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 3);
});

test('custom ids are exact strings: a line for "r01" is not record r1\'s answer', async () => {
  const keys = ids('ex', 3);
  fileLines = (_b, kind, lines) => {
    if (kind !== 'out') return lines;
    const intruder = JSON.parse(lines[1]);
    intruder.custom_id = 'r01';
    intruder.response.body.choices[0].message.content = JSON.stringify({ id: 'intruder' });
    return [JSON.stringify(intruder), ...lines];
  };
  const dir = join(tmp, 'exact-ids');
  const res = await run(writeBenchmark(join(tmp, 'ex.jsonl'), keys), dir).done;
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /a result for custom id "r01", which is none of its requests; skipped/);
  assert.deepEqual(answers(dir), { ex0: { id: 'ex0' }, ex1: { id: 'ex1' }, ex2: { id: 'ex2' } });
});

test('a missing output file (404) is named as such, not as a missing model; its batch stays to collect', async () => {
  const keys = ids('nf', 2);
  fileLines = (_b, kind, lines) => (kind === 'out' ? null : lines);
  const dir = join(tmp, 'missing-file');
  const bench = writeBenchmark(join(tmp, 'nf.jsonl'), keys);
  const res = await run(bench, dir).done;
  assert.equal(res.code, 1, res.stderr);
  const last = res.stderr.trim().split('\n').at(-1) ?? '';
  assert.match(last, /batch batch_\d+: its output file file-out-batch_\d+ is not found at .* \(HTTP 404\)/);
  assert.doesNotMatch(res.stderr, /no model/);
  const state = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
  assert.equal(state.batches[0].collected, false);
  // Once the file is there, a re-run collects it: nothing asked twice.
  fileLines = undefined;
  const again = await run(bench, dir).done;
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(asked(keys), [1, 1]);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 2);
});

test('a smaller --limit on a re-run keeps the answers its batch holds beyond it: no record billed twice', async () => {
  const keys = ids('lm', 6);
  const first = server.batches.length;
  states = (i) =>
    i === first ? ['validating', ...Array(30).fill('in_progress'), 'completed'] : ['completed'];
  const bench = writeBenchmark(join(tmp, 'lm.jsonl'), keys);
  const dir = join(tmp, 'limit');
  const a = run(bench, dir, ['--limit', '6']);
  await until(() => server.batches.length > first && server.batches[first].polls >= 1, 30_000, 'polling');
  a.child.kill('SIGINT');
  await a.done;
  const b = await run(bench, dir, ['--limit', '3']).done;
  assert.equal(b.code, 0, b.stderr);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 6);
  const c = await run(bench, dir, ['--limit', '6']).done;
  assert.equal(c.code, 0, c.stderr);
  assert.equal(server.batches.length - first, 1, 'batches created');
  assert.deepEqual(asked(keys), [1, 1, 1, 1, 1, 1]);
  assert.deepEqual(Object.keys(answers(dir)).sort(), keys);
});

/** A run killed after its batch was created, its batches.json as if killed before the id was saved. */
async function killedBeforeSavingId(prefix: string) {
  const keys = ids(prefix, 4);
  const first = server.batches.length;
  states = (i) =>
    i === first ? ['validating', ...Array(30).fill('in_progress'), 'completed'] : ['completed'];
  const bench = writeBenchmark(join(tmp, `${prefix}.jsonl`), keys);
  const dir = join(tmp, prefix);
  const a = run(bench, dir);
  await until(() => server.batches.length > first && server.batches[first].polls >= 1, 30_000, 'polling');
  a.child.kill('SIGKILL');
  await a.done;
  const file = join(dir, 'batches.json');
  const state = JSON.parse(readFileSync(file, 'utf8'));
  state.batches[0].id = null;
  state.batches[0].state = 'creating';
  writeFileSync(file, JSON.stringify(state));
  return { keys, first, bench, dir };
}

test('killed before saving the batch id, the batch list failing once on the re-run: asked again, found, one batch', async () => {
  const { keys, first, bench, dir } = await killedBeforeSavingId('kf');
  let failures = 1;
  listStatus = () => (failures-- > 0 ? 500 : undefined);
  const b = await run(bench, dir).done;
  assert.equal(b.code, 0, b.stderr);
  assert.equal(server.batches.length - first, 1, 'batches created');
  assert.deepEqual(asked(keys), [1, 1, 1, 1]);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 4);
});

test('killed before saving the batch id, the batch list failing every time: the run stops without submitting', async () => {
  const { first, bench, dir } = await killedBeforeSavingId('ka');
  listStatus = () => 500;
  const b = await run(bench, dir).done;
  assert.equal(b.code, 1, b.stderr);
  assert.match(
    b.stderr.trim().split('\n').at(-1) ?? '',
    /^sob: could not list the provider's batches .*nothing was submitted, so it is not billed twice/,
  );
  assert.equal(server.batches.length - first, 1, 'batches created');
});

test('--batch-deadline: a batch stuck in_progress ends the wait with its records pending; a re-run collects them', async () => {
  const keys = ids('dl', 3);
  const first = server.batches.length;
  states = () => ['validating', ...Array(100_000).fill('in_progress'), 'completed'];
  const bench = writeBenchmark(join(tmp, 'dl.jsonl'), keys);
  const dir = join(tmp, 'deadline');
  const t0 = Date.now();
  const res = await run(bench, dir, ['--batch-deadline', '2']).done;
  const took = Date.now() - t0;
  assert.equal(res.code, 1, res.stderr);
  assert.ok(took < 20_000, `took ${took} ms`);
  assert.match(
    res.stderr,
    /--batch-deadline reached: 3 records still pending in batch batch_\d+ \((validating|in_progress)\)/,
  );
  assert.match(
    res.stderr.trim().split('\n').at(-1) ?? '',
    /^sob: 3 records still pending in batches at the provider/,
  );
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 0);
  const state = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
  assert.deepEqual(
    state.batches.map((e: { id: string; collected: boolean }) => [e.id, e.collected]),
    [[server.batches[first].id, false]],
  );
  // The batch finishes at the provider: the re-run collects it, asks nothing again.
  server.batches[first].polls = 100_001;
  const again = await run(bench, dir).done;
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.batches.length - first, 1);
  assert.deepEqual(asked(keys), [1, 1, 1]);
});
