/**
 * PDFs through OCR: one markdown transcript per page from the best evidence the page has.
 *
 * Per page: born-digital pages are read from their text layer; pages without one, or whose text
 * layer is hidden (somebody's OCR under or over a scan) or garbage, are rendered and OCR'd;
 * born-digital pages with images (2% of the page or more) also get the confident OCR'd words
 * lying on those images where the text layer has nothing (text set as graphics: 'mixed').
 * OCR is tesseract.js and PaddleOCR, their readings combined line by line (`combine.ts`), or
 * either alone; with both, pictures of text on a page that has a text layer are read by
 * tesseract.js alone (the combination pays on scans and handwriting, not there). One layout pass
 * (`layout.ts`) turns either kind of words into text.
 *
 * Per document: pages are read first (concurrently, so OCR keeps its workers busy), then rows
 * recurring at the top or bottom edge of several pages are known as running heads, then each
 * page is laid out. A PDF is read up to `maxPages` pages and each page within `pageTimeoutMs`;
 * pages beyond either are skipped, named, and the rest of the document goes on.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { mapConcurrent, runSlots } from '../../src/core/concurrency.ts';
import { UnreadableInput } from '../../src/core/errors.ts';
import type { PageModel, PageModelResult } from '../../src/core/page-model.ts';
import { type CombineStats, combineReadings } from './combine.ts';
import { edgeKeys, type MarginMode } from './furniture.ts';
import { analyzePage, type LayoutExplain, type TextBox } from './layout.ts';
import {
  DEFAULT_OCR_SETTINGS,
  OcrCache,
  type OcrPage,
  OcrPool,
  type OcrSettings,
  type OcrWord,
  sha256File,
  withTimeout,
} from './ocr.ts';
import type { PaddleEngine, RgbaImage } from './paddle.ts';
import { PageHost } from './page-host.ts';
import {
  clipPixels,
  DEFAULT_MAX_PIXELS,
  openPdfData,
  oversizedImages,
  type PageDrawing,
  type PageSource,
  type PdfDocument,
  pageGeometry,
  type Rect,
  renderPagePng,
} from './pdfjs.ts';
import { bodySize, buildSegments, type Segment } from './segments.ts';

export type { TextBox } from './layout.ts';
export { analyzePage, layoutPage } from './layout.ts';
export { OcrCache, OcrPool } from './ocr.ts';
export { DEFAULT_MAX_PIXELS } from './pdfjs.ts';

/**
 * 'blank': nothing visible is drawn on the page (`PageExplain.blank` says how that was known); no OCR ran.
 * 'vlm': read by a vision-language model (`PdfTranscriptOptions.model`).
 */
export type TranscriptMethod = 'text-layer' | 'ocr' | 'mixed' | 'blank' | 'vlm';

export type { PageModel, PageModelResult };

/** Which OCR reads a page: tesseract.js, PaddleOCR, or both combined line by line. */
export type OcrEngineName = 'tesseract' | 'paddle' | 'both';

/** Pages read per PDF unless told otherwise. */
export const DEFAULT_MAX_PAGES = 500;
/** Time allowed per page (reading, rendering, OCR, layout) unless told otherwise. */
export const DEFAULT_PAGE_TIMEOUT_MS = 180_000;
/** The mark of a page not asked for (`PdfTranscriptOptions.pages`): neither read nor returned. */
const NOT_ASKED = '\u0000not asked';

/** Why a page reads as it does (`sob ocr --explain`). */
export interface PageExplain {
  method: TranscriptMethod;
  /** The OCR engine(s) that read it; null when only the text layer was used. */
  engine: OcrEngineName | null;
  /**
   * Text-layer quality, 0-1: the share of its characters that look like text, less the share
   * no one sees (invisible or under a scan); 0 when there is (almost) no text layer.
   */
  text_layer_score: number;
  /** Why the text layer was not read alone (`methodOf`), when the evidence was weighed. */
  why?: string;
  evidence?: Omit<PageEvidence, 'images'> & { images: number };
  /** Lines of the combined reading taken from each engine. */
  combine?: CombineStats;
  layout: LayoutExplain;
  /** Set when the page was read in another frame than its /Rotate (degrees clockwise): its /Rotate and the rotation read at. */
  rotation?: { page: number; read: number };
  /** Set for a blank page: why it is known blank (nothing drawn, or a one-colour rendering). */
  blank?: string;
  /** For a page OCR'd whole: the turns tesseract read it at to find it upright (1, or 4 when it doubted). */
  turns_tried?: number;
  seconds: number;
}

export interface PageTranscript {
  /** 1-based. */
  page: number;
  markdown: string;
  method: TranscriptMethod;
  /** The OCR engine(s) that read the page (or the page model's id); null for the text layer alone. */
  engine?: OcrEngineName | string | null;
  /** Set when the page was not transcribed (over the page cap, over the time per page): why. */
  skipped?: string;
  /** With a page model: what it said of the page (front matter, asks, turn). */
  model?: Record<string, unknown>;
  /** With a page model that failed on this page: why; the page was read by the local pipeline. */
  fallback?: string;
  explain?: PageExplain;
  /** Lines dropped as page furniture (running heads and feet, page numbers), as they read. */
  furniture?: string[];
}

/** Paddle renders at this many pixels on the long side (its detector works on the whole page). */
const PADDLE_LONG_SIDE = 2000;

