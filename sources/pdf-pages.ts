/**
 * PDF pages as source items (the image source): each page's transcript from `sources/pdf/`
 * (its text layer, or tesseract.js OCR), `<name>_pg<N>` per page and `<name>` for the whole
 * document, optionally gated by olmOCR-bench tests (`--min-ocr-pass`).
 */
import { existsSync, readdirSync, readFileSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { type Attachment, storeAttachment } from '../src/core/attachments.ts';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { writeFileAtomic } from '../src/core/files.ts';
import { moduleUrl } from '../src/core/paths.ts';
import type { Attach, ItemLoader, LoadResult } from './types.ts';

/** The resolution a record's pages are rendered at (`sob build pdf --render-dpi`). */
export const DEFAULT_RENDER_DPI = 150;
/** The highest `--render-dpi` (a US Letter page at 600 dpi is 5,100 x 6,600 px). */
export const MAX_RENDER_DPI = 600;

/**
 * The pages `pages` (1-based) of a PDF as a PDF of their own: the source's bytes themselves when
 * they are all its pages, else those pages copied by pdf-lib into a new document (written without
 * dates or a producer, so the same pages give the same bytes, and the same hash, every build).
 */
export async function pdfPagesSubset(source: Uint8Array, pages: readonly number[]): Promise<Uint8Array> {
  const { PDFDocument } = await import('pdf-lib');
  const src = await PDFDocument.load(source, { ignoreEncryption: true, updateMetadata: false });
  const n = src.getPageCount();
  const bad = pages.find((p) => p < 1 || p > n);
  if (bad !== undefined) throw new Error(`page ${bad} is not in the PDF (it has ${n})`);
  if (pages.length === n && pages.every((p, i) => p === i + 1)) return source;
  const doc = await PDFDocument.create({ updateMetadata: false });
  for (const page of await doc.copyPages(
    src,
    pages.map((p) => p - 1),
  ))
    doc.addPage(page);
  return doc.save();
}

/**
 * The attachments of the records of one PDF (docs/records.md "Attachments"): for a record on
 * pages `pages`, those pages as a PDF (kind `pdf`, `pages`), then each page drawn by pdf.js at
 * `dpi` as a PNG (kind `image`, `pages: [n]`, `dpi`), all stored by content hash. Each page is
 * rendered once per build however many records show it, and stored as soon as it is drawn.
 */
function pdfAttacher(pdf: string, dpi: number): (pages: number[]) => Attach {
  const subsets = new Map<string, Promise<Attachment>>();
  const renders = new Map<string, Promise<Attachment>>();
  const render = (dir: string, pages: number[]): void => {
    const todo = pages.filter((n) => !renders.has(`${dir}\0${n}`));
    if (todo.length === 0) return;
    const done = (async () => {
      const { openPdfData, renderPagePng } = await import('./pdf/pdfjs.ts');
      const doc = await openPdfData(new Uint8Array(readFileSync(pdf)));
      const out = new Map<number, Attachment>();
      try {
        for (const n of todo) {
          const page = await doc.getPage(n);
          // pdf.js rounds its canvas up: a hair under dpi/72, so 792 pt at 150 dpi is 1,650 px,
          // not 1,651 (792 * 150 / 72 is a float a hair over 1,650).
          const png = await renderPagePng(doc, page, (dpi / 72) * (1 - 1e-9));
          page.cleanup();
          out.set(n, { ...storeAttachment(dir, png, 'image', 'image/png', [n]), dpi });
        }
      } finally {
        await doc.destroy();
      }
      return out;
    })();
    for (const n of todo)
      renders.set(
        `${dir}\0${n}`,
        done.then((m) => m.get(n)!),
      );
  };
  return (pages) => async (dir) => {
    const key = `${dir}\0${pages.join(',')}`;
    let subset = subsets.get(key);
    if (!subset) {
      subset = pdfPagesSubset(new Uint8Array(readFileSync(pdf)), pages).then((bytes) =>
        storeAttachment(dir, bytes, 'pdf', 'application/pdf', pages),
      );
      subsets.set(key, subset);
    }
    const out = [await subset];
    if (dpi > 0) {
      render(dir, pages);
      for (const n of pages) out.push(await renders.get(`${dir}\0${n}`)!);
    }
    return out;
  };
}

interface PdfPage {
  page: number;
  markdown: string;
  method: string;
  /** The OCR engine(s) that read it (tesseract, paddle, both), the page model's id, or null/absent for the text layer. */
  engine?: string | null;
  /** Why the page was not transcribed (over the page cap or the time per page). */
  skipped?: string;
  /** Lines dropped as page furniture. */
  furniture?: string[];
}
/** What the loader uses of the PDF pipeline (sources/pdf/index.ts), loaded when it first runs. */
interface PdfPipeline {
  /** The one multi-PDF driver: one engine for all PDFs, several in flight. */
  pdfsToTranscripts(
    pdfPaths: string[],
    opts: Record<string, unknown> & { engine: { workers: number } },
    hooks: {
      onError?: (pdfPath: string, error: unknown) => void;
      pagesOf?: (pdfPath: string) => ReadonlySet<number> | undefined;
    },
  ): Promise<PdfPage[][]>;
  OcrEngine: new (opts: {
    workers?: number;
    cacheDir?: string | null;
    engine?: string;
    langs?: string[];
  }) => { workers: number; close(): Promise<void> };
}

async function importPdfPipeline(): Promise<PdfPipeline> {
  const url = moduleUrl('./pdf/index.ts', import.meta.url);
  if (!existsSync(url)) {
    throw new UserError(
      'the PDF pipeline (sources/pdf/index.ts) is not part of this installation: cannot build from PDFs',
    );
  }
  const mod = (await import(url.href)) as Partial<PdfPipeline>;
  if (typeof mod.pdfsToTranscripts !== 'function' || typeof mod.OcrEngine !== 'function') {
    throw new UserError(
      'sources/pdf/index.ts does not export pdfsToTranscripts and OcrEngine: cannot build from PDFs',
    );
  }
  return mod as PdfPipeline;
}

/**
 * The pages of the PDF named `name` that the source ids in `only` name: `all` when `only` is
 * absent or names the whole document (`<name>`), else the page numbers of its `<name>_pg<N>`
 * (none: the PDF is not read at all).
 */
export function pagesNamed(name: string, only: ReadonlySet<string> | undefined): 'all' | Set<number> {
  if (!only || only.has(name)) return 'all';
  const pages = new Set<number>();
  const prefix = `${name}_pg`;
  for (const id of only) {
    if (!id.startsWith(prefix)) continue;
    const n = id.slice(prefix.length);
    if (/^[1-9][0-9]*$/.test(n)) pages.add(Number(n));
  }
  return pages;
}

/**
 * The PDFs a path names: the file itself, or every `*.pdf` under a folder (sorted per folder).
 * Symbolic links are followed, to files and to folders, each real folder read once (a link back
 * up the tree is not a loop); a dangling link named `.pdf` is listed, so reading it names it.
 */
export function listPdfs(input: string): string[] {
  if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
  if (statSync(input).isFile()) return [input];
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (dir: string) => {
    const real = realpathSync(dir);
    if (seen.has(real)) return;
    seen.add(real);
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      const pdf = e.toLowerCase().endsWith('.pdf');
      let st: Stats;
      try {
        st = statSync(p);
      } catch {
        if (pdf) out.push(p);
        continue;
      }
      if (st.isDirectory()) walk(p);
      else if (pdf && st.isFile()) out.push(p);
    }
  };
  walk(input);
  return out;
}

