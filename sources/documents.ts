/**
 * The pixel work of the document policy (src/runner/documents.ts), with the project's one
 * renderer: an image is downscaled by placing it on a PDF page of its own pixel size (pdf-lib)
 * and drawing that page with pdf.js at the scale that brings its longest edge to the limit; a
 * PDF's pages are drawn the same way. PNG or JPEG images only (what pdf-lib embeds).
 */
import { imageHeaderSize } from './pdf-pages.ts';

/** Longest edge `edge` px exactly: pdf.js rounds a viewport up, so the scale is a hair under. */
function scaleFor(long: number, edge: number): number {
  return (edge - 0.01) / long;
}

/**
 * The image's one-page PDF, per image buffer: a caller trying several edges on the same bytes
 * (the document policy, the report's pages) decodes and places the image once.
 */
const placed = new WeakMap<Buffer, Promise<Buffer>>();

/**
 * The image on a PDF page of its own pixel size. A JPEG is embedded as it is (pdf-lib copies its
 * DCT data); a PNG is decoded as pdf-lib's `embedPng` decodes it (RGB, plus a soft mask when
 * some pixel is not opaque) but its pixels are stored uncompressed: the PDF lives only in
 * memory, so deflating them (pdf-lib, in JavaScript) and inflating them again (pdf.js) is cost
 * without use; measured on a 1275x1650 page render, 0.55 s of 0.75 s per edge tried. The pixels
 * pdf.js draws are the same.
 */
async function imagePdf(data: Buffer, mime: string): Promise<Buffer> {
  const { PDFDocument, drawImage, degrees } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  if (!/png/i.test(mime)) {
    const img = await doc.embedJpg(data);
    doc.addPage([img.width, img.height]).drawImage(img, { x: 0, y: 0, width: img.width, height: img.height });
    return Buffer.from(await doc.save());
  }
  const { PNG } = (await import('pdf-lib/cjs/utils/png.js')) as typeof import('pdf-lib/cjs/utils/png.js');
  const png = PNG.load(data);
  const { width, height } = png;
  const ctx = doc.context;
  const image = { Type: 'XObject', Subtype: 'Image', Width: width, Height: height, BitsPerComponent: 8 };
  const SMask = png.alphaChannel
    ? ctx.register(ctx.stream(png.alphaChannel, { ...image, ColorSpace: 'DeviceGray', Decode: [0, 1] }))
    : undefined;
  const ref = ctx.register(
    ctx.stream(png.rgbChannel, { ...image, ColorSpace: 'DeviceRGB', ...(SMask ? { SMask } : {}) }),
  );
  const page = doc.addPage([width, height]);
  const name = page.node.newXObject('Image', ref);
  page.pushOperators(
    ...drawImage(name, {
      x: 0,
      y: 0,
      width,
      height,
      rotate: degrees(0),
      xSkew: degrees(0),
      ySkew: degrees(0),
    }),
  );
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

async function pdfjs() {
  return import('./pdf/pdfjs.ts');
}

export const documentTools = {
  imageSize(data: Buffer, _mime: string): { width: number; height: number } | undefined {
    return imageHeaderSize(data);
  },

  async downscaleImage(data: Buffer, mime: string, maxEdge: number): Promise<Buffer> {
    let pdf = placed.get(data);
    if (!pdf) {
      pdf = imagePdf(data, mime);
      placed.set(data, pdf);
    }
    const [png] = await this.pdfPageImages(await pdf, maxEdge);
    return png;
  },

  /**
   * Read with pdf-lib (the page tree: about 1 MB resident), so a run that only counts its PDFs'
   * pages never loads pdf.js (some 350 MB resident once loaded: bench/documents.ts); a file
   * pdf-lib cannot read is counted by pdf.js.
   */
  async pdfPages(data: Buffer): Promise<number> {
    try {
      const { PDFDocument } = await import('pdf-lib');
      const doc = await PDFDocument.load(data, { updateMetadata: false, ignoreEncryption: true });
      return doc.getPageCount();
    } catch {
      // pdf.js below
    }
    const { openPdfData } = await pdfjs();
    const doc = await openPdfData(new Uint8Array(data));
    try {
      return doc.numPages;
    } finally {
      await doc.destroy();
    }
  },

  async pdfPageImages(data: Buffer, maxEdge: number): Promise<Buffer[]> {
    const { openPdfData, pageGeometry, renderPagePng } = await pdfjs();
    const doc = await openPdfData(new Uint8Array(data));
    try {
      const out: Buffer[] = [];
      for (let n = 1; n <= doc.numPages; n++) {
        const page = await doc.getPage(n);
        const g = pageGeometry(page);
        out.push(await renderPagePng(doc, page, scaleFor(Math.max(g.width, g.height), maxEdge)));
        page.cleanup();
      }
      return out;
    } finally {
      await doc.destroy();
    }
  },
};
