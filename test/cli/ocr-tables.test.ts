/**
 * Tables that stay whole, through the real `sob ocr` on pages the test prints: a bordered
 * 4-column fee table and the same table without rules (aligned only), each under a title, from
 * their text layer and scanned (rendered at 200 dpi and OCR'd). Each reads as one 4-column
 * table, every row with its four cells, and its title as text above it (not dropped as a
 * running head). A scanned two-column page reads column by column.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PDFDocument, rgb, StandardFonts } from 'pdf-lib';
import { sobAsync } from '../helpers/sob-async.ts';
import { scannedPdf, sentences, twoColumnPdf } from '../sources/pdf-fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-tables-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const TITLE = 'Schedule of Fees 2025';
const ROWS = [
  ['Service', 'Unit', 'Fee (EUR)', 'Notes'],
  ['Annual licence', 'per seat', '120.00', 'billed in January'],
  ['Support plan', 'per month', '45.50', 'business hours'],
  ['Training day', 'per person', '300.00', 'on site only'],
  ['Data export', 'per request', '15.00', 'within 5 days'],
];
const AFTER = 'Fees are reviewed every year and published with the annual report.';

/** The title (16 pt bold), the table (10 pt; ruled when `bordered`) and a sentence under it. */
async function feePage(bordered: boolean): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const f = await doc.embedFont(StandardFonts.Helvetica);
  const b = await doc.embedFont(StandardFonts.HelveticaBold);
  const page = doc.addPage([612, 792]);
  page.drawText(TITLE, { x: 72, y: 720, size: 16, font: b });
  const xs = [72, 202, 312, 412, 540];
  const top = 690;
  const h = 22;
  ROWS.forEach((r, i) => {
    r.forEach((c, j) => {
      page.drawText(c, { x: xs[j] + 6, y: top - h * i - 15, size: 10, font: i === 0 ? b : f });
    });
  });
  if (bordered) {
    const line = (x0: number, y0: number, x1: number, y1: number) =>
      page.drawLine({ start: { x: x0, y: y0 }, end: { x: x1, y: y1 }, thickness: 0.8, color: rgb(0, 0, 0) });
    for (let i = 0; i <= ROWS.length; i++) line(xs[0], top - h * i, xs[4], top - h * i);
    for (const x of xs) line(x, top, x, top - h * ROWS.length);
  }
  page.drawText(AFTER, { x: 72, y: top - h * ROWS.length - 30, size: 10, font: f });
  return doc.save();
}

/** The cells of each Markdown table row of a transcript. */
function tableRows(md: string): string[][] {
  return md
    .split('\n')
    .filter((l) => /^\|.*\|$/.test(l) && !/^\|[\s|:-]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
}

const out = join(tmp, 'out');
let stderr = '';
before(async () => {
  const files: [string, Uint8Array][] = [
    ['bordered.pdf', await feePage(true)],
    ['borderless.pdf', await feePage(false)],
  ];
  // pdf.js takes over the bytes it opens: the scans are made from copies.
  files.push(['bordered-scan.pdf', await scannedPdf(files[0][1].slice())]);
  files.push(['borderless-scan.pdf', await scannedPdf(files[1][1].slice())]);
  files.push(['columns-scan.pdf', await scannedPdf(await twoColumnPdf())]);
  for (const [name, bytes] of files) writeFileSync(join(tmp, name), bytes);
  const r = await sobAsync(
    [
      'ocr',
      ...files.map(([n]) => join(tmp, n)),
      '--out',
      out,
      '--engine',
      'tesseract',
      '--no-cache',
      '--explain',
    ],
    tmp,
    300_000,
  );
  assert.equal(r.code, 0, r.stderr);
  stderr = r.stderr;
});

describe('tables stay whole, titles stay text', () => {
  for (const name of ['bordered', 'borderless', 'bordered-scan', 'borderless-scan']) {
    test(`${name}: one 5x4 table, every row its four cells, the title as text above it`, () => {
      const md = readFileSync(join(out, `${name}_pg1.md`), 'utf8');
      assert.deepEqual(tableRows(md), ROWS, md);
      // One table: its rows are consecutive lines.
      const lines = md.split('\n');
      const first = lines.findIndex((l) => l.startsWith('|'));
      assert.equal(lines.slice(first, first + ROWS.length + 1).filter((l) => l.startsWith('|')).length, 6);
      const title = lines.findIndex((l) => l.replace(/^#+ /, '') === TITLE);
      assert.ok(title >= 0 && title < first, `the title above the table:\n${md}`);
      assert.ok(md.includes(AFTER));
      // --explain says so: no column cut, one table of 5 rows and 4 columns.
      const explain = stderr.split('\n').find((l) => l.startsWith(`${name}_pg1: `)) ?? '';
      assert.match(explain, /tables 5x4 markdown/);
      assert.doesNotMatch(explain, /column cut|dropped top/);
    });
  }
});

describe('a scanned two-column page', () => {
  test('reads column by column: the title, then every left sentence before the first right one', () => {
    const md = readFileSync(join(out, 'columns-scan_pg1.md'), 'utf8');
    const at = (s: string) => md.indexOf(s.slice(0, 30));
    const left = sentences('L', 8).map(at);
    const right = sentences('R', 8).map(at);
    assert.ok(
      [...left, ...right].every((i) => i >= 0),
      md,
    );
    assert.ok(md.indexOf('Notes from the River Survey') < left[0]);
    assert.ok(Math.max(...left) < Math.min(...right), md);
    assert.deepEqual(
      left,
      [...left].sort((a, b) => a - b),
    );
    assert.deepEqual(
      right,
      [...right].sort((a, b) => a - b),
    );
  });
});
