/**
 * Grounding: is a ground-truth string found in the record's context? The deterministic check
 * `sob build`, `sob judge` and the benchmark loader run (docs/records.md, "Grounding").
 *
 * A value is looked for in four ways, the first that finds it named (`GroundedBy`):
 * - `text`: as written, case, whitespace and punctuation folded away (whole words);
 * - `date`: read as a date (src/core/values/dates.ts, the lenient matchers' reader), the same
 *   ISO date as a date written in the context (`2024-03-03` is "March 3, 2024");
 * - `number`: read as a number (src/core/values/numbers.ts), the same number as one written in
 *   the context with separators or a currency (`1200.5` is "1,200.50", "$1,200.50", "1.200,50 EUR");
 * - `near`: as written within a small edit window (OCR noise: about one edit per ten characters).
 * A value found none of these ways is ungrounded; the warning names what was tried, and, for a
 * page of a PDF, the line of page furniture (a running head or foot the transcript dropped,
 * `metadata.page_furniture`) it is in.
 */
import { parseDate } from './values/dates.ts';
import { parseNumberText } from './values/numbers.ts';

/** How a value was found in the context. */
export type GroundedBy = 'text' | 'date' | 'number' | 'near';

export interface GroundingResult {
  /** How it was found; null: it was not. */
  by: GroundedBy | null;
  /** The reading that matched, or, when nothing did, the readings tried (`date 2024-03-03`). */
  readings: string[];
  /** Not found: the dropped line of page furniture that holds it. */
  furniture?: string;
}

/** Case, whitespace and punctuation folded away: what "the same text" means for grounding. */
export function normaliseForGrounding(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201c\u201d]/g, "'")
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Edits allowed when a value is looked for fuzzily: about one per ten characters, at most 3. */
export function editWindow(length: number): number {
  if (length < 5) return 0;
  return Math.min(3, Math.max(1, Math.floor(length / 10)));
}

/**
 * Smallest edit distance between `needle` and any substring of `hay` (Sellers' algorithm),
 * stopping early once it is known to be <= `limit`.
 */
