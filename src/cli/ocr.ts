/** `sob ocr`: one markdown transcript per PDF page, optionally scored with olmOCR-bench tests. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import type { OcrEngineName, PageTranscript, TranscriptMethod } from '../../sources/pdf/index.ts';
import { imageToPdf, listPdfs, oversizedImage } from '../../sources/pdf-pages.ts';
import { mapConcurrent } from '../core/concurrency.ts';
import { errorMessage, UnreadableInput, UserError } from '../core/errors.ts';
import { writeFileAtomic, writeJsonAtomic } from '../core/files.ts';
import { batchOptions, choiceOption, engineOption, intOption, log, type OcrEngineFlag } from './common.ts';

interface OcrFlags {
  out: string;
  tests?: string;
  cacheDir?: string;
  cache: boolean;
  workers?: number;
  ocr: 'auto' | 'always' | 'never';
  engine: OcrEngineFlag;
  baseUrl?: string[];
  lang: string;
  margins: boolean;
  maxPages: number;
  pageTimeout: number;
  maxPixels: number;
  explain: boolean;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
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

export function registerOcr(program: Command): void {
  const cmd = program
    .command('ocr')
    .description('transcribe PDFs page by page (text layer where it is real, OCR where it is not)')
    .argument(
      '<pdf-or-dir...>',
      'PDF files, folders (every *.pdf under them), or PNG/JPEG images (each read as a one-page scan)',
    )
    .requiredOption(
      '--out <dir>',
      'writes <dir>/<pdf path relative to the input, without .pdf>_pg<N>.md and <dir>/ocr_pages.jsonl',
    )
    .option('--tests <dataset.jsonl>', 'olmOCR-bench tests: print pass rates and write <dir>/ocr_tests.json')
    .option('--cache-dir <dir>', 'OCR cache folder (default: ~/.cache/sob-eval/ocr)')
    .option('--no-cache', 'do not read or write the OCR cache')
    .option('--workers <n>', 'OCR workers (default: one per core)', intOption('--workers', 1))
    .option(
      '--ocr <mode>',
      'auto (text layer where it is real, per page) | always | never',
      choiceOption(['auto', 'always', 'never'] as const),
      'auto',
    )
    .option(
      '--engine <name>',
      'OCR engine: both (tesseract.js and PaddleOCR, combined line by line) | tesseract | paddle | openai:<model> | gemini:<model> (a vision-language model reads each page as olmOCR asks it; a page it fails on is read by both)',
      engineOption,
      'both',
    )
    .option(
      '--base-url <url...>',
      'with --engine openai:<model>: an OpenAI-compatible server (vLLM serving olmOCR, ...); gemini: another endpoint',
    )
    .option(
      '--lang <langs>',
      'tesseract languages joined by + (eng, fra: the traineddata packages installed), e.g. eng+fra',
      'eng',
    )
    .option('--no-margins', 'keep running headers, footers and page numbers')
    .option(
      '--max-pages <n>',
      'pages read per PDF; later pages are skipped and named',
      intOption('--max-pages', 1),
      500,
    )
    .option(
      '--page-timeout <seconds>',
      'time allowed per page; a slower page is skipped and named',
      intOption('--page-timeout', 1),
      180,
    )
    .option(
      '--max-pixels <n>',
      'pixels an image may have (checked before it is decoded); a page or image over it is skipped and named (default: a 600 dpi A3 scan, 7016 x 9921)',
      intOption('--max-pixels', 1),
      7016 * 9921,
    )
    .option(
      '--explain',
      'print per page why it reads as it does (engine, text-layer score, layout decisions)',
    );
  batchOptions(
    cmd,
    "with --engine openai:<model> or gemini:<model>: every page sent through the provider's batch interface before any is transcribed (half the price, answers within 24 h); the batches are kept in <dir>/vlm-batch, so a killed run collects them instead of sending them again",
  )
    .addHelpText(
      'after',
      `
Each page is read from its text layer when that layer is real (a score per page: the share of
its characters that look like text, less the share no one sees), else rendered and OCR'd; pages
with pictures of text get OCR on those pictures too. Layout: running heads and page numbers
dropped (position, clear space, page-number patterns, repetition across pages), tables rebuilt
as Markdown (HTML where headings span columns), reading order by XY-cut with column detection.

<dir>/ocr_pages.jsonl holds one line per page: pdf, page, transcript file, method, engine,
skipped (why, when the page was not transcribed) and, with --explain, the evidence.

Examples:
  sob ocr report.pdf --out runs/ocr
  sob ocr ../shared/data/olmocr-bench/pdfs --out runs/ocr --tests ../shared/data/olmocr-bench/dataset.jsonl
  sob ocr scans/ --out runs/ocr --ocr always --engine tesseract --workers 4
  sob ocr big.pdf --out runs/ocr --max-pages 50 --page-timeout 60 --explain

A PNG or JPEG given by name is read as a one-page scan (<dir>/<name without extension>_pg1.md).
A file that cannot be opened (not a PDF, truncated, password-protected) is named on stderr and in
ocr_pages.jsonl, and the other inputs are still transcribed; the command fails (exit 1) only
when no input could be read. A PDF that opens but fails while being read (a circular page tree,
objects nested too deep) is named the same way, the others are still transcribed, and the
command ends with exit 1 naming it. An image over --max-pixels (measured before decoding) is
never decoded: a page left with nothing else to read is skipped and named.

Tests whose PDF is not among the inputs are left out; a test for an input page with no transcript fails.`,
    )
    .action(async (inputs: string[], flags: OcrFlags) => {
      if (existsSync(flags.out) && !statSync(flags.out).isDirectory())
        throw new UserError(`--out ${flags.out}: is a file; give a folder for the transcripts`, 2);
      if (flags.batch && !flags.engine.includes(':'))
        throw new UserError(
          `--batch is for a vision-language model's pages (--engine openai:<model> or gemini:<model>), not --engine ${flags.engine}`,
          2,
        );
      const pdfs = expandPdfInputs(inputs);
      // Loaded here, not at the top: pdf.js and the OCR engines are heavy and change globals.
      const { checkTranscripts, formatOcrReport, loadOcrTests, pageKey } = await import(
        '../../sources/ocr-check.ts'
      );
      const { OcrCache, OcrEngine, pdfToTranscripts } = await import('../../sources/pdf/index.ts');
      const tests = flags.tests ? await loadOcrTests(flags.tests) : undefined;
      const local = flags.engine.includes(':') ? 'both' : (flags.engine as OcrEngineName);
      const { DEFAULT_OCR_SETTINGS, parseLanguages } = await import('../../sources/pdf/ocr.ts');
      const langs = parseLanguages(flags.lang);
      const engine = new OcrEngine({
        workers: flags.workers,
        cacheDir: flags.cache ? flags.cacheDir : null,
        engine: local,
        // English alone keeps the settings (and the cache keys) as they were.
        settings: langs.join('+') === 'eng' ? DEFAULT_OCR_SETTINGS : { ...DEFAULT_OCR_SETTINGS, langs },
      });
      // A vision-language model reads each page first; its answers are cached beside the OCR's.
      const model = flags.engine.includes(':')
        ? await (await import('../runner/vlm-pages.ts')).VlmPageReader.start(flags.engine, {
            providerOptions: flags.baseUrl ? { baseUrls: flags.baseUrl } : {},
            cacheDir: flags.cache ? join(flags.cacheDir ?? OcrCache.defaultDir(), 'vlm') : null,
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
        `transcribing ${[docs > 0 ? `${docs} PDF${docs === 1 ? '' : 's'}` : '', images > 0 ? `${images} image${images === 1 ? '' : 's'}` : ''].filter(Boolean).join(' and ')} -> ${flags.out}`,
      );
      mkdirSync(flags.out, { recursive: true });
      const unreadable: string[] = [];
      /** Inputs that opened but failed while being read (exit 1 at the end). */
      const failed: string[] = [];
      let scratch: string | undefined;
      let lastReason = '';
      let finished = 0;
      const writePagesLog = () =>
        writeFileAtomic(
          join(flags.out, 'ocr_pages.jsonl'),
          pagesLog.length ? `${pagesLog.join('\n')}\n` : '',
        );
      // Ctrl-C (or SIGTERM): the inputs finished so far keep their transcripts and their lines in
      // ocr_pages.jsonl (pages are reported per input, so one cut half way is read again next
      // time; its OCR'd pages come from the cache), then exit 130 at once.
      const onSignal = () => {
        writePagesLog();
        if (scratch) rmSync(scratch, { recursive: true, force: true });
        log(
          `interrupted: ${finished} of ${pdfs.length} input${pdfs.length === 1 ? '' : 's'} transcribed (listed in ${join(flags.out, 'ocr_pages.jsonl')}); re-run the same command to do the rest${flags.cache ? " (pages already OCR'd come from the cache)" : ''}${flags.batch ? '; batches already at the provider keep running and are collected then, not sent again' : ''}`,
        );
        process.exit(130);
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        if (model && flags.batch) {
          // Every page's picture goes to the provider's batches first; the pages are then read
          // from their answers below (a page without one is read locally and says why).
          const paths: string[] = [];
          const relOf = new Map<string, string>();
          for (const [i, pdf] of pdfs.entries()) {
            let path = pdf.file;
            if (pdf.image) {
              if (oversizedImage(pdf.file, flags.maxPixels)) continue;
              scratch ??= mkdtempSync(join(tmpdir(), 'sob-ocr-'));
              path = join(scratch, `${i + 1}.pdf`);
              if (await imageToPdf(pdf.file, path)) continue;
            }
            paths.push(path);
            relOf.set(path, pdf.rel);
          }
          const { askPagesByBatch } = await import('../runner/vlm-batch.ts');
          const { modelPictures } = await import('../../sources/pdf/model-pages.ts');
          const b = await askPagesByBatch(model, {
            dir: join(flags.out, 'vlm-batch'),
            settings: {
              fallback: flags.batchFallback,
              pollMs: flags.batchPollMs,
              deadlineMs: flags.batchDeadline === undefined ? undefined : flags.batchDeadline * 1000,
            },
            pictures: (then) =>
              modelPictures(paths, {
                longSide: model.longSide,
                maxPages: flags.maxPages,
                maxPixels: flags.maxPixels,
                then,
              }),
            label: (p) => `${relOf.get(p.pdf) ?? p.pdf} page ${p.page}`,
            log,
          });
          log(
            `${model.id}: batches done: ${b.submitted} picture${b.submitted === 1 ? '' : 's'} sent, ${b.collected} answer${b.collected === 1 ? '' : 's'} collected, ${b.failed} failed${b.pending > 0 ? `, ${b.pending} still pending at the provider (re-run to collect)` : ''}${b.fatal ? `; stopped: ${errorMessage(b.fatal)}` : ''}`,
          );
        }
        const onPages = (pdf: PdfInput, pages: PageTranscript[]) => {
          finished++;
          for (const p of pages) {
            const name = transcriptName(pdf, p.page);
            if (p.skipped) {
              skipped++;
              pagesLog.push(JSON.stringify({ pdf: pdf.rel, page: p.page, skipped: p.skipped }));
              continue;
            }
            const out = join(flags.out, `${name}.md`);
            mkdirSync(dirname(out), { recursive: true });
            writeFileAtomic(
              out,
              p.markdown === '' || p.markdown.endsWith('\n') ? p.markdown : `${p.markdown}\n`,
            );
            transcripts.set(name, p.markdown);
            methods[p.method]++;
            if (p.fallback) fallbacks++;
            pagesLog.push(
              JSON.stringify({
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
            if (flags.explain) log(explainLine(name, p));
          }
          const done = pages.filter((p) => !p.skipped);
          const left = pages.length - done.length;
          log(
            `${pdf.rel}: ${done.length} page${done.length === 1 ? '' : 's'} (${[...new Set(done.map((p) => p.method))].join(', ') || 'none'})${left > 0 ? `, ${left} skipped` : ''}`,
          );
        };
        // PDFs in parallel (one more than the OCR workers, so pdf.js reads while OCR runs). A PDF
        // that cannot be opened (not a PDF, truncated, password-protected) is named and skipped:
        // the others are still transcribed, and `ocr_pages.jsonl` says why it has no pages.
        let failure: unknown;
        const readOne = async (pdf: (typeof pdfs)[number], i: number) => {
          try {
            let path = pdf.file;
            if (pdf.image) {
              // Measured on its header first: a 1 MB PNG may declare 30,000 px square (3.6 GB decoded).
              const big = oversizedImage(pdf.file, flags.maxPixels);
              if (big) {
                log(`${pdf.file}: page 1 skipped: ${big}`);
                onPages(pdf, [{ page: 1, markdown: '', method: 'ocr', skipped: big }]);
                return;
              }
              scratch ??= mkdtempSync(join(tmpdir(), 'sob-ocr-'));
              path = join(scratch, `${i + 1}.pdf`);
              const bad = await imageToPdf(pdf.file, path);
              if (bad) throw new UnreadableInput(pdf.file, bad);
            }
            const own = path;
            onPages(
              pdf,
              await pdfToTranscripts(path, {
                engine,
                ocr: flags.ocr,
                dropMargins: flags.margins,
                maxPages: flags.maxPages,
                pageTimeoutMs: flags.pageTimeout * 1000,
                maxPixels: flags.maxPixels,
                model,
                explain: flags.explain,
                // An image's pages are logged under the image's name, not the scratch PDF's.
                log: (line) => log(line.split(own).join(pdf.file)),
              }),
            );
          } catch (e) {
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
              pagesLog.push(JSON.stringify({ pdf: pdf.rel, page: null, skipped: why }));
            } else {
              const why = `failed while reading: ${oneLine(errorMessage(e))}`;
              failed.push(pdf.rel);
              log(`${pdf.file}: ${why}`);
              pagesLog.push(JSON.stringify({ pdf: pdf.rel, page: null, skipped: why }));
            }
          }
        };
        await mapConcurrent(pdfs, readOne, {
          concurrency: engine.workers + 1,
          stop: () => failure !== undefined,
        });
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
            `${failed.length} of ${pdfs.length} input${pdfs.length === 1 ? '' : 's'} failed while being read: ${failed.sort().join(', ')} (see ${join(flags.out, 'ocr_pages.jsonl')}); the others were transcribed`,
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
          `${model.id}: ${methods.vlm} page${methods.vlm === 1 ? '' : 's'} read (${flags.batch ? `${st.batched} answered in batches, ` : ''}${st.asked} request${st.asked === 1 ? '' : 's'}, ${st.cached} from cache, ${st.reasked_rotated} asked again turned upright${st.cost > 0 ? `, $${st.cost.toFixed(4)}` : ''}); ${fallbacks} page${fallbacks === 1 ? '' : 's'} read by the local pipeline instead (named in ocr_pages.jsonl)`,
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
      const file = join(flags.out, 'ocr_tests.json');
      writeJsonAtomic(file, {
        dataset: flags.tests,
        tests_left_out: tests.tests.length - mine.length,
        ...report,
      });
      process.stdout.write(`${formatOcrReport(report)}\n`);
      if (mine.length < tests.tests.length)
        log(`${tests.tests.length - mine.length} tests left out: their PDFs are not among the inputs`);
      log(`wrote ${file}`);
      failedAtEnd();
    });
}