/**
 * Shared OCR machinery: engines started on first use (so text-only PDFs never start one) and
 * the on-disk cache. One engine serves many PDFs; `close()` stops its workers.
 */
export class OcrEngine {
  private pool?: Promise<OcrPool>;
  private paddle?: Promise<PaddleEngine>;
  readonly cache?: OcrCache;
  readonly settings: OcrSettings;
  readonly workers: number;
  readonly engine: OcrEngineName;
  /** Pages recognised (cache misses) and served from the cache. */
  recognised = 0;
  cached = 0;
  private readonly startTimeoutMs: number;

  constructor(
    opts: {
      workers?: number;
      cacheDir?: string | null;
      settings?: OcrSettings;
      /** Tesseract languages (`--lang`), when no `settings` are given; English alone by default. */
      langs?: string[];
      startTimeoutMs?: number;
      engine?: OcrEngineName;
    } = {},
  ) {
    this.workers = Math.max(1, opts.workers ?? availableParallelism());
    // English alone keeps the settings (and the cache keys) as they were.
    this.settings =
      opts.settings ??
      (opts.langs && opts.langs.join('+') !== 'eng'
        ? { ...DEFAULT_OCR_SETTINGS, langs: opts.langs }
        : DEFAULT_OCR_SETTINGS);
    this.engine = opts.engine ?? 'both';
    if (opts.cacheDir !== null) this.cache = new OcrCache(opts.cacheDir ?? OcrCache.defaultDir());
    this.startTimeoutMs = opts.startTimeoutMs ?? 60_000;
  }

  private async cachedRead(key: string | undefined, read: () => Promise<OcrPage>): Promise<OcrPage> {
    if (key) {
      const hit = this.cache!.get(key);
      if (hit) {
        this.cached++;
        return hit;
      }
    }
    const result = await read();
    this.recognised++;
    if (key) this.cache!.put(key, result);
    return result;
  }

  /** tesseract.js on what `render` draws, its workers started at the first call. */
  private async recognizeTesseract(render: () => Promise<Buffer>): Promise<OcrPage> {
    this.pool ??= OcrPool.start({
      workers: this.workers,
      settings: this.settings,
      startTimeoutMs: this.startTimeoutMs,
    });
    return (await this.pool).recognize(await render());
  }

  /** tesseract.js on the page rendered at `scale` (words in its pixels). */
  tesseract(
    pdfSha: string,
    page: number,
    scale: number,
    render: () => Promise<Buffer>,
    turn = 0,
  ): Promise<OcrPage> {
    const key = this.cache?.key(pdfSha, page, scale, turn ? { ...this.settings, turn } : this.settings);
    return this.cachedRead(key, () => this.recognizeTesseract(render));
  }

  /**
   * tesseract.js on the rectangle `clip` (points) of the page rendered at `scale`, its words in
   * the pixels of the whole page.
   */
  async tesseractClip(
    pdfSha: string,
    page: number,
    scale: number,
    geometry: { width: number; height: number },
    clip: Rect,
    render: () => Promise<Buffer>,
    turn = 0,
  ): Promise<OcrPage> {
    const at = clipPixels(clip, scale, {
      width: Math.ceil(geometry.width * scale),
      height: Math.ceil(geometry.height * scale),
    });
    const settings = { ...this.settings, ...(turn ? { turn } : {}), clip: [at.x0, at.y0, at.x1, at.y1] };
    const read = await this.cachedRead(this.cache?.key(pdfSha, page, scale, settings), () =>
      this.recognizeTesseract(render),
    );
    const moved = (w: OcrWord) => ({
      ...w,
      x0: w.x0 + at.x0,
      x1: w.x1 + at.x0,
      y0: w.y0 + at.y0,
      y1: w.y1 + at.y0,
    });
    return { words: read.words.map(moved) };
  }

  /** PaddleOCR on the page rendered at `scale` (words in its pixels). */
  paddleRead(
    pdfSha: string,
    page: number,
    scale: number,
    render: () => Promise<RgbaImage>,
    turn = 0,
  ): Promise<OcrPage> {
    const key = this.cache?.key(pdfSha, page, scale, {
      engine: 'paddle-ppocrv4',
      v: 2,
      ...(turn ? { turn } : {}),
    });
    return this.cachedRead(key, async () => {
      this.paddle ??= import('./paddle.ts').then((m) =>
        m.PaddleEngine.start({ threads: this.workers, startTimeoutMs: this.startTimeoutMs }),
      );
      return (await this.paddle).recognize(await render());
    });
  }

