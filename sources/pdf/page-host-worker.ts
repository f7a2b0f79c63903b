/**
 * The worker side of `PageHost` (`page-host.ts`): one PDF open in pdf.js on this thread, and its
 * pages read on request (drawing, text layer, blank check, renders). Everything pdf.js does for
 * a page (parsing its content, decoding its images, rendering) runs here, so the page timer can
 * end it by terminating the thread.
 */
import { parentPort } from 'node:worker_threads';
import {
  openPdfData,
  type PageSource,
  type PdfDocument,
  type PdfPage,
  pageGeometry,
  pageSource,
} from './pdfjs.ts';

const port = parentPort!;
let doc: PdfDocument | undefined;
const pages = new Map<number, { page: PdfPage; source: PageSource }>();

function pageOf(pageNo: number): PageSource {
  const p = pages.get(pageNo);
  if (!p) throw new Error(`page ${pageNo} is not open in the pdf.js worker`);
  return p.source;
}

// biome-ignore lint/suspicious/noExplicitAny: arguments are checked by the host that sends them
async function handle(op: string, a: any): Promise<{ value: unknown; transfer?: ArrayBuffer[] }> {
  switch (op) {
    case 'open': {
      await doc?.destroy();
      pages.clear();
      doc = await openPdfData(a.bytes as Uint8Array, a.maxPixels as number);
      return { value: doc.numPages };
    }
    case 'page': {
      const p = await doc!.getPage(a.page);
      pages.set(a.page, { page: p, source: pageSource(doc!, p) });
      const geometry: Record<number, { width: number; height: number }> = {};
      for (const r of [0, 90, 180, 270]) geometry[r] = pageGeometry(p, r);
      return { value: { rotate: p.rotate, geometry } };
    }
    case 'drawing':
      return { value: await pageOf(a.page).drawing(a.rotation) };
    case 'textLayer':
      return { value: await pageOf(a.page).textLayer() };
    case 'blank':
      return { value: await pageOf(a.page).blank() };
    case 'pnm': {
      const image = await pageOf(a.page).pnm(a.scale, a.rotation, a.clip);
      const bytes = new Uint8Array(image);
      return { value: bytes, transfer: [bytes.buffer] };
    }
    case 'rgba': {
      const img = await pageOf(a.page).rgba(a.scale, a.rotation);
      const data = new Uint8Array(img.data);
      return { value: { data, width: img.width, height: img.height }, transfer: [data.buffer] };
    }
    case 'close':
      await doc?.destroy();
      doc = undefined;
      pages.clear();
      return { value: null };
    case 'cleanup':
      pages.get(a.page)?.page.cleanup();
      pages.delete(a.page);
      return { value: null };
    default:
      throw new Error(`unknown pdf.js worker request ${op}`);
  }
}

port.on('message', async ({ id, op, args }: { id: number; op: string; args: unknown }) => {
  try {
    const { value, transfer } = await handle(op, args);
    port.postMessage({ id, ok: true, value }, transfer ?? []);
  } catch (e) {
    port.postMessage({ id, ok: false, message: e instanceof Error ? e.message : String(e) });
  }
});
