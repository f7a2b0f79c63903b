/**
 * PDFs the tests write themselves with pdf-lib (invented content, standard fonts, text layers):
 * a two-column article, a three-page report with a running header and footer, a page with a
 * table, a long document for the page cap, a picture of text placed as strips, pages turned
 * by /Rotate or with their text drawn sideways, empty pages, and scans of any of these.
 */
import { deflateSync } from 'node:zlib';
import { degrees, PDFDocument, type PDFFont, type PDFPage, rgb, StandardFonts } from 'pdf-lib';
import { wrap } from '../../sources/examples/make-pdfs.ts';
import { openPdfData, renderPageRgba } from '../../sources/pdf/pdfjs.ts';

const W = 612;
const H = 792;

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
}

async function newDoc(): Promise<{ doc: PDFDocument; f: Fonts }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const [regular, bold] = await Promise.all([
    doc.embedFont(StandardFonts.Helvetica),
    doc.embedFont(StandardFonts.HelveticaBold),
  ]);
  return { doc, f: { regular, bold } };
}

/** Text with its baseline `y` points from the top. */
function text(page: PDFPage, s: string, x: number, y: number, font: PDFFont, size: number): void {
  page.drawText(s, { x, y: H - y, font, size });
}

function textRight(page: PDFPage, s: string, xRight: number, y: number, font: PDFFont, size: number): void {
  text(page, s, xRight - font.widthOfTextAtSize(s, size), y, font, size);
}

/** Numbered sentences, so a test can check the order they come out in. */
export function sentences(tag: string, n: number): string[] {
  const words = ['harbour', 'lantern', 'meadow', 'copper', 'willow', 'granite', 'orchard', 'falcon'];
  return Array.from(
    { length: n },
    (_, i) =>
      `Sentence ${tag}${i + 1} tells of the ${words[i % words.length]} by the ${words[(i + 3) % words.length]} and the ${words[(i + 5) % words.length]} beyond it.`,
  );
}

/** A title across the page, then two columns of numbered sentences (left L1.., right R1..). */
export async function twoColumnPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  const page = doc.addPage([W, H]);
  text(page, 'Notes from the River Survey', 72, 90, f.bold, 20);
  const colW = 220;
  const place = (tag: string, x: number) => {
    let y = 140;
    for (const s of sentences(tag, 8)) {
      for (const line of wrap(s, f.regular, 10, colW)) {
        text(page, line, x, y, f.regular, 10);
        y += 13;
      }
    }
  };
  place('L', 72);
  place('R', 320);
  return doc.save({ useObjectStreams: false });
}

export const HEADER = 'Meridian Ferry Company Annual Review';
export const FOOTER = 'Confidential draft for the board';

/** Three pages, each with the same running header (top, small) and footer (bottom, with a page number). */
export async function runningHeadsPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  for (let p = 1; p <= 3; p++) {
    const page = doc.addPage([W, H]);
    text(page, HEADER, 72, 40, f.regular, 8);
    let y = 110;
    text(page, `Chapter ${p}`, 72, y, f.bold, 14);
    y += 28;
    for (const s of sentences(`P${p}-`, 6)) {
      for (const line of wrap(s, f.regular, 10, W - 144)) {
        text(page, line, 72, y, f.regular, 10);
        y += 13;
      }
      y += 6;
    }
    text(page, FOOTER, 72, H - 36, f.regular, 8);
    textRight(page, `Page ${p} of 3`, W - 72, H - 36, f.regular, 8);
  }
  return doc.save({ useObjectStreams: false });
}

export const TABLE_ROWS: [string, string, string][] = [
  ['Passenger fares', '12,480', '11,935'],
  ['Freight charges', '7,215', '6,802'],
  ['Harbour dues', '(1,130)', '(1,004)'],
  ['Total revenue', '18,565', '17,733'],
];

