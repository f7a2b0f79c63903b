/**
 * Providers against the real SDKs talking HTTP to the local protocol server: what is sent, what
 * comes back, and how each scripted fault is classified.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parsePyJson } from '../../src/core/pyjson.ts';
import { GoldBaseline, SkeletonBaseline } from '../../src/providers/baseline.ts';
import { GeminiProvider } from '../../src/providers/gemini.ts';
import { OpenAIProvider } from '../../src/providers/openai.ts';
import { ReplayProvider } from '../../src/providers/replay.ts';
import { ProviderError, type ProviderRequest } from '../../src/providers/types.ts';
import { type Outcome, type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';

const SCHEMA = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

function request(key: string, extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    recordId: key,
    system: 'be brief',
    user: `Context: [rid:${key}]`,
    schema: SCHEMA,
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
    signal: new AbortController().signal,
    groundTruth: null,
    ...extra,
  };
}

/** Scripts by key prefix: `s429-x` answers 429 with Retry-After 2, and so on. */
function scripted(r: { key: string | undefined }): Outcome {
  const k = r.key ?? '';
  if (k.startsWith('s429')) return { kind: 'status', status: 429, retryAfter: '2', message: 'slow down' };
  if (k.startsWith('s500')) return { kind: 'status', status: 500 };
  if (k.startsWith('s503')) return { kind: 'status', status: 503 };
  if (k.startsWith('s401')) return { kind: 'status', status: 401, message: 'Incorrect API key provided' };
  if (k.startsWith('s400schema'))
    return {
      kind: 'status',
      status: 400,
      message: "Invalid schema for response_format 'answer': additionalProperties",
    };
  if (k.startsWith('s400')) return { kind: 'status', status: 400, message: 'messages: too long' };
  if (k.startsWith('drop')) return { kind: 'drop' };
  if (k.startsWith('length')) return { kind: 'answer', text: '{"id": "len', finish: 'length' };
  if (k.startsWith('refuse')) return { kind: 'refusal', text: 'I cannot help with that.' };
  if (k.startsWith('fenced')) return { kind: 'answer', text: '```json\n{"id": "x"}\n```' };
  return { kind: 'answer', text: JSON.stringify({ id: k }), usage: { input: 11, output: 7 } };
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ProviderError, `expected a ProviderError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the request to fail');
}

let server: ProtocolServer;
before(async () => {
  server = await startProtocolServer({ script: scripted });
});
after(() => server.close());

describe('openai provider', () => {
  test('sends temperature 0, max_tokens 2048, system + user messages and reads text and usage', async () => {
    const p = new OpenAIProvider('gpt-4.1-mini', { baseUrls: [server.openaiBaseUrl], apiKey: 'sk-test-123' });
    const res = await p.complete(request('ok1'));
    assert.equal(res.text, '{"id":"ok1"}');
    assert.equal(res.inputTokens, 11);
    assert.equal(res.outputTokens, 7);
    assert.equal(res.finishReason, 'stop');
    const seen = server.requests.find((r) => r.key === 'ok1')!;
    assert.equal(seen.body.temperature, 0);
    assert.equal(seen.body.max_tokens, 2048);
    assert.equal(seen.body.response_format, undefined);
    assert.equal(seen.systemText, 'be brief');
    assert.equal(seen.authorization, 'Bearer sk-test-123');
  });

  test('--constrained sends response_format json_schema with the record schema', async () => {
    const p = new OpenAIProvider('gpt-4.1-mini', { baseUrls: [server.openaiBaseUrl], apiKey: 'k' });
    await p.complete(request('ok2', { constrained: true }));
    const seen = server.requests.find((r) => r.key === 'ok2')!;
    assert.deepEqual(seen.body.response_format, {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: SCHEMA, strict: true },
    });
  });

  test('a reasoning model gets max_completion_tokens and the lowest effort, no temperature', async () => {
    const p = new OpenAIProvider('gpt-5-mini', { baseUrls: [server.openaiBaseUrl], apiKey: 'k' });
    await p.complete(request('ok3'));
    const seen = server.requests.find((r) => r.key === 'ok3')!;
    assert.equal(seen.body.max_completion_tokens, 2048);
    assert.equal(seen.body.reasoning_effort, 'minimal');
    assert.equal(seen.body.temperature, undefined);
  });

  test('faults are classified: 429 rate_limit with Retry-After 2 s, 500/503 server, 401 auth, 400 bad_request, schema 400 schema_rejected, dropped connection network', async () => {
    const p = new OpenAIProvider('m', { baseUrls: [server.openaiBaseUrl], apiKey: 'k' });
    const e429 = await failure(p.complete(request('s429a')));
    assert.equal(e429.errorClass, 'rate_limit');
    assert.equal(e429.retryAfterMs, 2000);
    assert.equal((await failure(p.complete(request('s500a')))).errorClass, 'server');
    assert.equal((await failure(p.complete(request('s503a')))).errorClass, 'server');
    assert.equal((await failure(p.complete(request('s401a')))).errorClass, 'auth');
    assert.equal(
      (await failure(p.complete(request('s400a', { constrained: true })))).errorClass,
      'bad_request',
    );
    assert.equal(
      (await failure(p.complete(request('s400schema1', { constrained: true })))).errorClass,
      'schema_rejected',
    );
    assert.equal((await failure(p.complete(request('drop1')))).errorClass, 'network');
    // The SDK did not retry: exactly one request per key.
    for (const k of ['s429a', 's500a', 's503a', 's401a', 'drop1']) assert.equal(server.counts.get(k), 1, k);
  });

  test('finish_reason length and a refusal come back as finish reasons, not errors', async () => {
    const p = new OpenAIProvider('m', { baseUrls: [server.openaiBaseUrl], apiKey: 'k' });
    const cut = await p.complete(request('length1'));
    assert.equal(cut.finishReason, 'length');
    assert.equal(cut.text, '{"id": "len');
    const no = await p.complete(request('refuse1'));
    assert.equal(no.finishReason, 'refusal');
    assert.equal(no.text, 'I cannot help with that.');
  });

  test('several base URLs: a failing endpoint is taken out and requests go to the healthy one', async () => {
    const bad = await startProtocolServer({ script: () => ({ kind: 'status', status: 503 }) });
    try {
      const p = new OpenAIProvider('m', {
        baseUrls: [bad.openaiBaseUrl, server.openaiBaseUrl],
        apiKey: 'k',
        pool: { cooldownMs: 60_000 },
      });
      let failures = 0;
      let answered = 0;
      for (let i = 0; i < 20; i++) {
        try {
          await p.complete(request(`pool${i}`));
          answered++;
        } catch {
          failures++;
        }
      }
      assert.equal(bad.total, 1, 'the failing endpoint got one request, then was taken out');
      assert.equal(failures, 1);
      assert.equal(answered, 19);
      assert.equal(p.pool.endpoints[1].requests, 19);
    } finally {
      await bad.close();
    }
  });
});

describe('gemini provider', () => {
  const make = (model = 'gemini-2.5-flash') =>
    new GeminiProvider(model, { baseUrl: server.geminiBaseUrl, apiKey: 'g-key-1' });

  test('sends temperature 0, maxOutputTokens 2048, thinking off, the system instruction, and reads text and usage', async () => {
    const res = await make().complete(request('gok1'));
    assert.equal(res.text, '{"id":"gok1"}');
    assert.equal(res.inputTokens, 11);
    assert.equal(res.outputTokens, 7);
    assert.equal(res.finishReason, 'stop');
    const seen = server.requests.find((r) => r.key === 'gok1')!;
    assert.equal(seen.protocol, 'gemini');
    assert.equal(seen.model, 'gemini-2.5-flash');
    const cfg = seen.body.generationConfig as Record<string, unknown>;
    assert.equal(cfg.temperature, 0);
    assert.equal(cfg.maxOutputTokens, 2048);
    assert.deepEqual(cfg.thinkingConfig, { thinkingBudget: 0 });
    assert.equal(cfg.responseMimeType, undefined);
    assert.equal(seen.systemText, 'be brief');
    assert.equal(seen.authorization, 'g-key-1');
  });

  test('--constrained sends responseMimeType application/json and the schema', async () => {
    await make().complete(request('gok2', { constrained: true }));
    const cfg = server.requests.find((r) => r.key === 'gok2')!.body.generationConfig as Record<
      string,
      unknown
    >;
    assert.equal(cfg.responseMimeType, 'application/json');
    assert.deepEqual(cfg.responseJsonSchema, SCHEMA);
  });

  test('faults are classified the same way, with Retry-After kept', async () => {
    const p = make();
    const e429 = await failure(p.complete(request('s429g')));
    assert.equal(e429.errorClass, 'rate_limit');
    assert.equal(e429.retryAfterMs, 2000);
    assert.equal((await failure(p.complete(request('s500g')))).errorClass, 'server');
    assert.equal((await failure(p.complete(request('s503g')))).errorClass, 'server');
    assert.equal((await failure(p.complete(request('s401g')))).errorClass, 'auth');
    assert.equal(
      (await failure(p.complete(request('s400schemag', { constrained: true })))).errorClass,
      'schema_rejected',
    );
    assert.equal((await failure(p.complete(request('s400g')))).errorClass, 'bad_request');
    assert.equal((await failure(p.complete(request('dropg')))).errorClass, 'network');
    for (const k of ['s429g', 's500g', 's503g', 'dropg']) assert.equal(server.counts.get(k), 1, k);
  });

  test('MAX_TOKENS is finish reason length, SAFETY is refusal', async () => {
    const p = make();
    assert.equal((await p.complete(request('lengthg'))).finishReason, 'length');
    assert.equal((await p.complete(request('refuseg'))).finishReason, 'refusal');
  });
});

describe('baselines and replay', () => {
  test('gold answers the ground truth with each number lexeme kept (1.0 stays a float)', async () => {
    const gt = parsePyJson('{"a": 1.0, "b": 2, "c": ["é", null]}');
    const res = await new GoldBaseline().complete(request('g', { groundTruth: gt }));
    assert.equal(res.text, '{"a": 1.0, "b": 2, "c": ["é", null]}');
  });

  test('skeleton answers from the schema alone', async () => {
    const res = await new SkeletonBaseline().complete(request('s'));
    assert.deepEqual(JSON.parse(res.text), { id: '' });
  });

  test('replay answers by record id: raw_response first, else the candidate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sob-replay-'));
    try {
      const file = join(dir, 'r.jsonl');
      writeFileSync(
        file,
        [
          '{"metadata": {"record_id": "a"}, "output": {"candidate_response": {"x": 1.0}}}',
          '{"metadata": {"record_id": "b"}, "output": {"candidate_response": {"x": 2}, "raw_response": "```{\\"x\\": 2}```"}, "eval_info": {"input_tokens": 5}}',
          '{"metadata": {"record_id": "c"}, "output": {"candidate_response": "not json"}}',
        ].join('\n'),
      );
      const p = new ReplayProvider(file);
      assert.equal((await p.complete(request('a'))).text, '{"x": 1.0}');
      const b = await p.complete(request('b'));
      assert.equal(b.text, '```{"x": 2}```');
      assert.equal(b.inputTokens, 5);
      assert.equal((await p.complete(request('c'))).text, 'not json');
      assert.equal((await failure(p.complete(request('zzz')))).errorClass, 'bad_request');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
