/**
 * `anthropic:<model>` (issue 31): the real `sob run` and @anthropic-ai/sdk 1.15 against a local
 * server speaking the Messages and Message Batches wire protocol (test/kit/anthropic-server.ts):
 * online and streamed answers with usage, cache tokens and cost; --constrained through
 * output_config.format (and the tool-use mode); a refusal and a cut answer; 429 then 529 then an
 * answer through the runner's one retry layer; image and PDF blocks whose decoded bytes are the
 * attached files; a batch killed while polling and collected by the re-run, never sent twice.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import { AnthropicProvider, anthropicCost } from '../../src/providers/anthropic.ts';
import { ProviderError, type ProviderRequest } from '../../src/providers/types.ts';
import {
  type AnthropicOutcome,
  type AnthropicSeen,
  type AnthropicServer,
  startAnthropicServer,
} from '../kit/anthropic-server.ts';
import { ROOT } from '../kit/cli.ts';
import { readLines, rows, sobRun, until, writeBenchmark } from '../runner/sob-cli.ts';

const KEY = 'sk-ant-test-0123456789abcdef';
let tmp: string;
let server: AnthropicServer;
let script: (r: AnthropicSeen) => AnthropicOutcome;
let states: (i: number) => string[];
const answer = (r: AnthropicSeen): AnthropicOutcome => ({
  kind: 'answer',
  text: JSON.stringify({ id: r.key }),
  usage: { input: 1000, output: 20 },
});

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-anthropic-'));
  server = await startAnthropicServer({
    apiKey: KEY,
    script: (r) => script(r),
    batchStates: (i) => states(i),
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  script = answer;
  states = () => ['in_progress', 'in_progress', 'ended'];
});

const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: undefined };
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const since = (start: number) => server.requests.slice(start).filter((q) => q.path === '/v1/messages');
function run(model: string, bench: string, dir: string, extra: string[] = []) {
  return sobRun({ openaiBaseUrl: '', geminiBaseUrl: '' }, model, bench, dir, {
    cwd: tmp,
    env,
    baseUrl: server.url,
    extra,
  });
}
/** Every file a run directory holds, as one text (to look for the key). */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => readFileSync(join(d.parentPath, d.name), 'utf8'))
    .join('\n');
}

test('online, whole answers: each record asked once with the key as a Bearer token, usage and cost from the price table', async () => {
  const keys = ids('on', 3);
  const dir = join(tmp, 'online');
  const start = server.requests.length;
  const res = await run('anthropic:claude-haiku-4-5', writeBenchmark(join(tmp, 'on.jsonl'), keys), dir, [
    '--no-stream',
  ]).done;
  assert.equal(res.code, 0, res.stderr);
  const asked = since(start);
  assert.deepEqual(asked.map((q) => q.key).sort(), keys);
  for (const q of asked) {
    assert.equal(q.auth, 'bearer');
    assert.equal(q.model, 'claude-haiku-4-5');
    assert.equal(q.body.max_tokens, 2048);
    assert.equal(q.body.stream, undefined);
    // No sampling parameter (SDK 1.15 has none), no effort for Haiku 4.5, no schema unconstrained.
    assert.equal(q.body.temperature, undefined);
    assert.equal(q.body.output_config, undefined);
    assert.match(q.systemText + q.userText, /Which id\?/);
  }
  const lines = rows(join(dir, 'responses.jsonl'));
  assert.equal(lines.length, 3);
  for (const l of lines) {
    assert.deepEqual(l.output.candidate_response, { id: l.metadata.record_id });
    assert.equal(l.eval_info.finish_reason, 'stop');
    assert.equal(l.eval_info.input_tokens, 1000);
    assert.equal(l.eval_info.output_tokens, 20);
    // Haiku 4.5: $1 in, $5 out per million tokens.
    assert.equal(l.eval_info.cost, (1000 * 1 + 20 * 5) / 1e6);
    assert.equal(l.eval_info.attempts, 1);
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(manifest.provider, 'anthropic');
  assert.equal(manifest.provider_settings.structured_output, 'output_config.format');
  assert.ok(Math.abs(manifest.usage_this_session.cost - 3 * 0.0011) < 1e-12);
  assert.ok(!allText(dir).includes(KEY) && !res.stderr.includes(KEY), 'the key is written nowhere');
  // The server takes the key as x-api-key too (the Messages API's own header).
  const direct = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: '[rid:x1]' }] }),
  });
  assert.equal(direct.status, 200);
  assert.equal(server.requests.at(-1)?.auth, 'x-api-key');
});

