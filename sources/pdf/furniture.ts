/**
 * Running headers, running footers and page numbers ("page furniture"), found from geometry and
 * page-number patterns, with repetition across the pages of one document when there are several
 * (pure; no I/O). No word lists: a line is furniture because of where it sits and how it is set,
 * never because of what it says (page numbers aside).
 *
 * The page's segments are grouped into rows (full-width bands). From each edge of the page, a
 * block of one to three rows is furniture when:
 * - every row of it lies in the page's margin zone (the top 10% or the bottom 12% of the page
 *   height, or the 6% above the last row of text when the text ends lower than three quarters
 *   down the page but above the usual zone), is not running text (a long line continued by another long line at the same
 *   indent, or a long line ending in a colon, which leads into what follows) and is not set much larger than the body (a title) unless it sits in the outermost
 *   6% of the page (a running title in the header area), and
 * - the block stands apart from the body: the whitespace between it and the next row is wider
 *   than the body's own line spacing by most of a line, and wider than any gap inside the block.
 * A large row set off the outermost 6% still belongs to a running title when it is that
 * title's wrapped line: the same size and weight as the row above it, touching it (no space
 * between the lines), in a chain that starts in the outermost 6% (a long running title set large
 * and broken over two lines).
 * A block also qualifies, whatever its gaps, when it is a folio (a page number alone, or a short
 * line that starts or ends with one, or "Page 12"), or when each of its rows recurs at the same
 * edge of other pages of the document (`repeated`; the size rules still apply: "Chapter 2" set
 * large at the top of each page stays). A short last row carrying a page number is a
 * folio wherever it sits (pages with a large blank foot). The largest qualifying block is dropped.
 *
 * A single page has no other pages to show what repeats, and its running head often sits below
 * the 10% zone or is set large (a company name, a report title). So, at the top only, when no
 * block qualified by the rules above, the outermost block of one to three rows is also a running
 * head when it stands over the page's own first heading: every row of it within the top 16% of
 * the page, clear of the next row (as above), and that next row is a heading (it starts bold, or
 * is set 1.15x the body) that is not running text, sits closer to what follows it than (1.5x) to
 * the block, and is set in another style than the block's rows (bold or not, size within 10%)
 * unless the block stands twice as far from it as the rows after it stand from each other. The
 * block's first row is not a numbered bold heading and is not centred on the text (a centred
 * line over a heading is the page's title: a document's title over its authors or its sections).
 * A large title straight over the body, or over a figure's caption, stays.
 * A page of fewer than six rows (a cover, a poster) keeps everything.
 *
 * With `mode: 'repeated'` only the rows that recur at the same edge of other pages are dropped,
 * and page numbers standing alone: of a single page nothing else is (its letterhead and its foot
 * may hold what a record asks for: a seller's name, an IBAN).
 */
import { median, type Segment } from './segments.ts';

/** Share of the page height at the top and at the bottom where running heads and feet live. */
export const TOP_ZONE = 0.1;
export const BOTTOM_ZONE = 0.12;
/** On a page whose text reaches its lower quarter, the foot zone also covers this share of the page height above the last row. */
const FOOT_REACH = 0.06;
/** Rows this close to the top or bottom edge may be set large and still be furniture (a running title). */
const EDGE = 0.06;
/** A running head standing over the page's own first heading lies within this share of the page height. */
const HEAD_REACH = 0.16;
/** At most this many rows at each edge. */
const MAX_ROWS = 3;

export interface FurnitureDrop {
  text: string;
  edge: 'top' | 'bottom';
  why: string;
}

export interface FurnitureOptions {
  pageHeight: number;
  body: number;
  /** Keys (`furnitureKey`) of edge rows that recur on other pages of the same document. */
  repeated?: ReadonlySet<string>;
  /**
   * `layout` (default): every rule above. `repeated`: only rows that recur at the same edge of
   * other pages, and page numbers standing alone ("12", "Page 3 of 4"); a single page keeps
   * every other line it shows (what `sob build pdf` reads: a value may sit in a letterhead or a foot).
   */
  mode?: MarginMode;
}

/** Which running heads and feet are dropped (see `FurnitureOptions.mode`). */
export type MarginMode = 'layout' | 'repeated';