  /**
   * The page's words from the chosen engine(s), in the pixels of the page rendered at `scale`
   * (tesseract's render); PaddleOCR reads its own render, mapped back.
   */
  async recognize(
    pdfSha: string,
    page: number,
    scale: number,
    geometry: { width: number; height: number },
    render: { pnm: (scale: number) => Promise<Buffer>; rgba: (scale: number) => Promise<RgbaImage> },
    /** Quarter turns (degrees) the renders are turned from the page's /Rotate: part of the cache key. */
    turn = 0,
    /** tesseract's reading of this render, when already made (the orientation probe's). */
    read?: OcrPage,
  ): Promise<{ page: OcrPage; combine?: CombineStats; engine: OcrEngineName }> {
    const paddleScale = PADDLE_LONG_SIDE / Math.max(geometry.width, geometry.height);
    const toTesseract = (p: OcrPage): OcrPage => {
      const k = scale / paddleScale;
      return {
        words: p.words.map((w) => ({ ...w, x0: w.x0 * k, x1: w.x1 * k, y0: w.y0 * k, y1: w.y1 * k })),
      };
    };
    if (this.engine === 'tesseract')
      return {
        page: await (read
          ? Promise.resolve(read)
          : this.tesseract(pdfSha, page, scale, () => render.pnm(scale), turn)),
        engine: 'tesseract',
      };
    if (this.engine === 'paddle')
      return {
        page: toTesseract(
          await this.paddleRead(pdfSha, page, paddleScale, () => render.rgba(paddleScale), turn),
        ),
        engine: 'paddle',
      };
    const [t, p] = await Promise.all([
      read ? Promise.resolve(read) : this.tesseract(pdfSha, page, scale, () => render.pnm(scale), turn),
      this.paddleRead(pdfSha, page, paddleScale, () => render.rgba(paddleScale), turn),
    ]);
    const c = combineReadings(t, toTesseract(p));
    return { page: c.page, combine: c.stats, engine: 'both' };
  }

  async close(): Promise<void> {
    const pool = this.pool;
    const paddle = this.paddle;
    this.pool = undefined;
    this.paddle = undefined;
    await Promise.all([
      pool?.then((p) => p.terminate()).catch(() => {}),
      paddle?.then((p) => p.terminate()).catch(() => {}),
    ]);
  }
}

