/**
 * What tesseract is handed: the page rendered as uncompressed netpbm (`renderPagePnm`), grey (P5)
 * when every pixel is grey and RGB (P6) otherwise, of the whole page or of one rectangle; and
 * tesseract.js reads it exactly as it reads the same page as PNG.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PDFDocument, rgb, StandardFonts } from 'pdf-lib';
import { OcrPool } from '../../sources/pdf/ocr.ts';
import {
  clipPixels,
  openPdfData,
  type PdfDocument,
  renderPagePng,
  renderPagePnm,
  renderPageRgba,
} from '../../sources/pdf/pdfjs.ts';

/** Header fields and pixel bytes of a binary netpbm image. */
function parsePnm(b: Buffer): { magic: string; width: number; height: number; pixels: Buffer } {
  const m = /^(P[56])\n(\d+) (\d+)\n255\n/.exec(b.subarray(0, 40).toString('latin1'));
  assert.ok(m, `not a P5/P6 header: ${JSON.stringify(b.subarray(0, 20).toString('latin1'))}`);
  return { magic: m[1], width: Number(m[2]), height: Number(m[3]), pixels: b.subarray(m[0].length) };
}

let grey: PdfDocument;
let colour: PdfDocument;
before(async () => {
  const make = async (red: boolean) => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([300, 200]);
    page.drawText('Harbour lantern meadow 1284', { x: 20, y: 150, size: 16, font });
    page.drawText('Copper willow granite', { x: 20, y: 110, size: 16, font });
    if (red) page.drawRectangle({ x: 200, y: 20, width: 60, height: 40, color: rgb(0.9, 0.1, 0.1) });
    return openPdfData(await doc.save());
  };
  grey = await make(false);
  colour = await make(true);
});
after(async () => {
  await grey.destroy();
  await colour.destroy();
});

test('a grey page is P5, one byte a pixel, equal to the rendered pixels', async () => {
  const page = await grey.getPage(1);
  const scale = 2;
  const pnm = parsePnm(await renderPagePnm(grey, page, scale));
  const rgba = await renderPageRgba(grey, page, scale);
  assert.deepEqual([pnm.magic, pnm.width, pnm.height], ['P5', 600, 400]);
  assert.equal(pnm.pixels.length, 600 * 400);
  let differ = 0;
  for (let i = 0; i < pnm.pixels.length; i++) if (pnm.pixels[i] !== rgba.data[4 * i]) differ++;
  assert.equal(differ, 0);
  // Ink is there: the text is dark on white.
  assert.ok(pnm.pixels.some((v) => v < 64));
});

test('a page with colour is P6, three bytes a pixel, equal to the rendered RGB', async () => {
  const page = await colour.getPage(1);
  const pnm = parsePnm(await renderPagePnm(colour, page, 2));
  const rgba = await renderPageRgba(colour, page, 2);
  assert.deepEqual([pnm.magic, pnm.width, pnm.height], ['P6', 600, 400]);
  let differ = 0;
  for (let i = 0; i < 600 * 400; i++)
    for (let c = 0; c < 3; c++) if (pnm.pixels[3 * i + c] !== rgba.data[4 * i + c]) differ++;
  assert.equal(differ, 0);
});

test('a clip is the rectangle alone: its size in pixels, the same pixels as the whole page there', async () => {
  const page = await colour.getPage(1);
  const scale = 2;
  // The red rectangle (pdf-lib's y runs up: 20..60 from the bottom of 200 is 140..180 from the top).
  const clip = { x0: 190, y0: 130, x1: 270, y1: 190 };
  const at = clipPixels(clip, scale, { width: 600, height: 400 });
  assert.deepEqual(at, { x0: 380, y0: 260, x1: 540, y1: 380 });
  const part = parsePnm(await renderPagePnm(colour, page, scale, page.rotate, clip));
  assert.deepEqual([part.magic, part.width, part.height], ['P6', 160, 120]);
  const whole = await renderPageRgba(colour, page, scale);
  let differ = 0;
  for (let y = 0; y < 120; y++)
    for (let x = 0; x < 160; x++)
      for (let c = 0; c < 3; c++)
        if (part.pixels[3 * (y * 160 + x) + c] !== whole.data[4 * ((y + 260) * 600 + x + 380) + c]) differ++;
  assert.equal(differ, 0);
  // A clip off the page keeps at least one pixel inside it.
  const off = clipPixels({ x0: 400, y0: 300, x1: 500, y1: 400 }, scale, { width: 600, height: 400 });
  assert.deepEqual(off, { x0: 599, y0: 399, x1: 600, y1: 400 });
});

test('tesseract.js reads the PNG and the netpbm of a page to the same words, boxes and confidences', async () => {
  const pool = await OcrPool.start({ workers: 1 });
  try {
    for (const doc of [grey, colour]) {
      const page = await doc.getPage(1);
      const fromPng = await pool.recognize(await renderPagePng(doc, page, 300 / 72));
      const fromPnm = await pool.recognize(await renderPagePnm(doc, page, 300 / 72));
      assert.ok(fromPng.words.length >= 7, JSON.stringify(fromPng.words.map((w) => w.text)));
      assert.deepEqual(fromPnm, fromPng);
    }
  } finally {
    await pool.terminate();
  }
});
