/**
 * Tables rebuilt from positions (pure; no I/O), emitted as Markdown tables, or as HTML tables
 * where a heading cell spans several columns.
 *
 * Finding a table. The segments of a region are grouped into rows (vertical centres). A row is
 * `multi` when it holds two or more segments of which at most one reads as running text (40+
 * characters, six words or more), `single` when it holds one short segment, `text` otherwise.
 * A candidate table is a run of rows that starts at a `multi` row and continues through `multi`
 * rows and short `single` rows (at most three in a row, within the run's width), without a
 * vertical gap over 2.5 body sizes; trailing `single` rows are given back. It needs two `multi`
 * rows and at least one column gutter.
 *
 * Columns. Gutters are the x-ranges that the rows leave empty: every data row (a `multi` row with
 * a number in it) or, with fewer than two data rows, every `multi` row; one row in eight may
 * cross a gutter (a heading spanning columns). Gutters narrower than 0.4 body sizes do not count.
 * A column holding nothing but currency signs or other one- or two-character symbols joins its
 * neighbour ("$" to the right, "%" and ")" to the left).
 *
 * Cells. Each segment goes to the column it overlaps most; in heading rows a segment that covers
 * several columns spans them. Heading rows are the rows above the first data row (at most five;
 * the first row when there is no number anywhere). Heading rows without spans are merged column
 * by column into one heading row ("Fair value of" over "performance rights" is one heading). A
 * body row holding only a first-column text that starts in lower case continues the label above.
 * A heading row inside the table (below rows of values) that wraps onto a second line (no values
 * in either line, the lower line's cells under the upper line's, one of them carrying on in
 * lower case right of the first column) is one row too.
 */
import { makeSegment, median, rowsOf, type Segment, type TextBox } from './segments.ts';

export interface TableCell {
  text: string;
  colspan: number;
}

export interface Table {
  segs: Segment[];
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Rows of cells; `heading` rows first. A spanning cell is followed by nothing for its extra columns. */
  rows: TableCell[][];
  heading: number;
  columns: number;
}

const NUMERIC = /^[\s$€£¥(+-]*(?:\d[\d,.\s]*|\.\d+)%?\)?\s*(?:%|x|bps|[kmbt]n?)?$/i;
const EMPTY_MARK = /^[-\u2013\u2014\u2012\u2212.]{1,3}$|^n\/?a$|^nil$/i;

function isNumeric(s: string): boolean {
  return NUMERIC.test(s) || EMPTY_MARK.test(s.trim());
}

function isProseText(t: string): boolean {
  if (t.length < 40) return false;
  const words = t.split(' ').length;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  return words >= 6 && letters >= 0.6 * t.length;
}

function isProse(s: Segment): boolean {
  return isProseText(s.text);
}

type Kind = 'multi' | 'single' | 'text';

function kindOf(row: Segment[]): Kind {
  if (row.length >= 2) return row.filter(isProse).length >= 2 ? 'text' : 'multi';
  return row[0].text.length <= 60 ? 'single' : 'text';
}

interface Band {
  segs: Segment[];
  top: number;
  bottom: number;
  kind: Kind;
}

function bandOf(segs: Segment[]): Band {
  return {
    segs,
    top: Math.min(...segs.map((s) => s.top)),
    bottom: Math.max(...segs.map((s) => s.bottom)),
    kind: kindOf(segs),
  };
}

/** Column gutters of some rows: x-ranges at most `allowed` rows cover, inside the rows' extent. */
function gutters(rows: Segment[][], body: number): { lo: number; hi: number }[] {
  const all = rows.flat();
  const minX = Math.min(...all.map((s) => s.x0));
  const maxX = Math.max(...all.map((s) => s.x1));
  const step = 0.5;
  const n = Math.max(1, Math.ceil((maxX - minX) / step));
  const cover = new Int32Array(n + 1);
  for (const row of rows) {
    const mark = new Uint8Array(n + 1);
    for (const s of row) {
      const a = Math.max(0, Math.floor((s.x0 - minX) / step));
      const b = Math.min(n, Math.ceil((s.x1 - minX) / step));
      for (let i = a; i <= b; i++) mark[i] = 1;
    }
    for (let i = 0; i <= n; i++) cover[i] += mark[i];
  }
  const allowed = rows.length >= 8 ? Math.floor(rows.length / 8) : 0;
  const out: { lo: number; hi: number }[] = [];
  let start = -1;
  for (let i = 0; i <= n; i++) {
    if (cover[i] <= allowed) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (start > 0) {
        const lo = minX + start * step;
        const hi = minX + i * step;
        if (hi - lo >= 0.4 * body) out.push({ lo, hi });
      }
      start = -1;
    }
  }
  return out;
}

