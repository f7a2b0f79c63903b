/**
 * `sob ocr` on the inputs a user hands it besides good PDFs: PNG and JPEG scans given by name,
 * and a folder where one PDF is broken and one is password-protected. The real command, in a
 * child process, on pages this test generates.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { openPdfData, renderPagePng } from '../../sources/pdf/pdfjs.ts';
import { sobAsync } from '../helpers/sob-async.ts';
import { TABLE_ROWS, tablePdf } from '../sources/pdf-fixtures.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'ocr-inputs-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const sob = (args: string[]) => sobAsync(args, tmp, 170_000);

// biome-ignore lint/suspicious/noExplicitAny: JSON lines read back and checked field by field
const jsonLines = (file: string): any[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) % 256;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) % 256;
    j = (j + s[i]) % 256;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) % 256];
  }
  return out;
}

/** A one-page PDF encrypted with the standard handler (RC4 40-bit, revision 2) under a user password. */
function passwordPdf(password: string): Buffer {
  const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
  const pad = (p: string) => Buffer.concat([Buffer.from(p, 'latin1'), PAD]).subarray(0, 32);
  const md5 = (...b: Buffer[]) => createHash('md5').update(Buffer.concat(b)).digest();
  const o = rc4(md5(pad('owner')).subarray(0, 5), pad(password));
  const id = Buffer.from('0123456789abcdef');
  const p = Buffer.alloc(4);
  p.writeInt32LE(-44);
  const key = md5(pad(password), o, p, id).subarray(0, 5);
  const u = rc4(key, PAD);
  const content = rc4(
    md5(key, Buffer.from([4, 0, 0, 0, 0])).subarray(0, 10),
    Buffer.from('BT /F1 24 Tf 72 700 Td (A locked page of the quarterly accounts) Tj ET'),
  );
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    Buffer.concat([
      Buffer.from(`<< /Length ${content.length} >>\nstream\n`),
      content,
      Buffer.from('\nendstream'),
    ]),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${o.toString('hex')}> /U <${u.toString('hex')}> /P -44 >>`,
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let at = parts[0].length;
  const offsets: number[] = [];
  objs.forEach((body, i) => {
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    offsets.push(at);
    at += b.length;
    parts.push(b);
  });
  const xref = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((x) => `${String(x).padStart(10, '0')} 00000 n \n`).join('')}`;
  const idHex = id.toString('hex');
  parts.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R /Encrypt 6 0 R /ID [<${idHex}> <${idHex}>] >>\nstartxref\n${at}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

let table: Uint8Array;
before(async () => {
  table = await tablePdf();
});

/** The cells of each table row of a transcript: Markdown pipe rows and HTML `<tr>`s. */
function tableRows(md: string): string[][] {
  const rows = md
    .split('\n')
    .filter((l) => /^\|.*\|$/.test(l) && !/^\|[\s|:-]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  for (const tr of md.matchAll(/<tr>(.*?)<\/tr>/gs))
    rows.push([...tr[1].matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/gs)].map((c) => c[1].trim()));
  return rows;
}

/** Every row of the generated table is a row of the transcript's table, cell by cell. */
function assertTable(md: string, file: string) {
  const rows = tableRows(md).map((r) => JSON.stringify(r));
  for (const row of TABLE_ROWS)
    assert.ok(rows.includes(JSON.stringify(row)), `${file}: no row ${row}:\n${md}`);
}

describe('sob ocr inputs', () => {
  test('a PNG and a JPEG scan given by name are OCR-read as one-page scans: <name>_pg1.md with the table as a table', async () => {
    const doc = await openPdfData(table.slice());
    const png = await renderPagePng(doc, await doc.getPage(1), 150 / 72);
    await doc.destroy();
    const dir = join(tmp, 'scans');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'revenue.png'), png);
    writeFileSync(join(dir, 'revenue-copy.JPG'), await sharp(png).jpeg({ quality: 90 }).toBuffer());
    const out = join(tmp, 'out-scans');
    const r = await sob([
      'ocr',
      join(dir, 'revenue.png'),
      join(dir, 'revenue-copy.JPG'),
      '--out',
      out,
      '--engine',
      'tesseract',
      '--no-cache',
      '--workers',
      '1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /transcribing 2 images ->/);
    // Pages are logged under the image's own name, never a scratch file's.
    assert.match(r.stderr, /revenue\.png: page 1\/1 \(ocr\)/);
    assert.doesNotMatch(r.stderr, /sob-ocr-/);
    assert.deepEqual(readdirSync(out).sort(), ['ocr_pages.jsonl', 'revenue-copy_pg1.md', 'revenue_pg1.md']);
    for (const f of ['revenue_pg1.md', 'revenue-copy_pg1.md'])
      assertTable(readFileSync(join(out, f), 'utf8'), f);
    const pages = jsonLines(join(out, 'ocr_pages.jsonl')).sort((a, b) => a.pdf.localeCompare(b.pdf));
    assert.deepEqual(
      pages.map((p) => [p.pdf, p.page, p.transcript, p.method, p.engine]),
      [
        ['revenue-copy.JPG', 1, 'revenue-copy_pg1.md', 'ocr', 'tesseract'],
        ['revenue.png', 1, 'revenue_pg1.md', 'ocr', 'tesseract'],
      ],
    );
  });

  test('a folder with a broken and a password-protected PDF: both named (stderr, ocr_pages.jsonl), the good PDF still transcribed, exit 0', async () => {
    const dir = join(tmp, 'mixed');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'a-broken.pdf'), '%PDF-1.7\n1 0 obj << garbage\n');
    writeFileSync(join(dir, 'b-locked.pdf'), passwordPdf('secret'));
    writeFileSync(join(dir, 'sub/revenue.pdf'), table);
    const out = join(tmp, 'out-mixed');
    const r = await sob(['ocr', dir, '--out', out, '--no-cache']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /a-broken\.pdf: skipped: cannot read as PDF \(/);
    assert.match(r.stderr, /b-locked\.pdf: skipped: password-protected: cannot be read without its password/);
    assert.match(
      r.stderr,
      /1 page in [\d.]+ s: 1 text layer, 0 OCR, 0 mixed; 2 inputs unreadable, skipped \(a-broken\.pdf, b-locked\.pdf\)/,
    );
    assertTable(readFileSync(join(out, 'sub/revenue_pg1.md'), 'utf8'), 'sub/revenue_pg1.md');
    const pages = jsonLines(join(out, 'ocr_pages.jsonl')).sort((a, b) => a.pdf.localeCompare(b.pdf));
    assert.equal(pages.length, 3);
    assert.deepEqual(
      pages.map((p) => [p.pdf, p.page, p.skipped?.split(':')[0].split(' (')[0] ?? p.method]),
      [
        ['a-broken.pdf', null, 'cannot read as PDF'],
        ['b-locked.pdf', null, 'password-protected'],
        ['sub/revenue.pdf', 1, 'text-layer'],
      ],
    );
  });

  test('only unreadable inputs: exit 1 with one line naming the file and why', async () => {
    const dir = join(tmp, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'locked.pdf'), passwordPdf('pw'));
    writeFileSync(join(dir, 'notes.png'), 'this is text, not a picture');
    let r = await sob(['ocr', join(dir, 'locked.pdf'), '--out', join(tmp, 'out-bad1')]);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('sob: '));
    assert.deepEqual(lines, [
      `sob: ${join(dir, 'locked.pdf')}: password-protected: cannot be read without its password (No password given)`,
    ]);
    r = await sob(['ocr', join(dir, 'notes.png'), '--out', join(tmp, 'out-bad2')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^sob: .*notes\.png: not a PNG or JPEG image/m);
    // A folder holding only images says how to give them.
    const imgs = join(tmp, 'imgs');
    mkdirSync(imgs, { recursive: true });
    writeFileSync(join(imgs, 'p1.png'), 'x');
    r = await sob(['ocr', imgs, '--out', join(tmp, 'out-bad3')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /no \.pdf files in this folder \(1 PNG\/JPEG image: give images by name/);
    // --out naming a file is a usage error, said before anything is read.
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    r = await sob(['ocr', join(dir, 'locked.pdf'), '--out', file]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `sob: --out ${file}: is a file; give a folder for the transcripts\n`);
  });
});

test('Ctrl-C: exit 130, the inputs finished so far keep their transcripts and their lines in ocr_pages.jsonl', async () => {
  const dir = join(tmp, 'ctrl-c');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'a-text.pdf'), table);
  // A scanned page (a picture of the table, no text layer): OCR keeps the second input busy.
  const doc = await openPdfData(table.slice());
  const png = await renderPagePng(doc, await doc.getPage(1), 200 / 72);
  await doc.destroy();
  const scan = await PDFDocument.create();
  const img = await scan.embedPng(png);
  scan.addPage([612, 792]).drawImage(img, { x: 0, y: 0, width: 612, height: 792 });
  writeFileSync(join(dir, 'b-scan.pdf'), await scan.save());
  const out = join(tmp, 'out-ctrl-c');
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'ocr',
      join(dir, 'a-text.pdf'),
      join(dir, 'b-scan.pdf'),
      '--out',
      out,
      '--cache-dir',
      join(tmp, 'ctrl-c-cache'),
    ],
    { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no page written:\n${stderr}`)), 60_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      if (/a-text\.pdf: 1 page \(text-layer\)/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGINT');
  const end = await exited;
  assert.deepEqual(end, { code: 130, signal: null }, stderr);
  assert.match(
    stderr,
    /interrupted: 1 of 2 inputs transcribed \(listed in .*ocr_pages\.jsonl\); re-run the same command/,
  );
  assert.deepEqual(
    jsonLines(join(out, 'ocr_pages.jsonl')).map((p) => [p.pdf, p.page, p.transcript]),
    [['a-text.pdf', 1, 'a-text_pg1.md']],
  );
  assertTable(readFileSync(join(out, 'a-text_pg1.md'), 'utf8'), 'a-text_pg1.md');
});

test('folders reached through symbolic links are read once each (a link back up is no loop), linked PDFs included: sob ocr and sob build pdf', async () => {
  const real = join(tmp, 'linked-real');
  mkdirSync(real, { recursive: true });
  writeFileSync(join(real, 'revenue.pdf'), table);
  const dir = join(tmp, 'linked');
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(real, 'revenue.pdf'), join(dir, 'a-link.pdf'));
  symlinkSync(real, join(dir, 'sub'));
  symlinkSync(dir, join(dir, 'loop'));
  const out = join(tmp, 'out-linked');
  const r = await sob(['ocr', dir, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /transcribing 2 PDFs ->/);
  assert.deepEqual(
    jsonLines(join(out, 'ocr_pages.jsonl'))
      .map((p) => p.transcript)
      .sort(),
    ['a-link_pg1.md', 'sub/revenue_pg1.md'],
  );
  assertTable(readFileSync(join(out, 'a-link_pg1.md'), 'utf8'), 'a-link_pg1.md');
  const ann = join(tmp, 'linked-ann.jsonl');
  writeFileSync(
    ann,
    `${JSON.stringify({
      source_id: 'a-link_pg1',
      question: 'What were the freight charges in 2024?',
      json_schema: {
        type: 'object',
        properties: { activity: { type: 'string' }, year: { type: 'integer' }, amount: { type: 'string' } },
        required: ['activity', 'amount'],
      },
      ground_truth: { activity: 'Freight charges', year: 2024, amount: '7,215' },
    })}\n`,
  );
  const b = await sob([
    'build',
    'pdf',
    dir,
    '--annotations',
    ann,
    '--out',
    join(tmp, 'linked-bench', 'records.jsonl'),
  ]);
  assert.doesNotMatch(b.stderr, /ELOOP|too many symbolic links/);
  // Only what the annotation names is read (the page of a-link.pdf), found once through the links.
  assert.match(b.stderr, /loaded 1 pdf source items/);
});
