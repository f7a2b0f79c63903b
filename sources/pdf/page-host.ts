/**
 * pdf.js on a worker thread that can be ended: `sob ocr`'s page timer terminates the thread of a
 * page over its time, so a page whose parsing, image decoding or rendering runs long (a content
 * stream of millions of operators, forms drawn within forms) stops using CPU and memory at once,
 * where work inside pdf.js on the main thread ran on to its end. One host holds one PDF open;
 * `page(n)` gives the page as a `PageSource`, whose every step runs in the host's thread.
 */
import { Worker } from 'node:worker_threads';
import { BUILT, moduleUrl } from '../../src/core/paths.ts';
import type { PageDrawing, PageGeometry, PageSource, TextLayer } from './pdfjs.ts';

export type { PageSource } from './pdfjs.ts';

// Built, the worker's own JavaScript; from source, a script that loads it through tsx.
const ENTRY = BUILT
  ? moduleUrl('./page-host-worker.ts', import.meta.url)
  : new URL('./page-host-entry.mjs', import.meta.url);

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** Threads kept between PDFs, each with pdf.js loaded and no document open. */
const idle: PageHost[] = [];
const MAX_IDLE = 8;

type FromWorker = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

export class PageHost {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private ended?: Error;

  private constructor() {
    this.worker = new Worker(ENTRY);
    this.worker.on('message', (m: FromWorker) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.message));
    });
    this.worker.on('error', (e: Error) => this.end(new Error(`the pdf.js worker failed: ${e.message}`)));
    this.worker.on('exit', (code) => this.end(new Error(`the pdf.js worker exited (code ${code})`)));
  }

  /**
   * A thread with the PDF `bytes` open (the bytes are copied): an idle one when there is one
   * (a thread starts in about a second from the TypeScript sources: it is kept for the next PDF),
   * else a new one. Give it back with `done()`.
   */
  static async open(bytes: Uint8Array, maxPixels: number): Promise<PageHost> {
    let host = idle.pop();
    while (host?.ended) host = idle.pop();
    host ??= new PageHost();
    host.worker.ref();
    const copy = bytes.slice();
    try {
      await host.call('open', { bytes: copy, maxPixels }, [copy.buffer]);
      return host;
    } catch (e) {
      await host.terminate();
      throw e;
    }
  }

  /** Done with its PDF: the document is closed and the thread kept idle for the next one (or ended, past a few idle). */
  async done(): Promise<void> {
    if (this.ended) return;
    try {
      await this.call('close', {});
    } catch {
      await this.terminate();
      return;
    }
    if (idle.length >= MAX_IDLE) return this.terminate();
    // An idle thread does not keep the process alive.
    this.worker.unref();
    idle.push(this);
  }

  private end(why: Error): void {
    this.ended ??= why;
    for (const p of this.pending.values()) p.reject(this.ended);
    this.pending.clear();
  }

  private call(op: string, args: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  /** Opens page `pageNo` (1-based) in the worker. */
  async page(pageNo: number): Promise<PageSource> {
    const info = (await this.call('page', { page: pageNo })) as {
      rotate: number;
      geometry: Record<number, PageGeometry>;
    };
    const at = (page: number, more: Record<string, unknown> = {}) => ({ page, ...more });
    return {
      rotate: info.rotate,
      geometry: (rotation = info.rotate) => info.geometry[((rotation % 360) + 360) % 360],
      drawing: (rotation = info.rotate) =>
        this.call('drawing', at(pageNo, { rotation })) as Promise<PageDrawing>,
      textLayer: () => this.call('textLayer', at(pageNo)) as Promise<TextLayer>,
      blank: () => this.call('blank', at(pageNo)) as Promise<boolean>,
      pnm: async (scale, rotation, clip) => {
        const bytes = (await this.call('pnm', at(pageNo, { scale, rotation, clip }))) as Uint8Array;
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      },
      rgba: (scale, rotation) =>
        this.call('rgba', at(pageNo, { scale, rotation })) as Promise<{
          data: Uint8Array;
          width: number;
          height: number;
        }>,
    };
  }

  /** Lets pdf.js drop what it keeps for the page (fonts, images); nothing waits for it. */
  release(pageNo: number): void {
    this.call('cleanup', { page: pageNo }).catch(() => {});
  }

  /** Ends the thread at once, whatever it is doing; pending requests fail. */
  async terminate(): Promise<void> {
    this.end(new Error('the pdf.js worker was ended'));
    await this.worker.terminate();
  }
}