test('a bad key stops the run at once with one line naming ANTHROPIC_API_KEY, nothing retried', async () => {
  const before = server.unauthorized;
  const res = await sobRun(
    { openaiBaseUrl: '', geminiBaseUrl: '' },
    'anthropic:claude-haiku-4-5',
    writeBenchmark(join(tmp, 'bad.jsonl'), ids('bk', 4)),
    join(tmp, 'badkey'),
    {
      cwd: tmp,
      env: { ANTHROPIC_API_KEY: 'sk-ant-wrong-key-000000' },
      baseUrl: server.url,
      extra: ['--concurrency', '1'],
    },
  ).done;
  assert.equal(res.code, 1);
  assert.match(
    res.stderr,
    /authentication failed \(HTTP 401\); check the API key in the environment \(ANTHROPIC_API_KEY\)/,
  );
  assert.equal(server.unauthorized - before, 1);
  assert.ok(!res.stderr.includes('sk-ant-wrong-key-000000'));
});

test('streamed (message_start ... message_stop): ttft_ms from the first text_delta, tpot_ms, cache tokens priced at the cache rate', async () => {
  const FIRST = 400;
  const GAP = 60;
  script = (r) => {
    const text = JSON.stringify({ id: r.key, note: 'streamed in pieces' });
    const cut = (i: number) => Math.floor((i * text.length) / 6);
    return {
      kind: 'answer',
      text,
      usage: { input: 200, output: 6, cacheRead: 800 },
      stream: {
        pieces: Array.from({ length: 6 }, (_, i) => text.slice(cut(i), cut(i + 1))),
        firstMs: FIRST,
        gapMs: GAP,
      },
    };
  };
  const keys = ids('st', 2);
  const dir = join(tmp, 'stream');
  const start = server.requests.length;
  const res = await run('anthropic:claude-sonnet-4-6', writeBenchmark(join(tmp, 'st.jsonl'), keys), dir).done;
  assert.equal(res.code, 0, res.stderr);
  assert.ok(since(start).every((q) => q.body.stream === true));
  for (const l of rows(join(dir, 'responses.jsonl'))) {
    assert.deepEqual(l.output.candidate_response, { id: l.metadata.record_id, note: 'streamed in pieces' });
    assert.ok(
      l.eval_info.ttft_ms >= FIRST && l.eval_info.ttft_ms < FIRST + 5000,
      `ttft ${l.eval_info.ttft_ms}`,
    );
    // tpot_ms is (last piece - first piece) / 5 tokens: the last piece comes FIRST + 5 GAP after
    // the request at the earliest, however late the first one was.
    assert.ok(l.eval_info.tpot_ms > 0 && l.eval_info.tpot_ms < GAP * 10, `tpot ${l.eval_info.tpot_ms}`);
    assert.ok(
      l.eval_info.ttft_ms + 5 * l.eval_info.tpot_ms >= FIRST + 5 * GAP - 1,
      JSON.stringify(l.eval_info),
    );
    assert.ok(l.eval_info.latency_ms >= FIRST + 5 * GAP);
    assert.equal(l.eval_info.input_tokens, 1000);
    assert.equal(l.eval_info.cache_read_tokens, 800);
    assert.equal(l.eval_info.output_tokens, 6);
    // Sonnet 4.6: $3 in, $0.30 cache read, $15 out.
    assert.ok(
      Math.abs(l.eval_info.cost - (200 * 3 + 800 * 0.3 + 6 * 15) / 1e6) < 1e-15,
      String(l.eval_info.cost),
    );
  }
});

