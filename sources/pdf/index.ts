/**
 * PDFs through OCR (issue 4): one markdown-like transcript per page from the best evidence the
 * page has. Born-digital pages are read from their text layer; pages without one, or whose
 * text layer is hidden (somebody's OCR under or over a scan) or garbage, are rendered and
 * OCR'd; born-digital pages with images (2% of the page or more) also get the confident OCR'd
 * words lying on those images where the text layer has nothing (text set as graphics: 'mixed').
 * One layout pass (`layoutPage`) turns either kind of words into text.
 */
import { availableParallelism } from 'node:os';
import { UserError } from '../../src/core/errors.ts';
import { layoutPage, type TextBox } from './layout.ts';
import {
  DEFAULT_OCR_SETTINGS,
  OcrCache,
  type OcrPage,
  OcrPool,
  type OcrSettings,
  sha256File,
} from './ocr.ts';
import {
  openPdf,
  type PageDrawing,
  type PdfDocument,
  type PdfPage,
  pageDrawing,
  pageGeometry,
  pageTextLayer,
  type Rect,
  renderPagePng,
} from './pdfjs.ts';

export type { TextBox } from './layout.ts';
export { layoutPage } from './layout.ts';
export { OcrCache, OcrPool } from './ocr.ts';

export type TranscriptMethod = 'text-layer' | 'ocr' | 'mixed';

export interface PageTranscript {
  /** 1-based. */
  page: number;
  markdown: string;
  method: TranscriptMethod;
}

/**
 * Shared OCR machinery: a worker pool started on first use (so text-only PDFs never start
 * one) and the on-disk cache. One engine serves many PDFs; `close()` stops its workers.
 */
export class OcrEngine {
  private pool?: Promise<OcrPool>;
  readonly cache?: OcrCache;
  readonly settings: OcrSettings;
  readonly workers: number;
  /** Pages recognised (cache misses) and served from the cache. */
  recognised = 0;
  cached = 0;

  constructor(
    opts: {
      workers?: number;
      cacheDir?: string | null;
      settings?: OcrSettings;
      startTimeoutMs?: number;
    } = {},
  ) {
    this.workers = Math.max(1, opts.workers ?? availableParallelism());
    this.settings = opts.settings ?? DEFAULT_OCR_SETTINGS;
    if (opts.cacheDir !== null) this.cache = new OcrCache(opts.cacheDir ?? OcrCache.defaultDir());
    this.startTimeoutMs = opts.startTimeoutMs ?? 60_000;
  }

  private readonly startTimeoutMs: number;

  async recognize(
    pdfSha: string,
    page: number,
    scale: number,
    render: () => Promise<Buffer>,
  ): Promise<OcrPage> {
    const key = this.cache?.key(pdfSha, page, scale, this.settings);
    if (key) {
      const hit = this.cache!.get(key);
      if (hit) {
        this.cached++;
        return hit;
      }
    }
    this.pool ??= OcrPool.start({
      workers: this.workers,
      settings: this.settings,
      startTimeoutMs: this.startTimeoutMs,
    });
    const pool = await this.pool;
    const result = await pool.recognize(await render());
    this.recognised++;
    if (key) this.cache!.put(key, result);
    return result;
  }

  async close(): Promise<void> {
    if (this.pool) await (await this.pool).terminate();
    this.pool = undefined;
  }
}

export interface PdfTranscriptOptions {
  /** A shared engine; without one, a private one is made (and closed) for this PDF. */
  engine?: OcrEngine;
  /** For a private engine: pool size (default: the cores) and cache folder (null: none). */
  workers?: number;
  cacheDir?: string | null;
  /** 'auto' (default) picks per page; 'always' OCRs every page; 'never' reads text layers only. */
  ocr?: 'auto' | 'always' | 'never';
  /** Drop running headers/footers and page numbers (default true). */
  dropMargins?: boolean;
  log?: (line: string) => void;
}

/**
 * Pixels per point for OCR: 300 dpi, more on small pages (small type: at least 1,800 px on the
 * long side), never over 4,000 px on the long side (big scans are already coarse).
 */
export function renderScale(width: number, height: number): number {
  const long = Math.max(width, height);
  return Math.min(Math.max(300 / 72, 1800 / long), 4000 / long, 8);
}

