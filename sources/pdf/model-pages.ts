/**
 * The pictures a page model is asked about, drawn ahead of the pipeline (`sob ocr --engine
 * openai:<model> --batch`: every page goes to the provider's batch interface before any page is
 * transcribed). Each page is drawn exactly as `pdfToTranscripts` draws it for the model (the same
 * pdf.js document settings, scale and turn), so the picture, and so the request's key, is the
 * same in both: the pipeline then finds each page's answer by that key.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_PIXELS, openPdfData, pageGeometry, renderPagePng } from './pdfjs.ts';

export interface ModelPicture {
  /** The PDF as given (its path). */
  pdf: string;
  /** 1-based. */
  page: number;
  /** Clockwise quarter turn the page was drawn at, beyond its own /Rotate. */
  turn: number;
  png: Buffer;
}

/**
 * The pages of `pdfPaths` (the first `maxPages` of each) drawn with their longest side `longSide`
 * px, as they are (turn 0); after each, `then` may name a further turn to draw the same page at
 * (a model's answer already said the page is turned). A PDF that cannot be opened or read is
 * passed to `onError` and left out: the pipeline names it afterwards, as it does without a batch.
 */
export async function* modelPictures(
  pdfPaths: string[],
  opts: {
    longSide: number;
    maxPages: number;
    maxPixels?: number;
    then?: (picture: ModelPicture) => number | undefined;
    onError?: (pdf: string, error: unknown) => void;
  },
): AsyncGenerator<ModelPicture> {
  for (const pdf of pdfPaths) {
    let doc: Awaited<ReturnType<typeof openPdfData>>;
    try {
      doc = await openPdfData(new Uint8Array(readFileSync(pdf)), opts.maxPixels ?? DEFAULT_MAX_PIXELS);
    } catch (e) {
      opts.onError?.(pdf, e);
      continue;
    }
    try {
      const read = Math.min(doc.numPages, opts.maxPages);
      pages: for (let page = 1; page <= read; page++) {
        let turn: number | undefined = 0;
        while (turn !== undefined) {
          let png: Buffer;
          try {
            const p = await doc.getPage(page);
            const long = Math.max(...Object.values(pageGeometry(p)));
            png = await renderPagePng(doc, p, opts.longSide / long, (p.rotate + turn) % 360);
            p.cleanup();
          } catch (e) {
            opts.onError?.(pdf, e);
            break pages;
          }
          const picture: ModelPicture = { pdf, page, turn, png };
          yield picture;
          const next: number | undefined = turn === 0 ? opts.then?.(picture) : undefined;
          turn = next;
        }
      }
    } finally {
      await doc.destroy();
    }
  }
}