test('a stream cut before message_stop, and one ending in an overloaded_error event, are retried (network, server); the second answers are written', async () => {
  script = (r) =>
    r.n > 1
      ? answer(r)
      : {
          kind: 'answer',
          text: '{"id": "x"}',
          stream:
            r.key === 'cut0'
              ? { pieces: ['{"id"'], cut: true }
              : { pieces: ['{"id"'], error: 'overloaded_error' },
        };
  const dir = join(tmp, 'cut');
  const res = await run(
    'anthropic:claude-haiku-4-5',
    writeBenchmark(join(tmp, 'cut.jsonl'), ['cut0', 'cut1']),
    dir,
  ).done;
  assert.equal(res.code, 0, res.stderr);
  const errs = Object.fromEntries(rows(join(dir, 'errors.jsonl')).map((e) => [e.record_id, e]));
  assert.deepEqual(
    [errs.cut0.error_class, errs.cut0.outcome, errs.cut1.error_class, errs.cut1.outcome],
    ['network', 'retrying', 'server', 'retrying'],
  );
  assert.match(errs.cut0.message, /no message_stop/);
  assert.match(
    errs.cut1.message,
    /error event in the stream \(overloaded_error\): scripted overloaded_error/,
  );
  for (const l of rows(join(dir, 'responses.jsonl'))) {
    assert.equal(l.eval_info.attempts, 2);
    assert.deepEqual(l.output.candidate_response, { id: l.metadata.record_id });
  }
});

test('--constrained: the schema goes to output_config.format (with effort low on Sonnet 4.6); a refused schema is recorded schema_rejected', async () => {
  const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
  const keys = ids('cs', 3);
  script = (r) =>
    r.key === 'cs2'
      ? {
          kind: 'status',
          status: 400,
          message: 'output_config.format.schema: the keyword "pattern" is not supported',
        }
      : answer(r);
  const dir = join(tmp, 'constrained');
  const start = server.requests.length;
  const res = await run(
    'anthropic:claude-sonnet-4-6',
    writeBenchmark(join(tmp, 'cs.jsonl'), keys, schema),
    dir,
    ['--constrained'],
  ).done;
  assert.equal(res.code, 0, res.stderr);
  const asked = since(start);
  assert.equal(asked.length, 3, 'a refused schema is not asked again');
  for (const q of asked) {
    assert.deepEqual(q.body.output_config, { effort: 'low', format: { type: 'json_schema', schema } });
    assert.equal(q.body.tools, undefined);
  }
  const lines = rows(join(dir, 'responses.jsonl'));
  const rejected = lines.find((l) => l.metadata.record_id === 'cs2');
  assert.equal(rejected.eval_info.schema_rejected, true);
  assert.equal(rejected.output.candidate_response, null);
  assert.match(rejected.eval_info.error, /HTTP 400: output_config\.format\.schema/);
  assert.equal(lines.filter((l) => l.output.candidate_response?.id === l.metadata.record_id).length, 2);
});

test('tool-use mode: a forced `answer` tool, its streamed input_json_delta is the answer (stop_reason tool_use)', async () => {
  const p = new AnthropicProvider('claude-haiku-4-5', {
    baseUrl: server.url,
    apiKey: KEY,
    structured: 'tool',
  });
  script = (r) => ({
    kind: 'answer',
    text: JSON.stringify({ id: r.key, n: 7 }),
    usage: { input: 50, output: 9 },
    stream: { pieces: [`{"id": "${r.key}", `, '"n": 7}'] },
  });
  const schema = { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } } };
  const res = await p.complete(request({ user: '[rid:tool1] which?', schema, constrained: true }));
  assert.deepEqual(JSON.parse(res.text), { id: 'tool1', n: 7 });
  assert.equal(res.finishReason, 'stop');
  const q = server.requests.at(-1)!;
  assert.deepEqual(q.body.tool_choice, { type: 'tool', name: 'answer' });
  assert.deepEqual((q.body.tools as { input_schema: unknown }[])[0].input_schema, schema);
  assert.equal(q.body.output_config, undefined);
});

