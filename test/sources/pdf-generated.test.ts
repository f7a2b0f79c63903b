/**
 * Pages the project writes itself (pdf-lib), read by the real `sob ocr`: a two-column page comes
 * out column by column, a running header and footer are gone from every page, a table comes out
 * as a table whose cells have the right neighbours; `--explain` says why; the page cap skips
 * and names pages; `sob build pdf` rejects the skipped pages by name; a picture of text placed as
 * strips is read by OCR beside the text layer.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseHtmlTables, parseOcrTest, runOcrTest } from '../../sources/ocr-check.ts';
import { mergeTiles, pdfToTranscripts } from '../../sources/pdf/index.ts';
import {
  COMPANY,
  FOOTER,
  HEADER,
  longPdf,
  PICTURE_LINES,
  runningHeadsPdf,
  STATEMENT,
  STORES_ROWS,
  sentences,
  statementPagePdf,
  stripedPicturePdf,
  TABLE_ROWS,
  tablePdf,
  twoColumnPdf,
} from './pdf-fixtures.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-pdf-gen-'));
const pdfs = join(tmp, 'pdfs');
const out = join(tmp, 'out');
after(() => rmSync(tmp, { recursive: true, force: true }));

function sob(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/sob.js'), ...args],
      { cwd: ROOT, timeout: 170_000, env: { ...process.env, XDG_CACHE_HOME: join(tmp, 'cache') } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let run: { code: number; stdout: string; stderr: string };
const md = (name: string) => readFileSync(join(out, name), 'utf8');

before(async () => {
  mkdirSync(pdfs, { recursive: true });
  writeFileSync(join(pdfs, 'columns.pdf'), await twoColumnPdf());
  writeFileSync(join(pdfs, 'review.pdf'), await runningHeadsPdf());
  writeFileSync(join(pdfs, 'table.pdf'), await tablePdf());
  writeFileSync(join(pdfs, 'statement.pdf'), await statementPagePdf());
  run = await sob(['ocr', pdfs, '--out', out, '--explain', '--no-cache']);
});

describe('pages the project writes, through sob ocr', () => {
  test('every page gets a transcript and a line in ocr_pages.jsonl; --explain prints one line per page', () => {
    assert.equal(run.code, 0, run.stderr);
    const files = readdirSync(out)
      .filter((f) => f.endsWith('.md'))
      .sort();
    assert.deepEqual(files, [
      'columns_pg1.md',
      'review_pg1.md',
      'review_pg2.md',
      'review_pg3.md',
      'statement_pg1.md',
      'table_pg1.md',
    ]);
    const lines = readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 6);
    for (const l of lines) {
      assert.equal(l.method, 'text-layer');
      assert.equal(l.engine, null);
      assert.equal(l.explain.text_layer_score, 1);
    }
    assert.equal(
      (run.stderr.match(/^review_pg\d: text-layer; text layer 1\.00; body 10 pt; dropped /gm) ?? []).length,
      3,
    );
    assert.match(run.stderr, /^columns_pg1: text-layer; .*1 column cut/m);
    assert.match(run.stderr, /^table_pg1: text-layer; .*tables 6x3 html at y=\d+/m);
  });

  test('a two-column page reads the left column, then the right, each in order', () => {
    const text = md('columns_pg1.md').replace(/\s+/g, ' ');
    const order = [...text.matchAll(/Sentence ([LR]\d)/g)].map((m) => m[1]);
    assert.deepEqual(
      order,
      [...sentences('L', 8), ...sentences('R', 8)].map((s) => s.split(' ')[1]),
    );
    // Sentences wrapped over several lines read as one run of text.
    for (const s of [...sentences('L', 8), ...sentences('R', 8)]) assert.ok(text.includes(s), s);
    assert.ok(text.startsWith('# Notes from the River Survey'));
  });

  test('the running header and footer (and page numbers) are gone from each of the three pages, the text stays', () => {
    for (const p of [1, 2, 3]) {
      const t = md(`review_pg${p}.md`);
      assert.equal(t.includes(HEADER), false, `page ${p} keeps the header`);
      assert.equal(t.includes(FOOTER), false, `page ${p} keeps the footer`);
      assert.equal(/Page \d of 3/.test(t), false, `page ${p} keeps its page number`);
      assert.ok(t.startsWith(`## Chapter ${p}`), t.slice(0, 40));
      for (const s of sentences(`P${p}-`, 6)) assert.ok(t.replace(/\s+/g, ' ').includes(s), s);
    }
    const explain = readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((l) => l.pdf === 'review.pdf' && l.page === 1).explain;
    assert.deepEqual(
      explain.layout.furniture.map((f: { edge: string; text: string }) => [f.edge, f.text]),
      [
        ['top', HEADER],
        ['bottom', `${FOOTER} Page 1 of 3`],
      ],
    );
  });

  test("a single page's running head set large over the page's own bold title is dropped; the title and text stay", () => {
    const t = md('statement_pg1.md');
    assert.equal(t.includes(COMPANY), false, t.slice(0, 80));
    assert.ok(t.replace(/^#+ /, '').startsWith(STATEMENT), t.slice(0, 80));
    const flat = t.replace(/\s+/g, ' ');
    for (const s of sentences('S', 10)) assert.ok(flat.includes(s), s);
    const explain = readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((l) => l.pdf === 'statement.pdf').explain;
    assert.deepEqual(
      explain.layout.furniture.map((f: { edge: string; text: string; why: string }) => [
        f.edge,
        f.text,
        f.why,
      ]),
      [['top', COMPANY, 'above the page heading, 27 pt clear of it']],
    );
  });

  test('a heading row inside a table that wraps onto a second line is one row of the table', () => {
    const t = md('statement_pg1.md');
    assert.match(
      t,
      /\| \(b\) Value of imported and indigenous stores and spares consumed : \|\s*\| % to total consumption \|/,
    );
    for (const [label, a, b] of STORES_ROWS) assert.ok(t.includes(`| ${label} | ${a} | ${b} |`), label);
    const test = parseOcrTest({
      pdf: 'statement.pdf',
      page: 1,
      id: 't',
      type: 'table',
      cell: '24%',
      up: '% to total consumption',
      left: '310',
      down: '76%',
    });
    assert.ok(!('skipped' in test));
    assert.deepEqual(runOcrTest(test, t), { passed: true, explanation: '' });
  });

  test('the table is a table: its cells have their neighbours and headings (olmOCR-bench table tests)', () => {
    const t = md('table_pg1.md');
    const tables = parseHtmlTables(t);
    assert.equal(tables.length, 1);
    const check = (raw: Record<string, string>) => {
      const test = parseOcrTest({ pdf: 'table.pdf', page: 1, id: 't', type: 'table', ...raw });
      assert.ok(!('skipped' in test));
      return runOcrTest(test, t);
    };
    const cases: Record<string, string>[] = [
      { cell: '7,215', up: '12,480', down: '(1,130)', left: 'Freight charges', right: '6,802' },
      { cell: '18,565', top_heading: "2024 £'000", left_heading: 'Total revenue' },
      { cell: '17,733', top_heading: 'Year ended 31 December', up: '(1,004)' },
      { cell: "2023 £'000", up: 'Year ended 31 December', down: '11,935' },
      { cell: 'Harbour dues', down: 'Total revenue', right: '(1,130)' },
    ];
    for (const c of cases) assert.deepEqual(check(c), { passed: true, explanation: '' }, JSON.stringify(c));
    // And a wrong neighbour fails, saying why.
    const wrong = check({ cell: '7,215', right: '11,935' });
    assert.equal(wrong.passed, false);
    assert.match(wrong.explanation, /right is '6,802', not '11,935'/);
    // The text around the table stays outside it.
    assert.match(t, /The table below sets out the revenue[^<]*board\.\n\n<table>/);
    assert.match(t, /<\/table>\n\nFigures for 2023 are restated/);
    for (const [label] of TABLE_ROWS) assert.ok(t.includes(`<th>${label}</th>`), label);
  });
});

describe('the page cap and the time per page', () => {
  test('--max-pages reads the first pages and names the rest, once on stderr and one line each in ocr_pages.jsonl', async () => {
    const dir = join(tmp, 'long');
    mkdirSync(dir);
    writeFileSync(join(dir, 'long.pdf'), await longPdf(12));
    const o = join(tmp, 'long-out');
    const r = await sob(['ocr', join(dir, 'long.pdf'), '--out', o, '--max-pages', '3', '--no-cache']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      readdirSync(o)
        .filter((f) => f.endsWith('.md'))
        .sort(),
      ['long_pg1.md', 'long_pg2.md', 'long_pg3.md'],
    );
    const skippedLines = r.stderr.split('\n').filter((l) => l.includes('skipped:'));
    assert.deepEqual(skippedLines, [
      `${join(dir, 'long.pdf')}: pages 4-12 skipped: over the page cap (3 pages per PDF)`,
    ]);
    const rows = readFileSync(join(o, 'ocr_pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, 12);
    assert.deepEqual(
      rows.filter((x) => x.skipped).map((x) => x.page),
      [4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    assert.match(r.stderr, /3 pages in [\d.]+ s: 3 text layer, 0 OCR, 0 mixed, 9 skipped/);
  });

  test('a page that takes longer than the time per page is skipped and named; the others are read', async () => {
    const file = join(tmp, 'pdfs', 'review.pdf');
    const logged: string[] = [];
    // OCR of every page cannot finish in 50 ms (the engine alone takes longer to start).
    const pages = await pdfToTranscripts(file, {
      ocr: 'always',
      ocrEngine: 'tesseract',
      cacheDir: null,
      workers: 1,
      pageTimeoutMs: 50,
      log: (l) => logged.push(l),
    });
    assert.deepEqual(
      pages.map((p) => [p.page, p.skipped]),
      [1, 2, 3].map((p) => [p, 'took longer than the time per page (0 s)']),
    );
    // Pages are read side by side, each on its own pdf.js thread: their lines come in any order.
    assert.deepEqual(
      logged.filter((l) => l.includes('skipped')).sort(),
      [1, 2, 3].map((p) => `${file}: page ${p} skipped: took longer than the time per page (0 s)`),
    );
    const fast = await pdfToTranscripts(file, { ocr: 'never', cacheDir: null, pageTimeoutMs: 60_000 });
    assert.deepEqual(
      fast.map((p) => [p.page, p.skipped]),
      [
        [1, undefined],
        [2, undefined],
        [3, undefined],
      ],
    );
  });

  test('sob build pdf rejects the pages over the cap by name and builds the rest', async () => {
    const dir = join(tmp, 'build');
    mkdirSync(dir);
    writeFileSync(join(dir, 'review.pdf'), await runningHeadsPdf());
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
    };
    const ann = (source: string, id: string) =>
      JSON.stringify({
        source_id: source,
        record_id: id,
        question: 'q',
        json_schema: schema,
        ground_truth: { a: 'x', b: 'y', c: 'z' },
      });
    writeFileSync(join(tmp, 'ann.jsonl'), `${ann('review_pg1', 'one')}\n${ann('review_pg3', 'three')}\n`);
    const recs = join(tmp, 'build-out', 'records.jsonl');
    const r = await sob([
      'build',
      'pdf',
      dir,
      '--annotations',
      join(tmp, 'ann.jsonl'),
      '--out',
      recs,
      '--max-pages',
      '2',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /review\.pdf: page 3 skipped: over the page cap \(2 pages per PDF\)/);
    const ids = readFileSync(recs, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).metadata.record_id);
    assert.deepEqual(ids, ['one']);
    const rejected = readFileSync(join(tmp, 'build-out', 'rejected.jsonl'), 'utf8');
    assert.match(rejected, /"origin":"review_pg3".*page skipped: over the page cap \(2 pages per PDF\)/);
  });
});

describe('a picture of text placed as strips', () => {
  test('tiles edge to edge merge into one picture; tiles apart, or not edge to edge, do not', () => {
    const strips = Array.from({ length: 12 }, (_, i) => ({
      x0: 72,
      x1: 432,
      y0: 100 + 8 * i,
      y1: 108 + 8 * i,
    }));
    assert.deepEqual(mergeTiles(strips), [{ x0: 72, x1: 432, y0: 100, y1: 196 }]);
    const side = [
      { x0: 0, x1: 100, y0: 0, y1: 50 },
      { x0: 100, x1: 180, y0: 0, y1: 50 },
    ];
    assert.deepEqual(mergeTiles(side), [{ x0: 0, x1: 180, y0: 0, y1: 50 }]);
    const apart = [
      { x0: 72, x1: 432, y0: 100, y1: 108 },
      { x0: 72, x1: 432, y0: 110, y1: 118 },
    ];
    assert.equal(mergeTiles(apart).length, 2);
    const offset = [
      { x0: 72, x1: 432, y0: 100, y1: 108 },
      { x0: 90, x1: 432, y0: 108, y1: 116 },
    ];
    assert.equal(mergeTiles(offset).length, 2);
  });

  test('sob ocr reads the words of a picture cut into 8-point strips (each under 2% of the page) as a mixed page', async () => {
    const dir = join(tmp, 'striped');
    mkdirSync(dir);
    writeFileSync(join(dir, 'striped.pdf'), await stripedPicturePdf());
    const o = join(tmp, 'striped-out');
    const r = await sob(['ocr', join(dir, 'striped.pdf'), '--out', o, '--no-cache']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /1 page in [\d.]+ s: 0 text layer, 0 OCR, 1 mixed/);
    const text = readFileSync(join(o, 'striped_pg1.md'), 'utf8');
    for (const line of PICTURE_LINES) assert.ok(text.includes(line), `${line} in ${text.slice(0, 120)}`);
    // The text layer below the picture is read as before, after it.
    const first = sentences('S', 6)[0];
    assert.ok(text.indexOf(first) > text.indexOf(PICTURE_LINES[1]), text.slice(0, 200));
  });
});
