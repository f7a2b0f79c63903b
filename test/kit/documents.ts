/**
 * Documents the tests make themselves (no data downloaded): a PNG of any size (drawn by hand:
 * zlib and a CRC), a WAV tone, a PDF of N pages (pdf-lib), and a benchmark folder whose records
 * carry them as `input.attachments`, stored as `sob build` stores them (`storeAttachment`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { type Attachment, type AttachmentKind, storeAttachment } from '../../src/core/attachments.ts';
import { type SobResult, sobIn } from './cli.ts';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** An RGB PNG of `width` x `height` px: a gradient with a `seed`-coloured band (distinct bytes per seed). */
export function pngOf(width: number, height: number, seed = 1): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0;
    for (let x = 0; x < width; x++) {
      const o = y * row + 1 + x * 3;
      const band = Math.abs(y - ((seed * 37) % height)) < 4;
      raw[o] = band ? 200 : (x * 255) / width;
      raw[o + 1] = band ? (seed * 53) & 255 : (y * 255) / height;
      raw[o + 2] = band ? 30 : 128;
    }
  }
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * An RGB PNG of `width` x `height` px of seeded pseudo-random pixels: incompressible, so about
 * `width * height * 3` bytes (a page image of a known, large size; distinct bytes per seed).
 */
export function noisyPngOf(width: number, height: number, seed = 1): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  // xorshift32, seeded
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let y = 0; y < height; y++)
    for (let i = 1; i < row; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      raw[y * row + i] = x & 255;
    }
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A mono 16-bit WAV tone of `ms` milliseconds at 8 kHz (its frequency from `seed`). */
export function wavOf(ms: number, seed = 1): Buffer {
  const rate = 8000;
  const n = Math.round((rate * ms) / 1000);
  const data = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * (300 + seed * 10) * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** A PDF of `pages` pages, each saying its number and `text` (Helvetica, selectable). */
export async function pdfOf(pages: number, text = 'Invoice'): Promise<Buffer> {
  const { PDFDocument, StandardFonts } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const p = doc.addPage([300, 400]);
    p.drawText(`${text} page ${i}`, { x: 30, y: 350, size: 16, font });
  }
  return Buffer.from(await doc.save());
}

export interface DocRecord {
  id: string;
  docs: { kind: AttachmentKind; mime: string; data: Buffer; pages?: number[] }[];
  source?: 'text' | 'image' | 'audio';
}

/**
 * A benchmark folder (`records.jsonl` and `attachments/`) of records tagged `[rid:<id>]` in the
 * question (the protocol server's key, present in every mode), each with its documents.
 */
export function documentBenchmark(dir: string, records: DocRecord[]): string {
  mkdirSync(dir, { recursive: true });
  const lines = records.map((r) => {
    const attachments: Attachment[] = r.docs.map((d) =>
      storeAttachment(dir, d.data, d.kind, d.mime, d.pages),
    );
    return JSON.stringify({
      metadata: { record_id: r.id, schema_complexity: 'easy', source: r.source ?? 'image' },
      input: {
        context: `TRANSCRIPT-OF-${r.id}: the invoice number is ${r.id}.`,
        question: `Which invoice [rid:${r.id}]?`,
        json_schema: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            total: { type: ['number', 'null'] },
            vendor: { type: ['string', 'null'] },
          },
          required: ['id'],
        },
        ...(attachments.length ? { attachments } : {}),
      },
      output: { ground_truth: { id: r.id, total: null, vendor: null } },
    });
  });
  const file = join(dir, 'records.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/**
 * `sob run --input document` of `openai:m` over `bench` into `runDir`, against a local OpenAI
 * protocol server (the builders' tests: what the server receives is what the build attached).
 */
export function runDocumentMode(baseUrl: string, bench: string, runDir: string): Promise<SobResult> {
  return sobIn(
    [
      'run',
      '--model',
      'openai:m',
      '--benchmark',
      bench,
      '--input',
      'document',
      '--base-url',
      baseUrl,
      '--run-dir',
      runDir,
    ],
    { env: { OPENAI_API_KEY: 'k' } },
  );
}
