/**
 * OCR with tesseract.js, offline: a pool of workers (one per core by default) behind
 * tesseract.js's scheduler, and a cache of recognised words on disk keyed by what changes the
 * output (the PDF's sha256, the page, the render scale, the OCR settings), never by what does not
 * (pool size, timeouts).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Tesseract from 'tesseract.js';
import { UserError } from '../../src/core/errors.ts';
import { writeFileAtomic } from '../../src/core/files.ts';

const require = createRequire(import.meta.url);

/** The traineddata folders the `@tesseract.js-data/eng` package ships (no download). */
export type EngModel = '4.0.0' | '4.0.0_best_int';

export interface OcrSettings {
  model: EngModel;
  /** Tesseract page segmentation mode ('3' = automatic, '1' = automatic with orientation). */
  psm: string;
  /**
   * Tesseract languages, each from its npm traineddata package (`@tesseract.js-data/<lang>`):
   * `eng` (default) and `fra` are installed. Absent means `['eng']` (and keeps older cache keys).
   */
  langs?: string[];
}

/** The languages whose traineddata packages are installed (read from node_modules, no download). */
export function installedLanguages(): string[] {
  const out: string[] = [];
  for (const lang of ['eng', 'fra', 'deu', 'spa', 'ita', 'por', 'nld']) {
    try {
      require.resolve(`@tesseract.js-data/${lang}/package.json`);
      out.push(lang);
    } catch {
      // not installed
    }
  }
  return out;
}

/** `eng+fra` as a list of installed languages; a UserError naming what is installed otherwise. */
export function parseLanguages(spec: string): string[] {
  const langs = spec.split('+').map((l) => l.trim());
  const have = installedLanguages();
  const missing = langs.filter((l) => !have.includes(l));
  if (langs.some((l) => l === '') || missing.length > 0)
    throw new UserError(
      `--lang ${spec}: ${missing.length > 0 ? `no traineddata for ${missing.join(', ')}` : 'an empty language'}; installed: ${have.join(', ')} (join them with +, e.g. eng+fra)`,
      2,
    );
  return [...new Set(langs)];
}

export const DEFAULT_OCR_SETTINGS: OcrSettings = { model: '4.0.0_best_int', psm: '3' };

export interface OcrWord {
  text: string;
  /** 0-100. */
  conf: number;
  /** Pixels of the rendered image. */
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** Tesseract's own grouping: block, paragraph and line numbers, page-wide. */
  block: number;
  par: number;
  line: number;
}

export interface OcrPage {
  words: OcrWord[];
}

export function langPathFor(model: EngModel, lang = 'eng'): string {
  return join(dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`)), model);
}

/** `p`, or a UserError "<what> did not finish within <ms> ms" when it takes longer. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UserError(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export interface OcrPoolOptions {
  workers: number;
  settings?: OcrSettings;
  /** Bound on starting each worker (loading the wasm core and the traineddata). */
  startTimeoutMs?: number;
  /** Bound on one page's recognition. */
  pageTimeoutMs?: number;
}

/** Tesseract workers behind one scheduler: `recognize` calls queue and run on the free worker. */
export class OcrPool {
  private constructor(
    private readonly scheduler: Tesseract.Scheduler,
    readonly size: number,
    readonly settings: OcrSettings,
    private readonly pageTimeoutMs: number,
  ) {}

  static async start(opts: OcrPoolOptions): Promise<OcrPool> {
    const settings = opts.settings ?? DEFAULT_OCR_SETTINGS;
    const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
    const scheduler = Tesseract.createScheduler();
    const n = Math.max(1, opts.workers);
    const langs = settings.langs ?? ['eng'];
    // tesseract.js reads every language from one folder; each lives in its own npm package, so
    // several are linked side by side in a scratch folder, removed once the workers have loaded them.
    let langPath = langPathFor(settings.model);
    let scratch: string | undefined;
    if (langs.length > 1 || langs[0] !== 'eng') {
      scratch = mkdtempSync(join(tmpdir(), 'sob-tessdata-'));
      for (const lang of langs)
        symlinkSync(
          join(langPathFor(settings.model, lang), `${lang}.traineddata.gz`),
          join(scratch, `${lang}.traineddata.gz`),
        );
      langPath = scratch;
    }
    const starts = Array.from({ length: n }, async () => {
      const pending = Tesseract.createWorker(langs.join('+'), Tesseract.OEM.LSTM_ONLY, {
        langPath,
        gzip: true,
        cacheMethod: 'none',
      });
      try {
        const worker = await withTimeout(pending, startTimeoutMs, 'starting a tesseract.js worker');
        // A fixed dpi keeps tesseract from guessing it; its chatter ("Detected 227 diacritics")
        // would otherwise land on our stdout.
        await worker.setParameters({
          tessedit_pageseg_mode: settings.psm as Tesseract.PSM,
          user_defined_dpi: '300',
          debug_file: '/dev/null',
        });
        scheduler.addWorker(worker);
      } catch (e) {
        // A worker that starts after the deadline is shut down when it does.
        pending.then((w) => w.terminate()).catch(() => {});
        throw e;
      }
    });
    const results = await Promise.allSettled(starts);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await scheduler.terminate().catch(() => {});
      throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
    return new OcrPool(scheduler, n, settings, opts.pageTimeoutMs ?? 300_000);
  }

  /** `image`: encoded bytes leptonica reads (PNG, netpbm, ...). */
  async recognize(image: Buffer): Promise<OcrPage> {
    const job = this.scheduler.addJob('recognize', image, {}, { blocks: true, text: false });
    const res = await withTimeout(job, this.pageTimeoutMs, 'recognising a page');
    return { words: wordsOf(res.data) };
  }

  async terminate(): Promise<void> {
    await this.scheduler.terminate();
  }
}

function wordsOf(page: Tesseract.Page): OcrWord[] {
  const out: OcrWord[] = [];
  let b = 0;
  let p = 0;
  let l = 0;
  for (const block of page.blocks ?? []) {
    b++;
    for (const par of block.paragraphs) {
      p++;
      for (const line of par.lines) {
        l++;
        for (const w of line.words) {
          const text = w.text.trim();
          if (text === '') continue;
          out.push({ text, conf: w.confidence, ...w.bbox, block: b, par: p, line: l });
        }
      }
    }
  }
  return out;
}

/** Recognised pages on disk, one JSON file per (PDF, page, scale, settings). */
export class OcrCache {
  constructor(readonly dir: string) {}

  static defaultDir(): string {
    const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
    return join(base, 'sob-eval', 'ocr');
  }

  /** `settings`: the engine's settings (anything JSON), part of the key. */
  key(
    pdfSha256: string,
    page: number,
    scale: number,
    settings: OcrSettings | Record<string, unknown>,
  ): string {
    const material = JSON.stringify({
      v: 1,
      pdf: pdfSha256,
      page,
      scale: Number(scale.toFixed(4)),
      settings,
    });
    return createHash('sha256').update(material).digest('hex');
  }

  get(key: string): OcrPage | undefined {
    const f = join(this.dir, `${key}.json`);
    if (!existsSync(f)) return undefined;
    try {
      return JSON.parse(readFileSync(f, 'utf8')) as OcrPage;
    } catch {
      return undefined; // a torn file is recomputed
    }
  }

  put(key: string, page: OcrPage): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(join(this.dir, `${key}.json`), JSON.stringify(page));
  }
}

export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
