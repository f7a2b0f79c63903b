/**
 * pdf.js (legacy build, runs in Node): a page's text layer as positioned boxes, where its
 * images are drawn, and a rendering of it as PNG, RGBA or (for tesseract) netpbm (with the canvas
 * pdf.js brings, `doc.canvasFactory`). Coordinates are PDF points with the origin at the page's top left.
 */
// First (a bare import stays where it is): keeps the engine's own push and JSON functions
// before pdf.js replaces them (natives.ts).
import './natives.ts';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument, OPS, Util } from 'pdfjs-dist/legacy/build/pdf.mjs';
// pdf.js's worker code, loaded now (its fake worker takes it from globalThis.pdfjsWorker instead
// of importing it at the first document), so the natives are put back after both.
import * as pdfjsWorker from 'pdfjs-dist/legacy/build/pdf.worker.mjs';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/types/src/display/api.js';
import type { TextBox } from './layout.ts';
import { restoreNatives } from './natives.ts';

(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = pdfjsWorker;
restoreNatives();

const require = createRequire(import.meta.url);
const PDFJS_DIR = dirname(require.resolve('pdfjs-dist/package.json'));

export type PdfDocument = PDFDocumentProxy;
export type PdfPage = PDFPageProxy;

/**
 * Pixels an image may have before it is decoded (`sob ocr --max-pixels`): a page scanned at
 * 600 dpi on A3 (297 x 420 mm: 7,016 x 9,921 px), about 70 million, 280 MB as RGBA.
 */
export const DEFAULT_MAX_PIXELS = 7016 * 9921;

export async function openPdf(file: string, maxPixels = DEFAULT_MAX_PIXELS): Promise<PdfDocument> {
  return openPdfData(new Uint8Array(readFileSync(file)), maxPixels);
}

/**
 * Image XObjects over `maxPixels` declared in a PDF's bytes (their /Width and /Height read from
 * each `N 0 obj << ... /Subtype /Image ... >> stream` header, which PDF keeps uncompressed: a
 * stream is never inside an object stream). pdf.js leaves such images out without decoding them
 * (`maxImageSize`); this names them, so a page drawn only with one is skipped and said why.
 */
export function oversizedImages(
  bytes: Uint8Array,
  maxPixels: number,
): { object: number; width: number; height: number }[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const out: { object: number; width: number; height: number }[] = [];
  // Found from each "/Subtype /Image" (few in a file), not from each object header: a lazy match
  // from every header on to the next ">> stream" scanned up to 4,000 characters per object that
  // is not a stream, 0.3 s of main-thread CPU on a 2 MB PDF of 10,000 objects.
  const seen = new Set<number>();
  for (const m of text.matchAll(/\/Subtype\s*\/Image\b/g)) {
    // The object it is in: the last header at most 4,000 characters before it...
    let from = Math.max(0, m.index - 4000);
    while (from > 0 && text.charCodeAt(from - 1) >= 48 && text.charCodeAt(from - 1) <= 57) from--;
    let head: RegExpExecArray | undefined;
    const headers = /(\d+)\s+\d+\s+obj\s*<</g;
    headers.lastIndex = from;
    for (let h = headers.exec(text); h && h.index < m.index; h = headers.exec(text)) head = h;
    if (!head || seen.has(head.index)) continue;
    // ... whose dictionary ends in "stream" within 4,000 characters of its start.
    const start = head.index + head[0].length;
    const end = /^[\s\S]{0,4000}?>>\s*stream/.exec(text.slice(start, start + 4100));
    if (!end || start + end[0].length < m.index) continue;
    seen.add(head.index);
    const dict = end[0];
    const w = Number(/\/Width\s+(\d+)/.exec(dict)?.[1] ?? 0);
    const h = Number(/\/Height\s+(\d+)/.exec(dict)?.[1] ?? 0);
    if (w * h > maxPixels) out.push({ object: Number(head[1]), width: w, height: h });
  }
  return out;
}

export async function openPdfData(data: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS): Promise<PdfDocument> {
  return getDocument({
    data,
    verbosity: 0,
    // An image over the cap is left out before it is decoded (a 20,000 px square is 1.6 GB as RGBA).
    maxImageSize: maxPixels,
    // Fonts the PDF does not embed, CJK character maps and the JPEG 2000 / JBIG2 decoders scans use.
    standardFontDataUrl: `${join(PDFJS_DIR, 'standard_fonts')}/`,
    cMapUrl: `${join(PDFJS_DIR, 'cmaps')}/`,
    cMapPacked: true,
    wasmUrl: `${join(PDFJS_DIR, 'wasm')}/`,
    iccUrl: `${join(PDFJS_DIR, 'iccs')}/`,
    isEvalSupported: false,
  }).promise;
}

export interface PageGeometry {
  width: number;
  height: number;
}

/** The page's size as shown with `rotation` (degrees clockwise; default: its own /Rotate). */
export function pageGeometry(page: PdfPage, rotation = page.rotate): PageGeometry {
  const vp = page.getViewport({ scale: 1, rotation });
  return { width: vp.width, height: vp.height };
}

interface PdfTextItem {
  str: string;
  transform: number[];
  width: number;
  height: number;
  hasEOL: boolean;
  fontName: string;
}

export interface TextLayer {
  boxes: TextBox[];
  /** Characters of text drawn at another angle than the reading frame's (vertical side notes, stamps): left out of `boxes`. */
  rotatedChars: number;
  /**
   * The reading frame: the rotation (degrees clockwise, as pdf.js's `getViewport` takes it) under
   * which the page's dominant text direction runs left to right. The page's own /Rotate unless
   * most of its text is drawn at another quarter turn (a /Rotate'd page whose text runs down it,
   * a landscape table set sideways); geometry, images and renders use the same frame.
   */
  rotation: number;
}

/** A text item's baseline direction in viewport space (y down) as a quarter turn 0-3; -1 when not axis-aligned. */
function quarterTurn(m: number[]): number {
  const size = Math.hypot(m[0], m[1]);
  if (size <= 0) return -1;
  const angle = (Math.atan2(m[1], m[0]) * 180) / Math.PI;
  const q = Math.round(angle / 90);
  if (Math.abs(angle - q * 90) > 0.06) return -1;
  return ((q % 4) + 4) % 4;
}

/**
 * The text layer as boxes, one per pdf.js text item (whitespace-only items dropped), in the
 * page's reading frame (`TextLayer.rotation`): the quarter turn holding most of the text's
 * characters decides it (ties keep the page's /Rotate). Text at another angle than the frame's
 * is left out: on a page it is almost always a side stamp ("Downloaded from ...") or an axis
 * label, not body text.
 */
export async function pageTextLayer(page: PdfPage): Promise<TextLayer> {
  const content = await page.getTextContent();
  const items: PdfTextItem[] = [];
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const item = raw as PdfTextItem;
    if (item.str.trim() !== '') items.push(item);
  }
  // Characters per quarter turn of the baseline, as the page shows by its own /Rotate.
  const shown = page.getViewport({ scale: 1 });
  const chars = [0, 0, 0, 0];
  for (const item of items) {
    const q = quarterTurn(Util.transform(shown.transform, item.transform));
    if (q >= 0) chars[q] += item.str.trim().length;
  }
  let dominant = 0;
  for (let q = 1; q < 4; q++) if (chars[q] > chars[dominant]) dominant = q;
  // Turning the view clockwise by (4 - q) quarters brings a baseline at quarter turn q to 0.
  const rotation = (page.rotate + ((4 - dominant) % 4) * 90) % 360;
  const vp = page.getViewport({ scale: 1, rotation });
  const boxes: TextBox[] = [];
  let rotatedChars = 0;
  for (const item of items) {
    const text = item.str.replace(/\s+/g, ' ').trim();
    const m = Util.transform(vp.transform, item.transform);
    // m maps text space to the top-left viewport: [a b c d e f]; horizontal text has b = c = 0 and d < 0.
    const size = Math.hypot(m[2], m[3]);
    const horizontal = Math.abs(m[1]) < 1e-3 * size && Math.abs(m[2]) < 1e-3 * size && m[0] > 0;
    if (!horizontal || size <= 0) {
      rotatedChars += text.length;
      continue;
    }
    const baseline = m[5];
    // item.width is in user space; the viewport at scale 1 keeps lengths.
    const { x0, x1 } = inkExtent(item.str, m[4], Math.max(item.width, 0));
    const box: TextBox = {
      text: item.str.trim(),
      x0,
      x1,
      top: baseline - size * 0.8,
      bottom: baseline + size * 0.2,
      size,
      seq: boxes.length,
    };
    if (boldFont(page, item.fontName)) box.bold = true;
    boxes.push(box);
  }
  return { boxes, rotatedChars, rotation };
}