/** A paragraph, then a table: a banner heading over two year columns, a label column, right-aligned amounts. */
export async function tablePdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  const page = doc.addPage([W, H]);
  text(page, 'Revenue by activity', 72, 90, f.bold, 14);
  let y = 120;
  for (const line of wrap(
    'The table below sets out the revenue of each activity of the company for the two years, in thousands of pounds, as reported to the board.',
    f.regular,
    10,
    W - 144,
  )) {
    text(page, line, 72, y, f.regular, 10);
    y += 13;
  }
  y += 20;
  const c1 = 400;
  const c2 = 500;
  text(page, 'Year ended 31 December', 362, y, f.bold, 10);
  y += 14;
  textRight(page, '2024', c1, y, f.bold, 10);
  textRight(page, '2023', c2, y, f.bold, 10);
  y += 14;
  textRight(page, "£'000", c1, y, f.regular, 10);
  textRight(page, "£'000", c2, y, f.regular, 10);
  y += 18;
  for (const [label, a, b] of TABLE_ROWS) {
    text(page, label, 72, y, label.startsWith('Total') ? f.bold : f.regular, 10);
    textRight(page, a, c1, y, f.regular, 10);
    textRight(page, b, c2, y, f.regular, 10);
    y += 15;
  }
  y += 20;
  text(page, 'Figures for 2023 are restated for the sale of the Northgate terminal.', 72, y, f.regular, 10);
  return doc.save({ useObjectStreams: false });
}

export const COMPANY = 'Harbourline Shipping Limited';
export const STATEMENT = 'Statement of Cash Flows for the year ended 31 March 2025';

/** Rows of the statement page's table; the second section's heading wraps onto two lines. */
export const STORES_ROWS: [string, string, string][] = [
  ['Fuel oil consumed', '1,250', '62%'],
  ['Lubricants consumed', '760', '38%'],
  ['Imported stores', '310', '24%'],
  ['Indigenous stores', '980', '76%'],
];

/**
 * One page of a report: the company's name set large at the top (below the usual 10% margin
 * zone), clear of the statement's own bold title beneath it, then paragraphs, then a table with
 * a section heading row inside it that wraps onto a second line.
 */
export async function statementPagePdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  const page = doc.addPage([W, H]);
  text(page, COMPANY, 72, 100, f.regular, 16);
  text(page, STATEMENT, 72, 140, f.bold, 12);
  let y = 165;
  for (const s of sentences('S', 10)) {
    for (const line of wrap(s, f.regular, 10, W - 144)) {
      text(page, line, 72, y, f.regular, 10);
      y += 13;
    }
  }
  y += 30;
  const row = ([label, a, b]: [string, string, string]) => {
    text(page, label, 72, y, f.regular, 10);
    textRight(page, a, 400, y, f.regular, 10);
    textRight(page, b, 500, y, f.regular, 10);
    y += 15;
  };
  STORES_ROWS.slice(0, 2).forEach(row);
  y += 6;
  text(page, '(b) Value of imported and indigenous', 72, y, f.bold, 10);
  textRight(page, '% to total', 500, y, f.bold, 10);
  y += 12;
  text(page, 'stores and spares consumed :', 72, y, f.bold, 10);
  textRight(page, 'consumption', 500, y, f.bold, 10);
  y += 16;
  STORES_ROWS.slice(2).forEach(row);
  return doc.save({ useObjectStreams: false });
}

/** `pages` pages of one short paragraph each. */
export async function longPdf(pages: number): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  for (let p = 1; p <= pages; p++) {
    const page = doc.addPage([W, H]);
    text(page, `This is page number ${p} of a long document.`, 72, 120, f.regular, 12);
  }
  return doc.save({ useObjectStreams: false });
}