/**
 * PDF pages as source items: `<name>_pg<N>` per page (N from 1) and `<name>` for the whole
 * document (pages joined by blank lines), where `<name>` is the PDF's path relative to the
 * input folder (or its file name) without `.pdf` — the naming `sob ocr` uses.
 */
/**
 * The OCR quality gate (the paper kept pages passing >= 50% of their olmOCR-bench tests):
 * `minOcrPass` with `ocrTests` (a dataset.jsonl) drops pages whose transcript passes fewer of
 * their present/absent/order tests; a page without tests is kept.
 */
async function ocrGate(
  opts: Record<string, unknown>,
): Promise<
  ((name: string, page: number, markdown: string) => { rate: number; tests: number } | null) | null
> {
  const min = opts.minOcrPass;
  const file = opts.ocrTests;
  if (min === undefined) return null;
  if (typeof min !== 'number' || !(min >= 0 && min <= 1))
    throw new UserError('--min-ocr-pass must be a number from 0 to 1');
  if (typeof file !== 'string') {
    throw new UserError(
      '--min-ocr-pass needs --ocr-tests <dataset.jsonl> (olmOCR-bench tests to measure each page)',
      2,
    );
  }
  const { loadOcrTests, runOcrTest } = await import('./ocr-check.ts');
  const { tests } = await loadOcrTests(file);
  return (name, page, markdown) => {
    const mine = tests.filter(
      (t) =>
        t.page === page &&
        (t.pdf.replace(/\.pdf$/i, '') === name || t.pdf.replace(/\.pdf$/i, '').endsWith(`/${name}`)),
    );
    if (mine.length === 0) return null;
    const passed = mine.filter((t) => runOcrTest(t, markdown).passed).length;
    return { rate: passed / mine.length, tests: mine.length };
  };
}