/**
 * Where an item's text lies across the page: its width covers its leading and trailing spaces
 * too ("®" followed by a space is often set as one item "® "), so their share of the width (by
 * characters) is taken off, and the gap to the next item shows the space.
 */
export function inkExtent(str: string, x: number, width: number): { x0: number; x1: number } {
  const chars = [...str];
  const per = chars.length === 0 ? 0 : width / chars.length;
  const lead = chars.length - [...str.trimStart()].length;
  const trail = chars.length - [...str.trimEnd()].length;
  const x0 = x + lead * per;
  return { x0, x1: Math.max(x0, x + width - trail * per) };
}

/**
 * Whether a text item's font is a bold face, by the font's name ("Arial-BoldMT", "...-Heavy",
 * "...Bd2"). Font objects are known once the page's operator list was read (`pageDrawing`);
 * before that, nothing is bold.
 */
function boldFont(page: PdfPage, fontName: string): boolean {
  const objs = (page as unknown as { commonObjs: { has(id: string): boolean; get(id: string): unknown } })
    .commonObjs;
  if (!objs.has(fontName)) return false;
  const name = (objs.get(fontName) as { name?: string } | null)?.name ?? '';
  return /bold|black|heavy|semibold|demibold|(?:^|[-,+])(?:bd|sb|demi|hv|bk)\d*(?:$|[-,])|bd\d/i.test(
    name.replace(/^[A-Z]{6}\+/, ''),
  );
}

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const IMAGE_OPS = new Set<number>([
  OPS.paintImageXObject,
  OPS.paintInlineImageXObject,
  OPS.paintImageMaskXObject,
  OPS.paintImageXObjectRepeat,
  OPS.paintSolidColorImageMask,
  OPS.paintInlineImageXObjectGroup,
  OPS.paintImageMaskXObjectGroup,
]);