function area(r: Rect): number {
  return Math.max(0, r.x1 - r.x0) * Math.max(0, r.y1 - r.y0);
}

function overlaps(a: Rect, b: Rect): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

function boxRect(b: TextBox): Rect {
  return { x0: b.x0, y0: b.top, x1: b.x1, y1: b.bottom };
}

/** Share of characters that look like text (letters, digits, punctuation, spaces). */
function textLikeShare(boxes: TextBox[]): number {
  let good = 0;
  let all = 0;
  for (const b of boxes) {
    for (const ch of b.text) {
      all++;
      if (/[\p{L}\p{N}\p{P}\p{Zs}\p{Sm}\p{Sc}\p{M}]/u.test(ch) && ch !== '\ufffd') good++;
    }
  }
  return all === 0 ? 0 : good / all;
}

export interface PageEvidence {
  textChars: number;
  textLikeShare: number;
  /** Share of the page under images (capped at 1). */
  imageCover: number;
  /** Share of the text no one sees (invisible, or under a scan): an OCR layer, not the page's text. */
  hiddenText: number;
  /** Images of at least 2% of the page: OCR'd words on them join a text layer ('mixed'). */
  images: Rect[];
}

/** What the page offers, for choosing between its text layer and OCR. */
export function pageEvidence(
  boxes: TextBox[],
  drawing: PageDrawing,
  width: number,
  height: number,
): PageEvidence {
  const pageArea = width * height;
  const images = drawing.images.filter((r) => area(r) >= 0.02 * pageArea);
  return {
    textChars: boxes.reduce((s, b) => s + b.text.length, 0),
    textLikeShare: textLikeShare(boxes),
    imageCover: Math.min(1, images.reduce((s, r) => s + area(r), 0) / pageArea),
    hiddenText: drawing.textOps === 0 ? 0 : drawing.hiddenTextOps / drawing.textOps,
    images,
  };
}

/** The choice per page: OCR where the text layer is missing, hidden (an OCR layer) or garbage. */
export function chooseMethod(e: PageEvidence): TranscriptMethod {
  if (e.textChars < 30) return 'ocr';
  if (e.textLikeShare < 0.85) return 'ocr';
  if (e.hiddenText > 0.5) return 'ocr';
  if (e.images.length > 0) return 'mixed';
  return 'text-layer';
}

/**
 * OCR words (pixels) as layout boxes (points); each tesseract line keeps its identity. A word
 * box spans ascender to descender only when the word has both, so a line's size is taken from
 * its taller words (80th percentile).
 */
export function ocrBoxes(ocr: OcrPage, scale: number, minConf = 0): TextBox[] {
  const heights = new Map<number, number[]>();
  for (const w of ocr.words) {
    const h = heights.get(w.line);
    if (h) h.push(w.y1 - w.y0);
    else heights.set(w.line, [w.y1 - w.y0]);
  }
  const lineSize = new Map<number, number>();
  for (const [line, hs] of heights) {
    hs.sort((a, b) => a - b);
    lineSize.set(line, hs[Math.min(hs.length - 1, Math.floor(0.8 * hs.length))]);
  }
  const boxes: TextBox[] = [];
  for (const w of ocr.words) {
    if (w.conf < minConf) continue;
    boxes.push({
      text: w.text,
      x0: w.x0 / scale,
      x1: w.x1 / scale,
      top: w.y0 / scale,
      bottom: w.y1 / scale,
      size: (lineSize.get(w.line) ?? w.y1 - w.y0) / scale,
      lineId: w.line,
    });
  }
  return boxes;
}

/** What one page offers the layout: its words (text layer, OCR or both) and how they were chosen. */
export interface PageInput {
  page: number;
  width: number;
  height: number;
  method: TranscriptMethod;
  boxes: TextBox[];
  /** Font sizes guessed from OCR boxes. */
  sizesAreEstimates: boolean;
  evidence?: PageEvidence;
}