test('a refusal (stop_reason refusal) is recorded as the model`s answer, and max_tokens as truncated', async () => {
  script = (r) =>
    r.key === 'rf0'
      ? { kind: 'refusal', category: 'cyber', explanation: 'This request could enable harm.' }
      : { kind: 'answer', text: '{"id": "rf', finish: 'length', usage: { input: 10, output: 2048 } };
  const dir = join(tmp, 'refusal');
  const res = await run(
    'anthropic:claude-haiku-4-5',
    writeBenchmark(join(tmp, 'rf.jsonl'), ['rf0', 'rf1']),
    dir,
  ).done;
  assert.equal(res.code, 0, res.stderr);
  const by = Object.fromEntries(rows(join(dir, 'responses.jsonl')).map((l) => [l.metadata.record_id, l]));
  assert.equal(by.rf0.eval_info.finish_reason, 'refusal');
  assert.equal(by.rf0.eval_info.error_class, 'refusal');
  assert.equal(by.rf0.output.raw_response, 'refusal (cyber): This request could enable harm.');
  assert.equal(by.rf1.eval_info.finish_reason, 'length');
  assert.equal(by.rf1.eval_info.error_class, 'truncated');
  assert.equal(by.rf1.eval_info.attempts, 1);
  assert.deepEqual(
    rows(join(dir, 'errors.jsonl'))
      .map((e) => [e.record_id, e.error_class, e.outcome])
      .sort(),
    [
      ['rf0', 'refusal', 'recorded'],
      ['rf1', 'truncated', 'recorded'],
    ],
  );
});

test('429 (Retry-After 1) then 529 (overloaded) then an answer: three requests in all (no SDK retries), the pause honours Retry-After', async () => {
  script = (r) =>
    r.n === 1
      ? { kind: 'status', status: 429, message: 'rate limited', retryAfter: '1' }
      : r.n === 2
        ? { kind: 'status', status: 529, message: 'Overloaded' }
        : answer(r);
  const dir = join(tmp, 'retry');
  const start = server.requests.length;
  const res = await run('anthropic:claude-haiku-4-5', writeBenchmark(join(tmp, 'rt.jsonl'), ['rt0']), dir)
    .done;
  assert.equal(res.code, 0, res.stderr);
  const asked = since(start);
  assert.equal(asked.length, 3);
  // Retry-After: 1 holds the second attempt a second at least (the 529 has none: the backoff, 5 ms).
  assert.ok(asked[1].time - asked[0].time >= 1000, `${asked[1].time - asked[0].time} ms`);
  const errs = rows(join(dir, 'errors.jsonl'));
  assert.deepEqual(
    errs.map((e) => [e.attempt, e.error_class, e.status, e.outcome]),
    [
      [1, 'rate_limit', 429, 'retrying'],
      [2, 'server', 529, 'retrying'],
    ],
  );
  assert.match(errs[1].message, /HTTP 529 \(overloaded\): Overloaded/);
  const line = rows(join(dir, 'responses.jsonl'))[0];
  assert.equal(line.eval_info.attempts, 3);
  assert.deepEqual(line.output.candidate_response, { id: 'rt0' });
});

