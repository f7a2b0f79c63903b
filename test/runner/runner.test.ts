/**
 * The runner against the local protocol server through the real SDKs: where each scripted
 * fault lands (responses.jsonl, errors.jsonl with its class, or a stopped run), retries and
 * Retry-After, resume, Ctrl-C, torn lines, the manifest and the prompt.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { GoldBaseline } from '../../src/providers/baseline.ts';
import { GeminiProvider } from '../../src/providers/gemini.ts';
import { OpenAIProvider } from '../../src/providers/openai.ts';
import type { Provider } from '../../src/providers/types.ts';
import { DEFAULT_TEMPLATE, loadTemplate } from '../../src/runner/prompt.ts';
import { type RunOptions, runBenchmark } from '../../src/runner/run.ts';
import { runDirTargets } from '../../src/runner/run-dir.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows are JSON read back from files, checked field by field
type Row = any;

const KEY = 'sk-secret-test-key-9f3a';
let tmp: string;
let server: ProtocolServer;
/** Per-test script, keyed by record id. */
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-runner-'));
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

function benchmark(name: string, ids: string[]): string {
  const file = join(tmp, `${name}.jsonl`);
  const lines = ids.map((id) =>
    JSON.stringify({
      metadata: { record_id: id, schema_complexity: 'easy', source: 'text' },
      input: {
        context: `Record [rid:${id}] says the value is ${id}.`,
        question: 'What is the id?',
        json_schema: {
          type: 'object',
          properties: { id: { type: 'string' }, score: { type: 'number' } },
          required: ['id'],
        },
      },
      output: { ground_truth: { id, score: 1.5 } },
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function lines(file: string): Row[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

function openai(model = 'gpt-4.1-mini'): Provider {
  return new OpenAIProvider(model, { baseUrls: [server.openaiBaseUrl], apiKey: KEY });
}

function options(p: Provider, bench: string, runDir: string, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    provider: p,
    benchmark: bench,
    runDir,
    concurrency: 4,
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
    timeoutMs: 5000,
    maxRetries: 3,
    template: loadTemplate(),
    backoff: { baseMs: 20, maxMs: 200 },
    ...extra,
  };
}

const answer = (r: SeenRequest): Outcome => ({
  kind: 'answer',
  text: JSON.stringify({ id: r.key, score: 1.5 }),
});

test('a clean run writes every record in the reference shape and a complete manifest', async () => {
  script = answer;
  const ids = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
  const bench = benchmark('clean', ids);
  const dir = join(tmp, 'clean');
  const res = await runBenchmark(options(openai(), bench, dir));
  assert.equal(res.status, 'complete');
  assert.equal(res.progress.done, 6);
  const rows = lines(join(dir, 'responses.jsonl'));
  assert.deepEqual(rows.map((r) => r.metadata.record_id).sort(), ids);
  const r = rows.find((x) => x.metadata.record_id === 'a3')!;
  assert.deepEqual(Object.keys(r), ['format_version', 'metadata', 'input', 'output', 'eval_info']);
  assert.equal(r.metadata.model_id, 'openai:gpt-4.1-mini');
  assert.equal(r.metadata.source, 'text');
  assert.equal(r.input.question, 'What is the id?');
  assert.deepEqual(r.output.ground_truth, { id: 'a3', score: 1.5 });
  assert.deepEqual(r.output.candidate_response, { id: 'a3', score: 1.5 });
  assert.equal(r.output.raw_response, '{"id":"a3","score":1.5}');
  assert.equal(r.eval_info.attempts, 1);
  assert.equal(r.eval_info.finish_reason, 'stop');
  assert.ok(r.eval_info.input_tokens > 20, `input_tokens ${r.eval_info.input_tokens}`);
  assert.equal(r.eval_info.output_tokens, 6);
  assert.ok(r.eval_info.latency_ms >= 0);
  // A ground-truth float keeps its lexeme: 1.5 (and an int stays an int).
  assert.match(readFileSync(join(dir, 'responses.jsonl'), 'utf8'), /"attempts": 1, /);

  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(m.status, 'complete');
  assert.equal(m.model, 'openai:gpt-4.1-mini');
  assert.equal(m.provider, 'openai');
  assert.deepEqual(
    [
      m.settings.temperature,
      m.settings.max_tokens,
      m.settings.constrained,
      m.settings.concurrency,
      m.settings.timeout_ms,
      m.settings.max_retries,
    ],
    [0, 2048, false, 4, 5000, 3],
  );
  assert.equal(m.benchmark.sha256, createHash('sha256').update(readFileSync(bench)).digest('hex'));
  assert.equal(m.prompt.template, DEFAULT_TEMPLATE);
  assert.equal(m.prompt.sha256, createHash('sha256').update(DEFAULT_TEMPLATE).digest('hex'));
  assert.deepEqual(m.counts, { selected: 6, answered: 6, failed_this_session: 0, pending: 0 });
  assert.equal(m.tool_version, '0.1.0');
  assert.ok('git_commit' in m);
  assert.ok(Date.parse(m.started_at) <= Date.parse(m.ended_at));
  // The key went to the server and nowhere else.
  assert.ok(server.requests.some((q) => q.authorization === `Bearer ${KEY}`));
  for (const f of readdirSync(dir))
    assert.ok(!readFileSync(join(dir, f), 'utf8').includes(KEY), `${f} holds the key`);
  assert.deepEqual(runDirTargets(dir), [
    { file: join(dir, 'responses.jsonl'), modelDir: 'openai_gpt-4.1-mini', outDir: join(dir, 'evaluation') },
  ]);
  assert.equal(runDirTargets(tmp), null);
});

test('the prompt holds the context, the question and the pretty-printed schema, and the answer rules', () => {
  script = answer;
  const seen = server.requests.find((q) => q.key === 'a1')!;
  assert.ok(seen.userText.includes('Record [rid:a1] says the value is a1.'));
  assert.ok(seen.userText.includes('What is the id?'));
  assert.ok(seen.userText.includes('{\n  "type": "object",\n  "properties": {'));
  assert.match(seen.userText, /JSON object only: no markdown/);
  assert.match(seen.userText, /every required key/);
  assert.match(seen.userText, /use null/);
  assert.equal(
    seen.systemText,
    'You extract information from a document into JSON that follows a given JSON Schema.',
  );
  assert.equal(seen.body.temperature, 0);
  assert.equal(seen.body.max_tokens, 2048);
});

test('every scripted fault lands where it belongs, and a resume asks only the records that failed', async () => {
  const first = new Map<string, number>();
  script = (r) => {
    const k = r.key!;
    if (!first.has(k)) first.set(k, r.at);
    if (k === 'f429' && r.n === 1) return { kind: 'status', status: 429, retryAfter: '1' };
    if (k === 'f500' && r.n <= 2) return { kind: 'status', status: 500 };
    if (k === 'f503') return { kind: 'status', status: 503 };
    if (k === 'fslow' && r.n === 1) return { kind: 'slow', delayMs: 1500, text: '{"id": "late"}' };
    if (k === 'fdrop' && r.n === 1) return { kind: 'drop' };
    if (k === 'flength') return { kind: 'answer', text: '{"id": "fle', finish: 'length' };
    if (k === 'fnonjson') return { kind: 'answer', text: 'The id is fnonjson.' };
    if (k === 'ffenced') return { kind: 'answer', text: '```json\n{"id": "ffenced"}\n```' };
    if (k === 'fschema')
      return { kind: 'status', status: 400, message: "Invalid schema for response_format 'answer'" };
    if (k === 'frefuse') return { kind: 'refusal', text: 'I will not.' };
    return answer(r);
  };
  const ids = [
    'f429',
    'f500',
    'f503',
    'fslow',
    'fdrop',
    'flength',
    'fnonjson',
    'ffenced',
    'fschema',
    'frefuse',
    'fok',
  ];
  const bench = benchmark('faults', ids);
  const dir = join(tmp, 'faults');
  const res = await runBenchmark(
    options(openai(), bench, dir, { timeoutMs: 500, maxRetries: 2, constrained: true }),
  );
  assert.equal(res.status, 'incomplete');
  const rows = new Map(lines(join(dir, 'responses.jsonl')).map((r) => [r.metadata.record_id, r]));
  const row = (id: string) => rows.get(id) as Row;
  const errs = lines(join(dir, 'errors.jsonl'));
  const errsOf = (id: string) =>
    errs.filter((e) => e.record_id === id).map((e) => `${e.error_class}:${e.outcome}`);

  // 429: retried after the Retry-After second.
  assert.equal(row('f429').eval_info.attempts, 2);
  assert.deepEqual(errsOf('f429'), ['rate_limit:retrying']);
  const asked429 = server.requests.filter((q) => q.key === 'f429').map((q) => q.at);
  assert.ok(asked429[1] - asked429[0] >= 1000, `retried after ${asked429[1] - asked429[0]} ms`);
  // 500 twice, then an answer.
  assert.equal(row('f500').eval_info.attempts, 3);
  assert.deepEqual(errsOf('f500'), ['server:retrying', 'server:retrying']);
  // 503 on every attempt: 1 + 2 retries, then errors.jsonl only.
  assert.equal(rows.has('f503'), false);
  assert.deepEqual(errsOf('f503'), ['server:retrying', 'server:retrying', 'server:gave_up']);
  assert.equal(server.counts.get('f503'), 3);
  // Slower than the 500 ms timeout, then answered.
  assert.equal(row('fslow').eval_info.attempts, 2);
  assert.deepEqual(errsOf('fslow'), ['timeout:retrying']);
  // Dropped connection, then answered.
  assert.equal(row('fdrop').eval_info.attempts, 2);
  assert.deepEqual(errsOf('fdrop'), ['network:retrying']);
  // Cut at the token limit: the model's answer, recorded (and scored) as it is, logged as truncated, asked once.
  assert.equal(row('flength').eval_info.finish_reason, 'length');
  assert.equal(row('flength').eval_info.error_class, 'truncated');
  assert.equal(row('flength').output.candidate_response, '{"id": "fle');
  assert.deepEqual(errsOf('flength'), ['truncated:recorded']);
  assert.equal(server.counts.get('flength'), 1);
  // Non-JSON and code-fenced answers: candidate_response is the raw text, as the reference stores it.
  assert.equal(row('fnonjson').output.candidate_response, 'The id is fnonjson.');
  assert.equal(row('ffenced').output.candidate_response, '```json\n{"id": "ffenced"}\n```');
  assert.equal(row('ffenced').output.raw_response, '```json\n{"id": "ffenced"}\n```');
  // A refused schema is schema_rejected: written once with a null answer, not retried.
  assert.equal(row('fschema').output.candidate_response, null);
  assert.equal(row('fschema').output.raw_response, null);
  assert.equal(row('fschema').eval_info.schema_rejected, true);
  assert.match(row('fschema').eval_info.error, /^HTTP 400: 400 Invalid schema for response_format 'answer'/);
  assert.equal(row('fschema').eval_info.finish_reason, null);
  assert.deepEqual(errsOf('fschema'), ['schema_rejected:recorded']);
  assert.equal(server.counts.get('fschema'), 1);
  // A refusal is the model's answer, logged as refusal.
  assert.equal(row('frefuse').eval_info.finish_reason, 'refusal');
  assert.equal(row('frefuse').output.raw_response, 'I will not.');
  assert.deepEqual(errsOf('frefuse'), ['refusal:recorded']);
  assert.equal(rows.size, 10);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(manifest.status, 'incomplete');
  assert.deepEqual(manifest.counts, { selected: 11, answered: 10, failed_this_session: 1, pending: 1 });

  // Resume: only the record without a line is asked again (the refused schema is not).
  const before = new Map(server.counts);
  script = answer;
  const again = await runBenchmark(
    options(openai(), bench, dir, { timeoutMs: 500, maxRetries: 2, constrained: true }),
  );
  assert.equal(again.status, 'complete');
  assert.equal(again.progress.resumed, 10);
  for (const id of ids) {
    const extra = (server.counts.get(id) ?? 0) - (before.get(id) ?? 0);
    assert.equal(extra, id === 'f503' ? 1 : 0, `${id} asked ${extra} more times`);
  }
  const all = lines(join(dir, 'responses.jsonl')).map((r) => r.metadata.record_id);
  assert.equal(all.length, 11);
  assert.equal(new Set(all).size, 11);
});

test('--max-retries 0 means one attempt: a 500 is given up at once', async () => {
  script = (r) => (r.key === 'm1' ? { kind: 'status', status: 500 } : answer(r));
  const dir = join(tmp, 'noretry');
  const res = await runBenchmark(
    options(openai(), benchmark('noretry', ['m1', 'm2']), dir, { maxRetries: 0 }),
  );
  assert.equal(res.status, 'incomplete');
  assert.equal(server.counts.get('m1'), 1);
  assert.deepEqual(
    lines(join(dir, 'errors.jsonl')).map((e) => [e.record_id, e.error_class, e.outcome, e.attempt]),
    [['m1', 'server', 'gave_up', 1]],
  );
});

test('a 401 stops the run at once with one clear line and status failed', async () => {
  script = (r) => ({
    kind: 'status',
    status: 401,
    message: `Incorrect API key provided: sk-sec***9f3a (or ${KEY})`,
    delayMs: r.n === 1 ? 30 : 0,
  });
  const ids = Array.from({ length: 40 }, (_, i) => `auth${i}`);
  const dir = join(tmp, 'auth');
  const totalBefore = server.total;
  await assert.rejects(
    runBenchmark(options(openai(), benchmark('auth', ids), dir, { concurrency: 2 })),
    (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.equal(e.message.split('\n').length, 1);
      assert.match(
        e.message,
        /openai:gpt-4\.1-mini: authentication failed \(HTTP 401\); check the API key in the environment \(OPENAI_API_KEY\)/,
      );
      assert.ok(!e.message.includes(KEY));
      return true;
    },
  );
  assert.ok(server.total - totalBefore <= 2, `${server.total - totalBefore} requests after the first 401`);
  assert.equal(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status, 'failed');
  assert.equal(lines(join(dir, 'responses.jsonl')).length, 0);
  const authErrors = lines(join(dir, 'errors.jsonl'));
  assert.ok(authErrors.length >= 1);
  assert.ok(authErrors.every((e) => e.error_class === 'auth' && e.outcome === 'stopped'));
  // The key, and the masked key the server echoed, are cut out of errors.jsonl.
  assert.equal(authErrors[0].message, 'HTTP 401: 401 Incorrect API key provided: [redacted] (or [redacted])');
  assert.ok(!readFileSync(join(dir, 'errors.jsonl'), 'utf8').includes('sk-'));
});

test('Ctrl-C (abort) stops cleanly: whole lines only, status interrupted, and the resume finishes without asking twice', async () => {
  script = (r) => ({ kind: 'answer', text: JSON.stringify({ id: r.key }), delayMs: 40 });
  const ids = Array.from({ length: 30 }, (_, i) => `c${i}`);
  const bench = benchmark('ctrlc', ids);
  const dir = join(tmp, 'ctrlc');
  const ctl = new AbortController();
  const res = await runBenchmark(
    options(openai(), bench, dir, {
      concurrency: 3,
      signal: ctl.signal,
      onProgress: (p) => {
        if (p.done >= 5) ctl.abort();
      },
    }),
  );
  assert.equal(res.status, 'interrupted');
  const text = readFileSync(join(dir, 'responses.jsonl'), 'utf8');
  assert.ok(text.endsWith('\n'));
  const written = lines(join(dir, 'responses.jsonl')).map((r) => r.metadata.record_id);
  assert.ok(written.length >= 5 && written.length < 30, `${written.length} written`);
  assert.equal(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status, 'interrupted');
  assert.equal(lines(join(dir, 'errors.jsonl')).length, 0, 'an interrupted request is not an error');
  const before = new Map(server.counts);
  const done = await runBenchmark(options(openai(), bench, dir, { concurrency: 3 }));
  assert.equal(done.status, 'complete');
  for (const id of written) assert.equal(server.counts.get(id), before.get(id), `${id} asked again`);
  const all = lines(join(dir, 'responses.jsonl')).map((r) => r.metadata.record_id);
  assert.equal(all.length, 30);
  assert.equal(new Set(all).size, 30);
});

test('a torn last line is dropped on resume and its record asked again', async () => {
  script = answer;
  const bench = benchmark('torn', ['t1', 't2', 't3']);
  const dir = join(tmp, 'torn');
  await runBenchmark(options(openai(), bench, dir, { limit: 2 }));
  const file = join(dir, 'responses.jsonl');
  const whole = readFileSync(file, 'utf8');
  const rows = whole.trim().split('\n');
  // Simulate a crash in the middle of writing the second line.
  writeFileSync(file, `${rows[0]}\n${rows[1].slice(0, 40)}`);
  const lost = JSON.parse(rows[1]).metadata.record_id as string;
  const askedBefore = server.counts.get(lost) ?? 0;
  const res = await runBenchmark(options(openai(), bench, dir, { limit: 2 }));
  assert.equal(res.status, 'complete');
  assert.equal(res.progress.resumed, 1);
  assert.equal(server.counts.get(lost), askedBefore + 1);
  const after = lines(file)
    .map((r) => r.metadata.record_id)
    .sort();
  assert.deepEqual(after, ['t1', 't2']);
  // errors.jsonl with a torn tail is repaired too: appends start on a new line.
  appendFileSync(join(dir, 'errors.jsonl'), '{"record_id": "t');
  await runBenchmark(options(openai(), bench, dir, { limit: 3 }));
  assert.equal(readFileSync(join(dir, 'errors.jsonl'), 'utf8'), '');
  assert.deepEqual(
    lines(file)
      .map((r) => r.metadata.record_id)
      .sort(),
    ['t1', 't2', 't3'],
  );
});

test('resuming a run directory with another model or settings is refused', async () => {
  script = answer;
  const bench = benchmark('mismatch', ['x1']);
  const dir = join(tmp, 'mismatch');
  await runBenchmark(options(openai(), bench, dir));
  await assert.rejects(
    runBenchmark(options(openai('gpt-4o'), bench, dir)),
    /holds a run with a different model/,
  );
  await assert.rejects(
    runBenchmark(options(openai(), bench, dir, { temperature: 0.7 })),
    /different temperature/,
  );
});

test('--prompt-template replaces the prompt; its text and hash go into the manifest', async () => {
  script = answer;
  const tpl = join(tmp, 'tpl.txt');
  writeFileSync(
    tpl,
    'Q: {{question}}\nDoc: {{context}}\nSchema: {{schema}}\n(id {{record_id}}, literal {{other}})',
  );
  const dir = join(tmp, 'tpl');
  const bench = benchmark('tpl', ['p1']);
  await runBenchmark(options(openai(), bench, dir, { template: loadTemplate(tpl) }));
  const seen = server.requests.filter((q) => q.key === 'p1').at(-1)!;
  assert.equal(seen.systemText, '');
  assert.ok(
    seen.userText.startsWith(
      'Q: What is the id?\nDoc: Record [rid:p1] says the value is p1.\nSchema: {\n  "type"',
    ),
  );
  assert.ok(seen.userText.endsWith('(id p1, literal {{other}})'));
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(m.prompt.file, tpl);
  assert.equal(m.prompt.template, readFileSync(tpl, 'utf8'));
  assert.equal(m.prompt.sha256, createHash('sha256').update(readFileSync(tpl)).digest('hex'));
});

test('a gemini run goes through the same runner: 429 then an answer, a 503 given up', async () => {
  script = (r) => {
    if (r.key === 'g1' && r.n === 1) return { kind: 'status', status: 429, retryAfter: '0' };
    if (r.key === 'g2') return { kind: 'status', status: 503 };
    return answer(r);
  };
  const dir = join(tmp, 'gemini');
  const p = new GeminiProvider('gemini-2.5-flash', { baseUrl: server.geminiBaseUrl, apiKey: KEY });
  const res = await runBenchmark(options(p, benchmark('gem', ['g1', 'g2', 'g3']), dir, { maxRetries: 1 }));
  assert.equal(res.status, 'incomplete');
  const rows = new Map(lines(join(dir, 'responses.jsonl')).map((r) => [r.metadata.record_id, r]));
  const row = (id: string) => rows.get(id) as Row;
  assert.deepEqual([...rows.keys()].sort(), ['g1', 'g3']);
  assert.equal(row('g1').eval_info.attempts, 2);
  assert.equal(row('g3').metadata.model_id, 'gemini:gemini-2.5-flash');
  assert.deepEqual(
    lines(join(dir, 'errors.jsonl'))
      .map((e) => `${e.record_id}:${e.error_class}:${e.outcome}`)
      .sort(),
    ['g1:rate_limit:retrying', 'g2:server:gave_up', 'g2:server:retrying'],
  );
  for (const f of readdirSync(dir)) assert.ok(!readFileSync(join(dir, f), 'utf8').includes(KEY));
});

test('--cache: a second run asks nothing already answered, errors are never cached, and only output-changing settings miss', async () => {
  script = (r) => (r.key === 'h3' && r.n === 1 ? { kind: 'status', status: 500 } : answer(r));
  const bench = benchmark('cache', ['h1', 'h2', 'h3']);
  const cacheDir = join(tmp, 'cache');
  const first = await runBenchmark(
    options(openai(), bench, join(tmp, 'cache-1'), { cacheDir, maxRetries: 0 }),
  );
  assert.equal(first.status, 'incomplete');
  const asked = () => ['h1', 'h2', 'h3'].map((k) => server.counts.get(k) ?? 0);
  assert.deepEqual(asked(), [1, 1, 1]);
  // Another run dir, other concurrency and timeout: h1, h2 come from the cache; h3 (a 500) was not cached.
  const second = await runBenchmark(
    options(openai(), bench, join(tmp, 'cache-2'), {
      cacheDir,
      maxRetries: 0,
      concurrency: 1,
      timeoutMs: 9000,
    }),
  );
  assert.equal(second.status, 'complete');
  assert.deepEqual(asked(), [1, 1, 2]);
  const rows = lines(join(tmp, 'cache-2', 'responses.jsonl'));
  const byId = new Map(rows.map((r) => [r.metadata.record_id, r]));
  assert.equal(byId.get('h1').eval_info.cached, true);
  assert.equal(byId.get('h1').eval_info.latency_ms, 0);
  assert.deepEqual(byId.get('h1').output.candidate_response, { id: 'h1', score: 1.5 });
  assert.equal(byId.get('h3').eval_info.cached, undefined);
  // A different temperature changes the answer: a miss.
  await runBenchmark(options(openai(), bench, join(tmp, 'cache-3'), { cacheDir, temperature: 0.5 }));
  assert.deepEqual(asked(), [2, 2, 3]);
  // Baselines are never cached: the cache folder does not grow.
  const count = () =>
    readdirSync(cacheDir, { recursive: true }).filter((f) => String(f).endsWith('.json')).length;
  const entries = count();
  assert.equal(entries, 6);
  await runBenchmark(options(new GoldBaseline(), bench, join(tmp, 'cache-gold'), { cacheDir }));
  assert.equal(count(), entries);
});

test('a 429 with Retry-After holds every new request for that long, not only the record it answered', async () => {
  script = (r) =>
    r.key === 'w0' && r.n === 1 ? { kind: 'status', status: 429, retryAfter: '1' } : answer(r);
  const ids = Array.from({ length: 8 }, (_, i) => `w${i}`);
  const start = server.requests.length;
  const res = await runBenchmark(
    options(openai(), benchmark('hold', ids), join(tmp, 'hold'), { concurrency: 2 }),
  );
  assert.equal(res.status, 'complete');
  const seen = server.requests.slice(start);
  const t429 = seen.find((q) => q.key === 'w0')!.at;
  const during = seen.filter((q) => q.at > t429 + 100 && q.at < t429 + 900);
  assert.deepEqual(
    during.map((q) => q.key),
    [],
  );
  assert.ok(seen.filter((q) => q.at >= t429 + 1000).length >= 6, 'the rest went out after the pause');
});