export interface PdfTranscriptOptions {
  /** A shared engine; without one, a private one is made (and closed) for this PDF. */
  engine?: OcrEngine;
  /** For a private engine: pool size (default: the cores), cache folder (null: none), which OCR. */
  workers?: number;
  cacheDir?: string | null;
  ocrEngine?: OcrEngineName;
  /** For a private engine: tesseract's languages (default English alone; `--lang eng+fra`). */
  langs?: string[];
  /**
   * 'auto' (default) picks per page; 'always' OCRs every page; 'never' reads text layers only;
   * 'missing' reads a page's text layer whenever it has text (no OCR of its pictures, none of a
   * hidden layer) and OCRs only the pages that lack one: long born-digital documents (a 218-page
   * credit agreement) read in seconds, scanned pages among them still read.
   */
  ocr?: 'auto' | 'always' | 'never' | 'missing';
  /** Drop running headers/footers and page numbers (default true). */
  dropMargins?: boolean;
  /**
   * Which (furniture.ts `MarginMode`): `layout` (default; position, clear space, page-number
   * patterns, repetition) or `repeated` (only rows recurring across pages, and page numbers of a
   * document of several pages: a single page keeps its head and foot; `sob build pdf`'s default).
   */
  margins?: MarginMode;
  /** Pages read per PDF (default `DEFAULT_MAX_PAGES`); later pages are skipped and named. */
  maxPages?: number;
  /**
   * Only these pages (numbered from 1) are read and returned; the others are neither read nor
   * listed. Running headers and footers are found across the pages of a document, so while
   * margins are dropped a PDF of two pages or more has every page within the cap read (its
   * transcripts are then the same as without this list), and only these returned.
   */
  pages?: ReadonlySet<number>;
  /** Time per page in ms (default `DEFAULT_PAGE_TIMEOUT_MS`); a slower page is skipped and named. */
  pageTimeoutMs?: number;
  /** Set when the page's time is up (`pageTimeoutMs`): no further step of its work starts. */
  signal?: AbortSignal;
  /** A page model (a vision-language model) reading each page first; a page it fails on is read locally. */
  model?: PageModel;
  /** Images over this many pixels are never decoded (default `DEFAULT_MAX_PIXELS`, `sob ocr --max-pixels`). */
  maxPixels?: number;
  /** Attach the per-page evidence (`PageTranscript.explain`). */
  explain?: boolean;
  /** Try a page OCR'd whole at other quarter turns when its reading doubts (`uprightTurn`; default true). */
  findUpright?: boolean;
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

function grow(r: Rect, by: number): Rect {
  return { x0: r.x0 - by, y0: r.y0 - by, x1: r.x1 + by, y1: r.y1 + by };
}

/** Rectangles that overlap, merged into their union until none do. */
function mergeOverlapping(rects: Rect[]): Rect[] {
  const out = rects.map((r) => ({ ...r }));
  for (let merged = true; merged; ) {
    merged = false;
    for (let i = 0; i < out.length && !merged; i++)
      for (let j = i + 1; j < out.length && !merged; j++)
        if (overlaps(out[i], out[j])) {
          out[i] = {
            x0: Math.min(out[i].x0, out[j].x0),
            y0: Math.min(out[i].y0, out[j].y0),
            x1: Math.max(out[i].x1, out[j].x1),
            y1: Math.max(out[i].y1, out[j].y1),
          };
          out.splice(j, 1);
          merged = true;
        }
  }
  return out;
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
  /** Images of at least 2% of the page (tiles of one picture merged first, `mergeTiles`): OCR'd words on them join a text layer ('mixed'). */
  images: Rect[];
}

/**
 * Images placed edge to edge as tiles of one picture, merged: strips sharing their left and
 * right edges that touch or overlap top to bottom, and tiles sharing their top and bottom edges
 * that touch side by side (within half a point; the union is the tiles' own area). Some producers
 * slice a picture into bands a few points high; merged, it is measured as a whole against the 2%
 * threshold. Sorting makes each pass O(n log n); passes repeat while they merge (at most 4).
 */
export function mergeTiles(rects: Rect[]): Rect[] {
  let out = rects.map((r) => ({ ...r }));
  const pass = (vertical: boolean): boolean => {
    const key = (r: Rect) =>
      vertical ? `${Math.round(r.x0)},${Math.round(r.x1)}` : `${Math.round(r.y0)},${Math.round(r.y1)}`;
    const lo = (r: Rect) => (vertical ? r.y0 : r.x0);
    const hi = (r: Rect) => (vertical ? r.y1 : r.x1);
    const groups = new Map<string, Rect[]>();
    for (const r of out) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
    const next: Rect[] = [];
    for (const g of groups.values()) {
      g.sort((a, b) => lo(a) - lo(b));
      let cur = g[0];
      for (const r of g.slice(1)) {
        if (lo(r) <= hi(cur) + 0.5)
          cur = {
            x0: Math.min(cur.x0, r.x0),
            y0: Math.min(cur.y0, r.y0),
            x1: Math.max(cur.x1, r.x1),
            y1: Math.max(cur.y1, r.y1),
          };
        else {
          next.push(cur);
          cur = r;
        }
      }
      next.push(cur);
    }
    const merged = next.length < out.length;
    out = next;
    return merged;
  };
  for (let i = 0; i < 4; i++) {
    const v = pass(true);
    const h = pass(false);
    if (!v && !h) break;
  }
  return out;
}

/** What the page offers, for choosing between its text layer and OCR. */
export function pageEvidence(
  boxes: TextBox[],
  drawing: PageDrawing,
  width: number,
  height: number,
): PageEvidence {
  const pageArea = width * height;
  const images = mergeTiles(drawing.images).filter((r) => area(r) >= 0.02 * pageArea);
  return {
    textChars: boxes.reduce((s, b) => s + b.text.length, 0),
    textLikeShare: textLikeShare(boxes),
    imageCover: Math.min(1, images.reduce((s, r) => s + area(r), 0) / pageArea),
    hiddenText: drawing.textOps === 0 ? 0 : drawing.hiddenTextOps / drawing.textOps,
    images,
  };
}

/** A text layer with fewer characters than this is not trusted. */
const MIN_TEXT_CHARS = 30;
/** ... nor one where fewer than this share of its characters look like text. */
const MIN_TEXT_LIKE = 0.85;
/** ... nor one with more than this share of its text drawn invisible or under a picture. */
const MAX_HIDDEN = 0.5;

/** The text-layer quality score `--explain` shows (see `PageExplain.text_layer_score`). */
export function textLayerScore(e: PageEvidence): number {
  if (e.textChars < MIN_TEXT_CHARS) return 0;
  return Math.max(0, e.textLikeShare - e.hiddenText);
}

/** The choice per page: OCR where the text layer is missing, hidden (an OCR layer) or garbage. */
export function chooseMethod(e: PageEvidence): TranscriptMethod {
  return methodOf(e).method;
}

/** `chooseMethod`'s choice and why, in words (`PageExplain.why`); no reason for a plain text layer. */
export function methodOf(e: PageEvidence): { method: TranscriptMethod; why?: string } {
  const chars = `${e.textChars} character${e.textChars === 1 ? '' : 's'}`;
  if (e.textChars === 0) return { method: 'ocr', why: 'no text layer' };
  if (e.textChars < MIN_TEXT_CHARS)
    return { method: 'ocr', why: `${chars}: under ${MIN_TEXT_CHARS}, too few to trust` };
  if (e.textLikeShare < MIN_TEXT_LIKE)
    return {
      method: 'ocr',
      why: `${(e.textLikeShare * 100).toFixed(0)}% of ${chars} look like text: under ${MIN_TEXT_LIKE * 100}%`,
    };
  if (e.hiddenText > MAX_HIDDEN)
    return {
      method: 'ocr',
      why: `${(e.hiddenText * 100).toFixed(0)}% of its text is drawn invisible or under a picture: an OCR layer`,
    };
  if (e.images.length > 0) {
    return {
      method: 'mixed',
      why: `real; ${e.images.length} picture${e.images.length === 1 ? '' : 's'} over ${(e.imageCover * 100).toFixed(0)}% of the page OCR'd too`,
    };
  }
  return { method: 'text-layer' };
}

/**
 * OCR words (pixels) as layout boxes (points); each OCR line keeps its identity. A word box
 * spans ascender to descender only when the word has both, so a line's size is taken from its
 * taller words (80th percentile).
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
  engine: OcrEngineName | null;
  boxes: TextBox[];
  /** Font sizes guessed from OCR boxes. */
  sizesAreEstimates: boolean;
  evidence?: PageEvidence;
  combine?: CombineStats;
  /** Set when read in another frame than the page's /Rotate (see `TextLayer.rotation`). */
  rotation?: { page: number; read: number };
  /** Set when the page is blank: why (nothing drawn, or a one-colour rendering). */
  blank?: string;
  /** Turns tesseract read the page at to find its upright (`uprightTurn`): 1, or 4 when it doubted. */
  turnsTried?: number;
}

/**
 * Letters tesseract read in words it is confident of (>= 60): how much of a reading is text.
 * A page scanned sideways reads as a few low-confidence fragments.
 */
