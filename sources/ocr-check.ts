/**
 * olmOCR-bench's deterministic text tests (`present`, `absent`, `order`) for judging a page
 * transcript, as the benchmark's own checker (olmocr/bench/tests.py) scores them:
 * - transcript and test strings are normalised alike (`normalizeText`);
 * - `present` / `absent`: optional case folding and `first_n` / `last_n` windows, then a fuzzy
 *   "is the test text somewhere in the transcript" match within `max_diffs` edits;
 * - `order`: both strings found within `max_diffs` edits and some `before` starts before some `after`.
 *
 * Fuzzy matching as the reference computes it: `present` / `absent` pass or fail on rapidfuzz's
 * `partial_ratio` (the best normalised Indel similarity of the test text against the
 * transcript's windows) thresholded at 1 - max_diffs/len(text), ported window for window and
 * float for float (`partialRatioReaches`; a match exactly at the threshold can fall one ulp
 * short and fail there, so here). With max_diffs 0 it is an exact substring test. `order` uses
 * fuzzysearch's `find_near_matches` (Levenshtein distance <= max_diffs): some `before` match
 * must start before some `after` match (here the earliest and latest starts of such matches).
 * Lengths and windows count Unicode code points, as Python does.
 *
 * `table`: the benchmark's TableTest. Every Markdown table (a run of at least two lines holding
 * `|`; the first all-dash line is the separator; row 0 and column 0 are headings) and every HTML
 * `<table>` (`<th>` cells and cells under `<thead>` are headings; `rowspan`/`colspan` fill a grid)
 * becomes a grid of cells. A cell whose text is within `max_diffs` of `cell` (fuzzy ratio, see
 * `similarity`, at least 0.5) passes when each given neighbour matches too: `up`/`down`/`left`/
 * `right` are the next occupied grid cell in that direction (several where cells span),
 * `top_heading`/`left_heading` any heading cell above / to the left of it.
 *
 * `math` tests (and any other type) are not run: they are counted as skipped.
 */
import { dirname } from 'node:path';
import { type DefaultTreeAdapterTypes, parseFragment } from 'parse5';
import { z } from 'zod';
import { UserError } from '../src/core/errors.ts';
import { readLines } from '../src/core/jsonl.ts';

// Python's `\s` for str patterns (str.isspace), which differs from JS `\s` (no \x1c-\x1f, \x85; has \ufeff).
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

const REPLACEMENTS: [string, string][] = [
  ['\u2018', "'"],
  ['\u2019', "'"],
  ['\u201a', "'"],
  ['\u201c', '"'],
  ['\u201d', '"'],
  ['\u201e', '"'],
  ['\uff3f', '_'],
  ['\u2013', '-'],
  ['\u2014', '-'],
  ['\u2011', '-'],
  ['\u2012', '-'],
  ['\u2212', '-'],
  ['\u00b5', '\u03bc'],
];

/**
 * The benchmark's normalisation, step for step: `<br>` to a space, bold/italic markers and
 * `<b>`/`<i>` tags removed (keeping their text, never across a line break), whitespace runs to
 * one space, NFC, then curly quotes, dashes and the micro sign mapped to plain forms.
 */
export function normalizeText(s: string): string {
  let t = s.replace(/<br\/?>/g, ' ');
  t = t.replace(/\*\*([^\n]*?)\*\*/g, '$1');
  t = t.replace(/__([^\n]*?)__/g, '$1');
  t = t.replace(/<\/?b>/g, '');
  t = t.replace(/<\/?i>/g, '');
  t = t.replace(/(\*\*|__)([^\n]*?)\1/g, '$2');
  t = t.replace(/(\*|_)([^\n]*?)\1/g, '$2');
  t = t.replace(PY_WHITESPACE, ' ');
  t = t.normalize('NFC');
  for (const [from, to] of REPLACEMENTS) t = t.replaceAll(from, to);
  return t;
}

function codePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

/**
 * Semi-global alignment of `pattern` against `text` (Levenshtein, one column per text
 * character): `visit` sees, for each end offset (exclusive) in order, the smallest distance of a
 * substring ending there, and ends the scan by returning true.
 */
function scanSubstringDistances(
  pattern: number[],
  text: number[],
  visit: (end: number, distance: number) => boolean | undefined,
): void {
  const m = pattern.length;
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    cur[0] = 0;
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (pattern[i - 1] === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = Math.min(sub, del, ins);
    }
    if (visit(j + 1, cur[m])) return;
    const t = prev;
    prev = cur;
    cur = t;
  }
}

/**
 * Smallest Levenshtein distance between `pattern` and any substring of `text` (semi-global
 * alignment, one column per text character). Stops early once a distance <= `stopAt` is seen.
 */
export function bestSubstringDistance(pattern: number[], text: number[], stopAt = 0): number {
  const m = pattern.length;
  if (m === 0) return 0;
  let best = m;
  scanSubstringDistances(pattern, text, (_end, d) => {
    if (d >= best) return false;
    best = d;
    return best <= stopAt;
  });
  return best;
}

