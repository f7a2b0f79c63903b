/**
 * Reading order by recursive XY-cut with column detection (pure; no I/O).
 *
 * The page's items (segments, and tables as single blocks) are cut recursively along whitespace:
 * 1. Columns first. If a vertical gap (at least 0.9 font sizes wide) runs through the whole
 *    region and both sides are text columns (two or more items filling at least a quarter of
 *    their height, with lines at least five font sizes wide on average), the region is read left
 *    side, then right side. A horizontal gap of three line heights or more still comes first (a
 *    section break across the columns).
 * 2. Otherwise the region is cut at its widest horizontal gap, skipping gaps that would cut a
 *    column structure in two (the same gutter with text columns both above and below the gap),
 *    so a title above two columns is cut off before the columns are split.
 * 3. A region with no horizontal gap is one row when its items share one line (read left to
 *    right as one line: "Place:" and "New Delhi"), else it is cut at its widest vertical gap.
 * 4. What cannot be cut at all is read row by row (vertical centres, then left to right).
 * Each output line remembers the column path it was read in (L/R per vertical cut), which the
 * paragraph builder uses (a paragraph may continue from the foot of one column to the next).
 */
import { median, rowsOf, type Segment } from './segments.ts';
import type { Table } from './tables.ts';

export type Item = { seg: Segment; table?: undefined } | { table: Table; seg?: undefined };

interface Box {
  item: Item;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  size: number;
}

/** A line in reading order: segments read left to right, or a table. */
export interface OrderedLine {
  segs: Segment[];
  table?: Table;
  column: string;
}

export interface OrderStats {
  /** Vertical cuts made because both sides were text columns. */
  columnCuts: number;
  /** Tables found inside regions (after column cuts). */
  regionTables: number;
}

export function boxOf(item: Item): Box {
  if (item.table) {
    const t = item.table;
    return {
      item,
      x0: t.x0,
      x1: t.x1,
      top: t.top,
      bottom: t.bottom,
      size: median(t.segs.map((s) => s.size)),
    };
  }
  const s = item.seg;
  return { item, x0: s.x0, x1: s.x1, top: s.top, bottom: s.bottom, size: s.size };
}

interface Gap {
  at: number;
  size: number;
}

/** Gaps between the union of the intervals [lo, hi) of the boxes. */
function gapsOf(boxes: Box[], lo: (b: Box) => number, hi: (b: Box) => number): Gap[] {
  const iv = boxes.map((b) => [lo(b), hi(b)] as const).sort((a, b) => a[0] - b[0]);
  const out: Gap[] = [];
  let end = iv[0][1];
  for (let i = 1; i < iv.length; i++) {
    if (iv[i][0] > end) out.push({ at: (iv[i][0] + end) / 2, size: iv[i][0] - end });
    end = Math.max(end, iv[i][1]);
  }
  return out;
}

/**
 * A text column: two or more items filling a fair share of their height, whose rows are a good
 * width (five font sizes; a table inside the column counts by its rows) and whose text is mostly
 * letters (a block of figures is a table's columns, not a text column).
 */
function isColumn(boxes: Box[]): boolean {
  if (boxes.length < 2) return false;
  const top = Math.min(...boxes.map((b) => b.top));
  const bottom = Math.max(...boxes.map((b) => b.bottom));
  const filled = boxes.reduce((s, b) => s + (b.bottom - b.top), 0);
  if (filled < 0.25 * (bottom - top)) return false;
  const segs = boxes.filter((b) => !b.item.table).map((b) => b.item.seg as Segment);
  if (segs.length === 0) return true;
  const size = median(segs.map((s) => s.size));
  const widths = rowsOf(segs).map((r) => Math.max(...r.map((s) => s.x1)) - Math.min(...r.map((s) => s.x0)));
  if (median(widths) < 5 * size) return false;
  const text = segs.map((s) => s.text).join('');
  return (text.match(/\p{L}/gu) ?? []).length >= 0.5 * text.replace(/\s/g, '').length;
}

