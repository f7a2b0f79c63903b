import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { buildBenchmark } from '../../sources/build.ts';
import { defaultCacheDir, parseHfSpec, readSobFile, sobRowToRecord } from '../../sources/sob-rows.ts';

const ROOT = join(import.meta.dirname, '../..');

/** Runs `sob` without blocking this process's event loop (the test's HTTP server lives here). */
function sob(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
const dir = mkdtempSync(join(tmpdir(), 'sob-rows-'));

const SCHEMA = {
  type: 'object',
  properties: {
    meeting: { type: 'string' },
    actions: {
      type: 'array',
      items: { type: 'object', properties: { owner: { type: 'string' }, task: { type: 'string' } } },
    },
  },
};

/** Three audio rows the way the dataset's Parquet holds them: json_schema and ground_truth as JSON text. */
function writeParquet(file: string): void {
  const ids = ['aud-1', 'aud-2', 'aud-3'];
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'record_id', data: ids, type: 'STRING' },
      {
        name: 'context',
        data: ids.map((id) => `[0:01] MEE001: ${id} opens the meeting. [0:05] FEE002: I will book the room.`),
        type: 'STRING',
      },
      { name: 'question', data: ids.map(() => 'Who takes which action?'), type: 'STRING' },
      { name: 'json_schema', data: ids.map(() => JSON.stringify(SCHEMA)), type: 'STRING' },
      {
        name: 'ground_truth',
        data: ids.map((id) =>
          JSON.stringify({ meeting: id, actions: [{ owner: 'FEE002', task: 'book the room' }] }),
        ),
        type: 'STRING',
      },
      { name: 'schema_complexity', data: ['hard', 'hard', 'hard'], type: 'STRING' },
      { name: 'n_speakers', data: [2n, 2n, 2n], type: 'INT64' },
    ],
  });
  writeFileSync(file, new Uint8Array(buf));
}

const parquetFile = join(dir, 'audio.parquet');
let server: Server;
let base = '';
const hits: string[] = [];

before(async () => {
  writeParquet(parquetFile);
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/api/datasets/interfaze-ai/sob/parquet/audio/train') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify([
          `${base}/datasets/interfaze-ai/sob/resolve/refs%2Fconvert%2Fparquet/audio/train/0000.parquet`,
        ]),
      );
    } else if (
      req.url === '/datasets/interfaze-ai/sob/resolve/refs%2Fconvert%2Fparquet/audio/train/0000.parquet'
    ) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(readFileSync(parquetFile));
    } else {
      res.writeHead(404);
      res.end('not found');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('SOB dataset rows', () => {
  test('a Parquet file is read with hyparquet and its JSON-string fields parsed', async () => {
    const rows = await readSobFile(parquetFile);
    assert.equal(rows.length, 3);
    const rec = sobRowToRecord(rows[1].row, 'audio') as {
      metadata: Record<string, unknown>;
      input: { json_schema: unknown };
      output: { ground_truth: unknown };
    };
    assert.deepEqual(rec.metadata, { record_id: 'aud-2', schema_complexity: 'hard', source: 'audio' });
    assert.deepEqual(rec.input.json_schema, SCHEMA);
    assert.deepEqual(rec.output.ground_truth, {
      meeting: 'aud-2',
      actions: [{ owner: 'FEE002', task: 'book the room' }],
    });
  });

  test('the released record shape (blocks as objects or JSON text) is accepted; response fields are dropped', () => {
    const rec = sobRowToRecord({
      metadata: JSON.stringify({ record_id: 'x1', model_id: 'm', source: 'image' }),
      input: { context: 'c', question: 'q', json_schema: JSON.stringify(SCHEMA) },
      output: { ground_truth: '{"meeting": "a", "actions": []}', candidate_response: {} },
    });
    assert.deepEqual(rec, {
      metadata: { record_id: 'x1', source: 'image' },
      input: { context: 'c', question: 'q', json_schema: SCHEMA },
      output: { ground_truth: { meeting: 'a', actions: [] } },
    });
  });

  test('hf: specs map our modality names to the dataset configs and default splits', () => {
    assert.deepEqual(parseHfSpec('hf:interfaze-ai/sob'), {
      repo: 'interfaze-ai/sob',
      config: 'default',
      split: 'test',
      source: 'text',
    });
    assert.deepEqual(parseHfSpec('hf:interfaze-ai/sob:audio'), {
      repo: 'interfaze-ai/sob',
      config: 'audio',
      split: 'train',
      source: 'audio',
    });
    assert.deepEqual(parseHfSpec('hf:interfaze-ai/sob:default:validation'), {
      repo: 'interfaze-ai/sob',
      config: 'default',
      split: 'validation',
      source: 'text',
    });
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: '/x/cache' }), '/x/cache/sob-eval');
  });

  test('download through the parquet listing API from a local server, then from the cache', async () => {
    const cacheDir = join(dir, 'cache1');
    const out = join(dir, 'dl', 'records.jsonl');
    hits.length = 0;
    const res = await buildBenchmark({
      kind: 'sob',
      input: 'hf:interfaze-ai/sob:audio',
      out,
      download: { endpoint: base, cacheDir },
    });
    assert.equal(res.written, 3);
    assert.equal(res.rejected, 0);
    assert.deepEqual(res.manifest.sources.audio, { records: 3, weight: 9 });
    assert.equal(hits.length, 2);
    const cached = readdirSync(join(cacheDir, 'datasets/interfaze-ai/sob/audio/train')).filter((f) =>
      f.endsWith('.parquet'),
    );
    assert.equal(cached.length, 1);
    const again = await buildBenchmark({
      kind: 'sob',
      input: 'hf:interfaze-ai/sob:audio',
      out,
      download: { endpoint: base, cacheDir },
    });
    assert.equal(again.written, 3);
    assert.equal(hits.length, 2, 'the second build is served from the cache');
    const first = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]);
    assert.equal(first.metadata.source, 'audio');
    assert.equal(first.output.ground_truth.actions[0].owner, 'FEE002');
  });

  test('sob build CLI: --hf-endpoint and the $XDG_CACHE_HOME cache folder', async () => {
    const xdg = join(dir, 'xdg');
    const out = join(dir, 'cli', 'records.jsonl');
    const r = await sob(['build', 'sob', 'hf:interfaze-ai/sob:audio', '--hf-endpoint', base, '--out', out], {
      ...process.env,
      XDG_CACHE_HOME: xdg,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^3 records written, 0 rejected, 0 warnings/);
    assert.ok(existsSync(join(xdg, 'sob-eval/datasets/interfaze-ai/sob/audio/train/files.json')));
    const manifest = JSON.parse(readFileSync(join(dir, 'cli', 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.sources, {
      text: { records: 0, weight: 0 },
      image: { records: 0, weight: 0 },
      audio: { records: 3, weight: 9 },
      schema: { records: 0, weight: 0 },
    });
  });

  test('a listing the server does not have is one clear line and exit 1', async () => {
    const r = await sob(['build', 'sob', 'hf:interfaze-ai/sob:image', '--out', join(dir, 'x', 'r.jsonl')], {
      ...process.env,
      XDG_CACHE_HOME: join(dir, 'xdg2'),
      HF_ENDPOINT: base,
    });
    assert.equal(r.status, 1);
    const errLines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('sob: '));
    assert.deepEqual(errLines, [
      `sob: ${base}/api/datasets/interfaze-ai/sob/parquet/image/train: HTTP 404 Not Found`,
    ]);
  });
});
