/**
 * Issue 21, the judge findings, through the real `sob score --match default --match-judge` against
 * local OpenAI-protocol servers:
 * - 4: unreadable judge answers raised lenient scores ("Sorry, I cannot help." lifted lenient
 *   Value Accuracy 0.500 -> 1.000; with every answer wrong, lenient VA, Faithfulness and Field F1
 *   were 1.0 with 0 leaves accepted) and were cached for good. Now an unreadable answer is
 *   unscored: not accepted in any lenient metric, never cached.
 * - 6: the judge cache ignored the endpoint: one server's verdicts were reused for another
 *   server serving a model of the same name.
 * - 15: a judge that never answers cost 4 x 60 s per pair, then exit 0; `--judge-timeout` ends
 *   the wait (pairs pending, exit 1), and a circuit breaker stops asking after 3 pairs in a row
 *   got no answer.
 * - 16: writes followed a symlinked folder inside the judge cache.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Outcome, type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-judge-audit-'));
let garbage: ProtocolServer;
let yes: ProtocolServer;
let no: ProtocolServer;
let silent: Server;
let silentAsked = 0;
let refusing: ProtocolServer;

before(async () => {
  garbage = await startProtocolServer({ script: () => ({ kind: 'answer', text: 'Sorry, I cannot help.' }) });
  yes = await startProtocolServer({ script: () => ({ kind: 'answer', text: '{"same_meaning": true}' }) });
  no = await startProtocolServer({ script: () => ({ kind: 'answer', text: '{"same_meaning": false}' }) });
  // Reads each request and never answers it (closed with every connection after the tests).
  silent = createServer((req) => {
    silentAsked++;
    req.resume();
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  refusing = await startProtocolServer({
    script: (): Outcome => ({ kind: 'status', status: 400, message: 'no such thing' }),
  });
});
after(async () => {
  for (const s of [garbage, yes, no, refusing]) await s.close();
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

function line(id: string, gold: string, pred: string): string {
  return JSON.stringify({
    metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy', source: 'text' },
    input: { context: 'c', question: 'q', json_schema: SCHEMA },
    output: { ground_truth: { city: gold }, candidate_response: { city: pred } },
  });
}

/** A response file: r1..rN each with a pair only the judge can settle; `exact` adds one exact record. */
function responses(name: string, preds: string[], exact = false): string {
  const file = join(tmp, `response_${name}.jsonl`);
  const lines = preds.map((p, i) => line(`r${i + 1}`, 'NYC', p));
  if (exact) lines.push(line('exact', 'Paris', 'Paris'));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function score(
  input: string,
  out: string,
  server: ProtocolServer | string,
  cache: string,
  extra: string[] = [],
) {
  return sob(
    [
      'score',
      input,
      '--out',
      out,
      '--match',
      'default',
      '--match-judge',
      'openai:judge-1',
      '--base-url',
      typeof server === 'string' ? server : server.openaiBaseUrl,
      '--match-cache',
      cache,
      '--bootstrap-samples',
      '0',
      ...extra,
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'test-key' } },
  ).done;
}