function fromCodePoints(cps: number[]): string {
  let out = '';
  for (let i = 0; i < cps.length; i += 8192) out += String.fromCodePoint(...cps.slice(i, i + 8192));
  return out;
}

/** Length of the longest common subsequence of `a` and `b[from, to)`. */
function lcsLength(a: number[], b: number[], from = 0, to = b.length): number {
  let prev = new Int32Array(to - from + 1);
  let cur = new Int32Array(to - from + 1);
  for (let i = 1; i <= a.length; i++) {
    const c = a[i - 1];
    for (let j = 1; j <= to - from; j++)
      cur[j] = c === b[from + j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[to - from];
}

/**
 * rapidfuzz's `fuzz.ratio(a, b) / 100`, to the last bit: the normalised Indel similarity
 * `1 - dist / (len(a) + len(b))` (dist = insertions + deletions = lengths less twice the LCS),
 * times 100 and divided by 100 again as the checker does. The float steps matter: a match
 * exactly at the threshold (`1 - max_diffs / len`) can land one ulp under it and fail.
 */
function indelRatio(a: number[], b: number[], from = 0, to = b.length): number {
  const total = a.length + (to - from);
  if (total === 0) return 1;
  const dist = total - 2 * lcsLength(a, b, from, to);
  return ((1 - dist / total) * 100) / 100;
}

/** End offsets of every substring of `text` within `k` Levenshtein edits of `pattern`. */
function matchEnds(pattern: number[], text: number[], k: number): number[] {
  const m = pattern.length;
  const ends: number[] = [];
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  if (m <= k) ends.push(0);
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    cur[0] = 0;
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (pattern[i - 1] === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    if (cur[m] <= k) ends.push(j + 1);
    const t = prev;
    prev = cur;
    cur = t;
  }
  return ends;
}

/**
 * Does rapidfuzz's `fuzz.partial_ratio(query, text) / 100` reach `threshold`? Computed as
 * rapidfuzz 3.x does (its pure-Python implementation, which its C++ one agrees with): the
 * shorter string is aligned against every window of the longer one of its own length, and
 * against the longer one's prefixes and suffixes shorter than that, each scored by `indelRatio`;
 * a prefix or full window is scored only when its last character occurs in the shorter string,
 * a suffix only when its first does; strings of equal length are also tried the other way round.
 * The best score is the maximum. To stay fast on long transcripts only windows that can reach
 * the threshold are scored: a window scoring `1 - d/(n + w)` >= `1 - maxDiffs/len(query)` has
 * an Indel distance of at most `2 * maxDiffs`, hence a Levenshtein distance at most that, so it
 * ends where the query matches within `2 * maxDiffs + 1` edits; no other window is skipped.
 */
export function partialRatioReaches(
  query: number[],
  text: number[],
  threshold: number,
  maxDiffs: number,
): boolean {
  if (query.length === 0 && text.length === 0) return 1 >= threshold;
  if (query.length === 0 || text.length === 0) return 0 >= threshold;
  const directions: [number[], number[]][] =
    query.length === text.length
      ? [
          [query, text],
          [text, query],
        ]
      : query.length < text.length
        ? [[query, text]]
        : [[text, query]];
  if (threshold >= 1) {
    // Only a window equal to the shorter string scores 1: an exact substring test.
    const [short, long] = directions[0];
    return fromCodePoints(long).includes(fromCodePoints(short));
  }
  for (const [short, long] of directions) {
    const n = short.length;
    const m = long.length;
    const inShort = new Set(short);
    const reaches = (from: number, to: number) => indelRatio(short, long, from, to) >= threshold;
    for (const e of matchEnds(short, long, 2 * maxDiffs + 1)) {
      // prefixes long[0, e) shorter than `short`
      if (e >= 1 && e < n && inShort.has(long[e - 1]) && reaches(0, e)) return true;
      // full windows long[e - n, e) (the last one, ending at m, is scored among the suffixes)
      if (e >= n && e < m && inShort.has(long[e - 1]) && reaches(e - n, e)) return true;
      // suffixes long[i, m) for i from m - n
      if (e === m) {
        for (let i = Math.max(0, m - n); i < m; i++) if (inShort.has(long[i]) && reaches(i, m)) return true;
      }
    }
  }
  return false;
}

/** End offsets (exclusive) of the first and last substrings of `text` within `k` edits of `pattern`. */
function matchEndRange(pattern: number[], text: number[], k: number): { first: number; last: number } | null {
  let first = -1;
  let last = -1;
  if (pattern.length <= k) first = last = 0;
  scanSubstringDistances(pattern, text, (end, d) => {
    if (d <= k) {
      if (first < 0) first = end;
      last = end;
    }
    return false;
  });
  return first < 0 ? null : { first, last };
}

/**
 * Earliest and latest start offsets of substrings within `k` edits of `pattern`: the starts of
 * matches in `text` are the ends of the reversed pattern's matches in the reversed text.
 */
export function matchStartRange(
  pattern: number[],
  text: number[],
  k: number,
): { earliest: number; latest: number } | null {
  const r = matchEndRange([...pattern].reverse(), [...text].reverse(), k);
  if (!r) return null;
  return { earliest: text.length - r.last, latest: text.length - r.first };
}

// ---------------------------------------------------------------------------------------------
// Tests as read from dataset.jsonl

interface TestBase {
  pdf: string;
  page: number;
  id: string;
  maxDiffs: number;
  /** The PDF's folder in the benchmark (`headers_footers`, `old_scans`, ...); `(top)` at the root. */
  category: string;
}

export interface TextTest extends TestBase {
  type: 'present' | 'absent';
  /** Normalised. */
  text: string;
  caseSensitive: boolean;
  firstN?: number;
  lastN?: number;
}

export interface OrderTest extends TestBase {
  type: 'order';
  /** Normalised. */
  before: string;
  after: string;
}

export interface TableTest extends TestBase {
  type: 'table';
  /** All normalised; an empty neighbour is not checked. */
  cell: string;
  up: string;
  down: string;
  left: string;
  right: string;
  topHeading: string;
  leftHeading: string;
  ignoreMarkdownTables: boolean;
}

export type OcrTest = TextTest | OrderTest | TableTest;

export interface TestResult {
  id: string;
  pdf: string;
  page: number;
  type: OcrTest['type'];
  category: string;
  passed: boolean;
  /** Why it failed (empty when it passed). */
  explanation: string;
}

const TestLine = z
  .object({
    pdf: z.string().min(1),
    page: z.number().int().min(1),
    id: z.string().min(1),
    type: z.string(),
    max_diffs: z.number().int().min(0).default(0),
    text: z.string().optional(),
    case_sensitive: z.boolean().default(true),
    first_n: z.number().int().nullish(),
    last_n: z.number().int().nullish(),
    before: z.string().optional(),
    after: z.string().optional(),
    cell: z.string().optional(),
    up: z.string().nullish(),
    down: z.string().nullish(),
    left: z.string().nullish(),
    right: z.string().nullish(),
    top_heading: z.string().nullish(),
    left_heading: z.string().nullish(),
    ignore_markdown_tables: z.boolean().default(false),
  })
  .passthrough();

export const TOP_CATEGORY = '(top)';

export function categoryOf(pdf: string): string {
  const d = dirname(pdf);
  return d === '.' || d === '' ? TOP_CATEGORY : d;
}

/** Builds one test from a parsed JSON line; returns the type name when the type is not run here. */
export function parseOcrTest(raw: unknown): OcrTest | { skipped: string } {
  const r = TestLine.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new Error(`${issue.path.join('.') || 'line'}: ${issue.message}`);
  }
  const t = r.data;
  const base: TestBase = {
    pdf: t.pdf,
    page: t.page,
    id: t.id,
    maxDiffs: t.max_diffs,
    category: categoryOf(t.pdf),
  };
  if (t.type === 'present' || t.type === 'absent') {
    if (typeof t.text !== 'string') throw new Error(`${t.type} test ${t.id} has no text`);
    const text = normalizeText(t.text);
    if (text.trim() === '') throw new Error(`${t.type} test ${t.id} has empty text`);
    return {
      ...base,
      type: t.type,
      text,
      caseSensitive: t.case_sensitive,
      firstN: t.first_n ?? undefined,
      lastN: t.last_n ?? undefined,
    };
  }
  if (t.type === 'order') {
    if (typeof t.before !== 'string' || typeof t.after !== 'string')
      throw new Error(`order test ${t.id} needs before and after`);
    const before = normalizeText(t.before);
    const after = normalizeText(t.after);
    if (before.trim() === '' || after.trim() === '')
      throw new Error(`order test ${t.id} has an empty before/after`);
    const half = Math.min(
      Math.floor(codePoints(before).length / 2),
      Math.floor(codePoints(after).length / 2),
    );
    if (t.max_diffs > half) throw new Error(`order test ${t.id}: max_diffs is over half of a search string`);
    return { ...base, type: 'order', before, after };
  }
  if (t.type === 'table') {
    if (typeof t.cell !== 'string') throw new Error(`table test ${t.id} has no cell`);
    return {
      ...base,
      type: 'table',
      cell: normalizeText(t.cell),
      up: normalizeText(t.up ?? ''),
      down: normalizeText(t.down ?? ''),
      left: normalizeText(t.left ?? ''),
      right: normalizeText(t.right ?? ''),
      topHeading: normalizeText(t.top_heading ?? ''),
      leftHeading: normalizeText(t.left_heading ?? ''),
      ignoreMarkdownTables: t.ignore_markdown_tables,
    };
  }
  return { skipped: t.type };
}

export interface LoadedTests {
  tests: OcrTest[];
  /** Tests not run here, by type (`math`, `baseline`, ...). */
  skipped: Record<string, number>;
}

/** Reads an olmOCR-bench `dataset.jsonl` (blank lines allowed). A bad line fails as `file:line: ...`. */
export async function loadOcrTests(file: string): Promise<LoadedTests> {
  const tests: OcrTest[] = [];
  const skipped: Record<string, number> = {};
  for await (const l of readLines(file)) {
    let raw: unknown;
    try {
      raw = JSON.parse(l.text);
    } catch (e) {
      throw new UserError(`${file}:${l.line}: not JSON (${(e as Error).message})`);
    }
    let t: ReturnType<typeof parseOcrTest>;
    try {
      t = parseOcrTest(raw);
    } catch (e) {
      throw new UserError(`${file}:${l.line}: ${(e as Error).message}`);
    }
    if ('skipped' in t) skipped[t.skipped] = (skipped[t.skipped] ?? 0) + 1;
    else tests.push(t);
  }
  return { tests, skipped };
}

// ---------------------------------------------------------------------------------------------
// Tables in a transcript, as the benchmark's checker reads them

/** One cell as written: its text, its spans, whether it is a heading. */
export interface CellSpec {
  text: string;
  rowspan: number;
  colspan: number;
  heading: boolean;
}

/** A table as a grid: each cell keyed `row,col` (its top-left slot) with its neighbours. */
export interface TableGrid {
  cells: Map<string, { row: number; col: number; text: string; heading: boolean }>;
  up: Map<string, Set<string>>;
  down: Map<string, Set<string>>;
  left: Map<string, Set<string>>;
  right: Map<string, Set<string>>;
  topHeading: Map<string, Set<string>>;
  leftHeading: Map<string, Set<string>>;
}

/**
 * Lays written rows on a grid: a cell takes the first free slot of its row (slots taken by a
 * rowspan from above are skipped), spans fill `rowspan x colspan` slots, and rowspans reaching
 * past the last row add rows. Then, per cell, the first other cell met going up/down/left/right
 * from each slot of its edge, and every heading cell above / to the left of it.
 */
export function buildGrid(rows: CellSpec[][]): TableGrid | null {
  const cells: TableGrid['cells'] = new Map();
  const spans = new Map<string, { rowspan: number; colspan: number }>();
  const occupancy: (string | null)[][] = [];
  let active: ({ id: string; left: number } | null)[] = [];
  rows.forEach((specs, r) => {
    const slots: (string | null)[] = [];
    let col = 0;
    let i = 0;
    while (i < specs.length || col < active.length) {
      const a = active[col];
      if (col < active.length && a) {
        slots.push(a.id);
        active[col] = a.left > 1 ? { id: a.id, left: a.left - 1 } : null;
        col++;
        continue;
      }
      if (i >= specs.length) {
        slots.push(null);
        col++;
        continue;
      }
      const spec = specs[i++];
      const rowspan = Math.max(1, spec.rowspan);
      const colspan = Math.max(1, spec.colspan);
      const id = `${r},${col}`;
      cells.set(id, { row: r, col, text: spec.text, heading: spec.heading });
      spans.set(id, { rowspan, colspan });
      while (active.length < col + colspan) active.push(null);
      for (let k = 0; k < colspan; k++) {
        slots.push(id);
        active[col + k] = rowspan > 1 ? { id, left: rowspan - 1 } : null;
      }
      col += colspan;
    }
    occupancy.push(slots);
  });
  while (active.some((a) => a !== null)) {
    occupancy.push(active.map((a) => a?.id ?? null));
    active = active.map((a) => (a && a.left > 1 ? { id: a.id, left: a.left - 1 } : null));
  }
  if (cells.size === 0) return null;
  let width = 0;
  for (const row of occupancy) {
    row.forEach((v, c) => {
      if (v !== null) width = Math.max(width, c + 1);
    });
  }
  if (width === 0) return null;
  for (const row of occupancy) {
    while (row.length < width) row.push(null);
    row.length = width;
  }
  const height = occupancy.length;
  const at = (r: number, c: number) => occupancy[r]?.[c] ?? null;
  const grid: TableGrid = {
    cells,
    up: new Map(),
    down: new Map(),
    left: new Map(),
    right: new Map(),
    topHeading: new Map(),
    leftHeading: new Map(),
  };
  for (const [id, cell] of cells) {
    const { rowspan, colspan } = spans.get(id)!;
    const r0 = cell.row;
    const c0 = cell.col;
    const r1 = r0 + rowspan - 1;
    const c1 = c0 + colspan - 1;
    const add = (m: Map<string, Set<string>>, other: string) => {
      const set = m.get(id) ?? new Set<string>();
      set.add(other);
      m.set(id, set);
    };
    const firstOther = (m: Map<string, Set<string>>, coords: (k: number) => [number, number], n: number) => {
      for (let k = 0; k < n; k++) {
        const [r, c] = coords(k);
        const v = at(r, c);
        if (v === null || v === id) continue;
        add(m, v);
        return;
      }
    };
    for (let r = r0; r <= r1 && r < height; r++) {
      firstOther(grid.right, (k) => [r, c1 + 1 + k], width - c1 - 1);
      firstOther(grid.left, (k) => [r, c0 - 1 - k], c0);
      const seen = new Set<string>();
      for (let c = c0 - 1; c >= 0; c--) {
        const v = at(r, c);
        if (v === null || v === id || seen.has(v)) continue;
        seen.add(v);
        if (cells.get(v)?.heading) add(grid.leftHeading, v);
      }
    }
    for (let c = c0; c <= c1 && c < width; c++) {
      firstOther(grid.down, (k) => [r1 + 1 + k, c], height - r1 - 1);
      firstOther(grid.up, (k) => [r0 - 1 - k, c], r0);
      const seen = new Set<string>();
      for (let r = r0 - 1; r >= 0; r--) {
        const v = at(r, c);
        if (v === null || v === id || seen.has(v)) continue;
        seen.add(v);
        if (cells.get(v)?.heading) add(grid.topHeading, v);
      }
    }
  }
  return grid;
}

/** Cells of a run of Markdown table lines: the separator and all-dash lines dropped, outer empty cells trimmed. */
function markdownRows(lines: string[]): string[][] {
  const isSeparator = (l: string) => {
    const inner = l.replaceAll('|', '').trim();
    return inner !== '' && /^[- :]+$/.test(inner);
  };
  const sep = lines.findIndex(isSeparator);
  const rows: string[][] = [];
  lines.forEach((line, i) => {
    if (i === sep) return;
    if (line.trim() !== '' && /^[- :|]+$/.test(line)) return;
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length > 0 && cells[0] === '') cells.shift();
    if (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
    if (cells.length > 0) rows.push(cells);
  });
  return rows;
}

/** Markdown tables: runs of two or more lines holding `|`; row 0 and column 0 are headings. */
export function parseMarkdownTables(md: string): TableGrid[] {
  const out: TableGrid[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length >= 2) {
      const rows = markdownRows(run);
      const grid =
        rows.length > 0
          ? buildGrid(
              rows.map((cells, r) =>
                cells.map((text, c) => ({ text, rowspan: 1, colspan: 1, heading: r === 0 || c === 0 })),
              ),
            )
          : null;
      if (grid) out.push(grid);
    }
    run = [];
  };
  for (const line of md.trim().split('\n')) {
    if (line.includes('|')) run.push(line);
    else flush();
  }
  flush();
  return out;
}

