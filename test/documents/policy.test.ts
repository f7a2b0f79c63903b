/**
 * The document policy (src/runner/documents.ts) through the real `sob run`: an image over the
 * provider's longest edge is downscaled to it, a PDF over the page limit is sent as its page images
 * or (--pdf-over-limit refuse) refused with one line, and each decision is in the run manifest and
 * the response line; a document over Gemini's 20 MB inline limit goes through its Files API, the
 * bytes uploaded being exactly the file's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { imageHeaderSize } from '../../sources/pdf-pages.ts';
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
  wavOf,
} from '../kit/index.ts';

let server: ProtocolServer;
const dir = tempDir('sob-policy-');

before(async () => {
  server = await startProtocolServer();
});
after(() => server.close());

function run(provider: 'openai' | 'gemini', bench: string, runDir: string, extra: string[] = []) {
  return sobIn(
    [
      'run',
      '--model',
      `${provider}:vision`,
      '--benchmark',
      bench,
      '--input',
      'document',
      '--base-url',
      provider === 'openai' ? server.openaiBaseUrl : server.geminiBaseUrl,
      '--run-dir',
      runDir,
      '--max-retries',
      '0',
      ...extra,
    ],
    { env: { OPENAI_API_KEY: 'k', GEMINI_API_KEY: 'k' } },
  );
}

test("an image over OpenAI's 2,048 px edge is sent downscaled to it, and the manifest says so", async () => {
  const big = pngOf(3000, 200, 5);
  const bench = documentBenchmark(join(dir, 'big-image'), [
    { id: 'wide', docs: [{ kind: 'image', mime: 'image/png', data: big }] },
  ]);
  const runDir = join(dir, 'run-wide');
  const from = server.requests.length;
  const r = await run('openai', bench, runDir);
  assert.equal(r.code, 0, r.stderr);
  const [seen] = server.requests.slice(from);
  const [doc] = documentsOf(seen);
  assert.deepEqual(imageHeaderSize(doc.data), { width: 2048, height: 137 });
  assert.notEqual(sha256Hex(doc.data), sha256Hex(big));
  const m = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
  assert.equal(m.documents.records.length, 1);
  assert.equal(m.documents.records[0].record_id, 'wide');
  assert.equal(m.documents.records[0].decisions[0].action, 'downscaled');
  assert.match(m.documents.records[0].decisions[0].detail, /3000x200 px downscaled to 2048x137 px/);
  const [line] = rows(join(runDir, 'responses.jsonl'));
  assert.equal(line.eval_info.document_policy[0].action, 'downscaled');
  assert.equal(line.eval_info.documents[0].sha256, sha256Hex(doc.data));
});

test('a PDF over the page limit is sent as its page images, or refused with one line and not asked', async () => {
  const pdf = await pdfOf(3);
  const bench = documentBenchmark(join(dir, 'long-pdf'), [
    { id: 'long', docs: [{ kind: 'pdf', mime: 'application/pdf', data: pdf, pages: [1, 2, 3] }] },
    { id: 'fine', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(40, 40) }] },
  ]);
  const asImages = join(dir, 'run-images');
  let from = server.requests.length;
  const r = await run('openai', bench, asImages, ['--max-pdf-pages', '2', '--max-image-edge', '400']);
  assert.equal(r.code, 0, r.stderr);
  const long = server.requests.slice(from).find((s) => s.key === 'long');
  assert.ok(long);
  const docs = documentsOf(long);
  assert.equal(docs.length, 3);
  assert.ok(docs.every((d) => d.part === 'image_url' && d.mime === 'image/png'));
  assert.deepEqual(imageHeaderSize(docs[0].data), { width: 300, height: 400 });
  const m = JSON.parse(readFileSync(join(asImages, 'manifest.json'), 'utf8'));
  assert.equal(m.documents.limits.maxPdfPages, 2);
  assert.deepEqual(
    m.documents.records.map((x: { record_id: string; decisions: { action: string }[] }) => [
      x.record_id,
      x.decisions[0].action,
    ]),
    [['long', 'pdf_as_images']],
  );
  assert.match(
    m.documents.records[0].decisions[0].detail,
    /3 pages, over the limit of 2: sent as its 3 page images/,
  );

  const refused = join(dir, 'run-refused');
  from = server.requests.length;
  const x = await run('openai', bench, refused, ['--max-pdf-pages', '2', '--pdf-over-limit', 'refuse']);
  assert.equal(x.code, 1);
  assert.deepEqual(
    server.requests.slice(from).map((s) => s.key),
    ['fine'],
  );
  assert.match(
    x.stderr,
    /record long: documents not sent: attachments\/[0-9a-f]{64}\.pdf: the PDF is 3 pages, over the limit of 2 \(--pdf-over-limit refuse\); not asked/,
  );
  const mr = JSON.parse(readFileSync(join(refused, 'manifest.json'), 'utf8'));
  assert.equal(mr.documents.records[0].decisions[0].action, 'refused');
  const errs = rows(join(refused, 'errors.jsonl'));
  assert.equal(errs.length, 1);
  assert.equal(errs[0].record_id, 'long');
});

test('gemini: a document over the 20 MB inline limit goes through the Files API, its bytes exact', async () => {
  const wav = wavOf(1_000_000, 4); // 16 MB: 21.3 MB as base64
  const bench = documentBenchmark(join(dir, 'long-audio'), [
    { id: 'meeting', source: 'audio', docs: [{ kind: 'audio', mime: 'audio/wav', data: wav }] },
  ]);
  const from = server.requests.length;
  const r = await run('gemini', bench, join(dir, 'run-upload'));
  assert.equal(r.code, 0, r.stderr);
  const [seen] = server.requests.slice(from);
  const [doc] = documentsOf(seen, server);
  assert.equal(doc.part, 'fileData');
  assert.equal(doc.mime, 'audio/wav');
  assert.equal(sha256Hex(doc.data), sha256Hex(wav));
  assert.equal(server.uploads.size, 1);
});
