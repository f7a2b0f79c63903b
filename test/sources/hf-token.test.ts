/**
 * issue 9 item 8 (HF_TOKEN): the token goes only to the Hugging Face hosts over https, hop by
 * hop: not to a mirror endpoint, not over plain http, not to a host a redirect leads to.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { downloadSobParquet, tokenAllowedFor } from '../../sources/sob-rows.ts';

const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'sob-hf-token-'));
const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
});
const PARQUET = parquetWriteBuffer({
  columnData: [
    { name: 'record_id', data: ['t1', 't2'], type: 'STRING' },
    { name: 'context', data: ['x y z', 'x y z'], type: 'STRING' },
    { name: 'question', data: ['q', 'q'], type: 'STRING' },
    { name: 'json_schema', data: [SCHEMA, SCHEMA], type: 'STRING' },
    {
      name: 'ground_truth',
      data: ['{"a":"x","b":"y","c":"z"}', '{"a":"x","b":"y","c":"z"}'],
      type: 'STRING',
    },
  ],
});

let server: Server;
let base = '';
const seen: { url: string; authorization: string | undefined }[] = [];

before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    if (req.url === '/api/datasets/interfaze-ai/sob/parquet/audio/train') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([`${base}/resolve/audio-0.parquet`]));
    } else if (req.url === '/resolve/audio-0.parquet') {
      // The Hub answers downloads with a redirect to storage: followed, hop by hop.
      res.writeHead(302, { location: '/storage/blob-0' });
      res.end();
    } else if (req.url === '/storage/blob-0') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from(PARQUET));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function sob(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('HF_TOKEN goes only to the Hugging Face host, over https', () => {
  test('which URLs may carry it', () => {
    assert.equal(tokenAllowedFor('https://huggingface.co/api/datasets/x/y/parquet/a/b'), true);
    assert.equal(tokenAllowedFor('https://cdn-lfs.huggingface.co/repos/x'), true);
    assert.equal(tokenAllowedFor('https://hf.co/datasets/x'), true);
    assert.equal(tokenAllowedFor('http://huggingface.co/api/datasets/x'), false);
    assert.equal(tokenAllowedFor('https://huggingface.co.evil.example/x'), false);
    assert.equal(tokenAllowedFor('https://evil.example/huggingface.co/x'), false);
    assert.equal(tokenAllowedFor('https://nothuggingface.co/x'), false);
    assert.equal(tokenAllowedFor('https://hf-mirror.com/x'), false);
    assert.equal(tokenAllowedFor('not a url'), false);
  });

  test('sob build from a mirror endpoint with HF_TOKEN set: 3 requests served (list, redirect, file), none with the token', async () => {
    seen.length = 0;
    const out = join(dir, 'mirror', 'records.jsonl');
    const r = await sob(['build', 'sob', 'hf:interfaze-ai/sob:audio', '--hf-endpoint', base, '--out', out], {
      ...process.env,
      XDG_CACHE_HOME: join(dir, 'xdg'),
      HF_TOKEN: 'hf_secret_token_value',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^2 records written, 0 rejected/);
    assert.match(
      r.stderr,
      new RegExp(`HF_TOKEN is not sent to ${base}: it only goes to huggingface\\.co over https`),
    );
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/api/datasets/interfaze-ai/sob/parquet/audio/train', '/resolve/audio-0.parquet', '/storage/blob-0'],
    );
    assert.deepEqual(
      seen.map((s) => s.authorization),
      [undefined, undefined, undefined],
    );
    assert.ok(!`${r.stdout}${r.stderr}`.includes('hf_secret_token_value'));
  });

  test('from huggingface.co (the unreachable Hub, answered at the HTTP level): the token goes to the Hub hops only', async () => {
    const calls: { url: string; authorization: string | undefined }[] = [];
    const hub: typeof fetch = async (input, init) => {
      const url = String(input);
      const headers = new Headers(init?.headers);
      calls.push({ url, authorization: headers.get('authorization') ?? undefined });
      assert.equal(init?.redirect, 'manual');
      if (url.endsWith('/parquet/audio/train'))
        return Response.json([
          'https://huggingface.co/api/datasets/interfaze-ai/sob/parquet/audio/train/0.parquet',
        ]);
      if (url.endsWith('/train/0.parquet'))
        return new Response(null, {
          status: 302,
          headers: { location: 'https://storage.example.net/blob?sig=1' },
        });
      if (url.startsWith('https://storage.example.net/')) return new Response(Buffer.from(PARQUET));
      return new Response('no', { status: 404 });
    };
    const old = process.env.HF_TOKEN;
    process.env.HF_TOKEN = 'hf_secret_token_value';
    try {
      const files = await downloadSobParquet(
        { repo: 'interfaze-ai/sob', config: 'audio', split: 'train', source: 'audio' },
        { endpoint: 'https://huggingface.co', cacheDir: join(dir, 'cache-hub'), fetchImpl: hub },
      );
      assert.equal(files.length, 1);
    } finally {
      if (old === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = old;
    }
    assert.deepEqual(
      calls.map((c) => [new URL(c.url).host, c.authorization]),
      [
        ['huggingface.co', 'Bearer hf_secret_token_value'],
        ['huggingface.co', 'Bearer hf_secret_token_value'],
        ['storage.example.net', undefined],
      ],
    );
  });
});
