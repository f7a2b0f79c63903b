/**
 * From positioned words to a markdown page transcript (pure; no I/O). The same code reads the
 * PDF text layer and OCR output, in four documented steps:
 * 1. words -> lines -> segments (`segments.ts`): baselines, superscripts, wide gaps, list labels;
 * 2. running headers, footers and page numbers dropped (`furniture.ts`): position in the page's
 *    margin zone, clear space towards the body, page-number patterns, repetition across pages;
 * 3. tables found and rebuilt from positions (`tables.ts`), each then one block;
 * 4. reading order by recursive XY-cut with column detection (`order.ts`);
 * then lines -> paragraphs (a column change, a larger gap or a size change ends one; words
 * hyphenated across line ends are rejoined), headings (lines set clearly larger than the body;
 * in a run of heading lines only the first is marked, so "Title" + "Subtitle" stays one span of
 * text) and tables (Markdown, or HTML where heading cells span columns).
 */
import { type FurnitureDrop, findFurniture, type MarginMode } from './furniture.ts';
import { type OrderedLine, readingOrder } from './order.ts';
import { bodySize, buildSegments, median, type Segment, type TextBox } from './segments.ts';
import { findTables, renderTable, type Table } from './tables.ts';

export type { TextBox } from './segments.ts';
export { composeAccents } from './segments.ts';

export interface LayoutOptions {
  width: number;
  height: number;
  /** Drop running headers/footers and page numbers (default true). */
  dropMargins?: boolean;
  /** Font sizes are guesses from OCR boxes: headings and size changes need a larger step. */
  sizesAreEstimates?: boolean;
  /** Edge rows recurring on other pages of the document (`furnitureKey`s, see furniture.ts). */
  repeated?: ReadonlySet<string>;
  /** Which margins are dropped (furniture.ts `MarginMode`; default `layout`). */
  margins?: MarginMode;
  /**
   * The boxes' segments, when the caller built them already (`buildSegments(boxes, bodySize(boxes))`:
   * `repeatedEdges` does for every page of a PDF), so they are not built twice.
   */
  segments?: Segment[];
}

/** Why the page reads as it does: what `sob ocr --explain` prints per page. */
export interface LayoutExplain {
  body_size: number;
  segments: number;
  furniture: FurnitureDrop[];
  /** Vertical cuts between text columns made by the XY-cut. */
  column_cuts: number;
  tables: { top: number; rows: number; columns: number; heading_rows: number; format: 'markdown' | 'html' }[];
  headings: string[];
}

function lineText(l: OrderedLine): string {
  return l.segs.map((s) => s.text).join(' ');
}

function lineBox(l: OrderedLine): { x0: number; x1: number; top: number; bottom: number; size: number } {
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
function toMarkdown(lines: OrderedLine[], body: number, noisy: boolean, explain: LayoutExplain): string {
  const h1 = noisy ? 1.8 : 1.5;
  const h2 = noisy ? 1.45 : 1.2;
  const step = noisy ? 0.3 : 0.15;
  const blocks: { text: string; heading: boolean }[] = [];
  // Text runs on from a column's foot to the next column's head only out of running text: a
  // column of three lines or more, most of them filling its width, whose last line fills it too
  // and is a line of prose (30 characters or more). Blocks set side by side (an address beside
  // an address: short lines) each end where they end.
  const widths = new Map<string, { x0: number; x1: number; lines: number[] }>();
  for (const l of lines) {
    if (l.table) continue;
    const b = lineBox(l);
    const w = widths.get(l.column) ?? { x0: b.x0, x1: b.x1, lines: [] };
    w.x0 = Math.min(w.x0, b.x0);
    w.x1 = Math.max(w.x1, b.x1);
    w.lines.push(b.x1 - b.x0);
    widths.set(l.column, w);
  }
  const runsOn = (l: OrderedLine, box: ReturnType<typeof lineBox>) => {
    const w = widths.get(l.column);
    if (!w || w.lines.length < 3) return false;
    const full = 0.85 * (w.x1 - w.x0);
    return median(w.lines) >= full && box.x1 - box.x0 >= full && lineText(l).length >= 30;
  };
  let para: string[] = [];
  let paraSize = body;
  let prev: { box: ReturnType<typeof lineBox>; line: OrderedLine } | undefined;
  const flushPara = () => {
    if (para.length === 0) return;
    const text = joinLines(para);
    const level = text.length < 150 ? (paraSize >= h1 * body ? 1 : paraSize >= h2 * body ? 2 : 0) : 0;
    // In a run of heading lines only the first is marked.
    const afterHeading = blocks.length > 0 && blocks[blocks.length - 1].heading;
    if (level > 0 && !afterHeading) {
      blocks.push({ text: `${'#'.repeat(level)} ${text}`, heading: true });
      explain.headings.push(text);
    } else blocks.push({ text, heading: level > 0 });
    para = [];
  };
  for (const line of lines) {
    if (line.table) {
      flushPara();
      blocks.push({ text: renderTable(line.table), heading: false });
      prev = undefined;
      continue;
    }
    const box = lineBox(line);
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
      if (columnChange ? sizeChange || heading || sentenceEnd || !runsOn(prev.line, p) : bigGap || sizeChange)
        flushPara();
    }
    if (para.length === 0) paraSize = box.size;
    para.push(lineText(line));
    prev = { box, line };
  }
  flushPara();
  return blocks.map((b) => b.text).join('\n\n');
}

/** The page transcript and the decisions behind it. */
export function analyzePage(
  boxes: TextBox[],
  opts: LayoutOptions,
): { markdown: string; explain: LayoutExplain } {
  const body = bodySize(boxes);
  const explain: LayoutExplain = {
    body_size: body,
    segments: 0,
    furniture: [],
    column_cuts: 0,
    tables: [],
    headings: [],
  };
  if (boxes.length === 0) return { markdown: '', explain };
  let segs: Segment[] = opts.segments ?? buildSegments(boxes, body);
  explain.segments = segs.length;
  if (opts.dropMargins !== false) {
    const f = findFurniture(segs, {
      pageHeight: opts.height,
      body,
      repeated: opts.repeated,
      mode: opts.margins,
    });
    segs = f.keep;
    explain.furniture = f.dropped;
  }
  // Tables: a page-wide scan first (tables of cells), then one per column region (order.ts).
  const found: Table[] = [];
  const scan = (mode: 'page' | 'region') => (s: Segment[]) => {
    const r = findTables(s, body, mode);
    found.push(...r.tables);
    return r;
  };
  const { tables, rest } = scan('page')(segs);
  const { lines, stats } = readingOrder(
    [...rest.map((seg) => ({ seg })), ...tables.map((table) => ({ table }))],
    scan('region'),
  );
  explain.column_cuts = stats.columnCuts;
  explain.tables = found
    .sort((a, b) => a.top - b.top)
    .map((t) => ({
      top: Math.round(t.top),
      rows: t.rows.length,
      columns: t.columns,
      heading_rows: t.heading,
      format: t.rows.some((r) => r.some((c) => c.colspan > 1)) ? 'html' : 'markdown',
    }));
  return { markdown: toMarkdown(lines, body, opts.sizesAreEstimates === true, explain), explain };
}

/** The page transcript for boxes from the text layer or OCR. */
export function layoutPage(boxes: TextBox[], opts: LayoutOptions): string {
  return analyzePage(boxes, opts).markdown;
}
