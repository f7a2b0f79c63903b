/**
 * `--input text|document|both` end to end: the real `sob run` against the local server speaking
 * OpenAI's and Gemini's wire protocols. The bytes each server receives for an image, a PDF and an
 * audio attachment decode to exactly the stored file (sha256 compared); `text` sends no document,
 * `document` no transcript, `both` both; a moved benchmark folder still runs; a missing or altered
 * attachment, or a record without any, is refused before a single request.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sha256Hex } from '../../src/core/attachments.ts';
import {
  documentBenchmark,
  documentsOf,
  type ProtocolServer,
  pdfOf,
  pngOf,
  rows,
  sobIn,
  startProtocolServer,
  tempDir,
  userTextOf,
  wavOf,
} from '../kit/index.ts';

let server: ProtocolServer;
const dir = tempDir('sob-docs-');
let bench: string;
let files: Record<string, Buffer>;

before(async () => {
  server = await startProtocolServer();
  files = { png: pngOf(64, 48, 3), pdf: await pdfOf(2), wav: wavOf(200, 2) };
  bench = join(dir, 'bench');
  documentBenchmark(bench, [
    { id: 'img1', docs: [{ kind: 'image', mime: 'image/png', data: files.png }] },
    { id: 'pdf1', docs: [{ kind: 'pdf', mime: 'application/pdf', data: files.pdf, pages: [1, 2] }] },
    { id: 'aud1', source: 'audio', docs: [{ kind: 'audio', mime: 'audio/wav', data: files.wav }] },
  ]);
});
after(() => server.close());

const EXPECT: Record<string, { file: string; openai: string; gemini: string }> = {
  img1: { file: 'png', openai: 'image_url', gemini: 'inlineData' },
  pdf1: { file: 'pdf', openai: 'file', gemini: 'inlineData' },
  aud1: { file: 'wav', openai: 'input_audio', gemini: 'inlineData' },
};

function run(provider: 'openai' | 'gemini', mode: string, benchmark = bench, runDir?: string) {
  const base = provider === 'openai' ? server.openaiBaseUrl : server.geminiBaseUrl;
  return sobIn(
    [
      'run',
      '--model',
      `${provider}:m-${mode}`,
      '--benchmark',
      benchmark,
      '--input',
      mode,
      '--base-url',
      base,
      '--run-dir',
      runDir ?? join(dir, `run-${provider}-${mode}-${Math.random().toString(36).slice(2, 8)}`),
    ],
    { env: { OPENAI_API_KEY: 'k', GEMINI_API_KEY: 'k' } },
  );
}

for (const provider of ['openai', 'gemini'] as const) {
  test(`${provider}: --input document sends each attachment's exact bytes (image, PDF, audio) and no transcript`, async () => {
    const from = server.requests.length;
    const r = await run(provider, 'document');
    assert.equal(r.code, 0, r.stderr);
    const seen = server.requests.slice(from);
    assert.equal(seen.length, 3);
    for (const s of seen) {
      const want = EXPECT[s.key as string];
      const docs = documentsOf(s, server);
      assert.equal(docs.length, 1, `${s.key}: one document`);
      assert.equal(docs[0].part, want[provider]);
      assert.equal(sha256Hex(docs[0].data), sha256Hex(files[want.file]), `${s.key}: the bytes received`);
      const text = userTextOf(s);
      assert.ok(!text.includes('TRANSCRIPT-OF-'), `${s.key}: no transcript under document`);
      assert.match(text, /The document is attached/);
    }
  });

  test(`${provider}: --input text sends no attachment, --input both sends the transcript and the attachment`, async () => {
    let from = server.requests.length;
    const t = await run(provider, 'text');
    assert.equal(t.code, 0, t.stderr);
    for (const s of server.requests.slice(from)) {
      assert.equal(documentsOf(s, server).length, 0);
      assert.match(userTextOf(s), /TRANSCRIPT-OF-/);
    }
    from = server.requests.length;
    const b = await run(provider, 'both');
    assert.equal(b.code, 0, b.stderr);
    const seen = server.requests.slice(from);
    assert.equal(seen.length, 3);
    for (const s of seen) {
      const docs = documentsOf(s, server);
      assert.equal(docs.length, 1);
      assert.equal(sha256Hex(docs[0].data), sha256Hex(files[EXPECT[s.key as string].file]));
      assert.match(userTextOf(s), new RegExp(`TRANSCRIPT-OF-${s.key}`));
      assert.match(userTextOf(s), /attached to this message as well/);
    }
  });
}

test('the run manifest and each response line say the mode and what was sent', async () => {
  const runDir = join(dir, 'run-says');
  const r = await run('openai', 'document', bench, runDir);
  assert.equal(r.code, 0, r.stderr);
  const manifest = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
  assert.equal(manifest.settings.input, 'document');
  assert.equal(manifest.identity.input, 'document');
  assert.equal(manifest.documents.input, 'document');
  assert.equal(manifest.documents.limits.maxPdfPages, 100);
  const lines = rows(join(runDir, 'responses.jsonl'));
  assert.equal(lines.length, 3);
  for (const l of lines) {
    assert.equal(l.eval_info.input_mode, 'document');
    assert.equal(l.eval_info.documents.length, 1);
    assert.equal(l.eval_info.documents[0].sha256, l.input.attachments[0].sha256);
  }
});

test('a benchmark folder moved elsewhere still runs with its documents', async () => {
  const moved = join(dir, 'elsewhere', 'deeper', 'bench');
  cpSync(bench, moved, { recursive: true });
  const from = server.requests.length;
  const r = await run('openai', 'document', moved);
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => documentsOf(s).length === 1));
});

test('a missing or altered attachment is refused before any request, naming the record and the file', async () => {
  for (const harm of ['missing', 'altered'] as const) {
    const copy = join(dir, `harmed-${harm}`);
    cpSync(bench, copy, { recursive: true });
    const rec = rows(join(copy, 'records.jsonl')).find((x) => x.metadata.record_id === 'pdf1');
    const file = join(copy, rec.input.attachments[0].path);
    if (harm === 'missing') rmSync(file);
    else writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('%tampered')]));
    const total = server.total;
    const r = await run('openai', 'document', copy);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(server.total, total, `${harm}: no request reached the server`);
    const line = r.stderr.split('\n').find((l) => l.startsWith('rejected')) ?? '';
    assert.match(line, /records\.jsonl:2 \(record pdf1\): attachment 1 \(attachments\/[0-9a-f]{64}\.pdf\)/);
    assert.match(line, harm === 'missing' ? /no such file/ : /do not match its sha256/);
  }
});

test('--input document refuses a record without attachments by name, before any request', async () => {
  const mixed = join(dir, 'mixed');
  documentBenchmark(mixed, [
    { id: 'has', docs: [{ kind: 'image', mime: 'image/png', data: files.png }] },
    { id: 'bare', docs: [] },
  ]);
  const total = server.total;
  const r = await run('openai', 'document', mixed);
  assert.equal(r.code, 2);
  assert.equal(server.total, total);
  assert.match(
    r.stderr,
    /1 record without attachments cannot be asked with --input document: bare \(line 2\)/,
  );
  // Text mode asks both.
  const t = await run('openai', 'text', mixed);
  assert.equal(t.code, 0, t.stderr);
  assert.equal(server.total, total + 2);
});