/** Rows `y0` to `y0 + rows` of an RGBA picture as a PNG (8-bit RGB, no filtering): a minimal encoder for pictures the tests make. */
function png(rgba: Uint8Array, width: number, y0: number, rows: number): Uint8Array {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(rows, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(rows * (1 + 3 * width));
  for (let y = 0; y < rows; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 3; c++)
        raw[y * (1 + 3 * width) + 1 + 3 * x + c] = rgba[((y0 + y) * width + x) * 4 + c];
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const PICTURE_LINES = ['Harbour lantern meadow', 'Copper willow granite'];

/**
 * A picture of text (no text layer for its words) placed as horizontal strips 8 points high,
 * edge to edge, the way some producers slice a picture, over a paragraph of real text. The
 * picture is drawn with pdf-lib, rendered by pdf.js at 150 dpi and cut into strips.
 */
export async function stripedPicturePdf(): Promise<Uint8Array> {
  const pic = await newDoc();
  const pw = 360;
  const ph = 96;
  const p = pic.doc.addPage([pw, ph]);
  PICTURE_LINES.forEach((s, i) => {
    p.drawText(s, { x: 12, y: ph - 40 - 36 * i, font: pic.f.bold, size: 28 });
  });
  const doc0 = await openPdfData(await pic.doc.save());
  const scale = 150 / 72;
  const img = await renderPageRgba(doc0, await doc0.getPage(1), scale);
  await doc0.destroy();
  const { doc, f } = await newDoc();
  const page = doc.addPage([W, H]);
  const strip = Math.round(8 * scale);
  for (let y = 0; y < img.height; y += strip) {
    const rows = Math.min(strip, img.height - y);
    const embedded = await doc.embedPng(png(img.data, img.width, y, rows));
    page.drawImage(embedded, {
      x: 72,
      y: H - 100 - (y + rows) / scale,
      width: img.width / scale,
      height: rows / scale,
    });
  }
  let y = 100 + img.height / scale + 30;
  for (const s of sentences('S', 6))
    for (const line of wrap(s, f.regular, 10, 400)) {
      text(page, line, 72, y, f.regular, 10);
      y += 13;
    }
  return doc.save({ useObjectStreams: false });
}

/** 20 numbered lines with a running head and a folio (set upright in the page's own space). */
export const ROTATED_LINES = Array.from(
  { length: 20 },
  (_, i) =>
    `Line ${i + 1}: the ${['harbour', 'lantern', 'meadow', 'copper', 'willow'][i % 5]} register reads ${100 + 7 * i}.`,
);
export const ROTATED_HEAD = 'Lighthouse Board Quarterly Ledger';

function ledgerPage(page: PDFPage, f: Fonts, pageNo: number, rotate: 'none' | 'text'): void {
  const put = (s: string, y: number, font: PDFFont, size: number) => {
    // Text drawn at 90 degrees on a landscape page: what reads top to bottom upright becomes
    // bottom to top, columns left to right (the page read with its right edge up).
    if (rotate === 'text') page.drawText(s, { x: y, y: 72, font, size, rotate: degrees(90) });
    else text(page, s, 72, y, font, size);
  };
  put(ROTATED_HEAD, 40, f.regular, 8);
  put(`Chapter ${pageNo}`, 100, f.bold, 14);
  ROTATED_LINES.forEach((s, i) => {
    put(s, 130 + 16 * i, f.regular, 11);
  });
  put(`Page ${pageNo}`, 740, f.regular, 8);
}

/**
 * Pages of a ledger (running head, chapter heading, 20 lines, folio) turned one of three ways:
 * 'rotate' sets /Rotate `deg` on an upright portrait page; 'text' draws the text at 90 degrees
 * on a landscape page that has no /Rotate.
 */
export async function turnedPdf(kind: 'rotate' | 'text', pages: number, deg = 90): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  for (let p = 1; p <= pages; p++) {
    if (kind === 'rotate') {
      const page = doc.addPage([W, H]);
      ledgerPage(page, f, p, 'none');
      page.setRotation(degrees(deg));
    } else ledgerPage(doc.addPage([H, W]), f, p, 'text');
  }
  return doc.save({ useObjectStreams: false });
}

/**
 * Page 1: nothing drawn at all; page 2: a white rectangle over the whole page (paths, but
 * nothing visible); page 3: one short line of text (a page that is not blank).
 */
export async function emptyPagesPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  doc.addPage([W, H]);
  doc.addPage([W, H]).drawRectangle({ x: 0, y: 0, width: W, height: H, color: rgb(1, 1, 1) });
  text(doc.addPage([W, H]), 'Intentionally left blank', 200, 400, f.regular, 12);
  return doc.save({ useObjectStreams: false });
}

