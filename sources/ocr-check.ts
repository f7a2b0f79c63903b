/**
 * olmOCR-bench's deterministic text tests (`present`, `absent`, `order`) for judging a page
 * transcript, as the benchmark's own checker (olmocr/bench/tests.py) scores them:
 * - transcript and test strings are normalised alike (`normalizeText`);
 * - `present` / `absent`: optional case folding and `first_n` / `last_n` windows, then a fuzzy
 *   "is the test text somewhere in the transcript" match within `max_diffs` edits;
 * - `order`: both strings found within `max_diffs` edits and some `before` starts before some `after`.
 *
 * Fuzzy matching, our choice: the reference thresholds rapidfuzz's `partial_ratio` at
 * 1 - max_diffs/len(text). We use the minimum Levenshtein distance of the test text against any
 * substring of the transcript (semi-global alignment) and pass when it is <= max_diffs, which is
 * the same threshold expressed in edits (ratio = 1 - distance/len(text)). It agrees with
 * partial_ratio on substitutions, single insertions and deletions; it can differ on rare
 * multi-gap alignments. With max_diffs 0 both are an exact substring test. `order` uses the same
 * alignment for fuzzysearch's `find_near_matches` (Levenshtein distance <= max_diffs).
 * Lengths and windows count Unicode code points, as Python does.
 *
 * `table` and `math` tests (and any other type) are not run: they are counted as skipped.
 */
import { dirname } from 'node:path';
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
 * Smallest Levenshtein distance between `pattern` and any substring of `text` (semi-global
 * alignment, one column per text character). Stops early once a distance <= `stopAt` is seen.
 */
export function bestSubstringDistance(pattern: number[], text: number[], stopAt = 0): number {
  const m = pattern.length;
  if (m === 0) return 0;
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = m;
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    cur[0] = 0;
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (pattern[i - 1] === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = Math.min(sub, del, ins);
    }
    if (cur[m] < best) {
      best = cur[m];
      if (best <= stopAt) return best;
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
  return best;
}

/** End offsets (exclusive) of the first and last substrings of `text` within `k` edits of `pattern`. */
function matchEndRange(pattern: number[], text: number[], k: number): { first: number; last: number } | null {
  const m = pattern.length;
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let first = -1;
  let last = -1;
  if (m <= k) first = last = 0;
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    cur[0] = 0;
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (pattern[i - 1] === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = Math.min(sub, del, ins);
    }
    if (cur[m] <= k) {
      if (first < 0) first = j + 1;
      last = j + 1;
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
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

export type OcrTest = TextTest | OrderTest;

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
  return { skipped: t.type };
}

export interface LoadedTests {
  tests: OcrTest[];
  /** Tests not run here, by type (`table`, `math`, `baseline`, ...). */
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
// Running tests

function short(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/** Runs one test on one page transcript (raw markdown; normalised here). */
export function runOcrTest(test: OcrTest, transcript: string): { passed: boolean; explanation: string } {
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
  const exact = test.maxDiffs === 0;
  const distance = exact
    ? String.fromCodePoint(...text).includes(query)
      ? 0
      : 1
    : bestSubstringDistance(pattern, text, test.maxDiffs);
  const found = distance <= test.maxDiffs;
  const how = exact ? 'as an exact substring' : `within ${test.maxDiffs} edits (best ${distance})`;
  if (test.type === 'present') {
    return found
      ? { passed: true, explanation: '' }
      : { passed: false, explanation: `'${short(query)}' not found ${how}` };
  }
  return found
    ? { passed: false, explanation: `'${short(query)}' found ${exact ? 'exactly' : how}` }
    : { passed: true, explanation: '' };
}

export interface Tally {
  tests: number;
  passed: number;
  pass_rate: number;
}

export interface OcrCheckReport {
  tests: number;
  passed: number;
  pass_rate: number;
  by_type: Record<string, Tally>;
  /** Keyed `<pdf without .pdf>_pg<page>`, the transcript's name. */
  by_page: Record<string, Tally>;
  by_category: Record<string, Tally>;
  skipped: Record<string, number>;
  /** Pages a test needed but no transcript was given for (their tests fail). */
  missing_transcripts: string[];
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
  const passed = results.filter((r) => r.passed).length;
  return {
    tests: results.length,
    passed,
    pass_rate: results.length === 0 ? 0 : passed / results.length,
    by_type: byType,
    by_page: byPage,
    by_category: byCategory,
    skipped: loaded.skipped,
    missing_transcripts: [...missing],
    results,
  };
}

/** A plain-text table of a report: overall, per type, per category, per page. */
export function formatOcrReport(r: OcrCheckReport): string {
  const rows: string[][] = [['group', 'key', 'passed', 'tests', 'rate']];
  const add = (group: string, key: string, t: Tally) =>
    rows.push([group, key, String(t.passed), String(t.tests), t.pass_rate.toFixed(3)]);
  add('all', 'present+absent+order', r);
  for (const [k, t] of Object.entries(r.by_type)) add('type', k, t);
  for (const [k, t] of Object.entries(r.by_category)) add('category', k, t);
  for (const [k, t] of Object.entries(r.by_page)) add('page', k, t);
  const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const lines = rows.map((row) => row.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
  const skipped = Object.entries(r.skipped)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  if (skipped) lines.push(`skipped (not run): ${skipped}`);
  return lines.join('\n');
}