type HtmlNode = DefaultTreeAdapterTypes.Node;
type HtmlElement = DefaultTreeAdapterTypes.Element;

function isElement(n: HtmlNode): n is HtmlElement {
  return 'tagName' in n;
}

function childrenOf(n: HtmlNode): HtmlNode[] {
  const kids = 'childNodes' in n ? (n.childNodes as HtmlNode[]) : [];
  // <template> content lives apart from childNodes.
  return isElement(n) && n.tagName === 'template' && 'content' in n
    ? [...kids, ...((n as DefaultTreeAdapterTypes.Template).content.childNodes as HtmlNode[])]
    : kids;
}

function descendants(n: HtmlNode, tag: string, out: HtmlElement[] = []): HtmlElement[] {
  for (const c of childrenOf(n)) {
    if (isElement(c) && c.tagName === tag) out.push(c);
    descendants(c, tag, out);
  }
  return out;
}

/** Every text node under `n`, joined by newlines (a `<br>` is a newline), trimmed. */
function textOf(n: HtmlNode): string {
  const parts: string[] = [];
  const walk = (x: HtmlNode) => {
    for (const c of childrenOf(x)) {
      if (c.nodeName === '#text') parts.push((c as DefaultTreeAdapterTypes.TextNode).value);
      else if (isElement(c) && c.tagName === 'br') parts.push('\n');
      else walk(c);
    }
  };
  walk(n);
  return parts.join('\n').trim();
}

