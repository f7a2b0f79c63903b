/**
 * The image part of the bundled example corpus (issue 4): four single-page PDFs with invented
 * content, written by the project for its examples and tests.
 *
 *   node --import tsx sources/examples/make-pdfs.ts [outDir]   (default: sources/examples/pdf)
 *
 * - invoice.pdf: header, seller and buyer blocks, a table of line items, totals (text layer);
 * - article.pdf: a two-column article with title, author line, running header and footer (text layer);
 * - report.pdf: a title and a ruled table of six stations by four columns (text layer);
 * - scan.pdf: a letter rendered to pixels by pdf.js, turned by about one degree, blurred, with
 *   noise and speckles, embedded as the only thing on the page (no text layer), so it needs OCR.
 *
 * Deterministic: no dates, no document ids, randomness only from a fixed-seed PRNG; pdf-lib
 * compresses with pako (pure JS). Running it twice gives byte-identical files on one machine;
 * the scan's pixels come from pdf.js drawing on its bundled canvas, so another platform or
 * another pdfjs-dist version may differ in a few pixels of the scan.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import {
  concatTransformationMatrix,
  drawObject,
  PDFDocument,
  type PDFFont,
  type PDFPage,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  StandardFonts,
} from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const require = createRequire(import.meta.url);
const PDFJS_DIR = dirname(require.resolve('pdfjs-dist/package.json'));

/** US Letter in points. */
const W = 612;
const H = 792;
const INK = rgb(0.1, 0.1, 0.1);
const GREY = rgb(0.4, 0.4, 0.4);

// ---------------------------------------------------------------------------------------------
// Drawing helpers (y measured from the top of the page, at the text baseline)

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
  italic: PDFFont;
}

async function newDoc(title: string, family: 'helvetica' | 'times'): Promise<{ doc: PDFDocument; f: Fonts }> {
  // updateMetadata: false keeps out the creation/modification dates and the producer string.
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(title);
  doc.setAuthor('sob-eval examples (invented content)');
  const names =
    family === 'helvetica'
      ? [StandardFonts.Helvetica, StandardFonts.HelveticaBold, StandardFonts.HelveticaOblique]
      : [StandardFonts.TimesRoman, StandardFonts.TimesRomanBold, StandardFonts.TimesRomanItalic];
  const [regular, bold, italic] = await Promise.all(names.map((n) => doc.embedFont(n)));
  return { doc, f: { regular, bold, italic } };
}

function text(
  page: PDFPage,
  s: string,
  x: number,
  y: number,
  font: PDFFont,
  size: number,
  color = INK,
): void {
  page.drawText(s, { x, y: H - y, font, size, color });
}

function textRight(page: PDFPage, s: string, xRight: number, y: number, font: PDFFont, size: number): void {
  text(page, s, xRight - font.widthOfTextAtSize(s, size), y, font, size);
}

function rule(page: PDFPage, x0: number, x1: number, y: number, thickness = 0.75): void {
  page.drawLine({ start: { x: x0, y: H - y }, end: { x: x1, y: H - y }, thickness, color: INK });
}

/** Greedy word wrap to `width` points. */
export function wrap(s: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const word of s.split(/\s+/)) {
    const next = cur ? `${cur} ${word}` : word;
    if (cur && font.widthOfTextAtSize(next, size) > width) {
      lines.push(cur);
      cur = word;
    } else cur = next;
  }
  if (cur) lines.push(cur);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// invoice.pdf

const INVOICE_ITEMS: [string, number, string][] = [
  ['Cotton rag paper, A3, 120 gsm (ream)', 4, '38.50'],
  ['Bookcloth, slate blue (metre)', 12, '9.75'],
  ['Bleached mull (roll)', 2, '14.20'],
  ['Archival PVA glue, 1 litre', 3, '11.90'],
  ['Linen headband thread (spool)', 6, '4.25'],
];

function cents(s: string): number {
  const [a, b] = s.split('.');
  return Number(a) * 100 + Number(b);
}

function money(c: number): string {
  return `${Math.floor(c / 100).toLocaleString('en-GB')}.${String(c % 100).padStart(2, '0')}`;
}