export function confidentLetters(p: OcrPage): { confident: number; all: number } {
  let confident = 0;
  let all = 0;
  for (const w of p.words) {
    const n = (w.text.match(/\p{L}/gu) ?? []).length;
    all += n;
    if (w.conf >= 60 && n >= 2) confident += n;
  }
  return { confident, all };
}

/** Below this share of confident letters (or under 10 of them) a page OCR'd whole is tried turned. */
export const TURN_PROBE_SHARE = 0.6;

/**
 * The quarter turn (degrees clockwise) that shows a page OCR'd whole upright, and tesseract's
 * reading at that turn. The reading as rendered is kept when at least 60% of its letters (and
 * 10 or more) are in confident words; otherwise the page is read at each of the four turns at
 * half the scale (a quarter of the pixels: the turns are only compared) and the turn with the
 * most confident letters wins, if it has 20 or more and 1.5 times those of the page as rendered
 * at that scale (a page of faint or handwritten text stays as it is); a winning turn is then
 * read at the full scale. The extra readings are paid only on such pages (`turnsTried`;
 * bench/ocr-turns.ts measures them).
 */
export async function uprightTurn(
  read: (turn: number, scale: 'full' | 'half') => Promise<OcrPage>,
): Promise<{ turn: number; reading: OcrPage; tried: number }> {
  const first = await read(0, 'full');
  const s0 = confidentLetters(first);
  if (s0.confident >= 10 && s0.confident >= TURN_PROBE_SHARE * s0.all)
    return { turn: 0, reading: first, tried: 1 };
  // The four turns at once: the pool's workers read them side by side.
  const turns = [0, 90, 270, 180];
  const scores = (await Promise.all(turns.map((t) => read(t, 'half')))).map(
    (r) => confidentLetters(r).confident,
  );
  let best = 0;
  scores.forEach((score, i) => {
    if (score > scores[best]) best = i;
  });
  if (best === 0 || scores[best] < 20 || scores[best] < 1.5 * scores[0])
    return { turn: 0, reading: first, tried: 4 };
  return { turn: turns[best], reading: await read(turns[best], 'full'), tried: 4 };
}

export async function readPage(
  page: PageSource,
  pageNo: number,
  pdfSha: () => string,
  engine: () => OcrEngine,
  opts: PdfTranscriptOptions,
): Promise<PageInput> {
  // The drawing first: it loads the page's fonts, whose names tell bold text apart.
  let drawing = await page.drawing();
  const layer = await page.textLayer();
  // The reading frame: the page turned so its dominant text runs left to right (`pageTextLayer`).
  const rotation = layer.rotation;
  const turn = (rotation - page.rotate + 360) % 360;
  if (turn !== 0) drawing = await page.drawing(rotation);
  const { width, height } = page.geometry(rotation);
  const mode = opts.ocr ?? 'auto';
  let method: TranscriptMethod = 'text-layer';
  let evidence: PageEvidence | undefined;
  if (mode === 'always') method = 'ocr';
  else if (mode === 'auto') {
    evidence = pageEvidence(layer.boxes, drawing, width, height);
    method = chooseMethod(evidence);
  } else if (mode === 'missing') {
    evidence = pageEvidence(layer.boxes, drawing, width, height);
    if (evidence.textChars < MIN_TEXT_CHARS) method = chooseMethod(evidence);
  }
  const base: Omit<PageInput, 'engine' | 'boxes' | 'sizesAreEstimates'> = {
    page: pageNo,
    width,
    height,
    method,
    evidence,
    ...(turn !== 0 ? { rotation: { page: page.rotate, read: rotation } } : {}),
  };
  if (method === 'text-layer') return { ...base, engine: null, boxes: layer.boxes, sizesAreEstimates: false };
  // A page with nothing on it to read is not OCR'd: nothing drawn at all, or nothing visible.
  opts.signal?.throwIfAborted();
  const blank =
    drawing.textOps === 0 && drawing.images.length === 0 && drawing.paintOps === 0
      ? 'nothing drawn on it: no text, pictures or paths'
      : method === 'ocr' && (await page.blank())
        ? 'it renders as one colour'
        : undefined;
  if (blank) return { ...base, method: 'blank', blank, engine: null, boxes: [], sizesAreEstimates: false };
  const scale = renderScale(width, height);
  const eng = engine();
  // A page OCR'd whole may be a scan of sideways text: its reading frame is found by turning it.
  opts.signal?.throwIfAborted();
  const probe =
    method === 'ocr' && opts.findUpright !== false
      ? await uprightTurn((t, at) => {
          const s = at === 'full' ? scale : scale / 2;
          return eng.tesseract(
            pdfSha(),
            pageNo,
            s,
            () => page.pnm(s, (rotation + t) % 360),
            (turn + t) % 360,
          );
        })
      : undefined;
  const frame = (rotation + (probe?.turn ?? 0)) % 360;
  if (probe && probe.turn !== 0) {
    const g = page.geometry(frame);
    base.width = g.width;
    base.height = g.height;
    base.rotation = { page: page.rotate, read: frame };
    if (evidence) base.evidence = pageEvidence(layer.boxes, await page.drawing(frame), g.width, g.height);
  }
  if (probe) base.turnsTried = probe.tried;
  opts.signal?.throwIfAborted();
  if (method === 'mixed' && eng.engine !== 'paddle') {
    // Only the pictures are read, by tesseract alone (each with a margin, so a word across its
    // edge is read whole): the words kept are those on a picture where the text layer has
    // nothing. Reading the pictures alone, not the whole page, took orbit-bench-en (17 mixed
    // pages) from 92 to 60 CPU-seconds with the same pass rates. With both engines, PaddleOCR is
    // not asked (measured, bench/ocr.ts: on pages with a text layer the combination changes
    // nothing the tests see and costs PaddleOCR's full-page pass; it pays on scans and
    // handwriting).
    const words: OcrWord[] = [];
    const pictures = mergeOverlapping((evidence?.images ?? []).map((r) => grow(r, 12)));
    for (const [i, clip] of pictures.entries()) {
      const read = await eng.tesseractClip(
        pdfSha(),
        pageNo,
        scale,
        base,
        clip,
        () => page.pnm(scale, frame, clip),
        turn,
      );
      // Each picture's line, paragraph and block numbers apart from the others'.
      const apart = i * 1_000_000;
      for (const w of read.words)
        words.push({ ...w, line: w.line + apart, par: w.par + apart, block: w.block + apart });
    }
    const boxes = withPictureWords(layer.boxes, { words }, scale, evidence?.images ?? []);
    return { ...base, engine: 'tesseract', boxes, sizesAreEstimates: false };
  }
  const ocr = await eng.recognize(
    pdfSha(),
    pageNo,
    scale,
    { width: base.width, height: base.height },
    {
      pnm: (s) => page.pnm(s, frame),
      rgba: (s) => page.rgba(s, frame),
    },
    (turn + (probe?.turn ?? 0)) % 360,
    probe?.reading,
  );
  const common = { ...base, engine: ocr.engine, combine: ocr.combine };
  if (method === 'ocr') return { ...common, boxes: ocrBoxes(ocr.page, scale), sizesAreEstimates: true };
  const boxes = withPictureWords(layer.boxes, ocr.page, scale, evidence?.images ?? []);
  return { ...common, boxes, sizesAreEstimates: false };
}

