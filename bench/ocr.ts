/**
 * OCR throughput and transcript quality on the olmOCR-bench sample, measured in one run.
 *
 *   node --import tsx bench/ocr.ts [--data ../shared/data/olmocr-bench] [--workers N]
 *
 * 1. Every page rendered and OCR'd (`ocr: 'always'`, no cache) with one tesseract.js worker,
 *    then with the pool (one worker per core, or --workers): pages per minute, and the pool's
 *    speed-up as a ratio against the single worker measured here. A ratio, not a timed test.
 * 2. Transcripts as `sob ocr` makes them (auto: text layer, OCR or mixed per page; the OCR
 *    results of step 1 come from its cache) scored by the olmOCR-bench checker: pass rate per
 *    test type and per category (the PDF's folder), beside olmOCR's own transcripts.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTranscripts, loadOcrTests, type OcrCheckReport, pageKey } from '../sources/ocr-check.ts';
import { OcrEngine, type PageTranscript, pdfsToTranscripts } from '../sources/pdf/index.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const DATA = flag('--data', join(import.meta.dirname, '../../shared/data/olmocr-bench'));
const POOL = Number(flag('--workers', String(availableParallelism())));
const PDFS = join(DATA, 'pdfs');

function allPdfs(dir: string, prefix = ''): string[] {
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

const rels = allPdfs(PDFS);
const files = rels.map((r) => join(PDFS, r));
const cacheDir = mkdtempSync(join(tmpdir(), 'sob-bench-ocr-'));

async function ocrAll(workers: number, cache: string | null): Promise<{ pages: number; ms: number }> {
  const engine = new OcrEngine({ workers, cacheDir: cache });
  const started = performance.now();
  try {
    const out = await pdfsToTranscripts(files, { engine, ocr: 'always' });
    return { pages: out.reduce((n, p) => n + p.length, 0), ms: performance.now() - started };
  } finally {
    await engine.close();
  }
}

try {
  process.stderr.write(`OCR of every page of ${files.length} PDFs, 1 worker, then ${POOL} ...\n`);
  const one = await ocrAll(1, null);
  const pool = await ocrAll(POOL, cacheDir);
  const ppm = (m: { pages: number; ms: number }) => (m.pages / m.ms) * 60_000;
  const rows = [
    ['workers', 'pages', 'seconds', 'pages/min', 'ratio'],
    ['1', String(one.pages), (one.ms / 1000).toFixed(1), ppm(one).toFixed(1), '1.00'],
    [
      String(POOL),
      String(pool.pages),
      (pool.ms / 1000).toFixed(1),
      ppm(pool).toFixed(1),
      (ppm(pool) / ppm(one)).toFixed(2),
    ],
  ];
  const table = (rs: string[][]) => {
    const w = rs[0].map((_, i) => Math.max(...rs.map((r) => r[i].length)));
    return rs
      .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '))
      .join('\n');
  };
  process.stdout.write(
    `\nOCR throughput (render + tesseract.js, ${availableParallelism()} cores)\n${table(rows)}\n`,
  );

  // Quality: our transcripts (auto mode, OCR from the cache just filled) and olmOCR's.
  const engine = new OcrEngine({ workers: POOL, cacheDir });
  const ours = new Map<string, PageTranscript[]>();
  try {
    const out = await pdfsToTranscripts(files, { engine });
    out.forEach((pages, i) => {
      ours.set(rels[i], pages);
    });
  } finally {
    await engine.close();
  }
  const loaded = await loadOcrTests(join(DATA, 'dataset.jsonl'));
  const mine = checkTranscripts(loaded, (pdf, page) => ours.get(pdf)?.find((p) => p.page === page)?.markdown);
  const olmocr = checkTranscripts(loaded, (pdf, page) => {
    const f = join(DATA, 'olmocr_pipeline', `${pageKey(pdf, page)}_repeat1.md`);
    return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
  });
  const rate = (r: OcrCheckReport, group: 'by_type' | 'by_category', key: string) => {
    const t = r[group][key];
    return t ? `${t.pass_rate.toFixed(3)} (${t.passed}/${t.tests})` : '-';
  };
  const q: string[][] = [['group', 'ours', 'olmOCR']];
  q.push([
    'all',
    `${mine.pass_rate.toFixed(3)} (${mine.passed}/${mine.tests})`,
    `${olmocr.pass_rate.toFixed(3)} (${olmocr.passed}/${olmocr.tests})`,
  ]);
  for (const k of Object.keys(mine.by_type))
    q.push([`type ${k}`, rate(mine, 'by_type', k), rate(olmocr, 'by_type', k)]);
  for (const k of Object.keys(mine.by_category)) {
    q.push([`category ${k}`, rate(mine, 'by_category', k), rate(olmocr, 'by_category', k)]);
  }
  const methods = [...ours.values()].flat().reduce<Record<string, number>>((m, p) => {
    m[p.method] = (m[p.method] ?? 0) + 1;
    return m;
  }, {});
  process.stdout.write(
    `\nolmOCR-bench present/absent/order pass rate (${Object.entries(methods)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')} pages)\n${table(q)}\n`,
  );
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