async function invoicePdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc('Invoice INV-20417', 'helvetica');
  const page = doc.addPage([W, H]);
  const L = 56;
  const R = W - 56;
  text(page, 'Harrowgate Paper Mill Ltd', L, 78, f.bold, 16);
  text(page, '14 Quarry Lane, Brindlecombe BR4 7TQ', L, 96, f.regular, 10);
  text(page, 'VAT reg. GB 318 2207 45', L, 110, f.regular, 10);
  textRight(page, 'INVOICE', R, 80, f.bold, 24);
  rule(page, L, R, 128, 1.5);

  // Invoice facts (left) and buyer (right)
  const facts: [string, string][] = [
    ['Invoice number', 'INV-20417'],
    ['Invoice date', '3 February 2025'],
    ['Due date', '5 March 2025'],
    ['Customer ref.', 'MF-0882'],
  ];
  facts.forEach(([k, v], i) => {
    text(page, k, L, 156 + i * 16, f.bold, 10);
    text(page, v, L + 100, 156 + i * 16, f.regular, 10);
  });
  const bx = 340;
  text(page, 'Bill to', bx, 156, f.bold, 10);
  ['Marlowe & Finch Bookbinders', "2 Cooper's Yard", 'Easterholm EH9 3LD'].forEach((s, i) => {
    text(page, s, bx, 172 + i * 16, f.regular, 10);
  });

  // Line items
  const cDesc = L;
  const cQty = 360;
  const cUnit = 450;
  const cAmt = R;
  let y = 250;
  rule(page, L, R, y - 14);
  text(page, 'Description', cDesc, y, f.bold, 10);
  textRight(page, 'Qty', cQty, y, f.bold, 10);
  textRight(page, 'Unit price', cUnit, y, f.bold, 10);
  textRight(page, 'Amount (GBP)', cAmt, y, f.bold, 10);
  rule(page, L, R, y + 6);
  let subtotal = 0;
  for (const [desc, qty, unit] of INVOICE_ITEMS) {
    y += 22;
    const amount = qty * cents(unit);
    subtotal += amount;
    text(page, desc, cDesc, y, f.regular, 10);
    textRight(page, String(qty), cQty, y, f.regular, 10);
    textRight(page, unit, cUnit, y, f.regular, 10);
    textRight(page, money(amount), cAmt, y, f.regular, 10);
  }
  y += 12;
  rule(page, L, R, y);
  const vat = Math.round(subtotal * 0.2);
  const totals: [string, number, PDFFont][] = [
    ['Subtotal', subtotal, f.regular],
    ['VAT at 20%', vat, f.regular],
    ['Total due (GBP)', subtotal + vat, f.bold],
  ];
  for (const [k, v, font] of totals) {
    y += 20;
    text(page, k, 360, y, font, 10.5);
    textRight(page, money(v), cAmt, y, font, 10.5);
  }

  y += 60;
  text(page, 'Payment terms', L, y, f.bold, 10);
  const terms =
    'Payment within 30 days of the invoice date by bank transfer to Harrowgate Paper Mill Ltd, ' +
    'sort code 40-11-62, account 71835520. Please quote the invoice number with your payment.';
  for (const line of wrap(terms, f.regular, 10, R - L)) {
    y += 14;
    text(page, line, L, y, f.regular, 10);
  }
  text(page, 'Thank you for your order.', L, H - 60, f.italic, 10, GREY);
  return doc.save();
}

// ---------------------------------------------------------------------------------------------
// article.pdf

const ARTICLE_PARAGRAPHS = [
  'For nearly a century the tide mill at Saltinghurst stood silent at the head of its creek, its ' +
    'wheel pit choked with silt and its pond wall open to the sea. Last autumn the wheel turned again, ' +
    'and the mill produced its first flour since the storm that closed it.',
  'The mill was built in 1784 by the miller Josiah Penfold for the Ashby estate. A tide mill works ' +
    'on borrowed water: the flood tide fills a pond of 4.5 hectares through a sluice gate, the gate is ' +
    'shut at high water, and as the tide falls the pond is let out under an undershot wheel. ' +
    'Penfold could grind for about four hours on each ebb, twice a day, whatever the weather and ' +
    'whatever the river was doing upstream.',
  'The mill stopped working in 1931, when a winter storm breached the pond wall and the estate ' +
    'judged the repair not worth its cost. The machinery was left in place. The building served ' +
    'as a net store and later as a boat shed, and the wheel slowly rotted where it stood.',
  'Rebuilding the wheel',
  'The Saltinghurst Mill Trust was founded in 2016 by residents who wanted the mill working rather ' +
    'than preserved as a ruin. Restoration began in 2019 and took four years. The new wheel, an ' +
    'undershot wheel of 5.2 metres in diameter, was built of green oak and elm by the millwright ' +
    'Idris Vaughan-Hale, who worked from measured drawings of the surviving hub and two of the ' +
    'original paddles found in the silt.',
  'The pond wall was the harder task. The engineer Lotte Brandt designed a new sluice with a ' +
    'counterweighted timber gate that one volunteer can close against a spring tide, and the breach ' +
    'of 1931 was filled with clay puddled by hand, as the original wall had been.',
  'Milling again',
  'The first flour was milled on 9 September 2023. On a good ebb the stones now grind about 180 ' +
    'kilograms of wholemeal flour, which is sold at the mill door and to two bakeries in the town. ' +
    'Around forty volunteers run the mill, led by the head miller Rosalind Achterberg, who learned ' +
    'the trade at a windmill in Friesland.',
  'Visitors can watch the wheel on spring tides between April and October. The trust publishes ' +
    'the milling days a month ahead, since the tide, not the calendar, decides when the stones can turn.',
];

