/**
 * Combining two OCR readings of one page, line by line (pure; no I/O).
 *
 * Measured on the scanned pages of the olmOCR sample and orbit-bench (see bench/ocr.ts and
 * docs/ocr.md): PaddleOCR's PP-OCRv4 recognition reads characters better where tesseract struggles
 * (curved or faint print at a page edge), but its Chinese-English model runs English words
 * together when they are set tight ("Nostrictureshavebeenimposed"); tesseract keeps word
 * spaces. So each PaddleOCR line is matched with the tesseract words inside its box and:
 * - no tesseract words there: PaddleOCR's line is taken (tesseract missed it);
 * - tesseract is confident (mean word confidence >= `TRUST`) or both read the same characters
 *   (>= 90% alike, spaces aside): tesseract's words are kept;
 * - otherwise, when PaddleOCR is confident (>= `PADDLE_TRUST`) and more so than tesseract, its
 *   characters are taken with tesseract's word breaks put back (the two strings aligned by edit
 *   distance; a space in tesseract's reading becomes a space in PaddleOCR's);
 * - else tesseract's words are kept.
 * A PaddleOCR line with no tesseract word centred in it that lies half or more under tesseract's
 * words is a piece of what tesseract read whole (".00" of "192.00", "145." of "145.00": PaddleOCR
 * reads a table cell's tail as a line of its own), and is left out: no fragment is read twice.
 * Tesseract words outside every PaddleOCR line are kept.
 */
import type { OcrPage, OcrWord } from './ocr.ts';

/** Tesseract word confidence (0-100) above which its reading of a line is kept as it is. */
export const TRUST = 85;
/** PaddleOCR line confidence (0-100) needed to replace tesseract's reading. */
export const PADDLE_TRUST = 90;

export interface CombineStats {
  /** PaddleOCR lines: taken as they were, taken with tesseract's spaces, or left to tesseract. */
  paddleLines: number;
  paddleOnly: number;
  respaced: number;
  tesseractKept: number;
}

function strip(s: string): string[] {
  return [...s.replace(/\s+/g, '')];
}

/** Levenshtein distance, two rows. */
function distance(a: string[], b: string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/**
 * PaddleOCR's characters with tesseract's word breaks: the space-free strings are aligned by
 * edit distance, and a break after tesseract's k-th character becomes a break after the
 * PaddleOCR character aligned with it. Spaces PaddleOCR read itself are kept.
 */
export function respace(paddle: string, tesseract: string): string {
  const p = [...paddle];
  const pChars: string[] = [];
  const pBreak = new Set<number>();
  for (const ch of p) {
    if (/\s/.test(ch)) {
      if (pChars.length > 0) pBreak.add(pChars.length);
    } else pChars.push(ch);
  }
  const tChars: string[] = [];
  const tBreak = new Set<number>();
  for (const ch of tesseract) {
    if (/\s/.test(ch)) {
      if (tChars.length > 0) tBreak.add(tChars.length);
    } else tChars.push(ch);
  }
  const n = pChars.length;
  const m = tChars.length;
  const d: Int32Array[] = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = 0; i <= n; i++) d[i][0] = i;
  for (let j = 0; j <= m; j++) d[0][j] = j;
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++)
      d[i][j] = Math.min(
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + (pChars[i - 1] === tChars[j - 1] ? 0 : 1),
      );
  // Walk back: which tesseract prefix length each PaddleOCR prefix length aligns with.
  const tAt = new Int32Array(n + 1).fill(-1);
  let i = n;
  let j = m;
  tAt[n] = m;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i][j] === d[i - 1][j - 1] + (pChars[i - 1] === tChars[j - 1] ? 0 : 1)) {
      i--;
      j--;
    } else if (i > 0 && d[i][j] === d[i - 1][j] + 1) i--;
    else j--;
    if (tAt[i] < 0) tAt[i] = j;
  }
  let out = '';
  for (let k = 0; k < n; k++) {
    if (k > 0 && (pBreak.has(k) || tBreak.has(tAt[k]))) out += ' ';
    out += pChars[k];
  }
  return out;
}

interface Line {
  words: OcrWord[];
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  conf: number;
}

