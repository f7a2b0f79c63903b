/**
 * `sob ocr` as one use case: one markdown transcript per PDF page (text layer where it is real,
 * OCR or a vision-language model where it is not), optionally scored with olmOCR-bench tests. The
 * command (`src/cli/ocr.ts`) reads the flags into `OcrSettings` and calls `transcribePdfs`.
 */

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import type { OcrEngineName, PageTranscript, TranscriptMethod } from '../../sources/pdf/index.ts';
import { imageToPdf, listPdfs, oversizedImage } from '../../sources/pdf-pages.ts';
import { errorMessage, UnreadableInput, UserError } from '../core/errors.ts';
import { writeFileAtomic, writeJsonAtomic } from '../core/files.ts';
import { ocrPageLineText } from '../core/formats/ocr-pages.ts';
import { log } from './io.ts';

/** What `sob ocr` was asked: the inputs, where the transcripts go and how pages are read. */
export interface OcrSettings {
  /** PDF files, folders of them, or PNG/JPEG images. */
  inputs: string[];
  out: string;
  tests?: string;
  cacheDir?: string;
  cache: boolean;
  workers?: number;
  ocr: 'auto' | 'always' | 'never';
  /** both | tesseract | paddle, or `openai:<model>` / `gemini:<model>`. */
  engine: string;
  baseUrl?: string[];
  lang: string;
  /** Which margins to drop (`layout`, `repeated`), or false to keep them. */
  margins: 'layout' | 'repeated' | false;
  maxPages: number;
  /** Seconds. */
  pageTimeout: number;
  maxPixels: number;
  explain: boolean;
  /** `--batch` (with a page-reading model): every page through the provider's batches first. */
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  /** Seconds. */
  batchDeadline?: number;
}

interface PdfInput {
  file: string;
  /** Path relative to the input argument (a file's own name when given directly), with `/`. */
  rel: string;
  /** A PNG or JPEG given as a file: read as a one-page scanned PDF. */
  image?: boolean;
}

const IMAGE = /\.(png|jpe?g)$/i;

/** The transcript name of a page: `<input without .pdf (or the image's extension)>_pg<N>`. */
function transcriptName(input: PdfInput, page: number): string {
  return input.image ? `${input.rel.replace(IMAGE, '')}_pg${page}` : pageKeyOf(input.rel, page);
}

/** An error message on one line (pdf.js messages may hold newlines or control characters). */
function oneLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** `sources/ocr-check.ts`'s pageKey, kept here so listing inputs loads no OCR code. */
function pageKeyOf(pdf: string, page: number): string {
  return `${pdf.replace(/\.pdf$/i, '')}_pg${page}`;
}

export function expandPdfInputs(inputs: string[]): PdfInput[] {
  const out: PdfInput[] = [];
  for (const input of inputs) {
    if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
    if (statSync(input).isDirectory()) {
      const files = listPdfs(input);
      if (files.length === 0) {
        const images = readdirSync(input).filter((f) => IMAGE.test(f)).length;
        throw new UserError(
          `${input}: no .pdf files in this folder${images > 0 ? ` (${images} PNG/JPEG image${images === 1 ? '' : 's'}: give images by name, e.g. sob ocr ${join(input, '*.png')})` : ''}`,
        );
      }
      for (const file of files) out.push({ file, rel: relative(input, file).split('\\').join('/') });
    } else out.push({ file: input, rel: basename(input), ...(IMAGE.test(input) ? { image: true } : {}) });
  }
  const seen = new Map<string, string>();
  for (const p of out) {
    const key = transcriptName(p, 1);
    const other = seen.get(key);
    if (other !== undefined)
      throw new UserError(`two inputs would write the same transcripts (${key}.md): ${other} and ${p.file}`);
    seen.set(key, p.file);
  }
  return out;
}