/** A w x h RGB PNG, made here (signature, IHDR, IDAT, IEND). */
function png(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.concat(
    Array.from({ length: h }, (_, y) =>
      Buffer.from([0, ...Array.from({ length: w }, (_, x) => [x * 9, y * 7, (x + y) % 256]).flat()]),
    ),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function request(extra: Partial<ProviderRequest>): ProviderRequest {
  return {
    recordId: 'r',
    system: '',
    user: '',
    schema: {},
    constrained: false,
    temperature: 0,
    maxTokens: 256,
    signal: new AbortController().signal,
    groundTruth: null,
    ...extra,
  };
}

test('image and PDF attachments: an image block and a document block (base64) before the prompt, decoding to the attached files', async () => {
  const p = new AnthropicProvider('claude-haiku-4-5', { baseUrl: server.url, apiKey: KEY, stream: false });
  assert.deepEqual(p.documentLimits.kinds, ['image', 'pdf']);
  assert.equal(p.documentLimits.maxPdfPages, 100);
  const image = png(40, 30);
  const imageFile = join(tmp, 'page.png');
  writeFileSync(imageFile, image);
  const pdf = readFileSync(join(ROOT, 'sources/examples/pdf/invoice.pdf'));
  const fromDisk = readFileSync(imageFile);
  const res = await p.complete(
    request({
      user: '[rid:att1] Read the attached page.',
      attachments: [
        { kind: 'image', mime: 'image/png', data: fromDisk, sha256: sha(fromDisk), name: 'page.png' },
        { kind: 'pdf', mime: 'application/pdf', data: pdf, sha256: sha(pdf), name: 'invoice.pdf', pages: 1 },
      ],
    }),
  );
  assert.deepEqual(JSON.parse(res.text), { id: 'att1' });
  const q = server.requests.at(-1)!;
  assert.deepEqual(
    q.attachments.map((a) => [a.type, a.mediaType, sha(a.bytes)]),
    [
      ['image', 'image/png', sha(image)],
      ['document', 'application/pdf', sha(pdf)],
    ],
  );
  const content = (q.body.messages as { content: { type: string; title?: string }[] }[])[0].content;
  assert.deepEqual(
    content.map((b) => b.type),
    ['image', 'document', 'text'],
  );
  assert.equal(content[1].title, 'invoice.pdf');
  // Audio is not something the Messages API takes: one clear error, nothing sent.
  const before = server.requests.length;
  await assert.rejects(
    p.complete(
      request({
        user: '[rid:att2] Listen.',
        attachments: [
          {
            kind: 'audio',
            mime: 'audio/wav',
            data: Buffer.from('RIFF'),
            sha256: 'ab'.repeat(32),
            name: 'talk.wav',
          },
        ],
      }),
    ),
    (e: unknown) =>
      e instanceof ProviderError &&
      e.errorClass === 'bad_request' &&
      /audio attachment talk\.wav cannot be sent: the Messages API takes images and PDFs, not audio/.test(
        e.message,
      ),
  );
  assert.equal(server.requests.length, before);
});

test('Message Batches: SIGKILL while polling, then a re-run collects the same batch; one batch, each request once, half price', async () => {
  const first = server.batches.length;
  states = (i) => (i === first ? [...Array(40).fill('in_progress'), 'ended'] : ['ended']);
  const keys = ids('bk', 10);
  const bench = writeBenchmark(join(tmp, 'bk.jsonl'), keys);
  const dir = join(tmp, 'batch-kill');
  const before = new Map(server.counts);
  const a = run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']);
  await until(() => server.batches.length > first && server.batches[first].polls >= 3, 30_000, 'polling');
  a.child.kill('SIGKILL');
  assert.equal((await a.done).signal, 'SIGKILL');
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 0);
  const saved = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
  assert.equal(saved.batches[0].id, server.batches[first].id, 'the batch id was saved before polling');
  const b = await run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']).done;
  assert.equal(b.code, 0, b.stderr);
  assert.equal(server.batches.length - first, 1, 'batches created');
  const batch = server.batches[first];
  assert.deepEqual(
    batch.requests.map((r) => r.customId),
    keys.map((_, i) => `${saved.batches[0].key}_r${i}`),
  );
  assert.deepEqual(
    keys.map((k) => (server.counts.get(k) ?? 0) - (before.get(k) ?? 0)),
    keys.map(() => 1),
  );
  const lines = rows(join(dir, 'responses.jsonl'));
  assert.deepEqual(lines.map((l) => l.metadata.record_id).sort(), keys);
  for (const l of lines) {
    assert.equal(l.eval_info.batch, batch.id);
    assert.deepEqual(l.output.candidate_response, { id: l.metadata.record_id });
    assert.equal(l.eval_info.cost, (1000 * 1 + 20 * 5) / 1e6 / 2);
  }
  assert.match(b.stderr, /collecting its results/);
});

test('Message Batches: killed between creating the batch and saving its id, the re-run finds it by the key in its custom ids', async () => {
  const first = server.batches.length;
  states = (i) => (i === first ? [...Array(8).fill('in_progress'), 'ended'] : ['ended']);
  const keys = ids('bf', 4);
  const bench = writeBenchmark(join(tmp, 'bf.jsonl'), keys);
  const dir = join(tmp, 'batch-find');
  const a = run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']);
  await until(() => server.batches.length > first && server.batches[first].polls >= 1, 30_000, 'polling');
  a.child.kill('SIGKILL');
  await a.done;
  // What batches.json holds when the kill lands after the create and before its id is saved.
  const file = join(dir, 'batches.json');
  const st = JSON.parse(readFileSync(file, 'utf8'));
  st.batches[0].id = null;
  st.batches[0].state = 'creating';
  writeFileSync(file, JSON.stringify(st));
  const b = await run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']).done;
  assert.equal(b.code, 0, b.stderr);
  assert.equal(server.batches.length - first, 1, 'batches created');
  assert.equal(rows(join(dir, 'responses.jsonl')).length, 4);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).batches[0].id, server.batches[first].id);
});