export interface PageDrawing {
  /** Where the page's images land (each is the unit square under the current transform). */
  images: Rect[];
  /** Text-showing operations, and those whose text no one sees: invisible (render mode 3/7) or
   * painted over afterwards by an image covering half the page (an OCR layer under a scan). */
  textOps: number;
  hiddenTextOps: number;
  /** Path paints and shadings (lines, boxes, glyphs drawn as outlines): 0 with no text and no image means nothing is drawn. */
  paintOps: number;
}

const PAINT_OPS = new Set<number>([
  OPS.constructPath,
  OPS.fill,
  OPS.eoFill,
  OPS.stroke,
  OPS.fillStroke,
  OPS.eoFillStroke,
  OPS.closeStroke,
  OPS.closeFillStroke,
  OPS.closeEOFillStroke,
  OPS.shadingFill,
]);

const TEXT_OPS = new Set<number>([
  OPS.showText,
  OPS.showSpacedText,
  OPS.nextLineShowText,
  OPS.nextLineSetSpacingShowText,
]);

/** Walks the page's drawing operations for its images (placed as shown with `rotation`) and how its text is shown. */
export async function pageDrawing(page: PdfPage, rotation = page.rotate): Promise<PageDrawing> {
  const vp = page.getViewport({ scale: 1, rotation });
  const pageArea = vp.width * vp.height;
  const ops = await page.getOperatorList();
  const stack: { ctm: number[]; mode: number }[] = [];
  let ctm = [1, 0, 0, 1, 0, 0];
  let mode = 0;
  const images: Rect[] = [];
  let textOps = 0;
  let paintOps = 0;
  let invisible = 0;
  let visibleSinceCover = 0;
  let covered = 0;
  for (let i = 0; i < ops.fnArray.length; i++) {
    const fn = ops.fnArray[i];
    const args = ops.argsArray[i] as unknown[];
    if (fn === OPS.save) stack.push({ ctm, mode });
    else if (fn === OPS.restore) ({ ctm, mode } = stack.pop() ?? { ctm: [1, 0, 0, 1, 0, 0], mode: 0 });
    else if (fn === OPS.transform) ctm = Util.transform(ctm, args as number[]);
    else if (fn === OPS.setTextRenderingMode) mode = Number(args[0]) || 0;
    // A path that only sets a clip (constructPath ending in endPath) paints nothing.
    else if (PAINT_OPS.has(fn) && !(fn === OPS.constructPath && args[0] === OPS.endPath)) paintOps++;
    else if (TEXT_OPS.has(fn)) {
      textOps++;
      if (mode === 3 || mode === 7) invisible++;
      else visibleSinceCover++;
    } else if (fn === OPS.paintFormXObjectBegin) {
      stack.push({ ctm, mode });
      const matrix = args[0] as number[] | null;
      if (Array.isArray(matrix) && matrix.length === 6) ctm = Util.transform(ctm, matrix);
    } else if (fn === OPS.paintFormXObjectEnd)
      ({ ctm, mode } = stack.pop() ?? { ctm: [1, 0, 0, 1, 0, 0], mode: 0 });
    else if (IMAGE_OPS.has(fn)) {
      const m = Util.transform(vp.transform, ctm);
      const pts = [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ].map(([x, y]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]]);
      const xs = pts.map((p) => p[0]);
      const ys = pts.map((p) => p[1]);
      const r = {
        x0: Math.max(0, Math.min(...xs)),
        y0: Math.max(0, Math.min(...ys)),
        x1: Math.min(vp.width, Math.max(...xs)),
        y1: Math.min(vp.height, Math.max(...ys)),
      };
      if (r.x1 > r.x0 && r.y1 > r.y0) {
        images.push(r);
        if ((r.x1 - r.x0) * (r.y1 - r.y0) >= 0.5 * pageArea) {
          covered += visibleSinceCover;
          visibleSinceCover = 0;
        }
      }
    }
  }
  return { images, textOps, hiddenTextOps: invisible + covered, paintOps };
}

