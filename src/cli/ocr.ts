/** `sob ocr`: one markdown transcript per PDF page, optionally scored with olmOCR-bench tests. */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import type { OcrEngineName, PageTranscript, TranscriptMethod } from '../../sources/pdf/index.ts';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic, writeJsonAtomic } from '../core/files.ts';
import { choiceOption, intOption, log } from './common.ts';

interface OcrFlags {
  out: string;
  tests?: string;
  cacheDir?: string;
  cache: boolean;
  workers?: number;
  ocr: 'auto' | 'always' | 'never';
  engine: OcrEngineName;
  margins: boolean;
  maxPages: number;
  pageTimeout: number;
  explain: boolean;
}

interface PdfInput {
  file: string;
  /** Path relative to the input argument (a file's own name when given directly), with `/`. */
  rel: string;
}

function listPdfs(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listPdfs(p));
    else if (e.isFile() && /\.pdf$/i.test(e.name)) out.push(p);
  }
  return out.sort();
}

export function expandPdfInputs(inputs: string[]): PdfInput[] {
  const out: PdfInput[] = [];
  for (const input of inputs) {
    if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
    if (statSync(input).isDirectory()) {
      const files = listPdfs(input);
      if (files.length === 0) throw new UserError(`${input}: no .pdf files in this folder`);
      for (const file of files) out.push({ file, rel: relative(input, file).split('\\').join('/') });
    } else out.push({ file: input, rel: basename(input) });
  }
  const seen = new Set<string>();
  for (const p of out) {
    if (seen.has(p.rel)) throw new UserError(`two inputs would write the same transcripts: ${p.rel}`);
    seen.add(p.rel);
  }
  return out;
}

/** One `--explain` line per page: method, engine, text-layer score, and the layout's decisions. */
export function explainLine(name: string, p: PageTranscript): string {
  if (p.skipped) return `${name}: skipped (${p.skipped})`;
  const e = p.explain;
  if (!e) return `${name}: ${p.method}`;
  const parts = [
    `${e.method}${e.engine ? ` by ${e.engine}` : ''}`,
    `text layer ${e.text_layer_score.toFixed(2)}`,
  ];
  if (e.combine)
    parts.push(
      `combined: ${e.combine.tesseractKept} lines tesseract, ${e.combine.respaced} PaddleOCR with tesseract's spaces, ${e.combine.paddleOnly} PaddleOCR only`,
    );
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
  program
    .command('ocr')
    .description('transcribe PDFs page by page (text layer where it is real, OCR where it is not)')
    .argument('<pdf-or-dir...>', 'PDF files, or folders (every *.pdf under them)')
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
      'OCR engine: both (tesseract.js and PaddleOCR, combined line by line) | tesseract | paddle',
      choiceOption(['both', 'tesseract', 'paddle'] as const),
      'both',
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
      '--explain',
      'print per page why it reads as it does (engine, text-layer score, layout decisions)',
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

Tests whose PDF is not among the inputs are left out; a test for an input page with no transcript fails.`,
    )
    .action(async (inputs: string[], flags: OcrFlags) => {
      const pdfs = expandPdfInputs(inputs);
      // Loaded here, not at the top: pdf.js and the OCR engines are heavy and change globals.
      const { checkTranscripts, formatOcrReport, loadOcrTests, pageKey } = await import(
        '../../sources/ocr-check.ts'
      );
      const { OcrEngine, pdfsToTranscripts } = await import('../../sources/pdf/index.ts');
      const tests = flags.tests ? await loadOcrTests(flags.tests) : undefined;
      const engine = new OcrEngine({
        workers: flags.workers,
        cacheDir: flags.cache ? flags.cacheDir : null,
        engine: flags.engine,
      });
      const started = Date.now();
      const transcripts = new Map<string, string>();
      const methods: Record<TranscriptMethod, number> = { 'text-layer': 0, ocr: 0, mixed: 0 };
      let skipped = 0;
      const pagesLog: string[] = [];
      log(`transcribing ${pdfs.length} PDF${pdfs.length === 1 ? '' : 's'} -> ${flags.out}`);
      mkdirSync(flags.out, { recursive: true });
      try {
        const byFile = new Map(pdfs.map((p) => [p.file, p]));
        const results = await pdfsToTranscripts(
          pdfs.map((p) => p.file),
          {
            engine,
            ocr: flags.ocr,
            dropMargins: flags.margins,
            maxPages: flags.maxPages,
            pageTimeoutMs: flags.pageTimeout * 1000,
            explain: flags.explain,
            log,
          },
          (file, pages) => {
            const pdf = byFile.get(file)!;
            for (const p of pages) {
              const name = pageKey(pdf.rel, p.page);
              if (p.skipped) {
                pagesLog.push(JSON.stringify({ pdf: pdf.rel, page: p.page, skipped: p.skipped }));
                continue;
              }
              const out = join(flags.out, `${name}.md`);
              mkdirSync(dirname(out), { recursive: true });
              writeFileAtomic(
                out,
                p.markdown === '' || p.markdown.endsWith('\n') ? p.markdown : `${p.markdown}\n`,
              );
              pagesLog.push(
                JSON.stringify({
                  pdf: pdf.rel,
                  page: p.page,
                  transcript: `${name}.md`,
                  method: p.method,
                  engine: p.engine ?? null,
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
          },
        );
        results.forEach((pages, i) => {
          for (const p of pages) {
            if (p.skipped) {
              skipped++;
              continue;
            }
            transcripts.set(pageKey(pdfs[i].rel, p.page), p.markdown);
            methods[p.method]++;
          }
        });
      } finally {
        await engine.close();
        writeFileAtomic(
          join(flags.out, 'ocr_pages.jsonl'),
          pagesLog.length ? `${pagesLog.join('\n')}\n` : '',
        );
      }
      const secs = (Date.now() - started) / 1000;
      log(
        `${transcripts.size} pages in ${secs.toFixed(1)} s: ${methods['text-layer']} text layer, ${methods.ocr} OCR, ${methods.mixed} mixed` +
          `${skipped > 0 ? `, ${skipped} skipped` : ''} (OCR: ${engine.recognised} recognised, ${engine.cached} from cache)`,
      );
      if (!tests) return;
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
    });
}
