/**
 * `sob ocr --explain` says why a page was OCR'd rather than read from its text layer, and does
 * not print a text-layer score of 0.00 for a layer it never scored (`--ocr never` / `always`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { sobAsync } from '../helpers/sob-async.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-explain-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const sob = (args: string[]) => sobAsync(args, tmp, 120_000);

const SHORT = 'Minutes of the ferry board'; // 26 characters: too few to trust a text layer
let pdf: string;
before(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText(SHORT, { x: 72, y: 700, size: 24, font });
  const page = doc.addPage([612, 792]);
  for (let i = 0; i < 10; i++)
    page.drawText(`Line ${i + 1} of the harbour report, with ordinary words in it.`, {
      x: 72,
      y: 700 - i * 16,
      size: 11,
      font,
    });
  pdf = join(tmp, 'short.pdf');
  writeFileSync(pdf, await doc.save());
});

const explainOf = (stderr: string, page: number) =>
  stderr.split('\n').find((l) => l.startsWith(`short_pg${page}: `)) ?? '';

test('--explain names why a page with a real but tiny text layer was OCR-read', async () => {
  const r = await sob([
    'ocr',
    pdf,
    '--out',
    join(tmp, 'auto'),
    '--explain',
    '--engine',
    'tesseract',
    '--no-cache',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    explainOf(r.stderr, 1),
    /^short_pg1: ocr by tesseract; text layer 0\.00 \(26 characters: under 30, too few to trust\); /,
  );
  // A page read from its text layer needs no reason beyond its score.
  assert.match(explainOf(r.stderr, 2), /^short_pg2: text-layer; text layer 1\.00; body 11 pt; /);
});

test('--ocr never / always: the text layer is not scored, and --explain says so instead of 0.00', async () => {
  let r = await sob(['ocr', pdf, '--out', join(tmp, 'never'), '--explain', '--ocr', 'never']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(explainOf(r.stderr, 1), /^short_pg1: text-layer; text layer not scored \(--ocr never\); /);
  r = await sob([
    'ocr',
    pdf,
    '--out',
    join(tmp, 'always'),
    '--explain',
    '--ocr',
    'always',
    '--engine',
    'tesseract',
    '--no-cache',
    '--max-pages',
    '1',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    explainOf(r.stderr, 1),
    /^short_pg1: ocr by tesseract; text layer not scored \(--ocr always\); /,
  );
});