async function articlePdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc('The Tide Mill at Saltinghurst Turns Again', 'times');
  const page = doc.addPage([W, H]);
  const L = 54;
  const R = W - 54;
  // Running header and footer with the page number
  text(page, 'Field Notes in Rural Engineering', L, 36, f.italic, 9, GREY);
  textRight(page, 'Vol. 12, No. 3, Autumn 2024', R, 36, f.italic, 9);
  rule(page, L, R, 42, 0.5);
  rule(page, L, R, H - 46, 0.5);
  const folio = '47';
  text(page, folio, (W - f.regular.widthOfTextAtSize(folio, 9)) / 2, H - 32, f.regular, 9, GREY);

  text(page, 'The Tide Mill at Saltinghurst Turns Again', L, 92, f.bold, 22);
  text(page, 'By Maren Okafor-Lindqvist', L, 116, f.italic, 12);
  rule(page, L, R, 130, 0.75);

  const gutter = 20;
  const colW = (R - L - gutter) / 2;
  const size = 10.5;
  const lead = 14;
  const top = 156;
  const bottom = H - 66;
  let col = 0;
  let y = top;
  const x = () => L + col * (colW + gutter);
  const advance = (dy: number) => {
    if (y + dy > bottom) {
      col++;
      y = top + dy;
      if (col > 1) throw new Error('article text does not fit in two columns');
    } else y += dy;
  };
  let first = true;
  for (const para of ARTICLE_PARAGRAPHS) {
    const heading = para.length < 40;
    if (!first) advance(heading ? lead * 1.2 : lead * 0.5);
    first = false;
    if (heading) {
      advance(lead);
      text(page, para, x(), y, f.bold, 11.5);
      continue;
    }
    for (const line of wrap(para, f.regular, size, colW)) {
      advance(lead);
      text(page, line, x(), y, f.regular, size);
    }
  }
  return doc.save();
}

// ---------------------------------------------------------------------------------------------
// report.pdf

const REPORT_ROWS: [string, string, string, string][] = [
  ['OR-01', 'North Inlet', '9.4', '2.1'],
  ['OR-02', 'Heron Bay', '8.7', '3.6'],
  ['OR-03', 'Boathouse Pier', '7.9', '5.8'],
  ['OR-04', 'Mid-lake Buoy', '9.1', '1.4'],
  ['OR-05', 'Reedmarsh Outflow', '6.2', '8.9'],
  ['OR-06', 'Kestrel Point', '8.3', '2.7'],
];