/** The widest vertical gap splitting the region into two text columns, if any. */
export function columnGutter(boxes: Box[]): Gap | undefined {
  const size = median(boxes.map((b) => b.size));
  const vs = gapsOf(
    boxes,
    (b) => b.x0,
    (b) => b.x1,
  )
    .filter((g) => g.size >= 0.9 * size)
    .sort((a, b) => b.size - a.size);
  for (const g of vs) {
    const left = boxes.filter((b) => (b.x0 + b.x1) / 2 < g.at);
    const right = boxes.filter((b) => (b.x0 + b.x1) / 2 >= g.at);
    const l = isColumn(left);
    if (l && isColumn(right)) return g;
    // Running text beside a block of figures (a chart's labels, a side table) is two columns
    // too; a table's own label column never runs on from line to line.
    if (l ? right.length >= 2 && isProse(left) : left.length >= 2 && isProse(right) && isColumn(right))
      return g;
  }
  return undefined;
}

/**
 * Running text, of a text column (`isColumn`, checked apart): mostly letters, six rows or more, most of them long
 * (30 characters and more), where a third of the lines or more carry on the line above (they
 * start in lower case after a line that ends no sentence).
 */
function isProse(boxes: Box[]): boolean {
  if (boxes.length < 6 || boxes.some((b) => b.item.table)) return false;
  // Mostly letters (checked first: it is cheap).
  const text = boxes.map((b) => (b.item.seg as Segment).text).join('');
  if ((text.match(/\p{L}/gu) ?? []).length < 0.6 * text.replace(/\s/g, '').length) return false;
  const rows = rowsOf(boxes.map((b) => b.item.seg as Segment)).map((r) => r.map((s) => s.text).join(' '));
  if (rows.length < 6) return false;
  if (rows.filter((t) => t.length >= 30).length < 0.6 * rows.length) return false;
  let flows = 0;
  for (let i = 1; i < rows.length; i++)
    if (/^\p{Ll}/u.test(rows[i]) && !/[.:;!?]$/.test(rows[i - 1])) flows++;
  return flows >= (rows.length - 1) / 3;
}

/** Does a gutter run at about the same x through both parts, with text columns on each side? */
function splitsColumns(above: Box[], below: Box[]): boolean {
  if (above.length < 4 || below.length < 4) return false;
  const a = columnGutter(above);
  const b = columnGutter(below);
  if (!a || !b) return false;
  return Math.abs(a.at - b.at) <= Math.max(a.size, b.size);
}

function emitRows(boxes: Box[], column: string, out: OrderedLine[]): void {
  const tables = boxes.filter((b) => b.item.table);
  const segs = boxes.filter((b) => !b.item.table).map((b) => b.item.seg as Segment);
  const rows = segs.length > 0 ? rowsOf(segs) : [];
  const lines: { top: number; line: OrderedLine }[] = [
    ...rows.map((r) => ({ top: Math.min(...r.map((s) => s.top)), line: { segs: r, column } })),
    ...tables.map((t) => ({ top: t.top, line: { segs: [], table: t.item.table, column } })),
  ];
  lines.sort((a, b) => a.top - b.top);
  for (const l of lines) out.push(l.line);
}

/** Finds tables among a region's segments (the region is one column or the whole page). */
export type TableFinder = (segs: Segment[]) => { tables: Table[]; rest: Segment[] };

interface Context {
  out: OrderedLine[];
  stats: OrderStats;
  findTables?: TableFinder;
}

