/** `sob ocr` as a user runs it: the real command in a child process, on the headers_footers sample. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sobAsync } from '../helpers/sob-async.ts';
import { sharedOcrCache } from '../kit/ocr-cache.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const DATA = sharedData('olmocr-bench');
const tmp = mkdtempSync(join(tmpdir(), 'sob-ocr-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const sob = (args: string[]) => sobAsync(args, ROOT, 300_000);

describe('sob ocr', { skip: needsData('olmocr-bench') }, () => {
  test('writes one transcript per page and scores the tests of the PDFs it was given', async () => {
    const out = join(tmp, 'out');
    const r = await sob([
      'ocr',
      join(DATA, 'pdfs/headers_footers'),
      '--out',
      out,
      '--tests',
      join(DATA, 'dataset.jsonl'),
      // The run's OCR cache: pdf.test.ts has usually read these pages already.
      '--cache-dir',
      sharedOcrCache().ocr,
    ]);
    assert.equal(r.code, 0, r.stderr);
    // Named after the PDF's path relative to the input folder, without .pdf, plus _pg<N>.md.
    const md = readdirSync(out).filter((f) => f.endsWith('.md'));
    assert.equal(md.length, 7);
    assert.ok(md.includes('ff0f0b22c55d8b90dd77d153f48e144fc9db_pg2_pg1.md'));
    const report = JSON.parse(readFileSync(join(out, 'ocr_tests.json'), 'utf8'));
    assert.equal(report.tests, 19);
    assert.equal(report.tests_left_out, 68);
    assert.deepEqual(Object.keys(report.by_type).sort(), ['absent']);
    assert.equal(report.by_category.headers_footers.tests, 19);
    assert.equal(Object.keys(report.by_page).length, 7);
    assert.ok(report.pass_rate >= 0.9, `headers_footers pass rate ${report.pass_rate}`);
    assert.deepEqual(report.skipped, { math: 12 });
    assert.deepEqual(report.tables, { tests: 0, passed: 0, pass_rate: 0 });
    assert.equal(report.results.length, 19);
    // The same numbers are printed on stdout; progress goes to stderr.
    assert.match(
      r.stdout,
      /^group +key +passed +tests +rate\nall +present\+absent\+order +\d+ +19 +\d\.\d{3}\n/,
    );
    assert.match(r.stderr, /7 pages in [\d.]+ s: \d+ text layer, \d+ OCR, \d+ mixed/);
    // One line per page in ocr_pages.jsonl, naming the transcript, the method and the engine.
    const pages = readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(pages.length, 7);
    for (const p of pages) assert.ok(readdirSync(out).includes(p.transcript), p.transcript);
  });

  test('a single file is named after itself', async () => {
    const out = join(tmp, 'one');
    const r = await sob(['ocr', join(DATA, 'pdfs/olmo2-pg4.pdf'), '--out', out, '--no-cache']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(
      readFileSync(join(out, 'olmo2-pg4_pg1.md'), 'utf8'),
      /Table 1 Composition of the pretraining data for OLMo 2\./,
    );
    assert.equal(existsSync(join(out, 'ocr_tests.json')), false);
  });

  test('a missing --out is a usage error (exit 2); a missing input fails with one line (exit 1)', async () => {
    const usage = await sob(['ocr', join(DATA, 'pdfs/olmo2-pg4.pdf')]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /required option '--out <dir>'/);
    const missing = await sob(['ocr', join(tmp, 'nope.pdf'), '--out', join(tmp, 'x')]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `sob: no such file or folder: ${join(tmp, 'nope.pdf')}\n`);
  });
});
