/**
 * Why the pipeline's transcripts fail olmOCR-bench tests: every failing present / absent / order
 * test of a set, with its page, the test, and a category assigned by rule, then the counts per
 * category, per test type and per half of the set.
 *
 *   node --import tsx bench/ocr-failures.ts [--set DIR] [--cache-dir DIR] [--list] [--type T]
 *
 * `--set` is an olmOCR-bench folder (`pdfs/`, `dataset.jsonl`; default orbit-bench-en). OCR'd
 * pictures are cached in `--cache-dir` (default: a temp folder removed afterwards). `--list`
 * prints each failing test; `--type present|absent|order` keeps one type.
 *
 * Each page is read once (as `sob ocr` reads it) and laid out in variants, so a category says
 * which change of behaviour would make the test pass:
 * - `ours`: the transcript as `sob ocr` writes it;
 * - `keep`: laid out without dropping running heads, footers and page numbers;
 * - `rows`: `ours` with every table flattened to its rows (cells joined by spaces);
 * - `edge`: only the text in the top 15% and the bottom 15% of the page;
 * - `pdftotext`: poppler's plain reading of the page.
 * The rules, first match wins:
 * - contradicting test: the page's absent test forbids text that this present/order test needs,
 *   exactly (the forbidden text is a substring of the needed text; or, for an absent test, a
 *   present/order test on the page needs text holding it): no transcript passes both. A
 *   forbidden text sharing only a prefix with a needed one is not counted here;
 * - text not on the page: under 80% of the test's words are in any reading of the page (a test
 *   written from a description, "Table with columns: ..."), or, on a page read by OCR, text missing (OCR);
 * - header/footer kept: an absent test's text is found in the page's top or bottom band;
 * - other text kept: an absent test's text is found elsewhere (body text);
 * - header/footer dropped wrongly: the test passes on `keep`;
 * - table read as cells vs rows: the test passes on `rows`, or on `keep` with tables flattened;
 *   "(the page's table test needs the table)" when a table test of the same page passes on `ours`
 *   and fails on `rows` (no transcript passes both);
 * - hyphenation/ligature/spacing: the test passes when spaces and hyphens are ignored on both sides;
 * - reading order (both found, wrong order): an order test whose two strings are both found;
 * - table read down a column: the test's words are in one of our tables, one column read downwards;
 * - reading order / line grouping (pdftotext passes): poppler's plain reading passes it;
 * - other (no reading passes): none of the above (mostly test text reworded from the page).
 * The set's pages are split in two halves by the first byte of the sha256 of the file name (even:
 * A, odd: B), so a change that helps only one half can be spotted.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exactlyContradicts,
  loadOcrTests,
  normalizeText,
  type OcrTest,
  parseHtmlTables,
  parseMarkdownTables,
  runOcrTest,
  type TextTest,
} from '../sources/ocr-check.ts';
import { OcrEngine, type PageInput, readPage, repeatedEdges } from '../sources/pdf/index.ts';
import { analyzePage } from '../sources/pdf/layout.ts';
import { sha256File } from '../sources/pdf/ocr.ts';
import { openPdf, pageSource } from '../sources/pdf/pdfjs.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const SET = flag('--set', join(import.meta.dirname, '../../shared/data/orbit-bench-en'));
const CACHE = flag('--cache-dir', '');
const LIST = args.includes('--list');
const TYPE = flag('--type', '');

/** Half A or B of a set: the parity of the first byte of the file name's sha256. */
export function halfOf(pdf: string): 'A' | 'B' {
  return (createHash('sha256').update(pdf).digest()[0] & 1) === 0 ? 'A' : 'B';
}

