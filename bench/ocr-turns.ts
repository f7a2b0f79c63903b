/**
 * What finding a scan's upright costs (`uprightTurn` in sources/pdf/index.ts): the pages
 * `--ocr auto` OCRs whole, from orbit-bench-en and the olmOCR sample, plus two scans the bench
 * makes (a ledger upright, and the same ledger set sideways on a landscape page), read by
 * tesseract.js with the probe off (the baseline) and on, in the same run, no cache.
 *
 *   node --import tsx bench/ocr-turns.ts [--workers N]
 *
 * Prints per run: seconds, pages read at 4 turns, pages turned, the tests passed on the sets'
 * pages, and whether the sideways ledger reads its 20 lines; the ratio of the times is what to
 * compare between machines.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTranscripts, loadOcrTests, pageKey } from '../sources/ocr-check.ts';
import {
  chooseMethod,
  OcrEngine,
  type PageTranscript,
  pageEvidence,
  pdfToTranscripts,
} from '../sources/pdf/index.ts';
import { openPdf, pageDrawing, pageGeometry, pageTextLayer } from '../sources/pdf/pdfjs.ts';
import { ROTATED_LINES, scannedPdf, turnedPdf } from '../test/kit/pdf-fixtures.ts';

const ROOT = join(import.meta.dirname, '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const WORKERS = Number(arg('--workers') ?? availableParallelism());
const SETS = ['olmocr-bench', 'orbit-bench-en'].map((n) => join(ROOT, '../shared/data', n));

/** PDFs with a page `--ocr auto` OCRs whole. */
async function scanned(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const rel of readdirSync(join(dir, 'pdfs'), { recursive: true }).map(String).sort()) {
    if (!rel.endsWith('.pdf')) continue;
    const doc = await openPdf(join(dir, 'pdfs', rel));
    let scan = false;
    for (let p = 1; p <= doc.numPages && !scan; p++) {
      const page = await doc.getPage(p);
      const layer = await pageTextLayer(page);
      const { width, height } = pageGeometry(page, layer.rotation);
      const drawing = await pageDrawing(page, layer.rotation);
      scan = chooseMethod(pageEvidence(layer.boxes, drawing, width, height)) === 'ocr';
    }
    await doc.destroy();
    if (scan) out.push(rel);
  }
  return out;
}

const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-turns-'));
try {
  const made = { upright: join(tmp, 'ledger-upright.pdf'), sideways: join(tmp, 'ledger-sideways.pdf') };
  writeFileSync(made.upright, await scannedPdf(await turnedPdf('rotate', 1, 0)));
  writeFileSync(made.sideways, await scannedPdf(await turnedPdf('text', 1)));
  const sets = await Promise.all(
    SETS.map(async (dir) => ({
      dir,
      rels: await scanned(dir),
      tests: await loadOcrTests(join(dir, 'dataset.jsonl')),
    })),
  );
  const files = [
    ...sets.flatMap((s) => s.rels.map((r) => join(s.dir, 'pdfs', r))),
    made.upright,
    made.sideways,
  ];
  process.stderr.write(
    `${files.length} scanned PDFs (${files.length - 2} from the sets, 2 made), ${WORKERS} workers\n`,
  );
  const rows: string[][] = [
    [
      'probe',
      'seconds',
      'ratio',
      'pages',
      'read at 4 turns',
      'turned',
      'tests passed',
      'sideways ledger lines',
    ],
  ];
  let base = 0;
  for (const findUpright of [false, true]) {
    const engine = new OcrEngine({ workers: WORKERS, cacheDir: null, engine: 'tesseract' });
    const started = performance.now();
    const out = new Map<string, PageTranscript[]>();
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: WORKERS + 1 }, async () => {
          while (next < files.length) {
            const f = files[next++];
            out.set(f, await pdfToTranscripts(f, { engine, explain: true, findUpright }));
          }
        }),
      );
    } finally {
      await engine.close();
    }
    const secs = (performance.now() - started) / 1000;
    if (!findUpright) base = secs;
    const pages = [...out.values()].flat().filter((p) => p.method === 'ocr');
    let passed = 0;
    let total = 0;
    for (const s of sets) {
      const md = new Map<string, string>();
      for (const rel of s.rels)
        for (const p of out.get(join(s.dir, 'pdfs', rel)) ?? []) md.set(pageKey(rel, p.page), p.markdown);
      const tests = s.tests.tests.filter((t) => s.rels.includes(t.pdf));
      const r = checkTranscripts({ tests, skipped: s.tests.skipped }, (pdf, page) =>
        md.get(pageKey(pdf, page)),
      );
      passed += r.passed;
      total += r.tests;
    }
    const side = out.get(made.sideways)?.[0]?.markdown ?? '';
    rows.push([
      findUpright ? 'on' : 'off (baseline)',
      secs.toFixed(1),
      (secs / base).toFixed(2),
      String(pages.length),
      String(pages.filter((p) => p.explain?.turns_tried === 4).length),
      String(pages.filter((p) => p.explain?.rotation).length),
      `${passed}/${total}`,
      `${ROTATED_LINES.filter((l) => side.includes(l)).length}/20`,
    ]);
  }
  const width = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  process.stdout.write(`${rows.map((r) => r.map((v, c) => v.padEnd(width[c])).join('  ')).join('\n')}\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