/**
 * A mixed page's words: its text layer, plus the confident OCR'd words (60 or more, with two
 * letters or a digit) lying on its pictures where the text layer has nothing.
 */
function withPictureWords(layer: TextBox[], ocr: OcrPage, scale: number, pictures: Rect[]): TextBox[] {
  const extra = ocrBoxes(ocr, scale, 60).filter(
    (w) =>
      /\p{L}.*\p{L}|\p{N}/u.test(w.text) &&
      pictures.some((r) => overlaps(r, boxRect(w))) &&
      !layer.some((b) => overlaps(boxRect(b), boxRect(w))),
  );
  return [...layer, ...extra];
}

/**
 * Rows recurring at the same edge (top or bottom) of several pages of one document: at least
 * two pages and a quarter of them (so in a document of two pages, on both).
 */
export function repeatedEdges(
  pages: PageInput[],
  segmentsOf: (p: PageInput) => Segment[] = (p) => buildSegments(p.boxes, bodySize(p.boxes)),
): Set<string> {
  const out = new Set<string>();
  if (pages.length < 2) return out;
  const count = new Map<string, number>();
  for (const p of pages) {
    const segs = segmentsOf(p);
    for (const k of new Set(edgeKeys(segs, p.height))) count.set(k, (count.get(k) ?? 0) + 1);
  }
  const need = Math.max(2, Math.ceil(0.25 * pages.length));
  for (const [k, n] of count) if (n >= need) out.add(k);
  return out;
}

/** "20000 x 20000 px = 400,000,000 pixels; the cap is 69,605,736": an image measured against `--max-pixels`. */
export function pixelsPhrase(width: number, height: number, maxPixels: number): string {
  return `${width} x ${height} px = ${(width * height).toLocaleString('en-US')} pixels; the cap is ${maxPixels.toLocaleString('en-US')}`;
}

function describeRange(from: number, to: number): string {
  return from === to ? `page ${from}` : `pages ${from}-${to}`;
}

/**
 * One transcript per page of a PDF, in page order (skipped pages included, with `skipped` set
 * and an empty transcript). Pages are read concurrently so OCR keeps the pool busy while pdf.js
 * renders the next page; each page has `pageTimeoutMs`, and only the first `maxPages` are read.
 */