/** Tables flattened to rows: Markdown pipe rows and HTML rows become their cells joined by spaces. */
export function flattenTables(md: string): string {
  const html = md.replace(/<table>[\s\S]*?<\/table>/g, (t) =>
    t
      .replace(/<\/tr>/g, '\n')
      .replace(/<\/t[hd]>/g, ' ')
      .replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
      .filter((l) => l !== '')
      .join('\n'),
  );
  return html
    .split('\n')
    .filter((l) => !/^\|(?:\s*:?-{3,}:?\s*\|)+\s*$/.test(l))
    .map((l) =>
      /^\|.*\|\s*$/.test(l)
        ? l
            .slice(1, l.lastIndexOf('|'))
            .split(/(?<!\\)\|/)
            .map((c) => c.trim().replace(/\\\|/g, '|'))
            .filter((c) => c !== '')
            .join(' ')
        : l,
    )
    .join('\n');
}

const wordsOf = (s: string) => normalizeText(s).match(/[\p{L}\p{N}]+/gu) ?? [];

/** The strings a test needs present (present: its text; order: before and after). */
function needed(t: OcrTest): string[] {
  if (t.type === 'present') return [t.text];
  if (t.type === 'order') return [t.before, t.after];
  return [];
}

function found(needle: string, hay: string, maxDiffs: number): boolean {
  return runOcrTest(
    {
      type: 'present',
      text: needle,
      maxDiffs,
      caseSensitive: true,
      pdf: '',
      page: 1,
      id: '',
      category: '',
    },
    hay,
  ).passed;
}

/** Ignoring spaces and hyphens on both sides. */
const squash = (s: string) => normalizeText(s).replace(/[\s\-\u00ad]+/g, '');

function passesSquashed(t: OcrTest, md: string): boolean {
  const hay = squash(md);
  if (t.type === 'present') return found(squash(t.text), hay, t.maxDiffs);
  if (t.type === 'order') {
    const a = { ...t, before: squash(t.before), after: squash(t.after) };
    return runOcrTest(a, hay).passed;
  }
  return false;
}

/** List bullets (a symbol before an item) removed. */
const dropBullets = (s: string) =>
  s.replace(
    /(^|\s)[\u2022\u25aa\u25a0\u25cf\u25e6\u25cb\u25ba\u25b6\u2713\u27a2\uf0b7\uf0a7-](?=\s)/gu,
    '$1',
  );

/** The test's words (letters and digits only) in the same sequence in the reading. */
function passesOnWords(t: OcrTest, md: string): boolean {
  const hay = ` ${wordsOf(md).join(' ')} `;
  const at = (s: string) => hay.indexOf(` ${wordsOf(s).join(' ')} `);
  if (t.type === 'present') return at(t.text) >= 0;
  if (t.type === 'order') {
    const b = at(t.before);
    const a = hay.lastIndexOf(` ${wordsOf(t.after).join(' ')} `);
    return b >= 0 && a >= 0 && b < a;
  }
  return false;
}

/** Does a table of `md` hold the test string's words as one column read downwards? */
function downAColumn(s: string, md: string): boolean {
  const want = wordsOf(s).join(' ');
  if (want === '') return false;
  const grids = [...parseMarkdownTables(md), ...parseHtmlTables(md)];
  for (const g of grids) {
    const cells = [...g.cells.values()];
    const cols = Math.max(0, ...cells.map((c) => c.col + 1));
    for (let c = 0; c < cols; c++) {
      const down = cells
        .filter((x) => x.col === c)
        .sort((a, b) => a.row - b.row)
        .flatMap((x) => wordsOf(x.text))
        .join(' ');
      if (down.includes(want)) return true;
    }
  }
  return false;
}

interface PageReadings {
  method: string;
  ours: string;
  keep: string;
  rows: string;
  keepRows: string;
  edge: string;
  poppler: string;
}

/**
 * Does another test of the page contradict this one exactly (`exactlyContradicts`, the rule
 * `sob ocr --tests` counts its ceiling by): an absent test whose text is a substring of text
 * this present/order test needs, or, for an absent test, a present/order test needing text
 * that holds the forbidden text. No transcript passes both.
 */