/** Which columns (indices into `bounds`, the column edges) a segment's x-range overlaps, and by how much. */
function overlaps(s: Segment, bounds: number[]): number[] {
  const out: number[] = [];
  for (let c = 0; c + 1 < bounds.length; c++) {
    out.push(Math.max(0, Math.min(s.x1, bounds[c + 1]) - Math.max(s.x0, bounds[c])));
  }
  return out;
}

const SYMBOL_ONLY = /^[^\p{L}\p{N}]{1,2}$/u;

/**
 * How many running-text columns a table may have: none when scanning a whole page (two text
 * columns side by side are not a table; a page-wide scan must not swallow a column of text),
 * one inside a region already cut into columns (a table with a description column).
 */
export type TableScan = 'page' | 'region';

/** Years, periods and units: numbers that head a column rather than fill it ("2023", "Q1/23", "$m"). */
const HEADERISH =
  /^(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)?\d{2}|(?:FY|CY)?\s?(?:19|20)\d{2}(?:\s*[-\u2013/]\s*\d{2,4})?|Q[1-4]\s*[/']?\s*\d{2,4}|H[12]\s*\d{2,4}|\(?(?:[A-Z]{1,3})?[$€£¥]\)?\s*(?:'000|\u2019000|000s?|m|mn|million|bn|billion|thousands?)?|(?:19|20)\d{2}\s+\S{1,8})$/i;

function isValue(s: string): boolean {
  return isNumeric(s) && !HEADERISH.test(s.trim());
}

/** A data row: two or more cells, a value (not a year or a unit) somewhere right of the first. */
function isDataRow(b: Band): boolean {
  return b.kind === 'multi' && b.segs.slice(1).some((s) => isValue(s.text));
}