/** One `--explain` line per page: method, engine, text-layer score, and the layout's decisions. */
export function explainLine(name: string, p: PageTranscript): string {
  if (p.skipped) return `${name}: skipped (${p.skipped})`;
  const e = p.explain;
  if (!e) return `${name}: ${p.method}`;
  if (e.blank) return `${name}: blank, not OCR'd (${e.blank}); ${e.seconds.toFixed(3)} s`;
  const parts = [
    `${e.method}${e.engine ? ` by ${e.engine}` : ''}`,
    e.evidence
      ? `text layer ${e.text_layer_score.toFixed(2)}${e.why ? ` (${e.why})` : ''}`
      : `text layer not scored (--ocr ${e.method === 'text-layer' ? 'never' : 'always'})`,
  ];
  if (e.combine)
    parts.push(
      `combined: ${e.combine.tesseractKept} lines tesseract, ${e.combine.respaced} PaddleOCR with tesseract's spaces, ${e.combine.paddleOnly} PaddleOCR only`,
    );
  const byOcr = e.turns_tried === 4;
  if (e.rotation !== undefined)
    parts.push(
      `read at rotation ${e.rotation.read} (its /Rotate is ${e.rotation.page}; ${byOcr ? 'of 4 turns tried, tesseract read most there' : 'most of its text runs that way'})`,
    );
  else if (byOcr) parts.push('4 turns tried, none read better than as it is');
  const l = e.layout;
  parts.push(`body ${l.body_size} pt`);
  if (l.furniture.length > 0)
    parts.push(
      `dropped ${l.furniture.map((f) => `${f.edge} "${f.text.length > 40 ? `${f.text.slice(0, 40)}...` : f.text}" (${f.why})`).join(', ')}`,
    );
  if (l.column_cuts > 0) parts.push(`${l.column_cuts} column cut${l.column_cuts === 1 ? '' : 's'}`);
  if (l.tables.length > 0)
    parts.push(
      `tables ${l.tables.map((t) => `${t.rows}x${t.columns} ${t.format} at y=${t.top}`).join(', ')}`,
    );
  parts.push(`${e.seconds.toFixed(1)} s`);
  return `${name}: ${parts.join('; ')}`;
}

/**
 * Runs `sob ocr`: transcripts and ocr_pages.jsonl written input by input, progress on stderr, the
 * test report on stdout; an unreadable input or page is named and the others still done.
 */
