/**
 * From positioned words to a markdown-like page transcript (pure; no I/O). The same code reads
 * the PDF text layer and OCR output:
 * 1. words -> lines (vertical overlap) -> segments (a line split at wide horizontal gaps);
 * 2. running headers/footers and page numbers dropped (lines alone in the top/bottom margin);
 * 3. reading order by recursive XY-cut: at each step the widest gap relative to its scale wins,
 *    a vertical gap (a column gutter, in font sizes) or a horizontal one (in line heights); a
 *    region whose columns line up row by row and hold short cells is a table, kept row by row;
 * 4. lines -> paragraphs (column change, a larger gap, a change of size) with words hyphenated
 *    across line ends rejoined; larger-than-body lines become headings.
 */

export interface TextBox {
  /** No surrounding whitespace. */
  text: string;
  /** PDF points, origin top left. */
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Font size in points. */
  size: number;
  /** Boxes known to share a line (OCR output); otherwise lines are found from geometry. */
  lineId?: number;
}

export interface LayoutOptions {
  width: number;
  height: number;
  /** Drop lines alone in the top/bottom margin and bare page numbers (default true). */
  dropMargins?: boolean;
  /** Font sizes are guesses from OCR boxes: headings and size changes need a larger step. */
  sizesAreEstimates?: boolean;
}

interface Segment {
  boxes: TextBox[];
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  size: number;
}