function lineOf(words: OcrWord[]): Line {
  return {
    words,
    x0: Math.min(...words.map((w) => w.x0)),
    x1: Math.max(...words.map((w) => w.x1)),
    y0: Math.min(...words.map((w) => w.y0)),
    y1: Math.max(...words.map((w) => w.y1)),
    conf: words.reduce((s, w) => s + w.conf, 0) / words.length,
  };
}

/** The share of a box (a PaddleOCR line's) that lies inside another (a tesseract word's). */
function overlapShare(w: { x0: number; x1: number; y0: number; y1: number }, l: Line): number {
  const ix = Math.min(w.x1, l.x1) - Math.max(w.x0, l.x0);
  const iy = Math.min(w.y1, l.y1) - Math.max(w.y0, l.y0);
  const area = (w.x1 - w.x0) * (w.y1 - w.y0);
  return ix > 0 && iy > 0 && area > 0 ? (ix * iy) / area : 0;
}

/** Both readings in the same pixel space (tesseract's); returns one reading, tesseract's line numbering. */
export function combineReadings(tesseract: OcrPage, paddle: OcrPage): { page: OcrPage; stats: CombineStats } {
  const stats: CombineStats = { paddleLines: 0, paddleOnly: 0, respaced: 0, tesseractKept: 0 };
  const byLine = new Map<number, OcrWord[]>();
  for (const w of paddle.words) {
    const l = byLine.get(w.line);
    if (l) l.push(w);
    else byLine.set(w.line, [w]);
  }
  const used = new Set<OcrWord>();
  const out: OcrWord[] = [];
  let nextLine = Math.max(0, ...tesseract.words.map((w) => w.line)) + 1;
  for (const words of byLine.values()) {
    stats.paddleLines++;
    const p = lineOf(words);
    const h = p.y1 - p.y0;
    const inside = tesseract.words
      .filter((w) => {
        const cx = (w.x0 + w.x1) / 2;
        const cy = (w.y0 + w.y1) / 2;
        return !used.has(w) && cx >= p.x0 && cx <= p.x1 && cy >= p.y0 - 0.2 * h && cy <= p.y1 + 0.2 * h;
      })
      .sort((a, b) => a.x0 - b.x0);
    const pText = words.map((w) => w.text).join(' ');
    if (inside.length === 0) {
      // A piece of a word tesseract read whole (".00" of "192.00", "145." of "145.00": PaddleOCR
      // reads a cell's tail as a line of its own): that ink is read already.
      const covered = tesseract.words.reduce((t, w) => t + overlapShare(p, lineOf([w])), 0);
      if (covered >= 0.5) {
        stats.tesseractKept++;
        continue;
      }
      stats.paddleOnly++;
      const line = nextLine++;
      for (const w of words) out.push({ ...w, line, par: line, block: line });
      continue;
    }
    for (const w of inside) used.add(w);
    const t = lineOf(inside);
    const tText = inside.map((w) => w.text).join(' ');
    const a = strip(pText);
    const b = strip(tText);
    const alike = 1 - distance(a, b) / Math.max(1, a.length, b.length);
    if (t.conf >= TRUST || alike >= 0.9 || !(p.conf >= PADDLE_TRUST && p.conf > t.conf)) {
      stats.tesseractKept++;
      out.push(...inside);
      continue;
    }
    stats.respaced++;
    const text = respace(pText, tText);
    const pieces = text.split(' ');
    const total = [...text].length;
    let at = 0;
    const line = inside[0].line;
    for (const piece of pieces) {
      const len = [...piece].length;
      out.push({
        text: piece,
        conf: Math.round(p.conf),
        x0: p.x0 + ((p.x1 - p.x0) * at) / total,
        x1: p.x0 + ((p.x1 - p.x0) * (at + len)) / total,
        y0: Math.min(p.y0, t.y0),
        y1: Math.max(p.y1, t.y1),
        block: inside[0].block,
        par: inside[0].par,
        line,
      });
      at += len + 1;
    }
  }
  for (const w of tesseract.words) if (!used.has(w)) out.push(w);
  return { page: { words: out }, stats };
}