export function bestSubstringDistance(needle: string, hay: string, limit: number): number {
  const m = needle.length;
  if (m === 0) return 0;
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = m;
  for (let j = 1; j <= hay.length; j++) {
    cur[0] = 0;
    const c = hay.charCodeAt(j - 1);
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (needle.charCodeAt(i - 1) === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    if (cur[m] < best) {
      best = cur[m];
      if (best <= limit) return best;
    }
    [prev, cur] = [cur, prev];
  }
  return best;
}

/** Dates are at most this many words ("Tuesday, 5th of March 2024" is 5). */
const DATE_WORDS = 5;
/** Numbers at most this many ("USD 1 200 000.50" is 4). */
const NUMBER_WORDS = 4;
/** Punctuation around a written value in running text: "(March 3, 2024)." */
const LEADING = /^[([{"'\u201c\u2018]+/u;
const TRAILING = /[)\]}"'\u201d\u2019,;:.!?]+$/u;

/** A number's identity for look-ups: 12 significant digits (the lenient matchers' tolerance is float noise). */
const numberKey = (v: number) => Number(v.toPrecision(12));

/** A prepared context: normalised once, searched for many values; its dates and numbers read when first needed. */
export class GroundingIndex {
  readonly text: string;
  private readonly raw: string;
  private words?: string[];
  private dates?: Set<string>;
  private numbers?: Set<number>;

  constructor(context: string) {
    this.raw = context;
    this.text = ` ${normaliseForGrounding(context)} `;
  }

  /** True when the value occurs in the context in one of the four ways. */
  has(value: string): boolean {
    return this.find(value).by !== null;
  }

  /** How the value is found in the context, or what was tried. */
  find(value: string): GroundingResult {
    const v = normaliseForGrounding(value);
    // Exact: whole words (the text is padded with spaces), so "x" is not found inside "next".
    if (v.length === 0 || this.text.includes(` ${v} `)) return { by: 'text', readings: [] };
    const tried: string[] = [];
    const asDate = parseDate(value, { order: 'either' });
    if (asDate.length > 0) {
      const dates = this.contextDates();
      const hit = asDate.find((d) => dates.has(d));
      if (hit) return { by: 'date', readings: [`date ${hit}`] };
      tried.push(`date ${asDate.join(' or ')}`);
    }
    // "1200.5" also reads as the month 1200-05: both readings are tried.
    const asNumber = parseNumberText(value.trim());
    if (asNumber) {
      const numbers = this.contextNumbers();
      const hit = asNumber.values.find((n) => numbers.has(numberKey(n)));
      if (hit !== undefined) return { by: 'number', readings: [`number ${hit}`] };
      tried.push(`number ${asNumber.values.join(' or ')}`);
    }
    const k = editWindow(v.length);
    if (k > 0 && bestSubstringDistance(v, this.text, k) <= k) return { by: 'near', readings: [] };
    return { by: null, readings: tried };
  }

  private contextWords(): string[] {
    this.words ??= this.raw.split(/\s+/).filter((w) => w !== '');
    return this.words;
  }

  /** Every ISO date written in the context (both readings of an ambiguous numeric date). */
  private contextDates(): Set<string> {
    if (this.dates) return this.dates;
    const out = new Set<string>();
    // A date of several words names its month ("March 3, 2024"); of one, it has digits.
    this.forWindows(
      DATE_WORDS,
      (w) => MONTH_WORD.test(w),
      (text) => {
        for (const d of parseDate(text, { order: 'either' })) out.add(d);
      },
    );
    this.dates = out;
    return out;
  }

  /** Every number written in the context, each of its readings. */
  private contextNumbers(): Set<number> {
    if (this.numbers) return this.numbers;
    const out = new Set<number>();
    // A number of several words is digit groups with a currency, a percent or a scale word.
    this.forWindows(
      NUMBER_WORDS,
      (w) => NUMBER_PART.test(w),
      (text) => {
        const p = parseNumberText(text);
        if (p) for (const n of p.values) out.add(numberKey(n));
      },
      true,
    );
    this.numbers = out;
    return out;
  }

  /**
   * Each word holding a digit, and each run of up to `n` words holding a digit in which some word
   * (`onlyParts`: every word without a digit) passes `part`, without the punctuation around it.
   */
  private forWindows(
    n: number,
    part: (word: string) => boolean,
    see: (text: string) => void,
    onlyParts = false,
  ): void {
    const words = this.contextWords().map((w) => w.replace(LEADING, '').replace(TRAILING, ''));
    const digit = words.map((w) => /\d/.test(w));
    const parts = words.map((w) => part(w));
    for (let i = 0; i < words.length; i++) {
      if (digit[i] && words[i] !== '') see(words[i]);
      if (!digit[i] && !parts[i]) continue;
      let hasDigit = digit[i];
      let hasPart = parts[i];
      let text = words[i];
      for (let len = 2; len <= n && i + len <= words.length; len++) {
        const j = i + len - 1;
        if (onlyParts && !digit[j] && !parts[j]) break;
        hasDigit ||= digit[j];
        hasPart ||= parts[j];
        text = `${text} ${words[j]}`;
        if (text.length > 64) break;
        if (hasDigit && hasPart) see(text);
      }
    }
  }
}

/** A month's name, whole or cut short, as a word of a date. */
const MONTH_WORD =
  /^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?$/i;
/** A word of a written number beside its digits: a currency, a percent, a scale. */
const NUMBER_PART =
  /^(?:[A-Z]{3}|US\$|[$€£¥₹₩₽₺₪฿₫₴₦₱¢₡₲₵₸₼₾]|kr\.?|zł|Kč|Ft|lei|%|percent|pct|thousand|million|billion|trillion)$/u;

/** String leaves of a value with their paths (`items[0].name`). */
export function stringLeaves(value: unknown, path = ''): { path: string; value: string }[] {
  const out: { path: string; value: string }[] = [];
  const walk = (v: unknown, p: string): void => {
    if (typeof v === 'string') out.push({ path: p || '(root)', value: v });
    else if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`);
    else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, p ? `${p}.${k}` : k);
  };
  walk(value, path);
  return out;
}

export interface LeafGrounding extends GroundingResult {
  path: string;
  value: string;
}

/**
 * Every string leaf of the ground truth with how it is found in the context; `furniture` (the
 * lines a PDF transcript dropped as running heads and feet) is searched for the ones that are not.
 */
export function groundLeaves(
  groundTruth: unknown,
  context: string,
  furniture: readonly string[] = [],
): LeafGrounding[] {
  const index = new GroundingIndex(context);
  let lines: { line: string; index: GroundingIndex }[] | undefined;
  return stringLeaves(groundTruth).map((l) => {
    const r: LeafGrounding = { ...l, ...index.find(l.value) };
    if (r.by === null && furniture.length > 0) {
      lines ??= furniture.map((line) => ({ line, index: new GroundingIndex(line) }));
      const hit = lines.find((x) => x.index.has(l.value));
      if (hit) r.furniture = hit.line;
    }
    return r;
  });
}

/** Paths of ground-truth strings not found in the context. */
export function ungroundedPaths(groundTruth: unknown, context: string): string[] {
  return groundLeaves(groundTruth, context)
    .filter((l) => l.by === null)
    .map((l) => l.path);
}

/** The warning for a value not found: what was tried, and the dropped line that holds it. */
export function ungroundedWarning(l: LeafGrounding): string {
  const tried = ['as written', ...l.readings.map((r) => `as a ${r}`)].join(', ');
  const furniture = l.furniture
    ? `; it is on a line dropped as page furniture (a running head or foot: "${l.furniture.length > 80 ? `${l.furniture.slice(0, 80)}...` : l.furniture}"): --no-margins keeps it`
    : '';
  return `ground truth value at ${l.path} is not found in the context (no normaliser matched: tried ${tried})${furniture}`;
}

/** What the grounding of some values came to: how many each way was found, and not. */
export function groundingCounts(leaves: readonly LeafGrounding[]): Record<GroundedBy | 'none', number> {
  const out = { text: 0, date: 0, number: 0, near: 0, none: 0 };
  for (const l of leaves) out[l.by ?? 'none']++;
  return out;
}