export async function loadPdfs(
  input: string,
  opts: Record<string, unknown>,
  only?: ReadonlySet<string>,
): Promise<LoadResult> {
  const { pdfsToTranscripts, OcrEngine } = await importPdfPipeline();
  const gate = await ocrGate(opts);
  const langs = Array.isArray(opts.langs) ? (opts.langs as string[]) : ['eng'];
  const dpi = typeof opts.renderDpi === 'number' ? opts.renderDpi : DEFAULT_RENDER_DPI;
  const result: LoadResult = { items: [], problems: [] };
  const isDir = statSync(input).isDirectory();
  // Only the PDFs, and of them the pages, that the annotations name are read (all without a list).
  const named = new Map<string, { name: string; pages: 'all' | Set<number> }>();
  for (const pdf of listPdfs(input)) {
    const name = (isDir ? relative(input, pdf) : basename(pdf)).replace(/\.pdf$/i, '');
    const pages = pagesNamed(name, only);
    if (pages === 'all' || pages.size > 0) named.set(pdf, { name, pages });
  }
  const failed = new Map<string, unknown>();
  const engine = new OcrEngine({
    workers: opts.workers as number | undefined,
    cacheDir: opts.cacheDir as string | null | undefined,
    engine: opts.ocrEngine as string | undefined,
    langs,
  });
  let read: PdfPage[][];
  try {
    read = await pdfsToTranscripts(
      [...named.keys()],
      // Margins: only lines repeating across pages by default (a single page keeps its letterhead
      // and foot, where a record's values may be); `--margins layout` as `sob ocr` reads them.
      { ...opts, margins: opts.margins ?? 'repeated', engine },
      {
        onError: (pdf, e) => failed.set(pdf, e),
        pagesOf: (pdf) => {
          const pages = named.get(pdf)?.pages;
          return pages === 'all' ? undefined : pages;
        },
      },
    );
  } finally {
    await engine.close();
  }
  for (const [i, [pdf, { name, pages: asked }]] of [...named].entries()) {
    if (failed.has(pdf)) {
      result.problems.push({
        origin: pdf,
        reasons: [`PDF could not be transcribed: ${errorMessage(failed.get(pdf))}`],
      });
      continue;
    }
    let pages = read[i];
    const attach = pdfAttacher(pdf, dpi);
    const skipped = pages.filter((x) => x.skipped).length;
    // Pages not transcribed are named, one problem each, and left out.
    for (const p of pages.filter((x) => x.skipped))
      result.problems.push({ origin: `${name}_pg${p.page}`, reasons: [`page skipped: ${p.skipped}`] });
    pages = pages.filter((p) => !p.skipped);
    if (gate) {
      const kept: PdfPage[] = [];
      for (const p of pages) {
        const g = gate(name, p.page, p.markdown);
        if (g && g.rate < (opts.minOcrPass as number)) {
          result.problems.push({
            origin: `${name}_pg${p.page}`,
            reasons: [
              `OCR pass rate ${g.rate.toFixed(2)} on ${g.tests} tests is below --min-ocr-pass ${opts.minOcrPass}`,
            ],
          });
        } else kept.push(p);
      }
      pages = kept;
    }
    for (const p of pages) {
      result.items.push({
        id: `${name}_pg${p.page}`,
        context: p.markdown,
        metadata: {
          dataset: 'pdf',
          source_id: `${name}_pg${p.page}`,
          source_pdf: name,
          page: p.page,
          ocr_method: p.method,
          // What the transcript dropped as running heads and feet: the grounding check names the
          // line when a ground-truth value is in one (src/core/grounding.ts).
          ...(p.furniture?.length ? { page_furniture: p.furniture } : {}),
          // The languages tesseract read the page in, as sob ocr's ocr_pages.jsonl records them.
          ...(p.engine === 'tesseract' || p.engine === 'both' ? { ocr_languages: langs } : {}),
        },
        attach: attach([p.page]),
      });
    }
    // The whole document, when all its pages were read.
    if (asked !== 'all') continue;
    result.items.push({
      id: name,
      context: pages.map((p) => p.markdown).join('\n\n'),
      metadata: {
        dataset: 'pdf',
        source_id: name,
        source_pdf: name,
        pages: pages.length,
        ...(skipped > 0 ? { pages_skipped: skipped } : {}),
        ocr_methods: [...new Set(pages.map((p) => p.method))],
        ...(pages.some((p) => p.furniture?.length)
          ? { page_furniture: pages.flatMap((p) => p.furniture ?? []) }
          : {}),
        ...(pages.some((p) => p.engine === 'tesseract' || p.engine === 'both')
          ? { ocr_languages: langs }
          : {}),
      },
      attach: attach(pages.map((p) => p.page)),
    });
  }
  return result;
}

