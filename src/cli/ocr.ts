/** `sob ocr`: one markdown transcript per PDF page, optionally scored with olmOCR-bench tests. */
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { transcribePdfs } from '../app/ocr.ts';
import { UserError } from '../core/errors.ts';
import { batchOptions, choiceOption, engineOption, intOption, type OcrEngineFlag } from './common.ts';

// Listing the inputs and the --explain line are the use case's (src/app/ocr.ts).
export { expandPdfInputs, explainLine } from '../app/ocr.ts';

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
  /** `--margins <mode>`, or false for `--no-margins`. */
  margins: 'layout' | 'repeated' | false;
  maxPages: number;
  pageTimeout: number;
  maxPixels: number;
  explain: boolean;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  batchDeadline?: number;
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
    .option(
      '--margins <mode>',
      'which running heads and feet to drop: layout (position, clear space, page numbers, repetition across pages) | repeated (only lines repeating across pages, and lone page numbers: what sob build pdf drops)',
      choiceOption(['layout', 'repeated'] as const),
      'layout',
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
      await transcribePdfs({ ...flags, inputs });
    });
}
