/**
 * The bundled example's PDF records carry their page (the example PDF itself and its render at
 * 150 dpi), moved in with the scratch build, so the image records of the bundled example run
 * with `--input document`: the real `sob run` against the local OpenAI protocol server sends
 * each record exactly its PDF and its PNG.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildExampleBenchmark } from '../../src/app/eval.ts';
import { sha256Hex } from '../../src/core/attachments.ts';
import { checkBenchmark } from '../../src/core/benchmark-records.ts';
import {
  documentsOf,
  type ProtocolServer,
  ROOT,
  rows,
  sharedOcrCache,
  sobIn,
  startProtocolServer,
  tempDir,
  userTextOf,
} from '../kit/index.ts';

const dir = tempDir('sob-example-docs-');
let server: ProtocolServer;
// biome-ignore lint/suspicious/noExplicitAny: records as read
let records: any[] = [];
let file: string;

before(async () => {
  // The records' questions are the protocol server's keys (the example's own questions).
  server = await startProtocolServer({
    keyOf: (text) => records.find((r) => text.includes(r.input.question))?.metadata.record_id,
  });
  // The run's OCR cache for the scan (not the user's).
  process.env.XDG_CACHE_HOME = sharedOcrCache().home;
  file = await buildExampleBenchmark(join(dir, 'benchmark'));
  records = rows(file);
});
after(() => server.close());

test("the bundled example's six PDF records carry their PDF and its 150 dpi render; the record check passes them", async () => {
  const image = records.filter((r) => r.metadata.source === 'image');
  assert.equal(image.length, 6);
  for (const r of image) {
    const [pdf, png] = r.input.attachments;
    assert.equal(r.input.attachments.length, 2);
    const source = readFileSync(join(ROOT, 'sources/examples/pdf', `${r.metadata.source_pdf}.pdf`));
    assert.equal(pdf.sha256, sha256Hex(source));
    assert.equal(png.dpi, 150);
    const bytes = readFileSync(join(dir, 'benchmark', png.path));
    assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [1275, 1650]);
  }
  // Text and audio records carry none (the example has no recordings).
  assert.ok(records.filter((r) => r.metadata.source !== 'image').every((r) => !r.input.attachments));
  const check = await checkBenchmark(file, {});
  assert.equal(check.rejected.length, 0);
  assert.equal(check.total, 16);
  // Four pages, each a PDF and a PNG: six records, twelve attachments, six pages.
  assert.deepEqual(check.attachments, { records: 6, files: 12, pages: 6 });
});

test('sob run --input document on the bundled example sends each image record its PDF and render', async () => {
  const from = server.requests.length;
  const r = await sobIn(
    [
      'run',
      '--model',
      'openai:m',
      '--benchmark',
      join(dir, 'benchmark'),
      '--input',
      'document',
      '--source',
      'image',
      '--base-url',
      server.openaiBaseUrl,
      '--run-dir',
      join(dir, 'run'),
    ],
    { env: { OPENAI_API_KEY: 'k' } },
  );
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 6);
  for (const s of seen) {
    const rec = records.find((x) => x.metadata.record_id === s.key);
    assert.ok(rec, `a request for ${s.key}`);
    const docs = documentsOf(s);
    assert.deepEqual(
      docs.map((d) => [d.part, sha256Hex(d.data)]),
      rec.input.attachments.map((a: { kind: string; sha256: string }) => [
        a.kind === 'pdf' ? 'file' : 'image_url',
        a.sha256,
      ]),
    );
    assert.ok(!userTextOf(s).includes(rec.input.context.slice(0, 40)), 'no transcript under document');
  }
});