export async function pdfToTranscripts(
  pdfPath: string,
  opts: PdfTranscriptOptions = {},
): Promise<PageTranscript[]> {
  let doc: PdfDocument;
  const maxPixels = opts.maxPixels ?? DEFAULT_MAX_PIXELS;
  let oversized: ReturnType<typeof oversizedImages> = [];
  // Kept for the pages' pdf.js threads (`PageHost`): pdf.js may take over the bytes it opens.
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(pdfPath));
    oversized = oversizedImages(bytes, maxPixels);
    doc = await openPdfData(bytes.slice(), maxPixels);
  } catch (e) {
    const msg = (e as Error).message;
    throw new UnreadableInput(
      pdfPath,
      /password/i.test(msg)
        ? `password-protected: cannot be read without its password (${msg})`
        : `cannot read as PDF (${msg})`,
    );
  }
  let own: OcrEngine | undefined;
  const engine = () => {
    if (opts.engine) return opts.engine;
    own ??= new OcrEngine({
      workers: opts.workers,
      cacheDir: opts.cacheDir,
      engine: opts.ocrEngine,
      langs: opts.langs,
    });
    return own;
  };
  let sha: string | undefined;
  const pdfSha = () => (sha ??= sha256File(pdfPath));
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
  const timeoutMs = opts.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS;
  try {
    const n = doc.numPages;
    const read = Math.min(n, maxPages);
    const inputs: (PageInput | { skipped: string } | { model: true })[] = new Array(read);
    const seconds: number[] = new Array(read).fill(0);
    const inFlight = Math.max(1, (opts.engine?.workers ?? opts.workers ?? availableParallelism()) + 1);
    let next = 1;
    // Pages not asked for: read only where the running headers need them (see `pages`).
    const asked = (pageNo: number) => !opts.pages || opts.pages.has(pageNo);
    const readAll = opts.pages === undefined || (opts.dropMargins !== false && read >= 2);
    // A page that fails (pdf.js on a circular page tree) fails the PDF, but only once the pages
    // in flight have settled: work left running would outlive the document and the engine.
    let failure: { error: unknown } | undefined;
    const byModel: (PageModelResult | undefined)[] = new Array(read);
    // Each runner reads its pages on a pdf.js thread of its own, ended when the runner is done.
    const runner = async () => {
      const slot: { host?: PageHost } = {};
      try {
        await pages(slot);
      } finally {
        await slot.host?.done();
      }
    };
    const pages = async (slot: { host?: PageHost }) => {
      while (next <= read && !failure) {
        const pageNo = next++;
        if (!readAll && !asked(pageNo)) {
          inputs[pageNo - 1] = { skipped: NOT_ASKED };
          continue;
        }
        const started = performance.now();
        if (opts.model) {
          const model = opts.model;
          try {
            const p = await doc.getPage(pageNo);
            const long = Math.max(...Object.values(pageGeometry(p)));
            byModel[pageNo - 1] = await model.read({ pdf: pdfPath, page: pageNo }, (turn) =>
              renderPagePng(doc, p, model.longSide / long, (p.rotate + turn) % 360),
            );
            p.cleanup();
          } catch (e) {
            failure ??= { error: e };
            return;
          }
          const got = byModel[pageNo - 1];
          if (got?.markdown !== undefined) {
            inputs[pageNo - 1] = { model: true };
            seconds[pageNo - 1] = (performance.now() - started) / 1000;
            continue;
          }
          opts.log?.(`${pdfPath}: page ${pageNo}: ${got?.failed}; read by the local pipeline`);
        }
        // The page's time also stops its work: pdf.js reads it on this runner's worker thread
        // (`PageHost`), which is ended when the time is up (CPU and memory back at once; the next
        // page gets a new thread), and no rendering or OCR step starts after that.
        if (!slot.host) {
          // Started outside the page's time: a thread and pdf.js take a second or two to start.
          const starting = PageHost.open(bytes, maxPixels);
          try {
            slot.host = await withTimeout(
              starting,
              Math.max(timeoutMs, 60_000),
              'starting pdf.js on a thread',
            );
          } catch (e) {
            starting.then((h) => h.terminate()).catch(() => {});
            failure ??= { error: e };
            return;
          }
        }
        const opened = slot.host;
        const stop = new AbortController();
        const work = (async () => {
          return readPage(await opened.page(pageNo), pageNo, pdfSha, engine, {
            ...opts,
            signal: stop.signal,
          });
        })();
        try {
          inputs[pageNo - 1] = await withTimeout(work, timeoutMs, `page ${pageNo}`);
        } catch (e) {
          const timedOut = (e as Error).message?.endsWith?.(`did not finish within ${timeoutMs} ms`);
          if (!timedOut) {
            failure ??= { error: e };
            return;
          }
          stop.abort();
          // pdf.js's work on the page is ended with its thread; an OCR step under way finishes
          // in its own worker and its result is not used.
          work.catch(() => {});
          slot.host = undefined;
          void opened.terminate();
          const reason = `took longer than the time per page (${(timeoutMs / 1000).toFixed(0)} s)`;
          inputs[pageNo - 1] = { skipped: reason };
          opts.log?.(`${pdfPath}: page ${pageNo} skipped: ${reason}`);
        } finally {
          seconds[pageNo - 1] = (performance.now() - started) / 1000;
          work.finally(() => opened.release(pageNo)).catch(() => {});
        }
      }
    };
    await runSlots(Math.min(inFlight, read), runner);
    if (failure) throw failure.error;
    if (oversized.length > 0) {
      // pdf.js left these images out undecoded (`maxImageSize`); a page that reads blank without
      // them is skipped and named, not passed off as blank.
      const big = oversized[0];
      const what = `${oversized.length === 1 ? 'an image' : `${oversized.length} images`} over --max-pixels (${pixelsPhrase(big.width, big.height, maxPixels)}) left out undecoded`;
      opts.log?.(`${pdfPath}: ${what}`);
      inputs.forEach((input, i) => {
        if ('skipped' in input || 'model' in input || input.method !== 'blank') return;
        const reason = `nothing else to read on it: ${what}`;
        inputs[i] = { skipped: reason };
        opts.log?.(`${pdfPath}: page ${i + 1} skipped: ${reason}`);
      });
    }
    // Each page's segments, built once for the running heads and its layout (half the main
    // thread's layout time on extract-bench's 1,917 pages).
    const segments = new Map<PageInput, Segment[]>();
    const segmentsOf = (p: PageInput) => {
      let s = segments.get(p);
      if (!s) {
        s = buildSegments(p.boxes, bodySize(p.boxes));
        segments.set(p, s);
      }
      return s;
    };
    const repeated = repeatedEdges(
      inputs.filter((p): p is PageInput => !('skipped' in p) && !('model' in p)),
      segmentsOf,
    );
    const transcriptOf = (input: (typeof inputs)[number], i: number): PageTranscript => {
      if ('skipped' in input)
        return { page: i + 1, markdown: '', method: 'text-layer', skipped: input.skipped };
      const m = byModel[i];
      if ('model' in input && m?.markdown !== undefined) {
        opts.log?.(`${pdfPath}: page ${i + 1}/${n} (vlm)`);
        return { page: i + 1, markdown: m.markdown, method: 'vlm', engine: opts.model?.id, model: m.info };
      }
      if ('model' in input) throw new Error('a page model page without its reading');
      const started = performance.now();
      const pageSegments = segmentsOf(input);
      segments.delete(input);
      const { markdown, explain } = analyzePage(input.boxes, {
        segments: pageSegments,
        width: input.width,
        height: input.height,
        dropMargins: opts.dropMargins,
        sizesAreEstimates: input.sizesAreEstimates,
        repeated,
        margins: opts.margins,
      });
      const t: PageTranscript = { page: input.page, markdown, method: input.method, engine: input.engine };
      if (explain.furniture.length > 0) t.furniture = explain.furniture.map((f) => f.text);
      if (m?.failed !== undefined) {
        t.fallback = m.failed;
        t.model = m.info;
      }
      if (opts.explain) {
        t.explain = {
          method: input.method,
          engine: input.engine,
          text_layer_score: input.evidence ? Number(textLayerScore(input.evidence).toFixed(3)) : 0,
          ...(input.evidence && input.method !== 'blank' && methodOf(input.evidence).why
            ? { why: methodOf(input.evidence).why }
            : {}),
          evidence: input.evidence ? { ...input.evidence, images: input.evidence.images.length } : undefined,
          combine: input.combine,
          layout: explain,
          ...(input.rotation !== undefined ? { rotation: input.rotation } : {}),
          ...(input.blank ? { blank: input.blank } : {}),
          ...(input.turnsTried ? { turns_tried: input.turnsTried } : {}),
          seconds: Number((seconds[i] + (performance.now() - started) / 1000).toFixed(2)),
        };
      }
      opts.log?.(`${pdfPath}: page ${input.page}/${n} (${input.method})`);
      return t;
    };
    const out: PageTranscript[] = [];
    inputs.forEach((input, i) => {
      if (asked(i + 1)) out.push(transcriptOf(input, i));
    });
    if (n > read) {
      const reason = `over the page cap (${maxPages} pages per PDF)`;
      opts.log?.(`${pdfPath}: ${describeRange(read + 1, n)} skipped: ${reason}`);
      for (let p = read + 1; p <= n; p++)
        if (asked(p)) out.push({ page: p, markdown: '', method: 'text-layer', skipped: reason });
    }
    return out;
  } finally {
    await doc.destroy();
    if (own) await own.close();
  }
}

