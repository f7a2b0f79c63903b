/**
 * Provider answers that are not answers are errors (issue 9, item 8), through `sob run` against
 * the local protocol server: non-answers classified and retried, a size cap, fail-fast on an
 * unreachable --base-url, a 404 model named, no MaxListenersExceededWarning, --cache keyed by
 * endpoint, secrets in --base-url kept out of every file and log, HF_TOKEN only to Hugging Face.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { authHeaders, downloadSobParquet } from '../../sources/sob-rows.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { readLines, rows, sobRun, writeBenchmark } from '../runner/sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome = (r) => ({ kind: 'answer', text: JSON.stringify({ id: r.key }) });
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-answers-'));
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-answers-test', GEMINI_API_KEY: 'gem-answers-test' };
const good = (r: SeenRequest): Outcome => ({ kind: 'answer', text: JSON.stringify({ id: r.key }) });

function run(model: string, bench: string, dir: string, extra: string[] = [], baseUrl?: string) {
  return sobRun(server, model, bench, dir, { cwd: tmp, env, extra, baseUrl }).done;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

test('a 200 that is not an answer (content null, no choices, no message, not JSON, an HTML page; no Gemini candidates or text) is a classified error, retried, never scored', async () => {
  const openaiBad: Record<string, Outcome> = {
    'o-null': {
      kind: 'raw',
      body: '{"choices": [{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}',
    },
    'o-nochoices': { kind: 'raw', body: '{"id": "x", "object": "chat.completion", "choices": []}' },
    'o-nomessage': { kind: 'raw', body: '{"choices": [{"index": 0, "finish_reason": "stop"}]}' },
    'o-notjson': { kind: 'raw', body: '{"choices": [{"message": {"content": "{\\"id' },
    'o-html': { kind: 'raw', contentType: 'text/html', body: '<html><body>Bad gateway</body></html>' },
  };
  const geminiBad: Record<string, Outcome> = {
    'g-nocand': { kind: 'raw', body: '{"usageMetadata": {"promptTokenCount": 3}}' },
    'g-noparts': {
      kind: 'raw',
      body: '{"candidates": [{"content": {"role": "model"}, "finishReason": "STOP"}]}',
    },
    'g-notjson': { kind: 'raw', body: '{"candidates": [' },
  };
  script = (r) => {
    const bad = { ...openaiBad, ...geminiBad }[r.key ?? ''];
    return bad && r.n === 1 ? bad : good(r);
  };
  for (const [model, cases] of [
    ['openai:m', openaiBad],
    ['gemini:gemini-2.5-flash', geminiBad],
  ] as const) {
    const ids = [...Object.keys(cases), `${model[0]}-fine`];
    const dir = join(tmp, `not-answers-${model[0]}`);
    const res = await run(model, writeBenchmark(join(tmp, `na-${model[0]}.jsonl`), ids), dir);
    assert.equal(res.code, 0, res.stderr);
    const answers = new Map(rows(join(dir, 'responses.jsonl')).map((r) => [r.metadata.record_id, r]));
    assert.equal(answers.size, ids.length);
    for (const id of Object.keys(cases)) {
      const row = answers.get(id);
      assert.deepEqual(row.output.candidate_response, { id }, id);
      assert.equal(row.eval_info.attempts, 2, id);
      assert.equal(server.counts.get(id), 2, id);
    }
    const errs = rows(join(dir, 'errors.jsonl'));
    assert.deepEqual(
      errs.map((e) => `${e.record_id}:${e.error_class}:${e.outcome}`).sort(),
      Object.keys(cases)
        .map((id) => `${id}:invalid_response:retrying`)
        .sort(),
    );
  }
});

test('a reply over the size cap (default 16 MB; --max-response-mb) is a too_large error, not retried, not read whole', async () => {
  script = (r) =>
    r.key === 'big-stream'
      ? { kind: 'huge', bytes: 24 * 1024 * 1024 }
      : r.key === 'big-declared'
        ? { kind: 'huge', bytes: 3 * 1024 * 1024, declareLength: true }
        : good(r);
  const dir = join(tmp, 'huge');
  const res = await run('openai:m', writeBenchmark(join(tmp, 'huge.jsonl'), ['big-stream', 'ok-1']), dir);
  assert.equal(res.code, 1, res.stderr);
  assert.match(res.stderr.trim().split('\n').at(-1)!, /^sob: 1 record failed every attempt/);
  assert.deepEqual(
    rows(join(dir, 'errors.jsonl')).map((e) => [e.record_id, e.error_class, e.outcome]),
    [['big-stream', 'too_large', 'gave_up']],
  );
  assert.match(rows(join(dir, 'errors.jsonl'))[0].message, /larger than the 16 MB cap/);
  assert.equal(server.counts.get('big-stream'), 1);
  assert.deepEqual(
    readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l).metadata.record_id),
    ['ok-1'],
  );
  const dir2 = join(tmp, 'huge-declared');
  const res2 = await run('openai:m', writeBenchmark(join(tmp, 'huge2.jsonl'), ['big-declared']), dir2, [
    '--max-response-mb',
    '1',
  ]);
  assert.equal(res2.code, 1, res2.stderr);
  const e2 = rows(join(dir2, 'errors.jsonl'));
  assert.deepEqual(
    e2.map((e) => [e.error_class, e.outcome]),
    [['too_large', 'gave_up']],
  );
  assert.match(e2[0].message, /larger than the 1 MB cap \(Content-Length 3145728\)/);
});

test('an unreachable --base-url fails fast with one line naming the URL and the cause; nothing is retried', async () => {
  const port = await closedPort();
  const bench = writeBenchmark(join(tmp, 'unreach.jsonl'), ['u1', 'u2', 'u3']);
  for (const [model, url] of [
    ['openai:m', `http://127.0.0.1:${port}/v1`],
    ['gemini:gemini-2.5-flash', `http://127.0.0.1:${port}`],
  ]) {
    const t0 = Date.now();
    const res = await run(model, bench, join(tmp, `unreach-${model[0]}`), ['--retry-base-ms', '1000'], url);
    const ms = Date.now() - t0;
    assert.equal(res.code, 1, res.stderr);
    assert.equal(
      res.stderr.trim(),
      `sob: ${model}: cannot reach ${url}: connection refused (ECONNREFUSED); check --base-url`,
    );
    // No backoff pauses: a retried refusal would take at least 1 s (first pause), up to minutes.
    assert.ok(ms < 8000, `${ms} ms`);
    const errs = rows(join(tmp, `unreach-${model[0]}`, 'errors.jsonl'));
    assert.ok(errs.length >= 1 && errs.length <= 3, `${errs.length} errors`);
    assert.ok(errs.every((e) => e.error_class === 'unreachable' && e.outcome === 'stopped'));
  }
});

test('a --base-url on a port fetch blocks (6000) fails fast too, naming the URL, instead of retrying "Connection error."', async () => {
  const bench = writeBenchmark(join(tmp, 'badport.jsonl'), ['p1', 'p2', 'p3']);
  const url = 'http://127.0.0.1:6000/v1';
  const t0 = Date.now();
  const res = await run('openai:m', bench, join(tmp, 'badport'), ['--retry-base-ms', '1000'], url);
  const ms = Date.now() - t0;
  assert.equal(res.code, 1, res.stderr);
  assert.equal(
    res.stderr.trim(),
    `sob: openai:m: cannot reach ${url}: a port fetch never connects to (the Fetch standard's blocked ports) (BAD_PORT); check --base-url`,
  );
  // Before: 3 records x 6 attempts classified `network`, about 24 s of backoff.
  assert.ok(ms < 8000, `${ms} ms`);
  const errs = rows(join(tmp, 'badport', 'errors.jsonl'));
  assert.ok(errs.length >= 1 && errs.length <= 3, `${errs.length} errors`);
  assert.ok(errs.every((e) => e.error_class === 'unreachable' && e.outcome === 'stopped'));
});

test('a 404 model names the model in one line and stops the run', async () => {
  script = (r) =>
    r.model === 'nope-model' || r.path.includes('nope-model')
      ? {
          kind: 'status',
          status: 404,
          message: 'The model `nope-model` does not exist or you do not have access to it.',
        }
      : good(r);
  const ids = Array.from({ length: 20 }, (_, i) => `nf${i}`);
  const bench = writeBenchmark(join(tmp, 'nf.jsonl'), ids);
  for (const model of ['openai:nope-model', 'gemini:nope-model']) {
    const before = server.total;
    const res = await run(model, bench, join(tmp, `nf-${model[0]}`), ['--concurrency', '2']);
    assert.equal(res.code, 1, res.stderr);
    const line = res.stderr.trim();
    assert.equal(line.split('\n').length, 1, line);
    assert.match(
      line,
      new RegExp(
        `^sob: ${model}: HTTP 404 from http://127\\.0\\.0\\.1:\\d+(/v1)?: no model "nope-model" there`,
      ),
    );
    assert.ok(server.total - before <= 2, `${server.total - before} requests`);
  }
});

test('no MaxListenersExceededWarning at --concurrency 64 with retries and pauses', async () => {
  script = (r) =>
    r.n === 1 && Number(r.key?.slice(2)) % 3 === 0
      ? { kind: 'status', status: 500 }
      : { kind: 'answer', text: JSON.stringify({ id: r.key }), delayMs: 30 };
  const ids = Array.from({ length: 300 }, (_, i) => `ml${i}`);
  const dir = join(tmp, 'listeners');
  const res = await run('openai:m', writeBenchmark(join(tmp, 'ml.jsonl'), ids), dir, [
    '--concurrency',
    '64',
    '--retry-base-ms',
    '100',
  ]);
  assert.equal(res.code, 0, res.stderr);
  assert.doesNotMatch(res.stderr, /MaxListenersExceededWarning|EventTarget memory leak/);
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 300);
});

test('--cache keys include the endpoint: the same model name on another server is asked, not served from the cache', async () => {
  script = good;
  const other = await startProtocolServer({ script: good });
  try {
    const bench = writeBenchmark(join(tmp, 'cache.jsonl'), ['c1', 'c2']);
    const cache = join(tmp, 'cache');
    const a = await run('openai:m', bench, join(tmp, 'cache-a'), ['--cache', cache]);
    assert.equal(a.code, 0, a.stderr);
    const b = await run('openai:m', bench, join(tmp, 'cache-b'), ['--cache', cache], other.openaiBaseUrl);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(other.total, 2, 'the other server was asked both records');
    // The same server again: both from the cache.
    const before = server.total;
    const c = await run('openai:m', bench, join(tmp, 'cache-c'), ['--cache', cache]);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(server.total, before);
    assert.ok(rows(join(tmp, 'cache-c', 'responses.jsonl')).every((r) => r.eval_info.cached === true));
  } finally {
    await other.close();
  }
});

test('secrets in --base-url (user:pass@, ?api-key=) are sent, and never reach the manifest, response lines, errors or logs', async () => {
  const PASS = 'pa55-w0rd-zq';
  const KEY = 'k3y-secret-991';
  const port = new URL(server.url).port;
  const url = `http://alice:${PASS}@127.0.0.1:${port}/v1?api-key=${KEY}&api-version=2024-10-21`;
  script = (r) =>
    r.key === 'sec-500' && r.n === 1
      ? { kind: 'status', status: 500, message: `upstream ${url} failed` }
      : good(r);
  const dir = join(tmp, 'secrets');
  const res = await run(
    'openai:m',
    writeBenchmark(join(tmp, 'sec.jsonl'), ['sec-1', 'sec-500']),
    dir,
    [],
    url,
  );
  assert.equal(res.code, 0, res.stderr);
  const seen = server.requests.filter((q) => q.key === 'sec-1');
  assert.equal(seen.at(-1)!.authorization, `Basic ${Buffer.from(`alice:${PASS}`).toString('base64')}`);
  assert.equal(seen.at(-1)!.query, `api-key=${KEY}&api-version=2024-10-21`);
  const texts = [res.stdout, res.stderr];
  for (const f of readdirSync(dir, { recursive: true }).map(String))
    if (statSync(join(dir, f)).isFile()) texts.push(readFileSync(join(dir, f), 'utf8'));
  for (const t of texts) {
    assert.ok(!t.includes(PASS) && !t.includes(KEY), t.slice(0, 300));
    assert.ok(!t.includes(Buffer.from(`alice:${PASS}`).toString('base64')));
  }
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.deepEqual(m.provider_settings.endpoints, [
    `http://***@127.0.0.1:${port}/v1?api-key=***&api-version=2024-10-21`,
  ]);
  assert.equal(rows(join(dir, 'errors.jsonl'))[0].error_class, 'server');
  // An unreachable endpoint with secrets: the one line names it, redacted.
  const dead = await closedPort();
  const bad = await run(
    'openai:m',
    writeBenchmark(join(tmp, 'sec2.jsonl'), ['x']),
    join(tmp, 'sec-dead'),
    [],
    `http://bob:${PASS}@127.0.0.1:${dead}/v1?token=${KEY}`,
  );
  assert.equal(bad.code, 1);
  assert.equal(
    bad.stderr.trim(),
    `sob: openai:m: cannot reach http://***@127.0.0.1:${dead}/v1?token=***: connection refused (ECONNREFUSED); check --base-url`,
  );
});

test('HF_TOKEN goes only to the Hugging Face hosts over https, never to another HF_ENDPOINT', async () => {
  const saved = process.env.HF_TOKEN;
  process.env.HF_TOKEN = 'hf_testtoken_123456';
  try {
    assert.deepEqual(authHeaders('https://huggingface.co/api/datasets/x/parquet'), {
      authorization: 'Bearer hf_testtoken_123456',
    });
    assert.deepEqual(authHeaders('https://cdn-lfs.hf.co/file.parquet'), {
      authorization: 'Bearer hf_testtoken_123456',
    });
    assert.deepEqual(authHeaders('http://huggingface.co/api/datasets'), {});
    assert.deepEqual(authHeaders('https://huggingface.co.evil.example/api'), {});
    assert.deepEqual(authHeaders('https://mirror.example/api'), {});
    // Over real HTTP to a mirror on this machine: the listing request carries no token.
    const seen: (string | undefined)[] = [];
    const mirror = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    try {
      const { port } = mirror.address() as AddressInfo;
      await assert.rejects(
        downloadSobParquet(
          { repo: 'org/sob', config: 'text', split: 'test', source: 'text' },
          { endpoint: `http://127.0.0.1:${port}`, cacheDir: join(tmp, 'hf-cache') },
        ),
        /HTTP 404/,
      );
    } finally {
      await new Promise((r) => mirror.close(r));
    }
    assert.deepEqual(seen, [undefined]);
  } finally {
    if (saved === undefined) delete process.env.HF_TOKEN;
    else process.env.HF_TOKEN = saved;
  }
});
