/**
 * Pages per minute per engine, in one run on this machine (issue 24): the same pages read by
 *
 *   text-layer PDFs  `pdftotext` (poppler, the baseline), the pipeline reading text layers,
 *                    the VLM engine online and with `--batch` against the local protocol
 *                    server (which answers at once, so what is measured is our side: drawing
 *                    the page at 1,288 px, PNG, the request, the answer read; a real model's
 *                    seconds per page come on top);
 *   scanned PDFs     the same pages drawn at 200 dpi into image-only PDFs: native `tesseract`
 *                    (pdftoppm at 300 dpi + tesseract 5, the baseline), the pipeline with
 *                    tesseract.js, PaddleOCR, both (sob's default), and the VLM engine.
 *
 * Steady state: each engine reads its first pages untimed (as many as the pipeline reads side by
 * side, so its workers, models and pdf.js threads are started), then the others timed. Ratios are over each set's baseline measured in the same run
 * (and measured again at the end, to show how far the machine's load moved). Command-line tools run as many
 * processes side by side as the pipeline has workers (one a page, OMP_THREAD_LIMIT=1), so both
 * sides have the same cores. No cache: every page is read.
 *
 *   node --import tsx bench/ocr-engines.ts [--set DIR] [--pages N] [--workers N] [--text-only]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument } from 'pdf-lib';
import {
  chooseMethod,
  OcrEngine,
  type OcrEngineName,
  pageEvidence,
  pdfsToTranscripts,
} from '../sources/pdf/index.ts';
import { modelPictures } from '../sources/pdf/model-pages.ts';
import { openPdf, pageDrawing, pageGeometry, pageTextLayer, renderPagePng } from '../sources/pdf/pdfjs.ts';
import { mapConcurrent } from '../src/core/concurrency.ts';
import { askPagesByBatch } from '../src/runner/vlm-batch.ts';
import { VlmPageReader } from '../src/runner/vlm-pages.ts';
import { startProtocolServer } from '../test/kit/protocol-server.ts';
import { allPdfs } from './ocr-failures.ts';

const run = promisify(execFile);
const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const SET = flag('--set', join(import.meta.dirname, '../../shared/data/orbit-bench-en'));
/** Pages per set (the first WARM are read untimed, to start each engine). */
const PAGES = Number(flag('--pages', '10'));
const WORKERS = Number(flag('--workers', String(availableParallelism())));
/** Pages read untimed first: as many as the pipeline reads side by side (its workers + 1). */
const WARM = Math.min(WORKERS + 1, PAGES - 1);
/** Only the text-layer rows (a quick run). */
const TEXT_ONLY = args.includes('--text-only');
const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-engines-'));

// The first PAGES single-page PDFs whose page the pipeline reads from its text layer.
const text: string[] = [];
for (const rel of allPdfs(join(SET, 'pdfs'))) {
  if (text.length >= PAGES) break;
  const file = join(SET, 'pdfs', rel);
  const doc = await openPdf(file);
  try {
    if (doc.numPages !== 1) continue;
    const page = await doc.getPage(1);
    const { width, height } = pageGeometry(page);
    const evidence = pageEvidence((await pageTextLayer(page)).boxes, await pageDrawing(page), width, height);
    if (chooseMethod(evidence) === 'text-layer') text.push(file);
  } finally {
    await doc.destroy();
  }
}
// The same pages scanned: drawn at 200 dpi, each put alone on an image-only page of its size.
const scans: string[] = [];
for (const [i, file] of text.entries()) {
  const doc = await openPdf(file);
  const page = await doc.getPage(1);
  const { width, height } = pageGeometry(page);
  const png = await renderPagePng(doc, page, 200 / 72);
  await doc.destroy();
  const out = await PDFDocument.create();
  const img = await out.embedPng(png);
  out.addPage([width, height]).drawImage(img, { x: 0, y: 0, width, height });
  const path = join(tmp, `scan-${i}.pdf`);
  writeFileSync(path, await out.save());
  scans.push(path);
}

const FRONT =
  '---\nprimary_language: en\nis_rotation_valid: True\nrotation_correction: 0\nis_table: False\nis_diagram: False\n---\n';
const server = await startProtocolServer({
  keepLog: false,
  script: () => ({ kind: 'answer', text: `${FRONT}A page of text as a model would give it.` }),
});
process.env.OPENAI_API_KEY ||= 'sk-bench';

/**
 * Steady-state pages per minute: `work` reads the first WARM pages untimed (engines, models and
 * the pdf.js threads of every PDF read side by side started), then the rest timed.
 */
async function ppm(files: string[], work: (files: string[]) => Promise<unknown>): Promise<number> {
  await work(files.slice(0, WARM));
  const t0 = performance.now();
  await work(files.slice(WARM));
  return ((files.length - WARM) / (performance.now() - t0)) * 60_000;
}

/** How the pipeline read the timed pages (a text-layer page with pictures of text is 'mixed': they are OCR'd). */
const methods = new Map<string, string>();