/** A row of segments at one height, in reading order, with the column it was read in. */
interface OutLine {
  segs: Segment[];
  column: string;
  table: boolean;
  /** Rows of one table share a number. */
  tableId: number;
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Body font size: the size most characters are set in. */
function bodySize(boxes: TextBox[]): number {
  const weight = new Map<number, number>();
  for (const b of boxes) {
    const k = Math.round(b.size * 2) / 2;
    weight.set(k, (weight.get(k) ?? 0) + b.text.length);
  }
  let best = 10;
  let bestW = -1;
  for (const [k, w] of weight) {
    if (w > bestW) {
      best = k;
      bestW = w;
    }
  }
  return best;
}

/** Two single quotes set as a double quote (TeX's `` and '') read as one. */
function fixQuotes(s: string): string {
  return s.replace(/\u2018\u2018|``/g, '\u201c').replace(/\u2019\u2019/g, '\u201d');
}

// Spacing accents TeX sets before a letter (J´an Min´aˇc) and the combining marks they stand for.
const SPACING_ACCENTS: Record<string, string> = {
  '\u00b4': '\u0301',
  '`': '\u0300',
  '\u02c6': '\u0302',
  '\u02dc': '\u0303',
  '\u00a8': '\u0308',
  '\u02c7': '\u030c',
  '\u02d8': '\u0306',
  '\u02d9': '\u0307',
  '\u00b8': '\u0327',
  '\u02da': '\u030a',
  '\u02dd': '\u030b',
  '\u02db': '\u0328',
};

/** `´a` -> `á`: a spacing accent glued to the letter after it (no space), composed. */
export function composeAccents(s: string): string {
  return s
    .replace(
      /([\u00b4`\u02c6\u02dc\u00a8\u02c7\u02d8\u02d9\u00b8\u02da\u02dd\u02db]) ?(\p{L})/gu,
      // TeX accents a dotless i or j (\'{\i}): the dot goes back when the accent is composed.
      (_m, acc: string, letter: string) =>
        `${letter === '\u0131' ? 'i' : letter === '\u0237' ? 'j' : letter}${SPACING_ACCENTS[acc]}`,
    )
    .normalize('NFC');
}

function joinBoxes(boxes: TextBox[]): string {
  let s = '';
  let prev: TextBox | undefined;
  for (const b of boxes) {
    if (prev) {
      const gap = b.x0 - prev.x1;
      const size = Math.min(prev.size, b.size);
      if (gap > 0.12 * size) s += ' ';
    }
    s += b.text;
    prev = b;
  }
  return composeAccents(fixQuotes(s.replace(/\s+/g, ' ')));
}

function makeSegment(boxes: TextBox[]): Segment {
  return {
    boxes,
    text: joinBoxes(boxes),
    x0: Math.min(...boxes.map((b) => b.x0)),
    x1: Math.max(...boxes.map((b) => b.x1)),
    top: Math.min(...boxes.map((b) => b.top)),
    bottom: Math.max(...boxes.map((b) => b.bottom)),
    size: median(boxes.map((b) => b.size)),
  };
}

/**
 * A drop cap (one or two letters set far larger than the text, beside the paragraph's first
 * lines) is glued to the first word on its right, so "O" + "ver the" reads "Over the".
 */
function mergeDropCaps(boxes: TextBox[], body: number): TextBox[] {
  const out = [...boxes];
  for (const cap of boxes) {
    if (cap.text.length > 2 || cap.size < 2.2 * body || !/^\p{Lu}+$/u.test(cap.text)) continue;
    let best: TextBox | undefined;
    for (const b of out) {
      if (b === cap || b.size > 1.5 * body) continue;
      const dx = b.x0 - cap.x1;
      if (dx < -0.5 * body || dx > 2 * body) continue;
      if (b.top < cap.top - body || b.top > cap.top + 0.5 * (cap.bottom - cap.top)) continue;
      if (!best || b.top < best.top || (b.top === best.top && b.x0 < best.x0)) best = b;
    }
    if (!best) continue;
    const i = out.indexOf(best);
    out[i] = { ...best, text: cap.text + best.text, x0: Math.min(cap.x0, best.x0) };
    out.splice(out.indexOf(cap), 1);
  }
  return out;
}

/** Groups boxes into lines: a shared lineId, or a vertical centre close to the line's. */
function groupLines(boxes: TextBox[]): TextBox[][] {
  const withId = new Map<number, TextBox[]>();
  const free: TextBox[] = [];
  for (const b of boxes) {
    if (b.lineId !== undefined) {
      const l = withId.get(b.lineId);
      if (l) l.push(b);
      else withId.set(b.lineId, [b]);
    } else free.push(b);
  }
  // Each line keeps the band of its first (full-size) box, so tall neighbours do not chain lines.
  const lines: { boxes: TextBox[]; centre: number; height: number }[] = [];
  free.sort((a, b) => (a.top + a.bottom) / 2 - (b.top + b.bottom) / 2);
  for (const b of free) {
    const h = b.bottom - b.top;
    const c = (b.top + b.bottom) / 2;
    let best: (typeof lines)[number] | undefined;
    let bestD = Number.POSITIVE_INFINITY;
    for (let i = lines.length - 1; i >= 0 && i >= lines.length - 12; i--) {
      const l = lines[i];
      const d = Math.abs(c - l.centre);
      if (d <= 0.35 * Math.max(h, l.height) && d <= 0.6 * Math.min(h, l.height) && d < bestD) {
        best = l;
        bestD = d;
      }
    }
    if (best) best.boxes.push(b);
    else lines.push({ boxes: [b], centre: c, height: h });
  }
  return [...withId.values(), ...lines.map((l) => l.boxes)];
}

/** Splits each line at gaps wider than about one font size (column gutters, table cells). */
function toSegments(lines: TextBox[][]): Segment[] {
  const segs: Segment[] = [];
  for (const line of lines) {
    line.sort((a, b) => a.x0 - b.x0);
    let cur: TextBox[] = [];
    let right = Number.NEGATIVE_INFINITY;
    for (const b of line) {
      const size = Math.max(b.size, cur.length ? median(cur.map((c) => c.size)) : b.size);
      if (cur.length > 0 && b.x0 - right > 1.0 * size) {
        segs.push(makeSegment(cur));
        cur = [];
      }
      cur.push(b);
      right = Math.max(right, b.x1);
    }
    if (cur.length > 0) segs.push(makeSegment(cur));
  }
  return segs;
}

const PAGE_NUMBER = /^(?:page\s+)?(?:\d{1,4}|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})(?:\s*(?:of|\/)\s*\d{1,4})?\.?$/i;

/**
 * Rows alone in the top or bottom margin band (a clear gap between them and the body) are
 * running headers/footers; a bare number near the top or bottom is a page number. The band is
 * measured on the text's own extent (pages are often cropped or padded), and rows span the whole
 * width so a two-column page counts its line once.
 */
function dropMarginLines(segs: Segment[], body: number, pageHeight: number): Segment[] {
  if (segs.length < 3) return segs;
  const sorted = [...segs].sort((a, b) => a.top - b.top);
  const rows: { segs: Segment[]; top: number; bottom: number }[] = [];
  for (const s of sorted) {
    const r = rows[rows.length - 1];
    if (r && s.top < r.bottom - 0.3 * Math.min(s.bottom - s.top, r.bottom - r.top)) {
      r.segs.push(s);
      r.bottom = Math.max(r.bottom, s.bottom);
    } else rows.push({ segs: [s], top: s.top, bottom: s.bottom });
  }
  // A page of a few lines (a cover, a poster) has no running heads to speak of.
  if (rows.length < 6) return segs;
  const top = rows[0].top;
  const bottom = Math.max(...rows.map((r) => r.bottom));
  const left = Math.min(...segs.map((s) => s.x0));
  const width = Math.max(...segs.map((s) => s.x1)) - left;
  const extent = bottom - top;
  const band = Math.max(0.1 * extent, 0.12 * pageHeight);
  // Column-aware gaps: from a segment to the nearest segment above/below that shares some of its
  // width. A running head or foot has clear space towards the body, wider than the body's own
  // line spacing there (pages mix sizes; multi-column rows do not share baselines).
  const xOverlap = (a: Segment, b: Segment) => Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 0;
  const neighbour = (s: Segment, dir: 1 | -1): Segment | undefined => {
    let best: Segment | undefined;
    for (const o of segs) {
      if (o === s || !xOverlap(o, s)) continue;
      const d = dir === 1 ? o.top - s.bottom : s.top - o.bottom;
      const tol = -0.3 * Math.min(s.size, o.size);
      if (d < tol) continue;
      if (!best || d < (dir === 1 ? best.top - s.bottom : s.top - best.bottom)) best = o;
    }
    return best;
  };
  const clearOf = (s: Segment, dir: 1 | -1): boolean => {
    const n = neighbour(s, dir);
    if (!n) return true;
    const gap = dir === 1 ? n.top - s.bottom : s.top - n.bottom;
    const next = neighbour(n, dir);
    const pitchThere = next ? Math.abs(next.top - n.top) : 1.2 * n.size;
    const spacing = pitchThere > 0.5 * n.size && pitchThere < 3 * n.size ? pitchThere : 1.2 * n.size;
    return gap > Math.max(Math.max(s.size, n.size), 1.1 * spacing);
  };
  const separated = (r: (typeof rows)[number], dir: 1 | -1) => r.segs.every((s) => clearOf(s, dir));
  const isNumber = (r: (typeof rows)[number]) => {
    if (r.segs.every((s) => PAGE_NUMBER.test(s.text))) return true;
    const segs = [...r.segs].sort((a, b) => a.x0 - b.x0);
    const words = segs.reduce((n, s) => n + s.text.split(' ').length, 0);
    return (
      segs.length >= 2 &&
      words <= 8 &&
      (PAGE_NUMBER.test(segs[0].text) || PAGE_NUMBER.test(segs[segs.length - 1].text))
    );
  };
  // A running head is a short line or two, never a line of running text: a paragraph line is
  // long and has a neighbour line right above or below it at the same indent.
  const long = (r: (typeof rows)[number]) =>
    r.segs.some((s) => s.text.length > 40 && s.x1 - s.x0 > 0.4 * width);
  const proseAt = (i: number) => {
    if (!long(rows[i])) return false;
    return [i - 1, i + 1].some((j) => {
      const o = rows[j];
      if (!o || !long(o)) return false;
      const dy = Math.abs(o.top - rows[i].top);
      return (
        dy <= 1.6 * (rows[i].bottom - rows[i].top) && Math.abs(o.segs[0].x0 - rows[i].segs[0].x0) <= body
      );
    });
  };
  const MAX_ROWS = 4;
  // Running heads are not set far larger than the text; a large line at the top is a title.
  const large = (r: (typeof rows)[number]) => median(r.segs.map((s) => s.size)) > 1.6 * body;
  const drop = new Set<Segment>();
  // From the top: the rows above the last clear gap that opens inside the band.
  let cut = -1;
  for (
    let i = 0;
    i < Math.min(rows.length - 1, MAX_ROWS) && rows[i].bottom <= top + band && !proseAt(i) && !large(rows[i]);
    i++
  ) {
    if (separated(rows[i], 1) || (i === cut + 1 && isNumber(rows[i]))) cut = i;
  }
  for (let i = 0; i <= cut; i++) for (const s of rows[i].segs) drop.add(s);
  cut = rows.length;
  for (
    let i = rows.length - 1;
    i > 0 && i >= rows.length - MAX_ROWS && rows[i].top >= bottom - band && !proseAt(i) && !large(rows[i]);
    i--
  ) {
    if (separated(rows[i], -1) || (i === cut - 1 && isNumber(rows[i]))) cut = i;
  }
  for (let i = cut; i < rows.length; i++) for (const s of rows[i].segs) drop.add(s);
  // Bare page numbers in the outer 15%, alone or beside one other item.
  for (const r of rows) {
    if (r.bottom > top + 0.15 * extent && r.top < bottom - 0.15 * extent) continue;
    if (r.segs.length > 2) continue;
    for (const s of r.segs) if (PAGE_NUMBER.test(s.text)) drop.add(s);
  }
  return segs.filter((s) => !drop.has(s));
}

interface Gap {
  at: number;
  size: number;
}

/** Gaps between the union of intervals [lo, hi) of the given items. */
function gaps(items: Segment[], lo: (s: Segment) => number, hi: (s: Segment) => number): Gap[] {
  const iv = items.map((s) => [lo(s), hi(s)] as const).sort((a, b) => a[0] - b[0]);
  const out: Gap[] = [];
  let end = iv[0][1];
  for (let i = 1; i < iv.length; i++) {
    if (iv[i][0] > end) out.push({ at: (iv[i][0] + end) / 2, size: iv[i][0] - end });
    end = Math.max(end, iv[i][1]);
  }
  return out;
}

/** Row clusters of a region: segments whose vertical centres are close. */
function rowsOf(segs: Segment[]): Segment[][] {
  const sorted = [...segs].sort((a, b) => a.top + a.bottom - (b.top + b.bottom));
  const rows: Segment[][] = [];
  for (const s of sorted) {
    const r = rows[rows.length - 1];
    const c = (s.top + s.bottom) / 2;
    if (r) {
      const rc = median(r.map((x) => (x.top + x.bottom) / 2));
      if (Math.abs(c - rc) < 0.45 * Math.max(s.size, median(r.map((x) => x.size)))) {
        r.push(s);
        continue;
      }
    }
    rows.push([s]);
  }
  for (const r of rows) r.sort((a, b) => a.x0 - b.x0);
  return rows;
}

/**
 * Is a region cut by vertical gutters into `columns` a table? Its rows must line up across
 * columns, and its cells be short (text columns are filled by lines nearly their full width).
 */
function looksLikeTable(segs: Segment[], cuts: number[]): boolean {
  const colOf = (s: Segment) => cuts.filter((c) => (s.x0 + s.x1) / 2 > c).length;
  const ncols = cuts.length + 1;
  const rows = rowsOf(segs);
  if (rows.length < 2) return rows.length === 1 && rows[0].length >= 2;
  const multi = rows.filter((r) => new Set(r.map(colOf)).size >= 2).length;
  if (multi / rows.length < 0.5) return false;
  // Fill ratio per column: median segment width over the column's width.
  const bounds = [Number.NEGATIVE_INFINITY, ...cuts, Number.POSITIVE_INFINITY];
  const fills: number[] = [];
  for (let c = 0; c < ncols; c++) {
    const inCol = segs.filter((s) => colOf(s) === c);
    if (inCol.length === 0) continue;
    const lo = Math.max(Math.min(...inCol.map((s) => s.x0)), bounds[c]);
    const hi = Math.min(Math.max(...inCol.map((s) => s.x1)), bounds[c + 1]);
    fills.push(median(inCol.map((s) => s.x1 - s.x0)) / Math.max(hi - lo, 1));
  }
  const textColumns = fills.filter((f) => f > 0.7).length;
  if (ncols >= 3) return textColumns < ncols;
  return fills.some((f) => f < 0.55) && multi / rows.length >= 0.7;
}

let tableCounter = 0;

/** Recursive XY-cut; appends lines in reading order to `out`. */
function xyCut(segs: Segment[], column: string, body: number, out: OutLine[]): void {
  if (segs.length === 0) return;
  if (segs.length === 1) {
    out.push({ segs, column, table: false, tableId: 0 });
    return;
  }
  const lineH = median(segs.map((s) => s.bottom - s.top)) || body;
  const size = median(segs.map((s) => s.size)) || body;
  const hGaps = gaps(
    segs,
    (s) => s.top,
    (s) => s.bottom,
  );
  const vGaps = gaps(
    segs,
    (s) => s.x0,
    (s) => s.x1,
  ).filter((g) => g.size >= 0.9 * size);
  const bestH = hGaps.reduce<Gap | undefined>((a, g) => (!a || g.size > a.size ? g : a), undefined);
  const bestV = vGaps.reduce<Gap | undefined>((a, g) => (!a || g.size > a.size ? g : a), undefined);
  const hScore = bestH ? bestH.size / lineH : 0;
  const vScore = bestV ? bestV.size / size : 0;
  if (bestV && vScore >= hScore) {
    const cuts = vGaps.map((g) => g.at).sort((a, b) => a - b);
    if (looksLikeTable(segs, cuts)) {
      const id = ++tableCounter;
      for (const row of rowsOf(segs)) out.push({ segs: row, column, table: true, tableId: id });
      return;
    }
    const at = bestV.at;
    xyCut(
      segs.filter((s) => (s.x0 + s.x1) / 2 < at),
      `${column}L`,
      body,
      out,
    );
    xyCut(
      segs.filter((s) => (s.x0 + s.x1) / 2 >= at),
      `${column}R`,
      body,
      out,
    );
    return;
  }
  if (bestH) {
    const at = bestH.at;
    xyCut(
      segs.filter((s) => (s.top + s.bottom) / 2 < at),
      column,
      body,
      out,
    );
    xyCut(
      segs.filter((s) => (s.top + s.bottom) / 2 >= at),
      column,
      body,
      out,
    );
    return;
  }
  // No clean cut (skewed scan lines, superscripts overlapping their line): rows by vertical centre.
  for (const row of rowsOf(segs)) out.push({ segs: row, column, table: false, tableId: 0 });
}

function lineText(l: OutLine): string {
  if (l.table) return `| ${l.segs.map((s) => s.text.replace(/\|/g, '\\|')).join(' | ')} |`;
  return l.segs.map((s) => s.text).join(' ');
}

function lineBox(l: OutLine): { x0: number; x1: number; top: number; bottom: number; size: number } {
  return {
    x0: Math.min(...l.segs.map((s) => s.x0)),
    x1: Math.max(...l.segs.map((s) => s.x1)),
    top: Math.min(...l.segs.map((s) => s.top)),
    bottom: Math.max(...l.segs.map((s) => s.bottom)),
    size: median(l.segs.map((s) => s.size)),
  };
}

/** Joins a paragraph's lines: a word hyphenated at a line end is rejoined. */
export function joinLines(lines: string[]): string {
  let s = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '') continue;
    if (s === '') s = line;
    else if (/\p{L}-$/u.test(s) && /^\p{Ll}/u.test(line)) s = s.slice(0, -1) + line;
    else s += ` ${line}`;
  }
  return s;
}

/** Lines in reading order -> markdown paragraphs, headings and tables. */
function toMarkdown(lines: OutLine[], body: number, noisy: boolean): string {
  const h1 = noisy ? 1.8 : 1.5;
  const h2 = noisy ? 1.45 : 1.2;
  const step = noisy ? 0.3 : 0.15;
  const blocks: string[] = [];
  let para: string[] = [];
  let prev: { box: ReturnType<typeof lineBox>; line: OutLine } | undefined;
  let tableRows: string[] = [];
  let tableId = 0;
  const flushPara = () => {
    if (para.length === 0) return;
    const text = joinLines(para);
    const size = prev ? prev.box.size : body;
    if (text.length < 150 && size >= h1 * body) blocks.push(`# ${text}`);
    else if (text.length < 150 && size >= h2 * body) blocks.push(`## ${text}`);
    else blocks.push(text);
    para = [];
  };
  const flushTable = () => {
    if (tableRows.length === 0) return;
    const n = Math.max(...tableRows.map((r) => r.split(' | ').length));
    const sep = `|${' --- |'.repeat(n)}`;
    blocks.push([tableRows[0], sep, ...tableRows.slice(1)].join('\n'));
    tableRows = [];
  };
  for (const line of lines) {
    const box = lineBox(line);
    if (line.table) {
      if (line.tableId !== tableId) {
        flushPara();
        flushTable();
        tableId = line.tableId;
      }
      tableRows.push(lineText(line));
      prev = undefined;
      continue;
    }
    flushTable();
    tableId = 0;
    if (prev) {
      const p = prev.box;
      const pitch = box.top - p.top;
      const gap = box.top - p.bottom;
      const sizeChange = Math.abs(box.size - p.size) > step * Math.max(box.size, p.size);
      const columnChange = line.column !== prev.line.column;
      const bigGap = gap > 0.8 * Math.max(box.size, p.size) || pitch < 0;
      const heading = p.size >= h2 * body || box.size >= h2 * body;
      // Text flows from a column's foot to the next column's head: break there only at a sentence end.
      const sentenceEnd = /[.!?:"')\]]$/.test(para[para.length - 1] ?? '');
      if (columnChange ? sizeChange || heading || sentenceEnd : bigGap || sizeChange) flushPara();
    }
    para.push(lineText(line));
    prev = { box, line };
  }
  flushPara();
  flushTable();
  return blocks.join('\n\n');
}

/** The page transcript for boxes from the text layer or OCR. */
export function layoutPage(boxes: TextBox[], opts: LayoutOptions): string {
  if (boxes.length === 0) return '';
  const body = bodySize(boxes);
  let segs = toSegments(groupLines(mergeDropCaps(boxes, body)));
  if (opts.dropMargins !== false) segs = dropMarginLines(segs, body, opts.height);
  const out: OutLine[] = [];
  xyCut(segs, '', body, out);
  return toMarkdown(out, body, opts.sizesAreEstimates === true);
}