export function contradicted(t: OcrTest, pageTests: OcrTest[]): boolean {
  if (t.type === 'table') return false;
  if (t.type === 'absent') return pageTests.some((o) => exactlyContradicts(t, o));
  return pageTests.some((a) => a.type === 'absent' && exactlyContradicts(a, t));
}

export function categorise(t: OcrTest, r: PageReadings, pageTests: OcrTest[]): string {
  if (contradicted(t, pageTests)) return 'contradicting test';
  if (t.type === 'absent') {
    if (found(t.text, r.edge, t.maxDiffs)) return 'header/footer kept';
    return 'other text kept';
  }
  const strings = needed(t);
  const bag = new Set([...wordsOf(r.poppler), ...wordsOf(r.keep), ...wordsOf(r.ours)]);
  const words = strings.flatMap(wordsOf);
  if (words.filter((w) => bag.has(w)).length < 0.8 * words.length)
    return r.method === 'text-layer' ? 'text not on the page (test describes it)' : 'text missing (OCR)';
  if (runOcrTest(t, r.keep).passed) return 'header/footer dropped wrongly';
  if (runOcrTest(t, r.rows).passed || runOcrTest(t, r.keepRows).passed) {
    const tables = pageTests.filter((x) => x.type === 'table');
    return tables.some((x) => runOcrTest(x, r.ours).passed && !runOcrTest(x, r.rows).passed)
      ? "table read as cells vs rows (the page's table test needs the table)"
      : 'table read as cells vs rows';
  }
  if (passesSquashed(t, r.ours) || passesSquashed(t, r.rows)) return 'hyphenation/ligature/spacing';
  if (runOcrTest(t, dropBullets(r.ours)).passed || runOcrTest(t, dropBullets(r.rows)).passed)
    return 'test drops list bullets';
  if (passesOnWords(t, r.rows) || passesOnWords(t, r.keepRows)) return 'test rewrites punctuation';
  if (t.type === 'order' && strings.every((s) => found(s, r.keepRows, t.maxDiffs)))
    return 'reading order (both found, wrong order)';
  if (strings.some((s) => downAColumn(s, r.ours))) return 'table read down a column';
  if (runOcrTest(t, r.poppler).passed) return 'reading order / line grouping (pdftotext passes)';
  return 'other (no reading passes)';
}