/** Renders a page at `scale` pixels per point on white (turned by `rotation`), and hands the canvas to `read`. */
async function renderPage<T>(
  doc: PdfDocument,
  page: PdfPage,
  scale: number,
  read: (cc: CanvasAndContext) => T,
  rotation = page.rotate,
): Promise<T> {
  const viewport = page.getViewport({ scale, rotation });
  const factory = (doc as unknown as { canvasFactory: CanvasFactory }).canvasFactory;
  const cc = factory.create(Math.ceil(viewport.width), Math.ceil(viewport.height));
  try {
    const ctx = cc.context;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, cc.canvas.width, cc.canvas.height);
    await page.render({ canvasContext: ctx, canvas: cc.canvas, viewport } as unknown as Parameters<
      PdfPage['render']
    >[0]).promise;
    return read(cc);
  } finally {
    factory.destroy(cc);
  }
}

/** Renders a page at `scale` pixels per point; returns PNG bytes. */
export function renderPagePng(
  doc: PdfDocument,
  page: PdfPage,
  scale: number,
  rotation = page.rotate,
): Promise<Buffer> {
  return renderPage(doc, page, scale, (cc) => cc.canvas.toBuffer('image/png'), rotation);
}

/**
 * Renders a page at `scale` pixels per point for OCR; returns a netpbm image of the whole page,
 * or of the rectangle `clip` alone (points, in the frame the page is rendered in; `clipPixels`
 * says where): 8-bit grey (P5) when every pixel is grey, RGB (P6) otherwise. tesseract reads
 * these exactly as it reads the same pixels as PNG (the same words, boxes and confidences), and
 * neither side compresses: measured on a 300 dpi scan, the render 1.3 s -> 0.8 s and the reading
 * of a grey page 6.1 s -> 4.7 s (a colour picture's three channels are kept: its greys would read
 * differently).
 */
export function renderPagePnm(
  doc: PdfDocument,
  page: PdfPage,
  scale: number,
  rotation = page.rotate,
  clip?: Rect,
): Promise<Buffer> {
  return renderPage(
    doc,
    page,
    scale,
    (cc) => {
      const r = clip
        ? clipPixels(clip, scale, cc.canvas)
        : { x0: 0, y0: 0, x1: cc.canvas.width, y1: cc.canvas.height };
      const width = r.x1 - r.x0;
      const height = r.y1 - r.y0;
      return pnm(cc.context.getImageData(r.x0, r.y0, width, height).data, width, height);
    },
    rotation,
  );
}

