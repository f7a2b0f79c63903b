/**
 * `ocr_pages.jsonl`: the page index `sob ocr` writes beside its transcripts, one line per page
 * (or per input that gave none), saying how each page was read or why it was skipped
 * (docs/formats.md "ocr_pages.jsonl").
 */
import { checkVersion, type Format, stamped } from './version.ts';

export const OCR_PAGES: Format = { name: 'ocr-pages', version: 1 };

/** A transcribed page. */
export interface OcrPageRead {
  format_version?: number;
  /** The input, relative to the folder given (or its name). */
  pdf: string;
  /** 1-based page number. */
  page: number;
  /** The transcript's file name, beside the index. */
  transcript: string;
  method: 'text-layer' | 'ocr' | 'mixed' | 'blank' | 'vlm' | string;
  /** `tesseract`, `paddle`, `both`, or null (a text layer, a VLM). */
  engine: string | null;
  /** The languages tesseract read the page in. */
  languages?: string[];
  /** Why the page was read by the local pipeline instead of the model asked for. */
  fallback?: string;
  /** The model that read the page (`--model`), with its settings. */
  model?: Record<string, unknown>;
  /** `--explain`: what decided the method. */
  explain?: unknown;
}

/** A page (or a whole input: `page` null) that has no transcript, and why. */
export interface OcrPageSkipped {
  format_version?: number;
  pdf: string;
  page: number | null;
  skipped: string;
}

export type OcrPageLine = OcrPageRead | OcrPageSkipped;

/** One line's text (no newline), `format_version` first. */
export function ocrPageLineText(line: OcrPageLine): string {
  const { format_version: _, ...rest } = line;
  return JSON.stringify(stamped(OCR_PAGES, rest));
}

/** A parsed line as an `OcrPageLine`, its version checked (`where`: `file:line`); undefined when it is not one. */
export function readOcrPageLine(value: unknown, where: string): OcrPageLine | undefined {
  checkVersion(value, OCR_PAGES, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Partial<OcrPageSkipped & OcrPageRead>;
  if (typeof v.pdf !== 'string') return undefined;
  return v as OcrPageLine;
}

export function isSkippedPage(line: OcrPageLine): line is OcrPageSkipped {
  return typeof (line as OcrPageSkipped).skipped === 'string';
}