function spanOf(el: HtmlElement, name: string): { span: number; zero: boolean } {
  const raw = el.attrs.find((a) => a.name === name)?.value;
  if (raw === undefined) return { span: 1, zero: false };
  const m = /^\s*[+-]?\d+\s*$/.test(raw) ? Number.parseInt(raw, 10) : Number.NaN;
  return { span: Number.isFinite(m) && m > 0 ? m : 1, zero: raw.trim() === '0' };
}

/** HTML tables: `<th>` cells and cells under `<thead>` are headings; spans fill the grid. */
export function parseHtmlTables(content: string): TableGrid[] {
  if (!/<table/i.test(content)) return [];
  const root = parseFragment(content);
  const out: TableGrid[] = [];
  for (const table of descendants(root, 'table')) {
    const trs = descendants(table, 'tr');
    if (trs.length === 0) continue;
    const rows = trs.map((tr, r) => {
      let inHead = false;
      for (let p = tr.parentNode as HtmlNode | null; p && isElement(p); p = p.parentNode as HtmlNode | null)
        if (p.tagName === 'thead') inHead = true;
      return childrenOf(tr)
        .filter((c): c is HtmlElement => isElement(c) && (c.tagName === 'td' || c.tagName === 'th'))
        .map((cell) => {
          const row = spanOf(cell, 'rowspan');
          return {
            text: textOf(cell),
            rowspan: row.zero ? Math.max(1, trs.length - r) : row.span,
            colspan: spanOf(cell, 'colspan').span,
            heading: cell.tagName === 'th' || inHead,
          };
        });
    });
    const grid = buildGrid(rows);
    if (grid) out.push(grid);
  }
  return out;
}

