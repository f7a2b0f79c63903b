/**
 * The PDF pipeline on orbit-bench-en (160 single report pages, 535 olmOCR-bench tests: present
 * 160, absent 143, order 159, table 73), the larger set it was developed on: pass rates printed
 * per test type, each asserted at the floor reached. Real pdf.js, tesseract.js and PaddleOCR (142
 * pages read from their text layer, 17 with pictures of text, 1 scan); OCR results are cached in
 * the test run's OCR cache (test/kit/ocr-cache.ts).
 *
 * For scale, on the same pages: pdftotext (poppler) passes 0.597 of the present/absent/order
 * tests and no table test (bench/ocr.ts measures both in one run). Some tests of the set
 * contradict each other exactly (an absent test forbids text a present or order test of the same
 * page needs: 28 tests must fail whatever the transcript, `report.ceiling`), others reword the page's text or read its tables as plain rows
 * where the page's table test needs the table; bench/ocr-failures.ts lists every failure by
 * category.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  checkTranscripts,
  formatOcrReport,
  loadOcrTests,
  type OcrCheckReport,
} from '../../sources/ocr-check.ts';
import { OcrEngine, type PageTranscript, pdfsToTranscripts } from '../../sources/pdf/index.ts';
import { sharedOcrCache } from '../kit/ocr-cache.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const SKIP = needsData('orbit-bench-en');
const DATA = sharedData('orbit-bench-en');
const PDFS = join(DATA, 'pdfs');
const engine = new OcrEngine({ workers: availableParallelism(), cacheDir: sharedOcrCache().ocr });
const pages = new Map<string, PageTranscript>();
let report: OcrCheckReport;

before(async () => {
  if (SKIP) return;
  const files = readdirSync(PDFS)
    .filter((f) => f.endsWith('.pdf'))
    .sort();
  const out = await pdfsToTranscripts(
    files.map((f) => join(PDFS, f)),
    // The page limit is not under test here: no page may be skipped on a machine busy with other tests.
    { engine, pageTimeoutMs: 900_000 },
  );
  files.forEach((f, i) => {
    pages.set(f, out[i][0]);
  });
  report = checkTranscripts(await loadOcrTests(join(DATA, 'dataset.jsonl')), (pdf, page) =>
    page === 1 ? pages.get(pdf)?.markdown : undefined,
  );
  const summary = formatOcrReport(report)
    .split('\n')
    .filter((l) => /^(group|all|type)\b/.test(l));
  process.stderr.write(`orbit-bench-en, pass rates:\n${summary.join('\n')}\n`);
});

after(async () => {
  await engine.close();
});

describe('orbit-bench-en through the PDF pipeline', { skip: SKIP }, () => {
  test('160 pages: 142 from their text layer, 17 with pictures of text (tesseract), 1 scan (both engines)', () => {
    assert.equal(pages.size, 160);
    const count = (f: (p: PageTranscript) => boolean) => [...pages.values()].filter(f).length;
    assert.equal(
      count((p) => p.method === 'text-layer' && p.engine === null),
      142,
    );
    assert.equal(
      count((p) => p.method === 'mixed' && p.engine === 'tesseract'),
      17,
    );
    assert.equal(
      count((p) => p.method === 'ocr' && p.engine === 'both'),
      1,
    );
    assert.deepEqual(report.missing_transcripts, []);
  });

  // The issue asks 0.80; 0.786 (363/462) is what honest, general rules reach (bench/ocr-failures.ts
  // classifies the 99 failures: 28 are forced by exact contradictions, most others reword the
  // page's text or read a table as plain rows where the page's table test needs the table).
  // 0.781 (361/462) since a large title over a table's header row is kept as the table's title
  // (test/cli/ocr-tables.test.ts): two pages here set their running head that way, and their
  // absent tests forbid it. 0.779 (360/462) since present tests are scored as the reference's
  // rapidfuzz scores them (sources/ocr-check.ts partialRatioReaches): one present test passed by
  // two edits sits one ulp under the reference's threshold and fails there too.
  // docs/ocr-reading-order.md gives the ceiling of each kind of failure.
  test('present+absent+order pass rate reaches 0.779 (pdftotext 0.597)', () => {
    assert.equal(report.tests, 462);
    assert.ok(report.pass_rate >= 0.779, `${report.passed}/462 = ${report.pass_rate.toFixed(3)}`);
  });

  // The ceiling (sources/ocr-check.ts ceilingOf): 32 pairs of tests on 28 pages contradict each
  // other exactly, so 28 tests fail whatever the transcript; 434 are achievable.
  test('ceiling 434/462 = 0.939 (28 forced failures); the pass rate of the achievable reaches 0.829', () => {
    assert.equal(report.ceiling.forced_failures, 28);
    assert.equal(report.ceiling.achievable, 434);
    assert.ok(
      report.ceiling.pass_rate_of_achievable >= 0.829,
      `${report.passed}/434 = ${report.ceiling.pass_rate_of_achievable.toFixed(3)}`,
    );
  });

  test('per type: present >= 0.83, absent >= 0.86, order >= 0.65', () => {
    const t = report.by_type;
    assert.ok(t.present.pass_rate >= 0.83, `present ${t.present.passed}/${t.present.tests}`);
    assert.ok(t.absent.pass_rate >= 0.86, `absent ${t.absent.passed}/${t.absent.tests}`);
    assert.ok(t.order.pass_rate >= 0.65, `order ${t.order.passed}/${t.order.tests}`);
  });

  test('table tests, reported apart, reach 0.52 (pdftotext 0)', () => {
    assert.equal(report.tables.tests, 73);
    assert.ok(
      report.tables.pass_rate >= 0.52,
      `tables ${report.tables.passed}/73 = ${report.tables.pass_rate.toFixed(3)}`,
    );
  });
});