/** RGBA pixels (alpha ignored: pages render on white) as P5 when all are grey, else P6. */
export function pnm(rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Buffer {
  const n = width * height;
  let grey = true;
  for (let i = 0; i < n && grey; i++) {
    const o = 4 * i;
    grey = rgba[o] === rgba[o + 1] && rgba[o] === rgba[o + 2];
  }
  const header = Buffer.from(`${grey ? 'P5' : 'P6'}\n${width} ${height}\n255\n`, 'latin1');
  const out = Buffer.allocUnsafe(header.length + n * (grey ? 1 : 3));
  header.copy(out);
  let w = header.length;
  if (grey) for (let i = 0; i < n; i++) out[w++] = rgba[4 * i];
  else
    for (let i = 0; i < n; i++) {
      const o = 4 * i;
      out[w++] = rgba[o];
      out[w++] = rgba[o + 1];
      out[w++] = rgba[o + 2];
    }
  return out;
}

/** The pixels of `clip` (points) in a page rendered at `scale` as `canvas` (at least one pixel). */
export function clipPixels(clip: Rect, scale: number, canvas: { width: number; height: number }): Rect {
  const x0 = Math.min(canvas.width - 1, Math.max(0, Math.floor(clip.x0 * scale)));
  const y0 = Math.min(canvas.height - 1, Math.max(0, Math.floor(clip.y0 * scale)));
  return {
    x0,
    y0,
    x1: Math.max(x0 + 1, Math.min(canvas.width, Math.ceil(clip.x1 * scale))),
    y1: Math.max(y0 + 1, Math.min(canvas.height, Math.ceil(clip.y1 * scale))),
  };
}

/** Renders a page at `scale` pixels per point; returns its RGBA pixels. */
export function renderPageRgba(
  doc: PdfDocument,
  page: PdfPage,
  scale: number,
  rotation = page.rotate,
): Promise<{ data: Uint8Array; width: number; height: number }> {
  return renderPage(
    doc,
    page,
    scale,
    (cc) => {
      const { width, height } = cc.canvas;
      const img = cc.context.getImageData(0, 0, width, height);
      return {
        data: new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength),
        width,
        height,
      };
    },
    rotation,
  );
}

/** Pixels on the long side of the rendering `renderedBlank` looks at. */
const BLANK_CHECK_LONG_SIDE = 600;

/**
 * Whether the page renders as one colour (every channel of every pixel within 3 levels of the
 * first pixel's) at 600 px on its long side: a page whose drawing paints nothing one can see.
 * A 0.5 pt hairline or 4 pt type still leaves grey pixels at that size.
 */
export async function renderedBlank(doc: PdfDocument, page: PdfPage): Promise<boolean> {
  const { width, height } = pageGeometry(page);
  const img = await renderPageRgba(doc, page, BLANK_CHECK_LONG_SIDE / Math.max(width, height, 1));
  const d = img.data;
  for (let i = 4; i < d.length; i += 4)
    if (Math.abs(d[i] - d[0]) > 3 || Math.abs(d[i + 1] - d[1]) > 3 || Math.abs(d[i + 2] - d[2]) > 3)
      return false;
  return true;
}

interface CanvasAndContext {
  canvas: { width: number; height: number; toBuffer(mime: 'image/png'): Buffer };
  context: {
    fillStyle: string;
    fillRect(x: number, y: number, w: number, h: number): void;
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}

interface CanvasFactory {
  create(width: number, height: number): CanvasAndContext;
  destroy(cc: CanvasAndContext): void;
}

/** A page as `readPage` reads it: pdf.js's steps for it, on this thread or a worker's (`PageHost`). */
export interface PageSource {
  /** The page's /Rotate (degrees clockwise). */
  readonly rotate: number;
  /** The page's size as shown turned by `rotation` (a quarter turn; default its /Rotate). */
  geometry(rotation?: number): PageGeometry;
  drawing(rotation?: number): Promise<PageDrawing>;
  textLayer(): Promise<TextLayer>;
  /** Whether it renders as one colour (`renderedBlank`). */
  blank(): Promise<boolean>;
  /** The page rendered for tesseract (`renderPagePnm`). */
  pnm(scale: number, rotation: number, clip?: Rect): Promise<Buffer>;
  rgba(scale: number, rotation: number): Promise<{ data: Uint8Array; width: number; height: number }>;
}

/** A page open on this thread as a `PageSource`. */
export function pageSource(doc: PdfDocument, page: PdfPage): PageSource {
  return {
    rotate: page.rotate,
    geometry: (rotation = page.rotate) => pageGeometry(page, rotation),
    drawing: (rotation = page.rotate) => pageDrawing(page, rotation),
    textLayer: () => pageTextLayer(page),
    blank: () => renderedBlank(doc, page),
    pnm: (scale, rotation, clip) => renderPagePnm(doc, page, scale, rotation, clip),
    rgba: (scale, rotation) => renderPageRgba(doc, page, scale, rotation),
  };
}
