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

async function pdfjs() {
  return import('./pdf/pdfjs.ts');
}

export const documentTools = {
  imageSize(data: Buffer, _mime: string): { width: number; height: number } | undefined {
    return imageHeaderSize(data);
  },

  async downscaleImage(data: Buffer, mime: string, maxEdge: number): Promise<Buffer> {
    const { PDFDocument } = await import('pdf-lib');
    const doc = await PDFDocument.create();
    const img = /png/i.test(mime) ? await doc.embedPng(data) : await doc.embedJpg(data);
    doc.addPage([img.width, img.height]).drawImage(img, { x: 0, y: 0, width: img.width, height: img.height });
    const bytes = await doc.save();
    const [png] = await this.pdfPageImages(Buffer.from(bytes), maxEdge);
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