test('Message Batches: with two such batches still processing nothing is submitted (the run stops, one line); once they end the re-run tells ours by its custom ids', async () => {
  const first = server.batches.length;
  states = () => [...Array(1000).fill('in_progress'), 'ended'];
  const keys = ids('ba', 3);
  const bench = writeBenchmark(join(tmp, 'ba.jsonl'), keys);
  const dir = join(tmp, 'batch-ambiguous');
  const a = run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']);
  await until(() => server.batches.length > first && server.batches[first].polls >= 1, 30_000, 'polling');
  a.child.kill('SIGKILL');
  await a.done;
  // Another batch of three, created by someone else meanwhile.
  const other = await fetch(`${server.url}/v1/messages/batches`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      requests: ['o1', 'o2', 'o3'].map((id) => ({
        custom_id: id,
        params: {
          model: 'claude-haiku-4-5',
          max_tokens: 5,
          messages: [{ role: 'user', content: `[rid:${id}]` }],
        },
      })),
    }),
  });
  assert.equal(other.status, 200);
  const file = join(dir, 'batches.json');
  const st = JSON.parse(readFileSync(file, 'utf8'));
  st.batches[0].id = null;
  st.batches[0].state = 'creating';
  writeFileSync(file, JSON.stringify(st));
  const b = await run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']).done;
  assert.equal(b.code, 1);
  assert.match(
    b.stderr,
    /could not list the provider's batches to find one an interrupted run created \(key sob-[0-9a-f]{24}\): 2 batches still processing .*; nothing was submitted, so it is not billed twice/,
  );
  assert.equal(server.batches.length - first, 2, 'nothing submitted');
  // Both end (the other first, so it is listed first): ours is found by the key in its custom ids.
  for (const x of server.batches.slice(first)) x.polls = 10_000;
  const c = await run('anthropic:claude-haiku-4-5', bench, dir, ['--batch', '--batch-poll-ms', '20']).done;
  assert.equal(c.code, 0, c.stderr);
  assert.equal(server.batches.length - first, 2, 'nothing submitted');
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).batches[0].id, server.batches[first].id);
  assert.deepEqual(
    rows(join(dir, 'responses.jsonl'))
      .map((l) => l.metadata.record_id)
      .sort(),
    keys,
  );
});

test('a --base-url nothing listens on stops the run at once: unreachable, one line naming the URL', async () => {
  const res = await sobRun(
    { openaiBaseUrl: '', geminiBaseUrl: '' },
    'anthropic:claude-haiku-4-5',
    writeBenchmark(join(tmp, 'ur.jsonl'), ids('ur', 3)),
    join(tmp, 'unreachable'),
    { cwd: tmp, env, baseUrl: 'http://127.0.0.1:9', extra: ['--max-retries', '5'] },
  ).done;
  assert.equal(res.code, 1);
  assert.match(
    res.stderr,
    /anthropic:claude-haiku-4-5: cannot reach http:\/\/127\.0\.0\.1:9: .*; check --base-url/,
  );
  assert.equal(readLines(join(tmp, 'unreachable', 'responses.jsonl')).length, 0);
});

test('the price table: batch halves, Haiku 5.5 over 100k prompt tokens at its long rate, an unknown model has no cost', () => {
  assert.equal(anthropicCost('claude-opus-4-6', { input_tokens: 1e6, output_tokens: 1e6 }), 30);
  assert.equal(anthropicCost('claude-opus-4-6-20260205', { input_tokens: 1e6, output_tokens: 0 }, true), 2.5);
  assert.equal(
    anthropicCost('claude-sonnet-4-6', {
      input_tokens: 0,
      cache_creation_input_tokens: 3e6,
      cache_creation: { ephemeral_5m_input_tokens: 1e6, ephemeral_1h_input_tokens: 2e6 },
    }),
    3.75 + 12,
  );
  assert.equal(anthropicCost('claude-haiku-5-5', { input_tokens: 100_000, output_tokens: 0 }), 0.01);
  assert.equal(anthropicCost('claude-haiku-5-5', { input_tokens: 100_001, output_tokens: 0 }), 0.0500005);
  assert.equal(anthropicCost('claude-unknown-9', { input_tokens: 5, output_tokens: 5 }), undefined);
});