async function pipeline(files: string[], name: OcrEngineName, row: string): Promise<number> {
  const engine = new OcrEngine({ workers: WORKERS, cacheDir: null, engine: name });
  const seen: Record<string, number> = {};
  let call = 0;
  try {
    return await ppm(files, async (some) => {
      const out = await pdfsToTranscripts(some, { engine, ocr: 'auto' });
      // The second call is the timed one.
      if (++call === 2) for (const p of out.flat()) seen[p.method] = (seen[p.method] ?? 0) + 1;
    });
  } finally {
    methods.set(
      row,
      Object.entries(seen)
        .map(([m, n]) => `${n} ${m}`)
        .join(', '),
    );
    await engine.close();
  }
}

async function vlm(files: string[], batch: boolean): Promise<number> {
  const engine = new OcrEngine({ workers: WORKERS, cacheDir: null, engine: 'tesseract' });
  const model = await VlmPageReader.start('openai:olmocr-bench', {
    providerOptions: { baseUrls: [server.openaiBaseUrl] },
    cacheDir: null,
  });
  try {
    return await ppm(files, async (some) => {
      // With --batch: every page drawn and sent in a batch, polled (every 20 ms), collected, then read.
      if (batch)
        await askPagesByBatch(model, {
          dir: mkdtempSync(join(tmp, 'batch-')),
          settings: { fallback: 'batch', pollMs: 20 },
          pictures: (then) => modelPictures(some, { longSide: model.longSide, maxPages: 500, then }),
          log: () => {},
        });
      const out = await pdfsToTranscripts(some, { engine, ocr: 'auto', model });
      const read = out.flat().filter((p) => p.method === 'vlm').length;
      if (read !== some.length) throw new Error(`the model read ${read} of ${some.length} pages`);
    });
  } finally {
    await model.close();
    await engine.close();
  }
}

const cli = (files: string[], one: (file: string) => Promise<unknown>) =>
  ppm(files, (some) => mapConcurrent(some, one, { concurrency: WORKERS }));

const env = { ...process.env, OMP_THREAD_LIMIT: '1' };
const pdftotext = (files: string[]) =>
  cli(files, (f) => run('pdftotext', ['-enc', 'UTF-8', f, '-'], { maxBuffer: 1 << 26 }));
const tesseractCli = (files: string[]) =>
  cli(files, async (f) => {
    const base = join(mkdtempSync(join(tmp, 'cli-')), 'page');
    await run('pdftoppm', ['-r', '300', '-png', '-singlefile', f, base]);
    await run('tesseract', [`${base}.png`, '-', '-l', 'eng', '--dpi', '300'], { env, maxBuffer: 1 << 26 });
  });

class Done extends Error {}
const rows: [string, string, number, number][] = [];
const say = (set: string, name: string, value: number, base: number) => {
  rows.push([set, name, value, value / base]);
  process.stderr.write(`${set} ${name}: ${value.toFixed(1)} pages/min\n`);
};
try {
  process.stderr.write(`${text.length} pages of ${SET}, ${WORKERS} workers\n`);
  const poppler = await pdftotext(text);
  say('text layer', 'pdftotext (baseline)', poppler, poppler);
  say(
    'text layer',
    'sob pipeline (text layer read)',
    await pipeline(text, 'tesseract', 'sob pipeline (text layer read)'),
    poppler,
  );
  say('text layer', 'VLM engine, online (local server)', await vlm(text, false), poppler);
  say('text layer', 'VLM engine, --batch (local server)', await vlm(text, true), poppler);
  if (TEXT_ONLY) {
    say('text layer', 'pdftotext, again', await pdftotext(text), poppler);
    throw new Done();
  }
  const native = await tesseractCli(scans);
  say('scanned', 'tesseract 5 CLI + pdftoppm (baseline)', native, native);
  say('scanned', 'sob tesseract.js', await pipeline(scans, 'tesseract', 'sob tesseract.js'), native);
  say('scanned', 'sob PaddleOCR', await pipeline(scans, 'paddle', 'sob PaddleOCR'), native);
  say('scanned', 'sob both (default)', await pipeline(scans, 'both', 'sob both (default)'), native);
  say('scanned', 'VLM engine, online (local server)', await vlm(scans, false), native);
  // The baseline again at the end: how much the machine's load moved during the run.
  say('scanned', 'tesseract 5 CLI, again', await tesseractCli(scans), native);
  say('text layer', 'pdftotext, again', await pdftotext(text), poppler);
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
}
const w = Math.max(...rows.map((r) => r[1].length));
process.stdout.write(
  `Pages per minute, ${text.length} pages (${SET}), ${WORKERS} workers; ratio over the set's baseline in this run\n` +
    rows
      .map(
        ([set, name, v, r]) =>
          `${set.padEnd(10)}  ${name.padEnd(w)}  ${v.toFixed(1).padStart(8)}  ${r.toFixed(3).padStart(7)}${methods.has(name) ? `  (${methods.get(name)})` : ''}`,
      )
      .join('\n') +
    '\n',
);
