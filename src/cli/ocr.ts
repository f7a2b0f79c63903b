/** `sob ocr`: one markdown transcript per PDF page, optionally scored with olmOCR-bench tests. */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import type { TranscriptMethod } from '../../sources/pdf/index.ts';
import { UserError } from '../core/errors.ts';
import { choiceOption, intOption, log } from './common.ts';

interface OcrFlags {
  out: string;
  tests?: string;
  cacheDir?: string;
  cache: boolean;
  workers?: number;
  ocr: 'auto' | 'always' | 'never';
  margins: boolean;
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

export function registerOcr(program: Command): void {
  program
    .command('ocr')
    .description('transcribe PDFs page by page (text layer where it is real, OCR where it is not)')
    .argument('<pdf-or-dir...>', 'PDF files, or folders (every *.pdf under them)')
    .requiredOption('--out <dir>', 'writes <dir>/<pdf path relative to the input, without .pdf>_pg<N>.md')
    .option('--tests <dataset.jsonl>', 'olmOCR-bench tests: print pass rates and write <dir>/ocr_tests.json')
    .option('--cache-dir <dir>', 'OCR cache folder (default: ~/.cache/sob-eval/ocr)')
    .option('--no-cache', 'do not read or write the OCR cache')
    .option('--workers <n>', 'OCR workers (default: one per core)', intOption('--workers', 1))
    .option(
      '--ocr <mode>',
      'auto (per page) | always | never',
      choiceOption(['auto', 'always', 'never'] as const),
      'auto',
    )
    .option('--no-margins', 'keep running headers, footers and page numbers')
    .addHelpText(
      'after',
      `
Examples:
  sob ocr report.pdf --out runs/ocr
  sob ocr ../shared/data/olmocr-bench/pdfs --out runs/ocr --tests ../shared/data/olmocr-bench/dataset.jsonl
  sob ocr scans/ --out runs/ocr --ocr always --workers 4

Tests whose PDF is not among the inputs are left out; a test for an input page with no transcript fails.`,
    )
    .action(async (inputs: string[], flags: OcrFlags) => {
      const pdfs = expandPdfInputs(inputs);
      // Loaded here, not at the top: pdf.js and tesseract.js are heavy and change globals.
      const { checkTranscripts, formatOcrReport, loadOcrTests, pageKey } = await import(
        '../../sources/ocr-check.ts'
      );
      const { OcrEngine, pdfsToTranscripts } = await import('../../sources/pdf/index.ts');
      const tests = flags.tests ? await loadOcrTests(flags.tests) : undefined;
      const engine = new OcrEngine({ workers: flags.workers, cacheDir: flags.cache ? flags.cacheDir : null });
      const started = Date.now();
      const transcripts = new Map<string, string>();
      const methods: Record<TranscriptMethod, number> = { 'text-layer': 0, ocr: 0, mixed: 0 };
      log(`transcribing ${pdfs.length} PDF${pdfs.length === 1 ? '' : 's'} -> ${flags.out}`);
      try {
        const byFile = new Map(pdfs.map((p) => [p.file, p]));
        const results = await pdfsToTranscripts(
          pdfs.map((p) => p.file),
          { engine, ocr: flags.ocr, dropMargins: flags.margins },
          (file, pages) => {
            const pdf = byFile.get(file)!;
            for (const p of pages) {
              const out = join(flags.out, `${pageKey(pdf.rel, p.page)}.md`);
              mkdirSync(dirname(out), { recursive: true });
              writeFileSync(
                out,
                p.markdown === '' || p.markdown.endsWith('\n') ? p.markdown : `${p.markdown}\n`,
              );
            }
            log(
              `${pdf.rel}: ${pages.length} page${pages.length === 1 ? '' : 's'} (${pages.map((p) => p.method).join(', ')})`,
            );
          },
        );
        results.forEach((pages, i) => {
          for (const p of pages) {
            transcripts.set(pageKey(pdfs[i].rel, p.page), p.markdown);
            methods[p.method]++;
          }
        });
      } finally {
        await engine.close();
      }
      const secs = (Date.now() - started) / 1000;
      log(
        `${transcripts.size} pages in ${secs.toFixed(1)} s: ${methods['text-layer']} text layer, ${methods.ocr} OCR, ${methods.mixed} mixed` +
          ` (OCR: ${engine.recognised} recognised, ${engine.cached} from cache)`,
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
      writeFileSync(
        file,
        `${JSON.stringify({ dataset: flags.tests, tests_left_out: tests.tests.length - mine.length, ...report }, null, 2)}\n`,
      );
      process.stdout.write(`${formatOcrReport(report)}\n`);
      if (mine.length < tests.tests.length)
        log(`${tests.tests.length - mine.length} tests left out: their PDFs are not among the inputs`);
      log(`wrote ${file}`);
    });
}