/** A line that continues the one above: it starts with a word all in lower case ("from", not "arXiv"). */
const CONTINUES = /^\p{Ll}[\p{Ll}'\u2019-]*(?:[\s,;:]|$)/u;

/** A row of column headings: two or more cells, years or units right of the first, no values. */
function isHeadingRow(b: Band): boolean {
  const rest = b.segs.slice(1);
  return rest.length > 0 && rest.every((s) => HEADERISH.test(s.text.trim())) && !isValue(b.segs[0].text);
}

interface Placed {
  texts: string[];
  from: number;
  to: number;
  /** Right end of its text. */
  x1: number;
}

/** Builds the grid of one candidate; null when it does not hold up as a table, 'text' when it is columns of text. */
function buildTable(rawBands: Band[], body: number, scan: TableScan): Table | null | 'text' {
  // Rows that overlap vertically are one table row (a label set at the top of a two-line cell,
  // the values centred beside it).
  const bands: Band[] = [];
  for (const b of rawBands) {
    const prev = bands[bands.length - 1];
    const size = Math.min(...b.segs.map((s) => s.size));
    if (prev && b.top < prev.bottom - 0.15 * size) {
      bands[bands.length - 1] = bandOf([...prev.segs, ...b.segs].sort((x, y) => x.x0 - y.x0));
    } else bands.push(b);
  }
  const multi = bands.filter((b) => b.kind === 'multi').map((b) => b.segs);
  if (multi.length < 2) return null;
  const dataBands = bands.filter(isDataRow);
  if (dataBands.length === 0 || (dataBands.length === 1 && !bands.some(isHeadingRow))) {
    // A grid of words without values (one value under no column headings is chance) is a table
    // only when it holds up as a grid: three rows of two or more cells or more (two rows side by
    // side are two columns' lines as often as not), and cells of a row set on one baseline (text
    // columns set side by side have their own).
    if (multi.length < 3) return null;
    const baseline = (s: Segment) => s.bottom - 0.2 * s.size;
    const aligned = multi.filter((r) => {
      const bs = r.map(baseline);
      return Math.max(...bs) - Math.min(...bs) <= 0.15 * median(r.map((s) => s.size));
    }).length;
    if (aligned < 0.5 * multi.length) return null;
  }
  const basis = dataBands.length >= 2 ? dataBands.map((b) => b.segs) : multi;
  const gs = gutters(basis, body);
  if (gs.length === 0) return null;
  const segs = bands.flatMap((b) => b.segs);
  // Heading rows: above the first data row (at most five), less the section labels right above
  // it (rows holding only a first-column text); the first row when nothing is a value.
  const firstData = bands.findIndex(isDataRow);
  let heading = firstData < 0 ? 1 : Math.min(firstData, 8);
  if (firstData < 0) {
    // Without values, the heading rows are the first rows set apart by size (or the first row).
    const sizeOf = (b: Band) => median(b.segs.map((x) => x.size));
    const rest = median(bands.slice(3).map(sizeOf));
    let k = 0;
    while (k < Math.min(3, bands.length - 1) && Math.abs(sizeOf(bands[k]) - rest) >= 0.1 * rest) k++;
    heading = Math.max(1, k);
  }
  let bounds = [Number.NEGATIVE_INFINITY, ...gs.map((g) => (g.lo + g.hi) / 2), Number.POSITIVE_INFINITY];
  const bestColumn = (s: Segment, bs: number[]) => {
    const ov = overlaps(s, bs);
    const max = Math.max(...ov);
    if (max > 0) return ov.indexOf(max);
    const c = (s.x0 + s.x1) / 2;
    return Math.max(0, bs.findIndex((b) => b > c) - 1);
  };
  // Body rows first: each segment in the column it overlaps most. Then columns of symbols only
  // ("$", "%") join their neighbour ("$" to the right, "%" and ")" to the left).
  for (let pass = 0; pass < 2; pass++) {
    const ncols = bounds.length - 1;
    const seen: string[][] = Array.from({ length: ncols }, () => []);
    for (const b of bands.slice(heading)) for (const s of b.segs) seen[bestColumn(s, bounds)].push(s.text);
    const remove = new Set<number>();
    seen.forEach((texts, c) => {
      if (texts.length === 0 || !texts.every((t) => SYMBOL_ONLY.test(t))) return;
      const toLeft = /^[%)]/.test(texts[0]) && c > 0;
      const edge = toLeft ? c : c + 1;
      if (edge > 0 && edge < bounds.length - 1) remove.add(edge);
    });
    if (remove.size === 0) break;
    bounds = bounds.filter((_, i) => !remove.has(i));
  }
  const ncols = bounds.length - 1;
  if (ncols < 2) return null;
  while (heading > 1 && bands[heading - 1].kind === 'single' && bands[heading - 1].segs[0].x1 <= bounds[1])
    heading--;
  // Where each column's content sits (body rows), for placing headings that span columns.
  const content = Array.from({ length: ncols }, () => ({
    lo: Number.POSITIVE_INFINITY,
    hi: Number.NEGATIVE_INFINITY,
  }));
  for (const b of bands.slice(heading)) {
    for (const s of b.segs) {
      const c = content[bestColumn(s, bounds)];
      c.lo = Math.min(c.lo, s.x0);
      c.hi = Math.max(c.hi, s.x1);
    }
  }
  // A column empty below the heading (nothing to report there) still stands by its heading.
  for (const b of bands.slice(0, heading)) {
    for (const s of b.segs) {
      const c = content[bestColumn(s, bounds)];
      if (c.lo <= c.hi) continue;
      c.lo = s.x0;
      c.hi = s.x1;
    }
  }
  if (content.some((c) => c.lo > c.hi)) return null;
  /** A heading covers the run of columns around its best column whose content it touches, centred best. */
  const valueLo = content[1].lo;
  const valueHi = content[ncols - 1].hi;
  const headingSpan = (s: Segment, alone: boolean): [number, number] => {
    const base = bestColumn(s, bounds);
    // A lone heading centred over all the value columns heads them all ("Year Ended", "Group").
    const centre0 = (s.x0 + s.x1) / 2;
    if (
      alone &&
      base > 0 &&
      ncols >= 3 &&
      Math.abs(centre0 - (valueLo + valueHi) / 2) <= 0.15 * (valueHi - valueLo)
    )
      return [1, ncols - 1];
    // A column is within reach when the heading covers a fair part of its share of the row
    // (content plus half the gutters around it).
    const touches = (c: number) => {
      const lo = Math.max(bounds[c], content[c].lo - 2 * s.size);
      const hi = Math.min(bounds[c + 1], content[c].hi + 2 * s.size);
      const overlap = Math.min(s.x1, hi) - Math.max(s.x0, lo);
      return overlap >= Math.min(0.25 * (s.x1 - s.x0), 0.5 * (content[c].hi - content[c].lo));
    };
    let lo = base;
    let hi = base;
    while (lo > 0 && touches(lo - 1)) lo--;
    while (hi < ncols - 1 && touches(hi + 1)) hi++;
    const centre = (s.x0 + s.x1) / 2;
    let best: [number, number] = [base, base];
    let bestD = Number.POSITIVE_INFINITY;
    for (let a = lo; a <= base; a++) {
      for (let b = base; b <= hi; b++) {
        const d = Math.abs(centre - (content[a].lo + content[b].hi) / 2);
        if (d < bestD - 0.5) {
          bestD = d;
          best = [a, b];
        }
      }
    }
    return best;
  };
  // A heading line holding two column headings set close ("Amount in  Amount in") is cut where
  // a gap wider than 0.4 font sizes (a word space is about 0.25) falls between columns.
  const splitHeading = (seg: Segment): Segment[] => {
    const boxes = [...seg.boxes].sort((a, b) => a.x0 - b.x0);
    const pieces: TextBox[][] = [[boxes[0]]];
    for (let k = 1; k < boxes.length; k++) {
      if (boxes[k].x0 - boxes[k - 1].x1 >= 0.4 * seg.size) pieces.push([boxes[k]]);
      else pieces[pieces.length - 1].push(boxes[k]);
    }
    if (pieces.length === 1) return [seg];
    // Pieces in the same column stay together.
    const col = (p: TextBox[]) => bestColumn(makeSegment(p, seg.line), bounds);
    const parts: TextBox[][] = [pieces[0]];
    for (let k = 1; k < pieces.length; k++) {
      if (col(pieces[k]) !== col(parts[parts.length - 1])) parts.push(pieces[k]);
      else parts[parts.length - 1].push(...pieces[k]);
    }
    return parts.length === 1 ? [seg] : parts.map((p) => makeSegment(p, seg.line));
  };
  const placed: Placed[][] = bands.map((band, r) => {
    const cells: Placed[] = [];
    for (const s of r < heading ? band.segs.flatMap(splitHeading) : band.segs) {
      let from: number;
      let to: number;
      if (r < heading) {
        // A lone line continued right below in lower case is a wrapped column heading, not a banner.
        const wrapsOn = (bands[r + 1]?.segs ?? []).some(
          (x) => x.x1 > s.x0 && x.x0 < s.x1 && CONTINUES.test(x.text) && x.top - s.bottom < s.size,
        );
        [from, to] = headingSpan(s, band.segs.length === 1 && !wrapsOn);
      } else from = to = bestColumn(s, bounds);
      const clash = cells.find((c) => !(to < c.from || from > c.to));
      if (clash) {
        clash.texts.push(s.text);
        clash.from = Math.min(clash.from, from);
        clash.to = Math.max(clash.to, to);
        clash.x1 = Math.max(clash.x1, s.x1);
      } else cells.push({ texts: [s.text], from, to, x1: s.x1 });
    }
    return cells.sort((a, b) => a.from - b.from);
  });
  // Lower-case continuation lines of a first-column label join the label they continue.
  const rows: Placed[][] = [];
  const labelOnly = (cells: Placed[]) => cells.length === 1 && cells[0].from === 0 && cells[0].to === 0;
  placed.forEach((cells, r) => {
    const prev = rows[rows.length - 1];
    if (r > heading && prev && rows.length > heading) {
      const lower = (cs: Placed[]) => {
        const label = cs.find((c) => c.from === 0);
        return label && CONTINUES.test(label.texts[0]) ? label : undefined;
      };
      const label = lower(cells);
      if (label && labelOnly(cells)) {
        // The nearest label above (rows between may hold only values of a multi-line row).
        const above = rows
          .slice(heading)
          .reverse()
          .slice(0, 3)
          .map((row) => row.find((c) => c.from === 0))
          .find((c) => c !== undefined);
        if (above) {
          above.texts.push(...label.texts);
          return;
        }
      }
      if (label && labelOnly(prev)) {
        label.texts.unshift(...prev[0].texts);
        rows.pop();
      }
      // A row of wrapped text only, under cells it continues (no label, no values, every piece
      // below a filled cell of the row above): the rest of that row's cells.
      // (The cell above must have had no room left for the next word: its text wrapped.)
      const wrapped = (p: Placed, c: Placed) =>
        p.x1 + 0.5 * body * [...(c.texts[0].split(' ')[0] ?? '')].length >= content[c.to].hi - body;
      const continuesAbove =
        !cells.some((c) => c.from === 0) &&
        cells.every(
          (c) =>
            !c.texts.some(isValue) && prev.some((p) => p.from === c.from && p.to === c.to && wrapped(p, c)),
        );
      // A heading row inside the table (after rows of values) wrapped onto a second line (a
      // section label over its own column headings: "(f) Value of Imported and" | "% to total"
      // over "Stores consumed :" | "consumption"): neither row holds a value, every cell of the
      // lower row lies under a cell of the upper one, and a cell right of the first carries on in
      // lower case.
      const noValue = (cs: Placed[]) => cs.every((c) => !c.texts.some(isValue));
      const wrappedHeading =
        cells.length >= 2 &&
        rows.some((row) => !noValue(row)) &&
        noValue(cells) &&
        noValue(prev) &&
        cells.every((c) => prev.some((p) => p.from === c.from && p.to === c.to)) &&
        cells.some((c) => c.from > 0 && CONTINUES.test(c.texts[0]));
      if (
        wrappedHeading ||
        (continuesAbove && !prev.some((p) => p.texts.some((t) => /[.;:]$/.test(t)) && p.from > 0))
      ) {
        for (const c of cells) {
          const above = prev.find((p) => p.from === c.from)!;
          above.texts.push(...c.texts);
          above.x1 = Math.max(above.x1, c.x1);
        }
        return;
      }
    }
    rows.push(cells);
  });
  heading = Math.min(heading, rows.length - 1);
  // Columns of running text: long cells, mostly letters, or lines that continue one another
  // (a cell starting in lower case under a cell of the same column that does not end a sentence).
  let proseColumns = 0;
  let flowingColumns = 0;
  // Without values the heading rows are only a guess: text running on from them counts too.
  const from = firstData < 0 ? 0 : heading;
  for (let c = 0; c < ncols; c++) {
    const texts = rows.slice(from).map((row) => row.find((cell) => cell.from === c)?.texts.join(' ') ?? '');
    const filled = texts.filter((t) => t !== '');
    const long = filled.filter(isProseText).length;
    let pairs = 0;
    let flows = 0;
    // A line runs on only from a line long enough to have wrapped (20 characters or more): a
    // short cell ("per seat" over "per month", "billed in January") ends where its text ends.
    for (let r = 1; r < texts.length; r++) {
      if (texts[r] === '' || texts[r - 1] === '') continue;
      pairs++;
      const wrapped = texts[r - 1].length >= 20;
      if (wrapped && CONTINUES.test(texts[r]) && !/[.:;!?]$/.test(texts[r - 1])) flows++;
    }
    // Justified text: long lines ending at one x (a description cell's end is ragged).
    const cellsC = rows.flatMap((row) => row.filter((cell) => cell.from === c && cell.to === c));
    const right = Math.max(...cellsC.map((cell) => cell.x1));
    const justified =
      cellsC.length >= 3 &&
      cellsC.filter((cell) => Math.abs(cell.x1 - right) <= 1.5 && cell.texts.join(' ').length >= 40).length >=
        0.6 * cellsC.length;
    const flowing = (flows >= 2 && flows >= 0.3 * pairs) || justified;
    if (filled.length > 0 && (long >= 0.6 * filled.length || flowing)) proseColumns++;
    if (flowing) flowingColumns++;
  }
  // On a whole page, one column of long cells passes only beside two or more columns filled on
  // most rows and when its lines do not run on (a description column in a grid, not a column of
  // text with notes beside it).
  const body0 = rows.slice(heading);
  const wellFilled = Array.from({ length: ncols }, (_, c) => c).filter(
    (c) =>
      body0.filter((row) => row.some((cell) => cell.from <= c && cell.to >= c)).length >= 0.5 * body0.length,
  ).length;
  const allowed = scan === 'page' ? (wellFilled >= 3 && flowingColumns === 0 ? 1 : 0) : 1;
  if (proseColumns > allowed) return 'text';
  // A column of text beside a column of notes set in another size is not a table.
  if (proseColumns === 1) {
    const sizes = bands.slice(heading).flatMap((b) => b.segs.map((x) => x.size));
    if (Math.max(...sizes) > 1.12 * Math.min(...sizes)) return null;
  }
  const toCells = (row: Placed[]): TableCell[] => {
    const line: TableCell[] = [];
    let c = 0;
    for (const cell of row) {
      while (c < cell.from) {
        line.push({ text: '', colspan: 1 });
        c++;
      }
      line.push({ text: cell.texts.join(' '), colspan: cell.to - cell.from + 1 });
      c = cell.to + 1;
    }
    while (c < ncols) {
      line.push({ text: '', colspan: 1 });
      c++;
    }
    return line;
  };
  // Consecutive heading rows without spans merge into one, column by column ("Fair value of"
  // over "performance rights"); a row with a heading spanning columns stays a row of its own.
  const head: Placed[][] = [];
  let mergeable = false;
  for (const row of rows.slice(0, heading)) {
    const spans = row.some((c) => c.to > c.from);
    if (!spans && mergeable) {
      const into = head[head.length - 1];
      for (const cell of row) {
        const same = into.find((c) => c.from === cell.from);
        if (same) same.texts.push(...cell.texts);
        else into.push({ ...cell, texts: [...cell.texts] });
      }
      into.sort((a, b) => a.from - b.from);
    } else head.push(row.map((c) => ({ ...c, texts: [...c.texts] })));
    mergeable = !spans;
  }
  const out = [...head, ...rows.slice(heading)].map(toCells);
  heading = head.length;
  return {
    segs,
    x0: Math.min(...segs.map((s) => s.x0)),
    x1: Math.max(...segs.map((s) => s.x1)),
    top: Math.min(...segs.map((s) => s.top)),
    bottom: Math.max(...segs.map((s) => s.bottom)),
    rows: out,
    heading,
    columns: ncols,
  };
}