async function reportPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc('Lake Orrin Water Quality, Summer Survey 2024', 'helvetica');
  const page = doc.addPage([W, H]);
  const L = 72;
  const R = W - 72;
  text(page, 'Lake Orrin Water Quality', L, 90, f.bold, 20);
  text(page, 'Summer Survey 2024', L, 114, f.regular, 14);
  text(page, 'Prepared by the Orrin Catchment Partnership', L, 140, f.regular, 10.5);
  text(page, 'Samples taken 8 to 12 July 2024', L, 156, f.regular, 10.5);

  text(page, 'Table 1. Dissolved oxygen and turbidity by monitoring station', L, 200, f.bold, 10.5);
  const header = ['Station', 'Location', 'Dissolved oxygen (mg/L)', 'Turbidity (NTU)'];
  // Column left edges; the two measurements are right-aligned at their column's right edge.
  const xs = [L, L + 80, L + 230, L + 380, R];
  const rowH = 24;
  let y = 214;
  const hline = (yy: number, t = 0.75) => rule(page, L, R, yy, t);
  hline(y, 1.2);
  const cell = (s: string, c: number, yy: number, font: PDFFont) => {
    if (c >= 2) textRight(page, s, xs[c + 1] - 8, yy, font, 10);
    else text(page, s, xs[c] + 6, yy, font, 10);
  };
  for (const [c, h] of header.entries()) cell(h, c, y + 16, f.bold);
  y += rowH;
  hline(y);
  for (const row of REPORT_ROWS) {
    for (const [c, v] of row.entries()) cell(v, c, y + 16, f.regular);
    y += rowH;
    hline(y, 0.5);
  }
  hline(y, 1.2);
  for (const xx of xs) {
    page.drawLine({ start: { x: xx, y: H - 214 }, end: { x: xx, y: H - y }, thickness: 0.5, color: INK });
  }
  y += 24;
  const note =
    'Values are means of three samples taken at 0.5 m depth. Station OR-05 lies below the outfall of ' +
    'the Reedmarsh drainage channel and is sampled on every visit.';
  for (const line of wrap(note, f.italic, 9.5, R - L)) {
    text(page, line, L, y, f.italic, 9.5);
    y += 13;
  }
  return doc.save();
}

// ---------------------------------------------------------------------------------------------
// scan.pdf

const LETTER_LINES: (string | { bold: string })[] = [
  { bold: 'Ashgrove Allotment Society' },
  'The Pavilion, Larkspur Road',
  'Wendlebury WB3 9HN',
  '',
  '11 April 2024',
  '',
  'Ms Imogen Halloran',
  '27 Pelham Terrace',
  'Wendlebury WB2 4AS',
  '',
  'Dear Ms Halloran,',
  '',
  { bold: 'Plot allocation for the 2024 season' },
  '',
  'I am pleased to tell you that the committee has allocated you Plot 14B, a half plot of',
  '125 square metres on the east side of the site, near the water trough. Your tenancy',
  'runs from 1 May 2024 to 30 April 2025.',
  '',
  'The annual rent for a half plot is 42.00 pounds, payable by 30 April 2024. A key to the',
  'main gate can be collected from the pavilion on Saturday mornings for a deposit of',
  '10.00 pounds, refunded when the key is returned.',
  '',
  'Please bring this letter with you when you collect the key.',
  '',
  'Yours sincerely,',
  '',
  '',
  'Tobias Wren',
  'Secretary, Ashgrove Allotment Society',
];

async function letterPdf(): Promise<Uint8Array> {
  const { doc, f } = await newDoc('letter', 'times');
  const page = doc.addPage([W, H]);
  let y = 96;
  for (const line of LETTER_LINES) {
    if (typeof line === 'string') {
      if (line) text(page, line, 80, y, f.regular, 12);
    } else text(page, line.bold, 80, y, f.bold, 12);
    y += 17;
  }
  return doc.save();
}

/** Mulberry32: a small, fixed-seed PRNG (uniform in [0, 1)). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface CanvasLike {
  canvas: { width: number; height: number };
  context: {
    fillStyle: string;
    fillRect(x: number, y: number, w: number, h: number): void;
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}

/** A PDF page rendered by pdf.js to 8-bit grey pixels. */
async function renderGrey(pdf: Uint8Array, dpi: number): Promise<{ w: number; h: number; px: Float32Array }> {
  const doc = await getDocument({
    data: pdf,
    verbosity: 0,
    standardFontDataUrl: `${join(PDFJS_DIR, 'standard_fonts')}/`,
    isEvalSupported: false,
  }).promise;
  try {
    const page = await doc.getPage(1);
    const viewport = page.getViewport({ scale: dpi / 72 });
    const factory = doc.canvasFactory as {
      create(w: number, h: number): CanvasLike;
      destroy(c: CanvasLike): void;
    };
    const w = Math.round(viewport.width);
    const h = Math.round(viewport.height);
    const cc = factory.create(w, h);
    cc.context.fillStyle = '#ffffff';
    cc.context.fillRect(0, 0, w, h);
    await page.render({ canvasContext: cc.context, canvas: cc.canvas, viewport } as unknown as Parameters<
      typeof page.render
    >[0]).promise;
    const rgba = cc.context.getImageData(0, 0, w, h).data;
    factory.destroy(cc);
    const px = new Float32Array(w * h);
    for (let i = 0; i < px.length; i++)
      px[i] = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2];
    return { w, h, px };
  } finally {
    await doc.destroy();
  }
}