function cut(boxes: Box[], column: string, ctx: Context, scanned: boolean): void {
  const { out, stats } = ctx;
  if (boxes.length === 0) return;
  if (boxes.length === 1) {
    emitRows(boxes, column, out);
    return;
  }
  const lineH = median(boxes.filter((b) => !b.item.table).map((b) => b.bottom - b.top)) || 10;
  const hs = gapsOf(
    boxes,
    (b) => b.top,
    (b) => b.bottom,
  ).sort((a, b) => b.size - a.size);
  const gutter = columnGutter(boxes);
  if (gutter && !(hs[0] && hs[0].size >= 3 * lineH)) {
    // A heading above the columns (set larger than the region's text, with all of the region's
    // other text below it) is read first, even when it stands over one column only; headings
    // side by side head their own columns.
    const size = median(boxes.map((b) => b.size));
    const top = [...hs].sort((a, b) => a.at - b.at)[0];
    if (top) {
      const above = boxes.filter((b) => (b.top + b.bottom) / 2 < top.at);
      const sideBySide = above.some((a) =>
        above.some((b) => a !== b && a.x1 <= b.x0 && Math.min(a.bottom, b.bottom) > Math.max(a.top, b.top)),
      );
      if (above.length > 0 && !sideBySide && above.every((b) => !b.item.table && b.size >= 1.15 * size)) {
        cut(above, column, ctx, scanned);
        cut(
          boxes.filter((b) => (b.top + b.bottom) / 2 >= top.at),
          column,
          ctx,
          scanned,
        );
        return;
      }
    }
    stats.columnCuts++;
    // Each column is scanned for its own tables.
    cut(
      boxes.filter((b) => (b.x0 + b.x1) / 2 < gutter.at),
      `${column}L`,
      ctx,
      false,
    );
    cut(
      boxes.filter((b) => (b.x0 + b.x1) / 2 >= gutter.at),
      `${column}R`,
      ctx,
      false,
    );
    return;
  }
  // A column (a region cut off by a column gutter) is scanned for tables once; its parts are
  // not scanned again. The page as a whole was scanned before (strictly: see tables.ts).
  if (!scanned && ctx.findTables) {
    const segs = boxes.filter((b) => !b.item.table).map((b) => b.item.seg as Segment);
    const found = ctx.findTables(segs);
    if (found.tables.length > 0) {
      stats.regionTables += found.tables.length;
      const items: Item[] = [
        ...boxes.filter((b) => b.item.table).map((b) => b.item),
        ...found.rest.map((seg) => ({ seg })),
        ...found.tables.map((table) => ({ table })),
      ];
      cut(items.map(boxOf), column, ctx, true);
      return;
    }
  }
  if (hs.length > 1) {
    // Gaps as wide as the widest (within 10%: a page's line spacing) are cut all at once, when
    // no two neighbouring parts share a column structure; the same partition one gap at a time
    // would take quadratic time on a page of thousands of lines.
    const widest = hs.filter((g) => g.size >= 0.9 * hs[0].size).sort((a, b) => a.at - b.at);
    if (widest.length > 1) {
      const parts: Box[][] = Array.from({ length: widest.length + 1 }, () => []);
      for (const b of boxes) {
        const c = (b.top + b.bottom) / 2;
        let k = 0;
        while (k < widest.length && c >= widest[k].at) k++;
        parts[k].push(b);
      }
      if (
        parts.every((p) => p.length > 0) &&
        !parts.some((p, k) => k > 0 && splitsColumns(parts[k - 1], p))
      ) {
        for (const p of parts) cut(p, column, ctx, true);
        return;
      }
    }
  }
  if (hs.length > 0) {
    const split = (g: Gap) => {
      const above = boxes.filter((b) => (b.top + b.bottom) / 2 < g.at);
      const below = boxes.filter((b) => (b.top + b.bottom) / 2 >= g.at);
      return { above, below };
    };
    // Gaps are tried widest first; one that would cut a column structure in two waits.
    let chosen = hs[0];
    if (hs.length > 1) {
      for (const g of hs.slice(0, 12)) {
        const { above, below } = split(g);
        if (!splitsColumns(above, below)) {
          chosen = g;
          break;
        }
      }
    }
    const { above, below } = split(chosen);
    if (above.length > 0 && below.length > 0) {
      cut(above, column, ctx, true);
      cut(below, column, ctx, true);
      return;
    }
  }
  const segs = boxes.filter((b) => !b.item.table);
  if (segs.length === boxes.length && rowsOf(segs.map((b) => b.item.seg as Segment)).length === 1) {
    emitRows(boxes, column, out);
    return;
  }
  const vs = gapsOf(
    boxes,
    (b) => b.x0,
    (b) => b.x1,
  ).sort((a, b) => b.size - a.size);
  if (vs.length > 0) {
    const at = vs[0].at;
    cut(
      boxes.filter((b) => (b.x0 + b.x1) / 2 < at),
      `${column}L`,
      ctx,
      scanned,
    );
    cut(
      boxes.filter((b) => (b.x0 + b.x1) / 2 >= at),
      `${column}R`,
      ctx,
      scanned,
    );
    return;
  }
  // No clean cut (skewed scan lines, overlapping items): rows by vertical centre.
  emitRows(boxes, column, out);
}

/** Items in reading order, as lines (segments sharing a row of an uncuttable region) and tables. */
export function readingOrder(
  items: Item[],
  findTables?: TableFinder,
): { lines: OrderedLine[]; stats: OrderStats } {
  const ctx: Context = { out: [], stats: { columnCuts: 0, regionTables: 0 }, findTables };
  cut(items.map(boxOf), '', ctx, true);
  return { lines: ctx.out, stats: ctx.stats };
}
