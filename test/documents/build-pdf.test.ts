/**
 * `sob build pdf` attaches each record's pages: the PDF pages it covers (the source file itself
 * for the whole document, those pages copied into a PDF of their own for one page) and each page
 * rendered by pdf.js at `--render-dpi`, stored by content hash. The record check passes them, and
 * the real `sob run --input document` against the local OpenAI protocol server sends exactly
 * those bytes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sha256Hex, verifyAttachments } from '../../src/core/attachments.ts';
import { checkBenchmark } from '../../src/core/benchmark-records.ts';
import {
  documentsOf,
  type ProtocolServer,
  rows,
  runDocumentMode,
  runningHeadsPdf,
  sobIn,
  startProtocolServer,
  tempDir,
  twoColumnPdf,
} from '../kit/index.ts';

const dir = tempDir('sob-build-pdf-');
const pdfs = join(dir, 'pdfs');
let source: Buffer;
let server: ProtocolServer;

const SCHEMA = {
  type: 'object',
  properties: { title: { type: 'string' }, page: { type: 'integer' }, note: { type: ['string', 'null'] } },
  required: ['title', 'page'],
};

function annotation(sourceId: string, rid: string, page: number) {
  return {
    source_id: sourceId,
    record_id: rid,
    question: `Which page is it [rid:${rid}]?`,
    json_schema: SCHEMA,
    ground_truth: { title: 'Invoice', page, note: null },
  };
}

before(async () => {
  server = await startProtocolServer();
  mkdirSync(pdfs, { recursive: true });
  // Three US Letter pages (612 x 792 pt) with a text layer, "Chapter N" on each.
  source = Buffer.from(await runningHeadsPdf());
  writeFileSync(join(pdfs, 'doc.pdf'), source);
  // A second PDF whose one record is rejected (its ground truth fails its schema): nothing stored.
  writeFileSync(join(pdfs, 'other.pdf'), await twoColumnPdf());
  const rejected = {
    ...annotation('other_pg1', 'bad', 1),
    ground_truth: { title: 'x', page: 'one', note: null },
  };
  writeFileSync(
    join(dir, 'annotations.jsonl'),
    `${[
      annotation('doc_pg2', 'pg2', 2),
      annotation('doc_pg2', 'pg2b', 2),
      annotation('doc', 'whole', 1),
      rejected,
    ]
      .map((a) => JSON.stringify(a))
      .join('\n')}\n`,
  );
});
after(() => server.close());

async function build(out: string, extra: string[] = []) {
  const r = await sobIn([
    'build',
    'pdf',
    pdfs,
    '--annotations',
    join(dir, 'annotations.jsonl'),
    '--out',
    out,
    ...extra,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return rows(out);
}

function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'a PNG signature');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

async function pdfPageTexts(bytes: Uint8Array): Promise<string[]> {
  const { openPdfData } = await import('../../sources/pdf/pdfjs.ts');
  const doc = await openPdfData(new Uint8Array(bytes));
  try {
    const out: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const tc = await page.getTextContent();
      out.push(tc.items.map((i) => ('str' in i ? i.str : '')).join(''));
    }
    return out;
  } finally {
    await doc.destroy();
  }
}

test('each record carries its PDF pages and their renders at the stated dpi, stored by hash', async () => {
  const bench = join(dir, 'b150');
  const out = join(bench, 'records.jsonl');
  const recs = await build(out);
  const byId = new Map(recs.map((r) => [r.metadata.record_id, r]));
  assert.deepEqual([...byId.keys()].sort(), ['pg2', 'pg2b', 'whole']);

  // One page of three: that page copied into a one-page PDF, then its render.
  const one = byId.get('pg2').input.attachments;
  assert.equal(one.length, 2);
  assert.equal(one[0].kind, 'pdf');
  assert.equal(one[0].mime, 'application/pdf');
  assert.deepEqual(one[0].pages, [2]);
  const subset = readFileSync(join(bench, one[0].path));
  assert.equal(sha256Hex(subset), one[0].sha256);
  assert.equal(one[0].path, `attachments/${one[0].sha256}.pdf`);
  const texts = await pdfPageTexts(subset);
  assert.equal(texts.length, 1);
  assert.equal(texts[0], (await pdfPageTexts(source))[1]);
  assert.match(texts[0], /Chapter 2/);
  assert.equal(one[1].kind, 'image');
  assert.equal(one[1].mime, 'image/png');
  assert.deepEqual(one[1].pages, [2]);
  assert.equal(one[1].dpi, 150);
  const png = readFileSync(join(bench, one[1].path));
  assert.equal(sha256Hex(png), one[1].sha256);
  // 612 x 792 pt (8.5 x 11 in) at 150 dpi: 1,275 x 1,650 px.
  assert.deepEqual(pngSize(png), { width: 1275, height: 1650 });

  // A second record on the same page: the same files (stored once).
  assert.deepEqual(byId.get('pg2b').input.attachments, one);

  // The whole document: the source PDF's own bytes, then one render per page.
  const all = byId.get('whole').input.attachments;
  assert.equal(all.length, 4);
  assert.deepEqual(all[0].pages, [1, 2, 3]);
  assert.equal(all[0].sha256, sha256Hex(source));
  assert.ok(readFileSync(join(bench, all[0].path)).equals(source));
  assert.deepEqual(
    all.slice(1).map((a: { pages: number[]; dpi: number }) => [a.pages[0], a.dpi]),
    [
      [1, 150],
      [2, 150],
      [3, 150],
    ],
  );
  // Page 2's render is the one the page record carries.
  assert.equal(all[2].sha256, one[1].sha256);
  assert.notEqual(all[1].sha256, all[2].sha256);
  // Files: the subset, the source, three renders; none for the rejected record on other.pdf.
  const { readdirSync } = await import('node:fs');
  assert.equal(readdirSync(join(bench, 'attachments')).length, 5);
  assert.deepEqual(
    rows(join(bench, 'rejected.jsonl')).map((x) => x.record_id),
    ['bad'],
  );

  // The record check passes every record, its documents counted.
  for (const r of recs) assert.deepEqual(await verifyAttachments(bench, r.input.attachments), []);
  const check = await checkBenchmark(out, {});
  assert.equal(check.rejected.length, 0);
  assert.deepEqual(check.attachments, { records: 3, files: 8, pages: 5 });
});

test("--render-dpi sets the renders' size; the same pages give the same bytes build after build; 0 renders none", async () => {
  const a = await build(join(dir, 'b100a/records.jsonl'), ['--render-dpi', '100']);
  const b = await build(join(dir, 'b100b/records.jsonl'), ['--render-dpi', '100']);
  const pg2 = a.find((r) => r.metadata.record_id === 'pg2').input.attachments;
  assert.equal(pg2[1].dpi, 100);
  // 612 x 792 pt at 100 dpi: 850 x 1,100 px.
  assert.deepEqual(pngSize(readFileSync(join(dir, 'b100a', pg2[1].path))), { width: 850, height: 1100 });
  assert.deepEqual(
    a.map((r) => r.input.attachments),
    b.map((r) => r.input.attachments),
  );
  const none = await build(join(dir, 'b0/records.jsonl'), ['--render-dpi', '0']);
  for (const r of none) {
    assert.equal(r.input.attachments.length, 1);
    assert.equal(r.input.attachments[0].kind, 'pdf');
  }
  const bad = await sobIn([
    'build',
    'hotpotqa',
    pdfs,
    '--annotations',
    'x',
    '--out',
    'y',
    '--render-dpi',
    '72',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--render-dpi is for pdf inputs only/);
});

test('sob run --input document sends exactly the attached PDF and render bytes', async () => {
  const bench = join(dir, 'b150');
  const recs = rows(join(bench, 'records.jsonl'));
  const from = server.requests.length;
  const r = await runDocumentMode(server.openaiBaseUrl, bench, join(dir, 'run'));
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 3);
  for (const s of seen) {
    const rec = recs.find((x) => x.metadata.record_id === s.key);
    const want = rec.input.attachments.map((a: { sha256: string }) => a.sha256);
    const got = documentsOf(s).map((d) => sha256Hex(d.data));
    assert.deepEqual(got, want, `${s.key}: the bytes received`);
    assert.deepEqual(
      documentsOf(s).map((d) => d.part),
      ['file', ...want.slice(1).map(() => 'image_url')],
    );
  }
});