// biome-ignore lint/suspicious/noExplicitAny: rows read back from files, checked field by field
function rows(out: string, model: string): any[] {
  return readFileSync(join(out, 'text', model, 'eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const jsonFiles = (dir: string) =>
  (existsSync(dir) ? readdirSync(dir, { recursive: true }) : []).filter((f) => String(f).endsWith('.json'))
    .length;

test('a garbage judge: lenient VA equals exact VA (0.500), nothing accepted, nothing cached', async () => {
  const input = responses('garbage', ['Big Apple'], true);
  const out = join(tmp, 'out-garbage');
  const cache = join(tmp, 'cache-garbage');
  const r = await score(input, out, garbage, cache);
  assert.equal(r.code, 0, r.stderr);
  const a = rows(out, 'garbage');
  assert.deepEqual(
    a.map((x) => [x.record_id, x.leaf_value_em, x.lenient_value_accuracy, x.lenient_leaves.unscored]),
    [
      ['r1', 0, 0, 1],
      ['exact', 1, 1, 0],
    ],
  );
  const s = JSON.parse(readFileSync(join(out, 'text', 'garbage', 'eval_summary.json'), 'utf8'));
  assert.equal(s.lenient.summary.overall.metrics.lenient_value_accuracy.mean, 0.5);
  assert.equal(jsonFiles(cache), 0);
  // Asked again next run (nothing cached).
  const before = garbage.total;
  const again = await score(input, join(tmp, 'out-garbage-2'), garbage, cache);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(garbage.total, before + 1);
});

test('every answer unreadable and every value wrong: lenient VA, Faithfulness and Field F1 are 0 with 0 accepted', async () => {
  const input = responses('all-wrong', ['Big Apple', 'Gotham', 'Metropolis']);
  const out = join(tmp, 'out-all-wrong');
  const r = await score(input, out, garbage, join(tmp, 'cache-all-wrong'));
  assert.equal(r.code, 0, r.stderr);
  for (const x of rows(out, 'all-wrong')) {
    assert.equal(x.leaf_value_em, 0);
    assert.equal(x.lenient_value_accuracy, 0);
    assert.equal(x.lenient_faithfulness, x.value_token_f1);
    assert.equal(x.field_f1, 0);
    assert.equal(x.lenient_leaves.accepted, 0);
  }
});

test('two endpoints serving one judge model name: each is asked, no verdict is shared', async () => {
  const input = responses('two-endpoints', ['Big Apple']);
  const cache = join(tmp, 'cache-two');
  const a = await score(input, join(tmp, 'out-two-a'), yes, cache);
  assert.equal(a.code, 0, a.stderr);
  const b = await score(input, join(tmp, 'out-two-b'), no, cache);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(yes.total, 1);
  assert.equal(no.total, 1);
  assert.equal(rows(join(tmp, 'out-two-a'), 'two-endpoints')[0].lenient_value_accuracy, 1);
  assert.equal(rows(join(tmp, 'out-two-b'), 'two-endpoints')[0].lenient_value_accuracy, 0);
  // And the first server's verdict is still its own on a rerun (from the cache, not asked).
  const again = await score(input, join(tmp, 'out-two-c'), yes, cache);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(yes.total, 1);
  assert.equal(rows(join(tmp, 'out-two-c'), 'two-endpoints')[0].lenient_value_accuracy, 1);
});

test('a judge that never answers: --judge-timeout ends the wait, the pairs stay pending, exit 1', async () => {
  const input = responses('silent', ['Big Apple', 'Gotham']);
  const out = join(tmp, 'out-silent');
  const t0 = Date.now();
  const { port } = silent.address() as AddressInfo;
  const r = await score(input, out, `http://127.0.0.1:${port}/v1`, join(tmp, 'cache-silent'), [
    '--judge-timeout',
    '2',
  ]);
  assert.equal(silentAsked, 2);
  const took = Date.now() - t0;
  assert.equal(r.code, 1, r.stderr);
  assert.ok(took < 2_000 + 15_000, `took ${took} ms`);
  assert.match(
    r.stderr,
    /judge openai:judge-1: its --judge-timeout of 2 s was reached; no more pairs are asked \(they stay pending\)/,
  );
  assert.deepEqual(
    rows(out, 'silent').map((x) => [x.lenient_leaves.pending, x.lenient_value_accuracy]),
    [
      [1, 0],
      [1, 0],
    ],
  );
});

test('the circuit breaker: after 3 pairs in a row got no answer nothing more is asked; the rest pending', async () => {
  const input = responses('breaker', ['A', 'B', 'C', 'D', 'E', 'F']);
  const out = join(tmp, 'out-breaker');
  const r = await score(input, out, refusing, join(tmp, 'cache-breaker'), ['--judge-concurrency', '1']);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(refusing.total, 3);
  assert.match(r.stderr, /3 pairs in a row got no answer .*no more pairs are asked/);
  assert.deepEqual(
    rows(out, 'breaker').map((x) => x.lenient_leaves.pending),
    [1, 1, 1, 1, 1, 1],
  );
});

test('a symlinked folder inside the judge cache is refused, nothing written through it', async () => {
  const input = responses('symlinked', ['Big Apple']);
  const cache = join(tmp, 'cache-link');
  // The judge's folder as the first run makes it, then every shard in it a link to elsewhere.
  const first = await score(responses('symlinked-first', ['Gotham']), join(tmp, 'out-link-0'), yes, cache);
  assert.equal(first.code, 0, first.stderr);
  const [judgeDir] = readdirSync(cache);
  rmSync(join(cache, judgeDir), { recursive: true });
  mkdirSync(join(cache, judgeDir));
  const outside = join(tmp, 'outside');
  mkdirSync(outside);
  for (let i = 0; i < 256; i++) symlinkSync(outside, join(cache, judgeDir, i.toString(16).padStart(2, '0')));
  const r = await score(input, join(tmp, 'out-link'), yes, cache);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /refusing to write through a symbolic link: .*cache-link\/openai_judge-1-[0-9a-f]{12}\/[0-9a-f]{2}/,
  );
  assert.deepEqual(readdirSync(outside), []);
});