interface Row {
  segs: Segment[];
  top: number;
  bottom: number;
  text: string;
  size: number;
}

/** Segments as full-width rows: a segment joins the row it overlaps vertically by most of its height. */
export function pageRows(segs: Segment[]): Row[] {
  const sorted = [...segs].sort((a, b) => a.top - b.top);
  const rows: { segs: Segment[]; top: number; bottom: number }[] = [];
  for (const s of sorted) {
    const r = rows[rows.length - 1];
    if (r && s.top < r.bottom - 0.3 * Math.min(s.bottom - s.top, r.bottom - r.top)) {
      r.segs.push(s);
      r.bottom = Math.max(r.bottom, s.bottom);
    } else rows.push({ segs: [s], top: s.top, bottom: s.bottom });
  }
  return rows.map((r) => {
    const segs = [...r.segs].sort((a, b) => a.x0 - b.x0);
    return {
      ...r,
      segs,
      text: segs.map((s) => s.text).join(' '),
      size: median(segs.map((s) => s.size)),
    };
  });
}

/** A row's identity across pages: case folded, digits as `#`, punctuation as spaces. */
export function furnitureKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/\d+/g, '#')
    .replace(/[^\p{L}#]+/gu, ' ')
    .trim();
}

/** Keys of the rows at the top and bottom edges of a page, for finding running heads across pages. */
export function edgeKeys(segs: Segment[], pageHeight: number): string[] {
  const rows = pageRows(segs);
  const keys: string[] = [];
  rows.slice(0, MAX_ROWS).forEach((r) => {
    if (r.bottom <= 1.5 * TOP_ZONE * pageHeight) keys.push(`top:${furnitureKey(r.text)}`);
  });
  rows.slice(-MAX_ROWS).forEach((r) => {
    if (r.top >= (1 - 1.5 * BOTTOM_ZONE) * pageHeight) keys.push(`bottom:${furnitureKey(r.text)}`);
  });
  return keys.filter((k) => !k.endsWith(':') && !k.endsWith(':#'));
}

const NUMBER_TOKEN = /^(?:\d{1,3}|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})$/;
const PAGE_WORD = /^(?:page|p\.|pg\.?)$/i;

/** "12", "- 12 -", "Page 12", "12 of 40", "xii": a page number and nothing else. */
export function isPageNumber(text: string): boolean {
  return /^[-\u2013\u2014|\u2022\u25aa\u25a0.\s]*(?:(?:page|p\.|pg\.?)\s*)?(?:\d{1,4}|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})(?:\s*(?:of|\/)\s*\d{1,4})?[-\u2013\u2014|\u2022\u25aa\u25a0.\s]*$/i.test(
    text.trim(),
  );
}

/** A short line carrying a page number: alone, at either end, or after "Page". */
function isFolio(r: Row): boolean {
  if (r.segs.every((s) => isPageNumber(s.text))) return true;
  const words = r.text.split(/[\s|\u2022\u25aa\u25a0\u2013\u2014/]+/).filter((w) => w !== '');
  if (words.length < 2 || words.length > 14) return false;
  // A number at either end set off by a separator ("Annual Report | 19", "12 ■ Review"), not
  // one that ends a title ("Chapter 1").
  const t = r.text.trim();
  const sep = '[|\u2022\u25aa\u25a0\u2013\u2014/]';
  if (new RegExp(`^\\S+\\s*${sep}`).test(t) && NUMBER_TOKEN.test(words[0])) return true;
  if (new RegExp(`${sep}\\s*\\S+$`).test(t) && NUMBER_TOKEN.test(words[words.length - 1])) return true;
  // A number alone at either end ("12 | Annual Report"), not a list label ("9." or "(a)").
  const bare = /^(?:(?:page|p\.|pg\.?)\s*)?(?:\d{1,4}|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})$/i;
  if (bare.test(r.segs[0].text.trim()) || bare.test(r.segs[r.segs.length - 1].text.trim())) return true;
  return words.some((w, i) => i + 1 < words.length && PAGE_WORD.test(w) && /^\d{1,4}$/.test(words[i + 1]));
}