export async function readPage(
  doc: PdfDocument,
  page: PdfPage,
  pageNo: number,
  pdfSha: () => string,
  engine: () => OcrEngine,
  opts: PdfTranscriptOptions,
): Promise<PageInput> {
  const { width, height } = pageGeometry(page);
  const layer = await pageTextLayer(page);
  const mode = opts.ocr ?? 'auto';
  let method: TranscriptMethod = 'text-layer';
  let evidence: PageEvidence | undefined;
  if (mode === 'always') method = 'ocr';
  else if (mode === 'auto') {
    evidence = pageEvidence(layer.boxes, await pageDrawing(page), width, height);
    method = chooseMethod(evidence);
  }
  const base = { page: pageNo, width, height, method, evidence };
  if (method === 'text-layer') return { ...base, boxes: layer.boxes, sizesAreEstimates: false };
  const scale = renderScale(width, height);
  const ocr = await engine().recognize(pdfSha(), pageNo, scale, () => renderPagePng(doc, page, scale));
  if (method === 'ocr') return { ...base, boxes: ocrBoxes(ocr, scale), sizesAreEstimates: true };
  // Mixed: the text layer, plus confident OCR'd words on images where the text layer has nothing.
  const images = evidence?.images ?? [];
  const extra = ocrBoxes(ocr, scale, 60).filter(
    (w) =>
      /\p{L}.*\p{L}|\p{N}/u.test(w.text) &&
      images.some((r) => overlaps(r, boxRect(w))) &&
      !layer.boxes.some((b) => overlaps(boxRect(b), boxRect(w))),
  );
  return { ...base, boxes: [...layer.boxes, ...extra], sizesAreEstimates: false };
}

async function transcribePage(
  doc: PdfDocument,
  page: PdfPage,
  pageNo: number,
  pdfSha: () => string,
  engine: () => OcrEngine,
  opts: PdfTranscriptOptions,
): Promise<PageTranscript> {
  const input = await readPage(doc, page, pageNo, pdfSha, engine, opts);
  const markdown = layoutPage(input.boxes, {
    width: input.width,
    height: input.height,
    dropMargins: opts.dropMargins,
  });
  return { page: pageNo, markdown, method: input.method };
}

/**
 * One transcript per page of a PDF, in page order. Pages are worked on concurrently so OCR
 * keeps the pool busy while pdf.js renders the next page.
 */
export async function pdfToTranscripts(
  pdfPath: string,
  opts: PdfTranscriptOptions = {},
): Promise<PageTranscript[]> {
  let doc: PdfDocument;
  try {
    doc = await openPdf(pdfPath);
  } catch (e) {
    throw new UserError(`${pdfPath}: cannot read as PDF (${(e as Error).message})`);
  }
  let own: OcrEngine | undefined;
  const engine = () => {
    if (opts.engine) return opts.engine;
    own ??= new OcrEngine({ workers: opts.workers, cacheDir: opts.cacheDir });
    return own;
  };
  let sha: string | undefined;
  const pdfSha = () => (sha ??= sha256File(pdfPath));
  try {
    const n = doc.numPages;
    const out: PageTranscript[] = new Array(n);
    const inFlight = Math.max(1, (opts.engine?.workers ?? opts.workers ?? availableParallelism()) + 1);
    let next = 1;
    const runner = async () => {
      while (next <= n) {
        const pageNo = next++;
        const page = await doc.getPage(pageNo);
        try {
          out[pageNo - 1] = await transcribePage(doc, page, pageNo, pdfSha, engine, opts);
          opts.log?.(`${pdfPath}: page ${pageNo}/${n} (${out[pageNo - 1].method})`);
        } finally {
          page.cleanup();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, n) }, runner));
    return out;
  } finally {
    await doc.destroy();
    if (own) await own.close();
  }
}

/**
 * Many PDFs with one engine: several PDFs are in flight at once (one more than the pool has
 * workers), so single-page PDFs keep every OCR worker busy. `onEach` sees each PDF as it
 * finishes; the result keeps the input order.
 */
export async function pdfsToTranscripts(
  pdfPaths: string[],
  opts: PdfTranscriptOptions & { engine: OcrEngine },
  onEach?: (pdfPath: string, pages: PageTranscript[]) => void,
): Promise<PageTranscript[][]> {
  const out: PageTranscript[][] = new Array(pdfPaths.length);
  let next = 0;
  const runner = async () => {
    while (next < pdfPaths.length) {
      const i = next++;
      out[i] = await pdfToTranscripts(pdfPaths[i], opts);
      onEach?.(pdfPaths[i], out[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.engine.workers + 1, pdfPaths.length) }, runner));
  return out;
}

export { DEFAULT_OCR_SETTINGS };