/** Every page of `pdf` rendered at `dpi` and placed as one picture filling a page: a scan with no text layer. */
export async function scannedPdf(pdf: Uint8Array, dpi = 200): Promise<Uint8Array> {
  const src = await openPdfData(pdf);
  const doc = await PDFDocument.create({ updateMetadata: false });
  try {
    for (let i = 1; i <= src.numPages; i++) {
      const page = await src.getPage(i);
      const vp = page.getViewport({ scale: 1 });
      const img = await renderPageRgba(src, page, dpi / 72);
      const embedded = await doc.embedPng(png(img.data, img.width, 0, img.height));
      doc
        .addPage([vp.width, vp.height])
        .drawImage(embedded, { x: 0, y: 0, width: vp.width, height: vp.height });
    }
  } finally {
    await src.destroy();
  }
  return doc.save({ useObjectStreams: false });
}

export const SELLER = 'Harbour Supplies Ltd';
export const IBAN_LINE = 'IBAN DE89 3704 0044 0532 0130 00 - Harbour Bank, Kiel';
export const INVOICE_ROWS: [string, string, string, string][] = [
  ['Rope, 20 m', '4', '48.00', '192.00'],
  ['Lantern, brass', '1', '145.00', '145.00'],
  ['Tar, 5 l', '3', '21.50', '64.50'],
];

/**
 * A one-page invoice as a small firm sets it: the seller's name large in the letterhead, the
 * invoice heading, the parties side by side (two blocks on the same baselines, a wide gap
 * between), the items as a table, and the bank details in the foot.
 */
export async function invoicePdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  const page = doc.addPage([W, H]);
  text(page, SELLER, 72, 40, f.bold, 18);
  text(page, 'Invoice HS-104', 72, 110, f.bold, 14);
  text(page, 'Issued: March 3, 2024', 72, 130, f.regular, 10);
  const left = ['Bill to:', 'Meridian Ferry Company', '12 Quay Street', 'Portsmouth PO1 2AB'];
  const right = ['Ship to:', 'Gull Rock Lighthouse', 'Harbour Road 4', 'St Ives TR26 1LP'];
  let y = 165;
  for (let i = 0; i < left.length; i++) {
    text(page, left[i], 72, y, i === 0 ? f.bold : f.regular, 10);
    text(page, right[i], 360, y, i === 0 ? f.bold : f.regular, 10);
    y += 14;
  }
  y += 24;
  const cols = [72, 330, 420, 520];
  for (const [i, h] of ['Item', 'Qty', 'Unit price', 'Amount'].entries()) {
    if (i === 0) text(page, h, cols[0], y, f.bold, 10);
    else textRight(page, h, cols[i], y, f.bold, 10);
  }
  y += 16;
  for (const row of INVOICE_ROWS) {
    for (const [i, c] of row.entries()) {
      if (i === 0) text(page, c, cols[0], y, f.regular, 10);
      else textRight(page, c, cols[i], y, f.regular, 10);
    }
    y += 15;
  }
  y += 10;
  text(page, 'Total due', 72, y, f.bold, 10);
  textRight(page, '401.50', cols[3], y, f.bold, 10);
  y += 30;
  text(page, 'Payment within 30 days by bank transfer, quoting the invoice number.', 72, y, f.regular, 10);
  text(page, IBAN_LINE, 72, 765, f.regular, 8);
  return doc.save({ useObjectStreams: false });
}

export const REPORT_HEAD = 'Meridian Ferry Company - Board Report 2024';

/** Two pages with the same small running head at the top, then a heading and sentences. */
export async function twoPageReportPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc();
  for (let p = 1; p <= 2; p++) {
    const page = doc.addPage([W, H]);
    text(page, REPORT_HEAD, 72, 40, f.regular, 8);
    text(page, `Part ${p}`, 72, 110, f.bold, 14);
    let y = 138;
    for (const s of sentences(`T${p}-`, 6)) {
      for (const line of wrap(s, f.regular, 10, W - 144)) {
        text(page, line, 72, y, f.regular, 10);
        y += 13;
      }
    }
  }
  return doc.save({ useObjectStreams: false });
}