/** Finds the running heads and folios of one page; returns the segments to keep and what was dropped. */
export function findFurniture(
  segs: Segment[],
  opts: FurnitureOptions,
): { keep: Segment[]; dropped: FurnitureDrop[] } {
  const rows = pageRows(segs);
  if (rows.length < 6) return { keep: segs, dropped: [] };
  const { body, pageHeight: H } = opts;
  const repeated = (r: Row, edge: 'top' | 'bottom') =>
    opts.repeated?.has(`${edge}:${furnitureKey(r.text)}`) === true;
  // The body's own whitespace between lines.
  const spaces: number[] = [];
  for (let i = 0; i + 1 < rows.length; i++) {
    const a = rows[i];
    const b = rows[i + 1];
    if (Math.abs(a.size - body) > 0.15 * body || Math.abs(b.size - body) > 0.15 * body) continue;
    const g = b.top - a.bottom;
    if (g >= -0.2 * body && g < 1.5 * body) spaces.push(g);
  }
  const space = spaces.length > 0 ? Math.max(0, median(spaces)) : 0.3 * body;
  const clear = Math.max(space + 0.8 * body, body);
  const left = Math.min(...rows.map((r) => r.segs[0].x0));
  const right = Math.max(...rows.map((r) => r.segs[r.segs.length - 1].x1));
  const widest = right - left;
  // Set centred on the text and indented from both its edges (a title).
  const centred = (r: Row) => {
    const x0 = r.segs[0].x0;
    const x1 = r.segs[r.segs.length - 1].x1;
    return x0 - left >= 0.05 * widest && Math.abs((x0 + x1) / 2 - (left + right) / 2) <= 0.04 * widest;
  };
  const long = (r: Row) => r.text.length > 50 && r.segs.some((s) => s.x1 - s.x0 > 0.45 * widest);
  const prose = (i: number) =>
    long(rows[i]) &&
    [i - 1, i + 1].some((j) => {
      const o = rows[j];
      return (
        o !== undefined &&
        long(o) &&
        Math.abs(o.top - rows[i].top) <= 1.8 * Math.max(rows[i].size, o.size) &&
        Math.abs(o.segs[0].x0 - rows[i].segs[0].x0) <= 2 * body
      );
    });
  // A long line ending in a colon leads into what follows it ("... as follows (in thousands):"
  // over a table): body text, never a running head or foot.
  const leadIn = (i: number) => long(rows[i]) && /:\s*$/.test(rows[i].text);
  const large = (r: Row) => r.size > 1.3 * body;
  // A numbered bold line at body size or above is a section heading ("15. Leases"), not a running head.
  const heading = (r: Row) =>
    r.segs.every((s) => s.bold) &&
    r.size >= 0.95 * body &&
    /^(?:\d{1,3}(?:\.\d{1,3})*\.?|[A-Z]\.|\(?[a-z]\))\s+\p{L}/u.test(r.text);

  const allBold = (r: Row) => r.segs.every((s) => s.bold);
  const titleLike = (r: Row) => r.segs[0].bold || r.size >= 1.15 * body;
  const sameStyle = (a: Row, b: Row) =>
    allBold(a) === allBold(b) && Math.abs(a.size - b.size) <= 0.1 * b.size;
  const dropped: FurnitureDrop[] = [];
  const drop = new Set<number>();
  // indices: rows ordered from the edge inwards.
  const scan = (order: number[], edge: 'top' | 'bottom') => {
    // The foot zone reaches further up on a page whose text ends early (a deep bottom margin).
    const last = rows[rows.length - 1].bottom;
    const footFrom = Math.min((1 - BOTTOM_ZONE) * H, last >= 0.75 * H ? last - FOOT_REACH * H : H);
    const inZone = (r: Row) => (edge === 'top' ? r.bottom <= TOP_ZONE * H : r.top >= footFrom);
    const atEdge = (r: Row) => (edge === 'top' ? r.top <= EDGE * H : r.bottom >= (1 - EDGE) * H);
    const gapBetween = (a: Row, b: Row) => (edge === 'top' ? b.top - a.bottom : a.top - b.bottom);
    // The widest gap between the three rows after `from` (the spacing of what follows a block).
    const gapsAfter = (order: number[], from: number) => {
      let g = 0;
      for (let j = from; j < from + 3 && j + 1 < order.length; j++)
        g = Math.max(g, gapBetween(rows[order[j]], rows[order[j + 1]]));
      return g;
    };
    // Blocks are peeled from the edge inwards: the largest qualifying block, then the next.
    let pos = 0;
    while (pos < MAX_ROWS && pos < order.length - 2) {
      let best = 0;
      let bestWhy = '';
      for (let k = 1; pos + k <= MAX_ROWS && pos + k <= order.length - 2; k++) {
        const ids = order.slice(pos, pos + k);
        const block = ids.map((i) => rows[i]);
        const next = rows[order[pos + k]];
        const last = block[k - 1];
        const outermost = pos === 0;
        const allRepeated = block.every((r) => repeated(r, edge));
        // A folio may sit outside the zone only as the outermost row of a short foot.
        const folioEdge = edge === 'bottom' && outermost && isFolio(block[0]) && !long(block[0]);
        if (ids.some((i) => prose(i) || leadIn(i))) break;
        const below = gapBetween(last, next);
        let inside = 0;
        for (let j = 1; j < k; j++) inside = Math.max(inside, gapBetween(block[j - 1], block[j]));
        // A running head over the page's own first heading (`overHeading`, see the file comment).
        const overHeading =
          edge === 'top' &&
          outermost &&
          best === 0 &&
          below >= clear &&
          below > inside &&
          titleLike(next) &&
          // A row of cells (a table's header row) is no page heading with a running head over
          // it: a large row over it (1.3 body sizes) is the table's title.
          !(next.segs.length >= 3 && block.some(large)) &&
          !prose(order[pos + k]) &&
          gapBetween(next, rows[order[pos + k + 1]]) < 1.5 * below &&
          !heading(block[0]) &&
          !centred(block[0]) &&
          block.every(
            (r) =>
              r.bottom <= HEAD_REACH * H && (!sameStyle(r, next) || below >= 2 * gapsAfter(order, pos + k)),
          );
        const placed = block.every((r, j) => inZone(r) || allRepeated || (j === 0 && folioEdge));
        // A large row is a running title only at the very edge, or as the wrapped line of a
        // running title that starts there (`wrapped`: the same size and weight, no space between the lines).
        const wrapped = (j: number): boolean =>
          j > 0 &&
          sameStyle(block[j], block[j - 1]) &&
          gapBetween(block[j - 1], block[j]) <= 0 &&
          (atEdge(block[j - 1]) || wrapped(j - 1));
        const sized = !block.some(
          (r, j) => (large(r) || heading(r)) && !atEdge(r) && !wrapped(j) && !isFolio(r),
        );
        // A block failing here may still be the start of a longer running head over a heading.
        if (!(placed && sized) && !overHeading) continue;
        const plain = placed && sized;
        // Inside the first block peeled off, a row goes with the nearer side: a heading set
        // closer to the body than to the running head above it starts the body.
        const above = outermost ? 0 : gapBetween(rows[order[pos - 1]], block[0]);
        const apart = below >= clear && below > inside && below > above;
        const folios = block.every(isFolio) && (k === 1 || inside <= clear);
        if (plain && allRepeated) {
          best = k;
          bestWhy = 'repeats at this edge on other pages';
        } else if (opts.mode === 'repeated') {
          if (plain && block.every((r) => r.segs.every((s) => isPageNumber(s.text)))) {
            best = k;
            bestWhy = 'page number';
          }
        } else if (plain && apart) {
          best = k;
          bestWhy = `in the ${edge} margin, ${below.toFixed(0)} pt clear of the body`;
        } else if (overHeading) {
          best = k;
          bestWhy = `above the page heading, ${below.toFixed(0)} pt clear of it`;
        } else if (plain && folios) {
          best = k;
          bestWhy = 'page number line';
        }
      }
      if (best === 0) break;
      for (let j = pos; j < pos + best; j++) {
        drop.add(order[j]);
        dropped.push({ text: rows[order[j]].text, edge, why: bestWhy });
      }
      pos += best;
    }
  };
  const idx = rows.map((_, i) => i);
  scan(idx, 'top');
  scan(
    [...idx].reverse().filter((i) => !drop.has(i)),
    'bottom',
  );
  const gone = new Set<Segment>();
  for (const i of drop) for (const s of rows[i].segs) gone.add(s);
  return { keep: segs.filter((s) => !gone.has(s)), dropped };
}