/**
 * The checker's fuzzy ratio (rapidfuzz `fuzz.ratio` / 100): 1 - indel distance / (|a| + |b|),
 * i.e. 2 * LCS / (|a| + |b|), over code points; two empty strings are equal (1).
 */
export function similarity(a: string, b: string): number {
  return indelRatio(codePoints(a), codePoints(b));
}

function runTableTest(test: TableTest, transcript: string): { passed: boolean; explanation: string } {
  const tables = [
    ...(test.ignoreMarkdownTables ? [] : parseMarkdownTables(transcript)),
    ...parseHtmlTables(transcript),
  ];
  if (tables.length === 0) return { passed: false, explanation: 'no tables found in the transcript' };
  const need = (s: string) => Math.max(0.5, 1 - test.maxDiffs / Math.max(codePoints(s).length, 1));
  const threshold = need(test.cell);
  const reasons: string[] = [];
  for (const grid of tables) {
    const text = new Map([...grid.cells].map(([id, c]) => [id, normalizeText(c.text)]));
    const matches = [...text].filter(([, t]) => similarity(test.cell, t) >= threshold).map(([id]) => id);
    for (const id of matches) {
      const failed: string[] = [];
      const relations: [string, Map<string, Set<string>>, string][] = [
        [test.up, grid.up, 'up'],
        [test.down, grid.down, 'down'],
        [test.left, grid.left, 'left'],
        [test.right, grid.right, 'right'],
        [test.topHeading, grid.topHeading, 'top heading'],
        [test.leftHeading, grid.leftHeading, 'left heading'],
      ];
      for (const [expected, relation, label] of relations) {
        if (expected === '') continue;
        const neighbours = [...(relation.get(id) ?? [])];
        if (neighbours.length === 0) {
          failed.push(`no ${label} cell`);
          continue;
        }
        const best = neighbours
          .map((n) => ({ t: text.get(n) ?? '', s: similarity(expected, text.get(n) ?? '') }))
          .reduce((a, b) => (b.s > a.s ? b : a));
        if (best.s < need(expected)) failed.push(`${label} is '${short(best.t)}', not '${short(expected)}'`);
      }
      if (failed.length === 0) return { passed: true, explanation: '' };
      reasons.push(...failed);
    }
  }
  return {
    passed: false,
    explanation:
      reasons.length === 0
        ? `no table cell matches '${short(test.cell)}'`
        : `cell '${short(test.cell)}' found but ${reasons.slice(0, 3).join('; ')}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Running tests

function short(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/** Runs one test on one page transcript (raw markdown; normalised here). */
export function runOcrTest(test: OcrTest, transcript: string): { passed: boolean; explanation: string } {
  if (test.type === 'table') return runTableTest(test, transcript);
  const md = normalizeText(transcript);
  if (test.type === 'order') {
    const text = codePoints(md);
    const b = matchStartRange(codePoints(test.before), text, test.maxDiffs);
    if (!b)
      return {
        passed: false,
        explanation: `'before' text '${short(test.before)}' not found within ${test.maxDiffs} edits`,
      };
    const a = matchStartRange(codePoints(test.after), text, test.maxDiffs);
    if (!a)
      return {
        passed: false,
        explanation: `'after' text '${short(test.after)}' not found within ${test.maxDiffs} edits`,
      };
    if (b.earliest < a.latest) return { passed: true, explanation: '' };
    return {
      passed: false,
      explanation: `'${short(test.before)}' does not appear before '${short(test.after)}'`,
    };
  }
  let query = test.text;
  let content = md;
  if (!test.caseSensitive) {
    query = query.toLowerCase();
    content = content.toLowerCase();
  }
  let text = codePoints(content);
  if (test.firstN && test.lastN) text = [...text.slice(0, test.firstN), ...text.slice(-test.lastN)];
  else if (test.firstN) text = text.slice(0, test.firstN);
  else if (test.lastN) text = text.slice(-test.lastN);
  const pattern = codePoints(query);
  // The checker's guard: a transcript shorter than the text less max_diffs cannot hold it.
  if (text.length < pattern.length - test.maxDiffs) {
    return test.type === 'present'
      ? {
          passed: false,
          explanation: `transcript too short (${text.length} characters) to hold '${short(query)}'`,
        }
      : { passed: true, explanation: '' };
  }
  // The checker's threshold and rapidfuzz's partial_ratio, float for float.
  const threshold = 1 - test.maxDiffs / (pattern.length > 0 ? pattern.length : 1);
  const found = partialRatioReaches(pattern, text, threshold, test.maxDiffs);
  const how =
    test.maxDiffs === 0
      ? 'as an exact substring'
      : `within ${test.maxDiffs} edits (partial ratio >= ${threshold.toFixed(3)})`;
  if (test.type === 'present') {
    return found
      ? { passed: true, explanation: '' }
      : { passed: false, explanation: `'${short(query)}' not found ${how}` };
  }
  return found
    ? { passed: false, explanation: `'${short(query)}' found ${how}` }
    : { passed: true, explanation: '' };
}

export interface Tally {
  tests: number;
  passed: number;
  pass_rate: number;
}

// ---------------------------------------------------------------------------------------------
// Honest ceilings: tests no transcript can pass together

/** The strings a present or order test needs in the transcript (none for absent and table tests). */
function neededStrings(t: OcrTest): string[] {
  if (t.type === 'present') return t.caseSensitive ? [t.text] : [];
  if (t.type === 'order') return [t.before, t.after];
  return [];
}

/**
 * Does an absent test forbid, exactly, text a present or order test of the same page needs?
 * The exact rule: the absent text is a substring of the needed string (compared case-folded only
 * when the absent test ignores case; a needed string compared case-insensitively, or an absent
 * test looking at a window (`first_n`/`last_n`) only, counts as no contradiction). A transcript
 * holding the needed text as the test states it then holds the forbidden text too. A forbidden
 * text that only shares a prefix with a needed one, or differs from it in case, is no
 * contradiction.
 */
export function exactlyContradicts(absent: TextTest, other: OcrTest): boolean {
  if (absent.type !== 'absent' || absent.firstN !== undefined || absent.lastN !== undefined) return false;
  const forbidden = absent.caseSensitive ? absent.text : absent.text.toLowerCase();
  if (forbidden === '') return false;
  return neededStrings(other).some((n) => (absent.caseSensitive ? n : n.toLowerCase()).includes(forbidden));
}

export interface Ceiling {
  /** Pairs (absent test, present/order test) of one page in exact contradiction. */
  contradicting_pairs: number;
  /** Pages holding such a pair. */
  pages: number;
  /**
   * Tests that must fail whatever the transcript: per page, the fewest tests covering every
   * contradicting pair (a minimum vertex cover of the page's pairs, found as a maximum matching).
   */
  forced_failures: number;
  /** Tests a transcript can pass at best (present+absent+order, less the forced failures). */
  achievable: number;
  /** `achievable` over the tests: the best pass rate any transcript can reach. */
  ceiling: number;
  /** Tests passed over `achievable`: the pass rate as a fraction of the ceiling. */
  pass_rate_of_achievable: number;
  /** Ids of the tests in a contradicting pair, by page key. */
  by_page: Record<string, { absent: string; needs: string }[]>;
}

/** Maximum bipartite matching (absent tests on the left) by augmenting paths: small per page. */
function maxMatching(edges: Map<number, number[]>): number {
  const matchOf = new Map<number, number>();
  const tryAugment = (u: number, seen: Set<number>): boolean => {
    for (const v of edges.get(u) ?? []) {
      if (seen.has(v)) continue;
      seen.add(v);
      const w = matchOf.get(v);
      if (w === undefined || tryAugment(w, seen)) {
        matchOf.set(v, u);
        return true;
      }
    }
    return false;
  };
  let n = 0;
  for (const u of edges.keys()) if (tryAugment(u, new Set())) n++;
  return n;
}

/** The exact contradictions among `tests` and the ceiling they set, given how many passed. */
export function ceilingOf(tests: OcrTest[], passed: number): Ceiling {
  const byPage = new Map<string, OcrTest[]>();
  for (const t of tests) {
    const k = pageKey(t.pdf, t.page);
    const list = byPage.get(k);
    if (list) list.push(t);
    else byPage.set(k, [t]);
  }
  let pairs = 0;
  let forced = 0;
  const pages: Ceiling['by_page'] = {};
  for (const [key, list] of byPage) {
    const edges = new Map<number, number[]>();
    list.forEach((a, i) => {
      if (a.type !== 'absent') return;
      list.forEach((o, j) => {
        if (o.type !== 'present' && o.type !== 'order') return;
        if (!exactlyContradicts(a, o)) return;
        edges.set(i, [...(edges.get(i) ?? []), j]);
        (pages[key] ??= []).push({ absent: a.id, needs: o.id });
        pairs++;
      });
    });
    if (edges.size > 0) forced += maxMatching(edges);
  }
  const counted = tests.filter((t) => t.type !== 'table').length;
  const achievable = counted - forced;
  return {
    contradicting_pairs: pairs,
    pages: Object.keys(pages).length,
    forced_failures: forced,
    achievable,
    ceiling: counted === 0 ? 0 : achievable / counted,
    pass_rate_of_achievable: achievable === 0 ? 0 : passed / achievable,
    by_page: pages,
  };
}

export interface OcrCheckReport {
  /** The headline: present, absent and order tests (table tests are reported apart, in `tables`). */
  tests: number;
  passed: number;
  pass_rate: number;
  /** Table tests (also under `by_type.table`). */
  tables: Tally;
  by_type: Record<string, Tally>;
  /** Keyed `<pdf without .pdf>_pg<page>`, the transcript's name. */
  by_page: Record<string, Tally>;
  by_category: Record<string, Tally>;
  skipped: Record<string, number>;
  /** Pages a test needed but no transcript was given for (their tests fail). */
  missing_transcripts: string[];
  /** Tests forced to fail by exact contradictions between the tests of a page, and the pass rate of the rest. */
  ceiling: Ceiling;
  results: TestResult[];
}

/** `<pdf without .pdf>_pg<page>`: the page's transcript name, as `sob ocr` writes it (plus `.md`). */
export function pageKey(pdf: string, page: number): string {
  return `${pdf.replace(/\.pdf$/i, '')}_pg${page}`;
}

function addTo(map: Record<string, Tally>, key: string, passed: boolean): void {
  const t = (map[key] ??= { tests: 0, passed: 0, pass_rate: 0 });
  t.tests++;
  if (passed) t.passed++;
  t.pass_rate = t.passed / t.tests;
}

/**
 * Runs every test against its page's transcript (`transcriptFor` returns undefined when there
 * is none: that page's tests fail). Pure apart from what `transcriptFor` does.
 */
export function checkTranscripts(
  loaded: LoadedTests,
  transcriptFor: (pdf: string, page: number) => string | undefined,
): OcrCheckReport {
  const results: TestResult[] = [];
  const byType: Record<string, Tally> = {};
  const byPage: Record<string, Tally> = {};
  const byCategory: Record<string, Tally> = {};
  const missing = new Set<string>();
  const cache = new Map<string, string | undefined>();
  for (const test of loaded.tests) {
    const key = pageKey(test.pdf, test.page);
    if (!cache.has(key)) cache.set(key, transcriptFor(test.pdf, test.page));
    const md = cache.get(key);
    const r =
      md === undefined ? { passed: false, explanation: 'no transcript for this page' } : runOcrTest(test, md);
    if (md === undefined) missing.add(key);
    results.push({
      id: test.id,
      pdf: test.pdf,
      page: test.page,
      type: test.type,
      category: test.category,
      ...r,
    });
    addTo(byType, test.type, r.passed);
    addTo(byPage, key, r.passed);
    addTo(byCategory, test.category, r.passed);
  }
  const text = results.filter((r) => r.type !== 'table');
  const passed = text.filter((r) => r.passed).length;
  return {
    tests: text.length,
    passed,
    pass_rate: text.length === 0 ? 0 : passed / text.length,
    tables: byType.table ?? { tests: 0, passed: 0, pass_rate: 0 },
    by_type: byType,
    by_page: byPage,
    by_category: byCategory,
    skipped: loaded.skipped,
    missing_transcripts: [...missing],
    ceiling: ceilingOf(loaded.tests, passed),
    results,
  };
}

/** A plain-text table of a report: overall, per type, per category, per page. */
export function formatOcrReport(r: OcrCheckReport): string {
  const rows: string[][] = [['group', 'key', 'passed', 'tests', 'rate']];
  const add = (group: string, key: string, t: Tally) =>
    rows.push([group, key, String(t.passed), String(t.tests), t.pass_rate.toFixed(3)]);
  add('all', 'present+absent+order', r);
  const c = r.ceiling;
  if (c.forced_failures > 0)
    add('all', `of the achievable (${c.forced_failures} forced to fail)`, {
      tests: c.achievable,
      passed: r.passed,
      pass_rate: c.pass_rate_of_achievable,
    });
  if (r.tables.tests > 0) add('all', 'table', r.tables);
  for (const [k, t] of Object.entries(r.by_type)) add('type', k, t);
  for (const [k, t] of Object.entries(r.by_category)) add('category', k, t);
  for (const [k, t] of Object.entries(r.by_page)) add('page', k, t);
  const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const lines = rows.map((row) => row.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
  const skipped = Object.entries(r.skipped)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  if (skipped) lines.push(`skipped (not run): ${skipped}`);
  if (c.forced_failures > 0)
    lines.push(
      `ceiling: ${c.achievable}/${r.tests} = ${c.ceiling.toFixed(3)} (${c.contradicting_pairs} pairs of tests on ${c.pages} pages contradict each other exactly: an absent test forbids text a present or order test needs; ${c.forced_failures} tests must fail whatever the transcript)`,
    );
  return lines.join('\n');
}