export async function transcribePdfs(s: OcrSettings): Promise<void> {
  const { inputs } = s;
  const pdfs = expandPdfInputs(inputs);
  // Loaded here, not at the top: pdf.js and the OCR engines are heavy and change globals.
  const { checkTranscripts, formatOcrReport, loadOcrTests, pageKey } = await import(
    '../../sources/ocr-check.ts'
  );
  const { OcrCache, OcrEngine, pdfsToTranscripts } = await import('../../sources/pdf/index.ts');
  const tests = s.tests ? await loadOcrTests(s.tests) : undefined;
  const local = s.engine.includes(':') ? 'both' : (s.engine as OcrEngineName);
  const { DEFAULT_OCR_SETTINGS, parseLanguages } = await import('../../sources/pdf/ocr.ts');
  const langs = parseLanguages(s.lang);
  const engine = new OcrEngine({
    workers: s.workers,
    cacheDir: s.cache ? s.cacheDir : null,
    engine: local,
    // English alone keeps the settings (and the cache keys) as they were.
    settings: langs.join('+') === 'eng' ? DEFAULT_OCR_SETTINGS : { ...DEFAULT_OCR_SETTINGS, langs },
  });
  // A vision-language model reads each page first; its answers are cached beside the OCR's.
  const model = s.engine.includes(':')
    ? await (await import('../runner/vlm-pages.ts')).VlmPageReader.start(s.engine, {
        providerOptions: s.baseUrl ? { baseUrls: s.baseUrl } : {},
        cacheDir: s.cache ? join(s.cacheDir ?? OcrCache.defaultDir(), 'vlm') : null,
      })
    : undefined;
  const started = Date.now();
  const transcripts = new Map<string, string>();
  const methods: Record<TranscriptMethod, number> = {
    'text-layer': 0,
    ocr: 0,
    mixed: 0,
    blank: 0,
    vlm: 0,
  };
  let fallbacks = 0;
  let skipped = 0;
  const pagesLog: string[] = [];
  const images = pdfs.filter((p) => p.image).length;
  const docs = pdfs.length - images;
  log(
    `transcribing ${[docs > 0 ? `${docs} PDF${docs === 1 ? '' : 's'}` : '', images > 0 ? `${images} image${images === 1 ? '' : 's'}` : ''].filter(Boolean).join(' and ')} -> ${s.out}`,
  );
  mkdirSync(s.out, { recursive: true });
  const unreadable: string[] = [];
  /** Inputs that opened but failed while being read (exit 1 at the end). */
  const failed: string[] = [];
  let scratch: string | undefined;
  let lastReason = '';
  let finished = 0;
  const writePagesLog = () =>
    writeFileAtomic(join(s.out, 'ocr_pages.jsonl'), pagesLog.length ? `${pagesLog.join('\n')}\n` : '');
  // Ctrl-C (or SIGTERM): the inputs finished so far keep their transcripts and their lines in
  // ocr_pages.jsonl (pages are reported per input, so one cut half way is read again next
  // time; its OCR'd pages come from the cache), then exit 130 at once.
  const onSignal = () => {
    writePagesLog();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    log(
      `interrupted: ${finished} of ${pdfs.length} input${pdfs.length === 1 ? '' : 's'} transcribed (listed in ${join(s.out, 'ocr_pages.jsonl')}); re-run the same command to do the rest${s.cache ? " (pages already OCR'd come from the cache)" : ''}${s.batch ? '; batches already at the provider keep running and are collected then, not sent again' : ''}`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (model && s.batch) {
      // Every page's picture goes to the provider's batches first; the pages are then read
      // from their answers below (a page without one is read locally and says why).
      const paths: string[] = [];
      const relOf = new Map<string, string>();
      for (const [i, pdf] of pdfs.entries()) {
        let path = pdf.file;
        if (pdf.image) {
          if (oversizedImage(pdf.file, s.maxPixels)) continue;
          scratch ??= mkdtempSync(join(tmpdir(), 'sob-ocr-'));
          path = join(scratch, `${i + 1}.pdf`);
          if (await imageToPdf(pdf.file, path)) continue;
        }
        paths.push(path);
        relOf.set(path, pdf.rel);
      }
      const { askPagesByBatch, pageBatchLine } = await import('../runner/vlm-batch.ts');
      const { modelPictures } = await import('../../sources/pdf/model-pages.ts');
      const b = await askPagesByBatch(model, {
        dir: join(s.out, 'vlm-batch'),
        settings: {
          fallback: s.batchFallback,
          pollMs: s.batchPollMs,
          deadlineMs: s.batchDeadline === undefined ? undefined : s.batchDeadline * 1000,
        },
        pictures: (then) =>
          modelPictures(paths, {
            longSide: model.longSide,
            maxPages: s.maxPages,
            maxPixels: s.maxPixels,
            then,
          }),
        label: (p) => `${relOf.get(p.pdf) ?? p.pdf} page ${p.page}`,
        log,
      });
      log(pageBatchLine(model.id, b));
    }
    const onPages = (pdf: PdfInput, pages: PageTranscript[]) => {
      finished++;
      for (const p of pages) {
        const name = transcriptName(pdf, p.page);
        if (p.skipped) {
          skipped++;
          pagesLog.push(ocrPageLineText({ pdf: pdf.rel, page: p.page, skipped: p.skipped }));
          continue;
        }
        const out = join(s.out, `${name}.md`);
        mkdirSync(dirname(out), { recursive: true });
        writeFileAtomic(out, p.markdown === '' || p.markdown.endsWith('\n') ? p.markdown : `${p.markdown}\n`);
        transcripts.set(name, p.markdown);
        methods[p.method]++;
        if (p.fallback) fallbacks++;
        pagesLog.push(
          ocrPageLineText({
            pdf: pdf.rel,
            page: p.page,
            transcript: `${name}.md`,
            method: p.method,
            engine: p.engine ?? null,
            // The languages tesseract read the page in (PaddleOCR's model is its own).
            ...(p.engine === 'tesseract' || p.engine === 'both' ? { languages: langs } : {}),
            ...(p.fallback ? { fallback: p.fallback } : {}),
            ...(p.model ? { model: p.model } : {}),
            ...(p.explain ? { explain: p.explain } : {}),
          }),
        );
        if (s.explain) log(explainLine(name, p));
      }
      const done = pages.filter((p) => !p.skipped);
      const left = pages.length - done.length;
      log(
        `${pdf.rel}: ${done.length} page${done.length === 1 ? '' : 's'} (${[...new Set(done.map((p) => p.method))].join(', ') || 'none'})${left > 0 ? `, ${left} skipped` : ''}`,
      );
    };
    // Every input through the one multi-PDF driver: several in flight at once (one more than
    // the OCR workers, so pdf.js reads while OCR runs), one engine for all. An input that cannot
    // be opened (not a PDF, truncated, password-protected) is named and skipped: the others are
    // still transcribed, and `ocr_pages.jsonl` says why it has no pages.
    let failure: unknown;
    // The driver's inputs are the inputs' indices: one entry each, whatever their paths.
    const inputOf = (key: string) => ({ pdf: pdfs[Number(key)], i: Number(key) });
    await pdfsToTranscripts(
      pdfs.map((_, i) => String(i)),
      {
        engine,
        ocr: s.ocr,
        dropMargins: s.margins !== false,
        ...(s.margins !== false ? { margins: s.margins } : {}),
        maxPages: s.maxPages,
        pageTimeoutMs: s.pageTimeout * 1000,
        maxPixels: s.maxPixels,
        model,
        explain: s.explain,
      },
      {
        open: async (key) => {
          const { pdf, i } = inputOf(key);
          if (!pdf.image) return pdf.file;
          // Measured on its header first: a 1 MB PNG may declare 30,000 px square (3.6 GB decoded).
          const big = oversizedImage(pdf.file, s.maxPixels);
          if (big) {
            log(`${pdf.file}: page 1 skipped: ${big}`);
            return [{ page: 1, markdown: '', method: 'ocr', skipped: big }];
          }
          scratch ??= mkdtempSync(join(tmpdir(), 'sob-ocr-'));
          const path = join(scratch, `${i + 1}.pdf`);
          const bad = await imageToPdf(pdf.file, path);
          if (bad) throw new UnreadableInput(pdf.file, bad);
          return path;
        },
        // An image's pages are logged under the image's name, not the scratch PDF's.
        optionsOf: (key, path) => ({
          log: (line: string) => log(line.split(path).join(inputOf(key).pdf.file)),
        }),
        onEach: (key, pages) => onPages(inputOf(key).pdf, pages),
        onError: (key, e) => {
          const { pdf } = inputOf(key);
          // Our own errors (an OCR engine that cannot start, a cache that cannot be written)
          // stop the run: every input would meet them. An error inside one PDF (pdf.js on a
          // circular page tree, arrays nested too deep to parse) is that PDF's alone: it is
          // named, and the others are still read; the run then ends with exit 1 naming it.
          if (e instanceof UserError && !(e instanceof UnreadableInput)) {
            failure ??= e;
            return;
          }
          finished++;
          if (e instanceof UnreadableInput) {
            const why = e.reason;
            unreadable.push(pdf.rel);
            lastReason = `${pdf.file}: ${why}`;
            if (pdfs.length > 1) log(`${pdf.file}: skipped: ${why}`);
            pagesLog.push(ocrPageLineText({ pdf: pdf.rel, page: null, skipped: why }));
          } else {
            const why = `failed while reading: ${oneLine(errorMessage(e))}`;
            failed.push(pdf.rel);
            log(`${pdf.file}: ${why}`);
            pagesLog.push(ocrPageLineText({ pdf: pdf.rel, page: null, skipped: why }));
          }
        },
        stop: () => failure !== undefined,
      },
    );
    if (failure !== undefined) throw failure;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await engine.close();
    await model?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    writePagesLog();
  }
  // Said last, after the summary (and the test report), so nothing done is lost from view.
  const failedAtEnd = () => {
    if (failed.length > 0)
      throw new UserError(
        `${failed.length} of ${pdfs.length} input${pdfs.length === 1 ? '' : 's'} failed while being read: ${failed.sort().join(', ')} (see ${join(s.out, 'ocr_pages.jsonl')}); the others were transcribed`,
      );
  };
  if (unreadable.length === pdfs.length)
    throw new UserError(
      pdfs.length === 1 ? lastReason : `none of the ${pdfs.length} PDFs could be read (see above)`,
    );
  const secs = (Date.now() - started) / 1000;
  if (model) {
    const st = model.stats;
    log(
      `${model.id}: ${methods.vlm} page${methods.vlm === 1 ? '' : 's'} read (${s.batch ? `${st.batched} answered in batches, ` : ''}${st.asked} request${st.asked === 1 ? '' : 's'}, ${st.cached} from cache, ${st.reasked_rotated} asked again turned upright${st.cost > 0 ? `, $${st.cost.toFixed(4)}` : ''}); ${fallbacks} page${fallbacks === 1 ? '' : 's'} read by the local pipeline instead (named in ocr_pages.jsonl)`,
    );
  }
  log(
    `${transcripts.size} page${transcripts.size === 1 ? '' : 's'} in ${secs.toFixed(1)} s: ${methods['text-layer']} text layer, ${methods.ocr} OCR, ${methods.mixed} mixed${methods.blank > 0 ? `, ${methods.blank} blank` : ''}` +
      `${failed.length > 0 ? `, ${failed.length} input${failed.length === 1 ? '' : 's'} failed` : ''}${skipped > 0 ? `, ${skipped} skipped` : ''}${unreadable.length > 0 ? `; ${unreadable.length} input${unreadable.length === 1 ? '' : 's'} unreadable, skipped (${unreadable.join(', ')})` : ''} (OCR: ${engine.recognised} recognised, ${engine.cached} from cache)`,
  );
  if (!tests) return failedAtEnd();
  // A test's `pdf` is relative to the benchmark's pdfs folder; an input may be that folder or one below it.
  const relOf = (testPdf: string) =>
    pdfs.find((p) => testPdf === p.rel || testPdf.endsWith(`/${p.rel}`))?.rel;
  const mine = tests.tests.filter((t) => relOf(t.pdf) !== undefined);
  const report = checkTranscripts({ tests: mine, skipped: tests.skipped }, (pdf, page) =>
    transcripts.get(pageKey(relOf(pdf)!, page)),
  );
  const file = join(s.out, 'ocr_tests.json');
  writeJsonAtomic(file, {
    dataset: s.tests,
    tests_left_out: tests.tests.length - mine.length,
    ...report,
  });
  process.stdout.write(`${formatOcrReport(report)}\n`);
  if (mine.length < tests.tests.length)
    log(`${tests.tests.length - mine.length} tests left out: their PDFs are not among the inputs`);
  log(`wrote ${file}`);
  failedAtEnd();
}