/** Finds tables among a region's segments; returns them and the segments left over. */
export function findTables(
  segs: Segment[],
  body: number,
  scan: TableScan,
): { tables: Table[]; rest: Segment[] } {
  const bands = rowsOf(segs).map(bandOf);
  const data = bands.map(isDataRow);
  const tables: Table[] = [];
  let i = 0;
  // A failed candidate is retried from its next rows a few times, then passed over whole, so a
  // page of thousands of rows costs linear time.
  let retryEnd = -1;
  let retries = 0;
  while (i < bands.length) {
    if (bands[i].kind !== 'multi') {
      i++;
      continue;
    }
    const run: Band[] = [bands[i]];
    let lo = Math.min(...bands[i].segs.map((s) => s.x0));
    let hi = Math.max(...bands[i].segs.map((s) => s.x1));
    let valuesFrom = Math.min(...bands[i].segs.slice(1).map((s) => s.x0));
    let hasData = data[i];
    let singles = 0;
    for (let j = i + 1; j < bands.length; j++) {
      const b = bands[j];
      const prev = run[run.length - 1];
      // Blank space inside a table (before totals, after the heading block) stays under about three lines.
      if (b.top - prev.bottom > (hasData ? 3.2 : 4) * body) break;
      // A long label left of the values still belongs (a wrapped row label), running text does not.
      if (b.kind === 'text' && !(b.segs.length === 1 && b.segs[0].x1 < valuesFrom - body)) break;
      // A heading row (years, units, no values) after values opens the next table.
      if (b.kind === 'multi' && hasData && isHeadingRow(b)) break;
      if (b.kind !== 'multi') {
        const s = b.segs[0];
        if (s.x1 > hi + 2 * body || ++singles > 3) break;
      } else singles = 0;
      run.push(b);
      if (b.kind === 'multi') {
        lo = Math.min(lo, ...b.segs.map((s) => s.x0));
        hi = Math.max(hi, ...b.segs.map((s) => s.x1));
        valuesFrom = Math.min(valuesFrom, ...b.segs.slice(1).map((s) => s.x0));
        hasData ||= data[j];
      }
    }
    while (run.length > 0 && run[run.length - 1].kind !== 'multi') run.pop();
    // Rows above the first data row belong to the heading block only while they follow each
    // other closely (a title further up is not a heading).
    // Nor is a line set larger than the table (a title).
    const firstData = run.findIndex(isDataRow);
    const cellSize = median(run.filter((b) => b.kind === 'multi').flatMap((b) => b.segs.map((x) => x.size)));
    for (let k = firstData - 1; k >= 0; k--) {
      const big = run[k].kind !== 'multi' && median(run[k].segs.map((x) => x.size)) > 1.2 * cellSize;
      if (big || (k < firstData - 1 && run[k + 1].top - run[k].bottom > 2.5 * body)) {
        run.splice(0, k + 1);
        break;
      }
    }
    // Heading lines above the run: short single rows over the value columns (right of the
    // labels), close above it, not already in a table; then one group label right above the
    // first row, in the label column ("Current assets" over "Prepayments").
    const labelRight = median(
      run.filter((b) => b.kind === 'multi' && b.segs[0].x0 <= lo + body).map((b) => b.segs[0].x1),
    );
    let k = i - 1;
    const taken = tables.length > 0 ? tables[tables.length - 1].bottom : Number.NEGATIVE_INFINITY;
    while (k >= 0 && i - k <= 3) {
      const b = bands[k];
      const below = k + 1 < i ? bands[k + 1] : run[0];
      if (b.kind !== 'single' || b.bottom <= taken || below.top - b.bottom > 2.5 * body) break;
      const s = b.segs[0];
      if (s.x0 <= labelRight || s.x1 > hi + 2 * body || s.text.length > 60) break;
      run.unshift(b);
      k--;
    }
    const group = bands[i - 1];
    if (
      k === i - 1 &&
      group &&
      group.kind === 'single' &&
      group.bottom > taken &&
      run[0].top - group.bottom <= body &&
      group.segs[0].x0 >= lo - body &&
      group.segs[0].x1 <= labelRight + body &&
      group.segs[0].text.length <= 40
    )
      run.unshift(group);
    const table = buildTable(run, body, scan);
    const end = bands.indexOf(run[run.length - 1]) + 1;
    if (table === 'text') {
      // Columns of running text: none of these rows starts a table.
      i = end;
    } else if (table) {
      tables.push(table);
      i = end;
    } else {
      if (i >= retryEnd) {
        retryEnd = end;
        retries = 0;
      }
      i = ++retries > 3 ? Math.max(i + 1, retryEnd) : i + 1;
    }
  }
  const used = new Set(tables.flatMap((t) => t.segs));
  return { tables, rest: segs.filter((s) => !used.has(s)) };
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Markdown when no cell spans columns (the first row is the heading row), HTML otherwise. */
export function renderTable(t: Table): string {
  const spans = t.rows.some((r) => r.some((c) => c.colspan > 1));
  if (!spans) {
    const line = (r: TableCell[]) => `| ${r.map((c) => escapeCell(c.text)).join(' | ')} |`;
    return [line(t.rows[0]), `|${' --- |'.repeat(t.columns)}`, ...t.rows.slice(1).map(line)].join('\n');
  }
  // The first column heads its rows, as column 0 of a Markdown table does.
  const tr = (r: TableCell[], head: boolean) =>
    `<tr>${r
      .map((c, i) => {
        const tag = head || i === 0 ? 'th' : 'td';
        return `<${tag}${c.colspan > 1 ? ` colspan="${c.colspan}"` : ''}>${escapeHtml(c.text)}</${tag}>`;
      })
      .join('')}</tr>`;
  const head = t.rows.slice(0, t.heading).map((r) => tr(r, true));
  const bodyRows = t.rows.slice(t.heading).map((r) => tr(r, false));
  return [
    '<table>',
    ...(head.length ? ['<thead>', ...head, '</thead>'] : []),
    '<tbody>',
    ...bodyRows,
    '</tbody>',
    '</table>',
  ].join('\n');
}