/** Poppler's plain reading of one page. */
/** poppler's plain reading of a page (its reading order), or with `raw` its content-stream order (`pdftotext -raw`). */
export function pdftotext(file: string, page: number, raw = false): string {
  const args = ['-f', String(page), '-l', String(page), '-enc', 'UTF-8', ...(raw ? ['-raw'] : []), file, '-'];
  return execFileSync('pdftotext', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Every PDF below `dir`, as paths relative to it, sorted. */
export function allPdfs(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? allPdfs(join(dir, e.name), `${prefix}${e.name}/`)
        : e.name.endsWith('.pdf')
          ? [`${prefix}${e.name}`]
          : [],
    )
    .sort();
}

async function main(): Promise<void> {
  const loaded = await loadOcrTests(join(SET, 'dataset.jsonl'));
  const cacheDir = CACHE || mkdtempSync(join(tmpdir(), 'sob-ocr-failures-'));
  const engine = new OcrEngine({ workers: availableParallelism(), cacheDir });
  const readings = new Map<string, PageReadings>();
  try {
    for (const rel of allPdfs(join(SET, 'pdfs'))) {
      const file = join(SET, 'pdfs', rel);
      const doc = await openPdf(file);
      const inputs: PageInput[] = [];
      try {
        for (let p = 1; p <= doc.numPages; p++) {
          const page = await doc.getPage(p);
          inputs.push(
            await readPage(
              pageSource(doc, page),
              p,
              () => sha256File(file),
              () => engine,
              {},
            ),
          );
        }
      } finally {
        await doc.destroy();
      }
      const repeated = repeatedEdges(inputs);
      for (const p of inputs) {
        const opts = { width: p.width, height: p.height, sizesAreEstimates: p.sizesAreEstimates, repeated };
        const ours = analyzePage(p.boxes, opts).markdown;
        const keep = analyzePage(p.boxes, { ...opts, dropMargins: false }).markdown;
        const band = 0.15 * p.height;
        const edgeBoxes = p.boxes.filter((b) => b.top <= band || b.bottom >= p.height - band);
        readings.set(`${rel}#${p.page}`, {
          method: p.method,
          ours,
          keep,
          rows: flattenTables(ours),
          keepRows: flattenTables(keep),
          edge: analyzePage(edgeBoxes, { ...opts, dropMargins: false }).markdown,
          poppler: pdftotext(file, p.page),
        });
      }
    }
  } finally {
    await engine.close();
    if (!CACHE) rmSync(cacheDir, { recursive: true, force: true });
  }
  const tests = loaded.tests.filter((t) => t.type !== 'table' && (!TYPE || t.type === TYPE));
  const byPage = new Map<string, OcrTest[]>();
  for (const t of loaded.tests) {
    const k = `${t.pdf}#${t.page}`;
    byPage.set(k, [...(byPage.get(k) ?? []), t]);
  }
  const counts = new Map<string, Record<string, number>>();
  const halves = { A: { passed: 0, tests: 0 }, B: { passed: 0, tests: 0 } };
  let passed = 0;
  const consistent = { passed: 0, tests: 0 };
  for (const t of tests) {
    const key = `${t.pdf}#${t.page}`;
    const r = readings.get(key);
    const h = halves[halfOf(t.pdf)];
    h.tests++;
    const free = !contradicted(t, byPage.get(key) ?? []);
    if (free) consistent.tests++;
    if (!r) continue;
    if (runOcrTest(t, r.ours).passed) {
      passed++;
      h.passed++;
      if (free) consistent.passed++;
      continue;
    }
    const cat = categorise(t, r, byPage.get(key) ?? []);
    const c = counts.get(cat) ?? {};
    c[t.type] = (c[t.type] ?? 0) + 1;
    c.all = (c.all ?? 0) + 1;
    counts.set(cat, c);
    if (LIST) {
      const what =
        t.type === 'order'
          ? `before ${JSON.stringify(t.before)} after ${JSON.stringify(t.after)}`
          : JSON.stringify((t as TextTest).text);
      process.stdout.write(`${t.pdf} p${t.page} [${halfOf(t.pdf)}] ${t.type} | ${cat} | ${what}\n`);
    }
  }
  const rows = [...counts].sort((a, b) => (b[1].all ?? 0) - (a[1].all ?? 0));
  const w = Math.max(8, ...rows.map(([k]) => k.length));
  const line = (cells: string[]) =>
    `${cells[0].padEnd(w)}  ${cells
      .slice(1)
      .map((c) => c.padStart(7))
      .join('  ')}\n`;
  process.stdout.write(
    `\n${tests.length} tests, ${passed} passed (${(passed / tests.length).toFixed(3)}); half A ${halves.A.passed}/${halves.A.tests} (${(halves.A.passed / halves.A.tests).toFixed(3)}), half B ${halves.B.passed}/${halves.B.tests} (${(halves.B.passed / halves.B.tests).toFixed(3)})\n\n`,
  );
  process.stdout.write(
    `tests no other test of their page contradicts: ${consistent.tests}, ${consistent.passed} passed (${(consistent.passed / Math.max(1, consistent.tests)).toFixed(3)})\n\n`,
  );
  process.stdout.write(line(['category', 'present', 'absent', 'order', 'all']));
  for (const [k, c] of rows)
    process.stdout.write(line([k, ...['present', 'absent', 'order', 'all'].map((x) => String(c[x] ?? 0))]));
}

if (process.argv[1]?.endsWith('ocr-failures.ts')) await main();
