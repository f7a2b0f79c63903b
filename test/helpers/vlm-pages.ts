/**
 * Pages for the VLM engine's tests (`sob ocr --engine openai:<model>`, with and without
 * `--batch`): PDFs whose pages differ in width, so the local protocol server can tell which page
 * a request's picture shows (and whether it is turned), and olmOCR-style front matter.
 */
import { readFileSync } from 'node:fs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { SeenRequest } from './protocol-server.ts';

/** Page k (1-based) is 500 + 20k points wide and 792 high, and says "Local text of page k". */
export async function pagesPdf(n: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let k = 1; k <= n; k++) {
    const page = doc.addPage([500 + 20 * k, 792]);
    page.drawText(`Local text of page ${k}, read from its text layer.`, { x: 60, y: 700, size: 14, font });
    page.drawText('A second line so the text layer is trusted as the page text.', {
      x: 60,
      y: 680,
      size: 14,
      font,
    });
  }
  return doc.save();
}

/** The picture a request carries: its PNG size, from the data URL's IHDR. */
export function pictureOf(req: SeenRequest): { width: number; height: number } | undefined {
  const b64 = /data:image\/png;base64,([A-Za-z0-9+/=]+)/.exec(req.userText)?.[1];
  if (!b64) return undefined;
  const png = Buffer.from(b64, 'base64');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Which page a picture shows (its short side is the page's width at 1,288 px for 792 pt), and whether it is turned. */
export function pageOf(req: SeenRequest): { page: number; turned: boolean } {
  const p = pictureOf(req);
  if (!p) return { page: 0, turned: false };
  const short = Math.min(p.width, p.height);
  return { page: Math.round((short * (792 / 1288) - 500) / 20), turned: p.width > p.height };
}

/** olmOCR's front matter, as its model writes it. */
export const front = (valid: boolean, correction: number) =>
  `---\nprimary_language: en\nis_rotation_valid: ${valid ? 'True' : 'False'}\nrotation_correction: ${correction}\nis_table: False\nis_diagram: False\n---\n`;

// biome-ignore lint/suspicious/noExplicitAny: JSON lines read back and checked field by field
export const jsonLines = (file: string): any[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