/**
 * What a flatbed scanner does to a clean page, roughly: the sheet lies a little crooked (a turn
 * of `degrees` about the centre, bilinear), the optics soften edges (a 3x3 blur), the sensor adds
 * noise where there is ink, dust leaves speckles, and the white point clips the paper to white.
 */
function degrade(src: { w: number; h: number; px: Float32Array }, degrees: number, seed: number): Uint8Array {
  const { w, h, px } = src;
  const rand = prng(seed);
  const gauss = () => {
    const u = Math.max(rand(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  // 1. Rotation (inverse mapping; outside the sheet is white)
  const rot = new Float32Array(w * h);
  const a = (degrees * Math.PI) / 180;
  const cos = Math.cos(a);
  const sin = Math.sin(a);
  const cx = w / 2;
  const cy = h / 2;
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= w || y >= h ? 255 : px[y * w + x]);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const sx = cos * (x - cx) + sin * (y - cy) + cx;
      const sy = -sin * (x - cx) + cos * (y - cy) + cy;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const fx = sx - x0;
      const fy = sy - y0;
      rot[y * w + x] =
        (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) +
        fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1));
    }
  }
  // 2. Blur: [1 2 1] x [1 2 1] / 16
  const k = [1, 2, 1];
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let d = -1; d <= 1; d++) s += k[d + 1] * rot[y * w + Math.min(w - 1, Math.max(0, x + d))];
      tmp[y * w + x] = s / 4;
    }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let d = -1; d <= 1; d++) s += k[d + 1] * tmp[Math.min(h - 1, Math.max(0, y + d)) * w + x];
      out[y * w + x] = s / 4;
    }
  // 3. Speckles: dust (small dark dots, a few larger) and a faint streak from the scanner glass
  for (let i = 0; i < 700; i++) {
    const x = Math.floor(rand() * w);
    const y = Math.floor(rand() * h);
    const r = rand() < 0.9 ? 0.8 : 1.6;
    const ink = 60 + rand() * 120;
    for (let dy = -2; dy <= 2; dy++)
      for (let dx = -2; dx <= 2; dx++) {
        if (dx * dx + dy * dy > r * r || x + dx < 0 || x + dx >= w || y + dy < 0 || y + dy >= h) continue;
        const j = (y + dy) * w + x + dx;
        out[j] = Math.min(out[j], ink);
      }
  }
  const streakX = Math.floor(w * 0.83);
  for (let y = 0; y < h; y++) out[y * w + streakX] = Math.min(out[y * w + streakX], 214);
  // 4. Sensor noise and the white point
  const grey = new Uint8Array(w * h);
  for (let i = 0; i < grey.length; i++) {
    let v = out[i];
    if (v < 236) v += 14 * gauss();
    v = v > 228 ? 255 : v;
    grey[i] = Math.max(0, Math.min(255, Math.round(v)));
  }
  return grey;
}

async function scanPdf(): Promise<Uint8Array> {
  const dpi = 150;
  const clean = await renderGrey(await letterPdf(), dpi);
  const grey = degrade(clean, 0.9, 20240411);
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle('Scanned letter');
  doc.setAuthor('sob-eval examples (invented content)');
  const page = doc.addPage([W, H]);
  const image = doc.context.register(
    doc.context.flateStream(grey, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: clean.w,
      Height: clean.h,
      ColorSpace: 'DeviceGray',
      BitsPerComponent: 8,
    }),
  );
  const name = page.node.newXObject('Scan', image);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(W, 0, 0, H, 0, 0),
    drawObject(name),
    popGraphicsState(),
  );
  return doc.save();
}

// ---------------------------------------------------------------------------------------------

export const EXAMPLE_PDFS = ['invoice.pdf', 'article.pdf', 'report.pdf', 'scan.pdf'] as const;

export async function makePdfs(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const makers: Record<(typeof EXAMPLE_PDFS)[number], () => Promise<Uint8Array>> = {
    'invoice.pdf': invoicePdf,
    'article.pdf': articlePdf,
    'report.pdf': reportPdf,
    'scan.pdf': scanPdf,
  };
  const written: string[] = [];
  for (const name of EXAMPLE_PDFS) {
    const file = join(outDir, name);
    writeFileSync(file, await makers[name]());
    written.push(file);
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const outDir = resolve(process.argv[2] ?? join(import.meta.dirname, 'pdf'));
  for (const file of await makePdfs(outDir)) process.stderr.write(`wrote ${file}\n`);
}
