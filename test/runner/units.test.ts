/** Small pure pieces of the runner: backoff, the endpoint pool, the progress line, prompt rendering. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { backoffDelay } from '../../src/core/retry.ts';
import { EndpointPool } from '../../src/providers/endpoints.ts';
import { parseRetryAfter } from '../../src/providers/types.ts';
import { formatProgress, ProgressReporter } from '../../src/runner/progress.ts';
import { makeTemplate, renderPrompt } from '../../src/runner/prompt.ts';
import { sanitizeModelId, scanResponses } from '../../src/runner/run-dir.ts';

test('backoff doubles per failure within [d/2, d], capped at maxMs', () => {
  const o = { baseMs: 1000, maxMs: 8000 };
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((f) => backoffDelay(f, { ...o, random: () => 0 })),
    [500, 1000, 2000, 4000, 4000],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((f) => backoffDelay(f, { ...o, random: () => 1 })),
    [1000, 2000, 4000, 8000, 8000],
  );
});

test('Retry-After wins over the exponential rule, plus at most 10% jitter, cut at maxRetryAfterMs', () => {
  const o = { baseMs: 1000, maxMs: 60_000, maxRetryAfterMs: 30_000 };
  assert.equal(backoffDelay(5, { ...o, random: () => 0 }, 2000), 2000);
  assert.equal(backoffDelay(5, { ...o, random: () => 1 }, 2000), 2200);
  assert.equal(backoffDelay(1, { ...o, random: () => 0 }, 3_600_000), 30_000);
  assert.equal(parseRetryAfter('7'), 7000);
  assert.equal(parseRetryAfter(null, '250'), 250);
  assert.equal(parseRetryAfter('soon'), undefined);
  const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
  const ms = parseRetryAfter(inTenSeconds)!;
  assert.ok(ms > 8000 && ms <= 10_000, String(ms));
});

test('endpoint pool: least in flight first; a failing endpoint is out for the cooldown (doubling), back after it', () => {
  let now = 0;
  const pool = new EndpointPool(['a', 'b'], (u) => u, { cooldownMs: 1000, now: () => now });
  const e1 = pool.acquire();
  const e2 = pool.acquire();
  assert.deepEqual([e1.url, e2.url], ['a', 'b']);
  pool.release(e1, 'server');
  pool.release(e2);
  // a is out until t=1000: everything goes to b.
  for (let i = 0; i < 3; i++) {
    const e = pool.acquire();
    assert.equal(e.url, 'b');
    pool.release(e);
  }
  now = 1000;
  const back = [pool.acquire(), pool.acquire()];
  assert.deepEqual(back.map((e) => e.url).sort(), ['a', 'b']);
  // a fails again: out for 2000 ms this time.
  pool.release(back.find((e) => e.url === 'a')!, 'network');
  pool.release(back.find((e) => e.url === 'b')!);
  assert.equal(pool.endpoints[0].downUntil, 3000);
  // A bad request says nothing about the endpoint.
  now = 3000;
  const x = pool.acquire();
  pool.release(x, 'bad_request');
  assert.equal(x.failures, x.url === 'a' ? 2 : 0);
  assert.ok(x.downUntil <= 3000);
});

test('progress line: done/total, rate, ETA, errors, tokens, cost', () => {
  const p = {
    total: 200,
    done: 60,
    resumed: 10,
    failed: 1,
    errors: 4,
    inputTokens: 123_456,
    outputTokens: 9_876,
    cost: 0.125,
    startedAt: 0,
  };
  assert.equal(
    formatProgress(p, 10_000),
    '60/200 (30.0%)  5.0 rec/s  ETA 28s  errors 4 (1 failed)  tokens 123k in / 9876 out  $0.1250',
  );
  const out: string[] = [];
  let now = 0;
  const r = new ProgressReporter({ write: (s: string) => out.push(s) > 0, isTTY: false }, 1000, () => now);
  for (now = 0; now <= 3500; now += 100) r.update(p);
  assert.equal(out.length, 4, 'one plain line per second over 3.5 s (first at once)');
  assert.ok(out.every((l) => l.endsWith('\n') && !l.includes('\r')));
});

test('prompt: [system]/[user] sections, one-pass placeholders, schema pretty-printed', () => {
  const t = makeTemplate('[system]\nS {{record_id}}\n[user]\nC={{context}} Q={{question}}\n{{schema}}');
  const p = renderPrompt(t, {
    context: 'has {{schema}} inside',
    question: 'q?',
    schema: { type: 'object' },
    recordId: 'r1',
  });
  assert.equal(p.system, 'S r1');
  assert.equal(p.user, 'C=has {{schema}} inside Q=q?\n{\n  "type": "object"\n}');
  assert.throws(() => makeTemplate('no context here'), /no \{\{context\}\} placeholder/);
});

test('model ids become folder names', () => {
  assert.equal(sanitizeModelId('openai:gpt-4.1-mini'), 'openai_gpt-4.1-mini');
  assert.equal(sanitizeModelId('openai:Qwen/Qwen3-8B'), 'openai_Qwen_Qwen3-8B');
  assert.equal(sanitizeModelId('replay:/data/response_phi-4_image.jsonl'), 'replay_response_phi-4_image');
  assert.equal(sanitizeModelId('local:../models/tiny'), 'local_models_tiny');
});

test('scanResponses: a last line that is not JSON is cut even with its newline; a bad middle line is reported and kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-scan-'));
  try {
    const file = join(dir, 'responses.jsonl');
    const good = (id: string) => `{"metadata": {"record_id": "${id}"}}\n`;
    const bad = '{"metadata": {"rec\n';
    writeFileSync(file, good('a') + bad + good('b') + bad);
    const r = await scanResponses(file);
    assert.deepEqual([r.ids.has('a'), r.ids.has('b'), r.ids.size], [true, true, 2]);
    assert.equal(r.droppedBytes, Buffer.byteLength(bad));
    assert.deepEqual(r.badLines, [2]);
    assert.equal(readFileSync(file, 'utf8'), good('a') + bad + good('b'));
    // Multi-byte text is cut at the exact byte.
    writeFileSync(file, `${good('é')}{"metadata": {"record_id": "ü`);
    const r2 = await scanResponses(file);
    assert.deepEqual([r2.ids.has('é'), r2.ids.size], [true, 1]);
    assert.equal(readFileSync(file, 'utf8'), good('é'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