/** What the multi-PDF driver does per PDF beside reading it. */
export interface PdfsHooks {
  /** Sees each PDF as it finishes. */
  onEach?: (pdfPath: string, pages: PageTranscript[]) => void;
  /**
   * Sees a PDF that cannot be read (its result is then no pages) and the others go on; without
   * it, the first such PDF rejects the call.
   */
  onError?: (pdfPath: string, error: unknown) => void;
  /** The pages to read of each PDF (`PdfTranscriptOptions.pages`); undefined: every page. */
  pagesOf?: (pdfPath: string) => ReadonlySet<number> | undefined;
  /**
   * Turns an input into the PDF to read (`sob ocr`: an image into a one-page scratch PDF), or
   * into the pages that stand for it unread (an image too large to decode); called inside the
   * input's turn, so conversions run as many at once as readings. A throw goes to `onError`.
   */
  open?: (input: string) => Promise<string | PageTranscript[]>;
  /** Options of one input's reading on top of the shared ones (its own `log`). */
  optionsOf?: (input: string, pdfPath: string) => Partial<PdfTranscriptOptions>;
  /** Checked before each input is started: true takes no more (the ones in flight finish). */
  stop?: () => boolean;
}

/**
 * Many PDFs with one engine: several PDFs are in flight at once (one more than the pool has
 * workers), so single-page PDFs keep every OCR worker busy. The result keeps the input order.
 */
export async function pdfsToTranscripts(
  pdfPaths: string[],
  opts: PdfTranscriptOptions & { engine: OcrEngine },
  hooks: PdfsHooks = {},
): Promise<PageTranscript[][]> {
  return mapConcurrent(
    pdfPaths,
    async (input) => {
      let pages: PageTranscript[];
      try {
        const opened = hooks.open ? await hooks.open(input) : input;
        pages =
          typeof opened === 'string'
            ? await pdfToTranscripts(opened, {
                ...opts,
                pages: hooks.pagesOf?.(input) ?? opts.pages,
                ...hooks.optionsOf?.(input, opened),
              })
            : opened;
      } catch (e) {
        if (!hooks.onError) throw e;
        hooks.onError(input, e);
        return [];
      }
      hooks.onEach?.(input, pages);
      return pages;
    },
    { concurrency: opts.engine.workers + 1, stop: hooks.stop },
  );
}

export { DEFAULT_OCR_SETTINGS };