export const loader: ItemLoader = {
  produces: 'items',
  source: 'image',
  loadItems: (input, ctx) =>
    loadPdfs(
      input,
      {
        ...ctx.options.pdf,
        ...(ctx.options.renderDpi !== undefined ? { renderDpi: ctx.options.renderDpi } : {}),
        log: ctx.log,
      },
      ctx.only,
    ),
};

/**
 * The pixel size a PNG (its IHDR chunk) or baseline/progressive JPEG (its first SOF marker)
 * declares, read from the header without decoding anything; undefined when not found.
 */
export function imageHeaderSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes.toString('latin1', 12, 16) === 'IHDR')
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  let i = 2;
  while (i + 9 < bytes.length && bytes[i] === 0xff) {
    const marker = bytes[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    }
    const len = bytes.readUInt16BE(i + 2);
    // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { width: bytes.readUInt16BE(i + 7), height: bytes.readUInt16BE(i + 5) };
    i += 2 + len;
  }
  return undefined;
}

/** Why an image is not read: it is over `maxPixels` (checked on its header, before decoding); undefined when it may be read. */
export function oversizedImage(file: string, maxPixels: number): string | undefined {
  const bytes = readFileSync(file);
  const size = imageHeaderSize(bytes);
  if (!size || size.width * size.height <= maxPixels) return undefined;
  return `the image is over --max-pixels (${size.width} x ${size.height} px = ${(size.width * size.height).toLocaleString('en-US')} pixels; the cap is ${maxPixels.toLocaleString('en-US')}), not decoded`;
}

/**
 * A PNG or JPEG as a one-page PDF (the image filling the page, its long side 11 in, so the
 * renderer's 300 dpi gives OCR 3,300 pixels on that side), written to `out`. Undefined with the
 * reason when the file is not a PNG or JPEG that can be decoded.
 */
export async function imageToPdf(file: string, out: string): Promise<string | undefined> {
  const { PDFDocument } = await import('pdf-lib');
  const bytes = readFileSync(file);
  const png =
    bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  const jpeg = bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  if (!png && !jpeg)
    return 'not a PNG or JPEG image (sob ocr reads PDFs, and PNG or JPEG files given by name)';
  if (!imageHeaderSize(bytes))
    return `cannot read as a ${png ? 'PNG' : 'JPEG'} image (no size in its header)`;
  try {
    const doc = await PDFDocument.create();
    const img = png ? await doc.embedPng(bytes) : await doc.embedJpg(bytes);
    const scale = 792 / Math.max(img.width, img.height, 1);
    const [w, h] = [img.width * scale, img.height * scale];
    doc.addPage([w, h]).drawImage(img, { x: 0, y: 0, width: w, height: h });
    writeFileAtomic(out, await doc.save());
    return undefined;
  } catch (e) {
    return `cannot read as a ${png ? 'PNG' : 'JPEG'} image (${errorMessage(e).split('\n')[0]})`;
  }
}
