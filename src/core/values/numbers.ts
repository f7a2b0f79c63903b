/**
 * Numbers as people write them: currency symbols and codes, thousands separators (`1,200.50`,
 * `1.200,50`, `1 200,50`, `1'200.50`), `(123)` as -123, a leading or trailing minus, percent,
 * and the words thousand / million / billion / trillion. Pure.
 *
 * A written number may have two readings: `1,200` is 1200 with a thousands comma or 1.2 with a
 * decimal comma, and `15%` is 15 or 0.15. Every reading is returned; a comparison accepts when
 * any reading of one side is close to any reading of the other.
 */
import type { PyValue } from '../pyjson.ts';
import currencies from './currencies.json' with { type: 'json' };

/** ISO 4217 codes, for reading `USD 1,200` as a number (the first name of each group of the currency table). */
export const CURRENCY_CODES: ReadonlySet<string> = new Set(currencies.groups.map((g) => g[0]));

export interface ParsedNumber {
  /** Every reading of the text (one or two; four with an ambiguous separator and a percent). */
  values: number[];
  /** The text carried number formatting (a currency, a percent, grouping, parentheses, a scale
   * word): evidence that it is a quantity, not an id. */
  formatted: boolean;
}

const SYMBOLS =
  /^(?:US\$|U\.S\.\$|C\$|CA\$|A\$|AU\$|NZ\$|HK\$|S\$|R\$|MX\$|NT\$|CN¥|JP¥|Rs\.?|[$€£¥₹₩₽₺₪฿₫₴₦₱¢₡₲₵₸₼₾])/u;
const SYMBOLS_END = /(?:[$€£¥₹₩₽₺₪฿₫₴₦₱¢₡₲₵₸₼₾]|kr\.?|zł|Kč|Ft|lei|руб\.?)$/u;
const SCALES: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };
const SCALE_RE = /\s*(thousand|million|billion|trillion)s?$/i;
const MINUS = /^[-\u2212\u2012\u2013]/u;
const PLAIN = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$|^\.\d+$/;
/** A group of 3 digits, or Indian 2-digit groups before the last 3. */
const GROUPED = /^\d{1,3}(?:([,. '’\u00a0\u202f\u2009])\d{3})+$|^\d{1,2}(?:,\d{2})+,\d{3}$/u;

const cache = new Map<string, ParsedNumber | null>();

/** All readings of a written number, or null when the text is not one. */
export function parseNumberText(text: string): ParsedNumber | null {
  if (text.length > 64 || !/\d/.test(text)) return null;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const r = parse(text);
  if (cache.size > 50_000) cache.clear();
  cache.set(text, r);
  return r;
}

function parse(text: string): ParsedNumber | null {
  let s = text.normalize('NFKC').trim();
  let formatted = false;
  let negative = false;
  let percent = false;
  let scale = 1;
  if (s.startsWith('(') && s.endsWith(')')) {
    negative = true;
    formatted = true;
    s = s.slice(1, -1).trim();
  }
  if (MINUS.test(s)) {
    negative = !negative;
    s = s.slice(1).trim();
  } else if (s.startsWith('+')) s = s.slice(1).trim();
  // A currency before or after the number, as a symbol or an ISO 4217 code.
  for (let round = 0; round < 2; round++) {
    const sym = SYMBOLS.exec(s);
    if (sym) {
      s = s.slice(sym[0].length).trim();
      formatted = true;
    }
    const code = /^([A-Z]{3})\s*(?=[\d(.\-\u2212])/.exec(s);
    if (code && CURRENCY_CODES.has(code[1])) {
      s = s.slice(code[0].length).trim();
      formatted = true;
    }
    const endSym = SYMBOLS_END.exec(s);
    if (endSym && endSym.index > 0) {
      s = s.slice(0, endSym.index).trim();
      formatted = true;
    }
    const endCode = /(?<=[\d.])\s*([A-Z]{3})$/.exec(s);
    if (endCode && CURRENCY_CODES.has(endCode[1])) {
      s = s.slice(0, endCode.index).trim();
      formatted = true;
    }
    if (MINUS.test(s) && !negative) {
      negative = true;
      s = s.slice(1).trim();
    }
    if (s.startsWith('(') && s.endsWith(')')) {
      negative = !negative;
      formatted = true;
      s = s.slice(1, -1).trim();
    }
  }
  const pct = /\s*(?:%|percent|per cent|pct)$/i.exec(s);
  if (pct) {
    percent = true;
    formatted = true;
    s = s.slice(0, pct.index).trim();
  }
  const sc = SCALE_RE.exec(s);
  if (sc) {
    scale = SCALES[sc[1].toLowerCase()];
    formatted = true;
    s = s.slice(0, sc.index).trim();
  }
  if (s.endsWith('-') && !negative && s.length > 1) {
    // Accounting: a trailing minus.
    negative = true;
    s = s.slice(0, -1).trim();
  }
  const readings = magnitudes(s);
  if (readings === null) return null;
  if (readings.grouped) formatted = true;
  const values: number[] = [];
  for (const m of readings.values) {
    const v = (negative ? -m : m) * scale;
    values.push(v);
    if (percent) values.push(v / 100);
  }
  return { values, formatted };
}

/** The readings of an unsigned number with separators. */
function magnitudes(s: string): { values: number[]; grouped: boolean } | null {
  if (s.length === 0) return null;
  if (PLAIN.test(s)) {
    // `1.200` also reads as 1200 with a dot grouping thousands (the European form).
    if (/^[1-9]\d{0,2}\.\d{3}$/.test(s))
      return { values: [Number(s), Number(digitsOnly(s))], grouped: false };
    return { values: [Number(s)], grouped: false };
  }
  // Both a comma and a dot: the last one is the decimal mark, the other groups thousands.
  const lastComma = s.lastIndexOf(',');
  const lastDot = s.lastIndexOf('.');
  if (lastComma >= 0 && lastDot >= 0) {
    const dec = Math.max(lastComma, lastDot);
    const intPart = s.slice(0, dec);
    const frac = s.slice(dec + 1);
    if (!/^\d+$/.test(frac) || !GROUPED.test(intPart)) return null;
    const groupSep = dec === lastComma ? '.' : ',';
    if (intPart.includes(dec === lastComma ? ',' : '.')) return null;
    if (/[,.]/.test(intPart.replace(new RegExp(`\\${groupSep}`, 'g'), ''))) return null;
    return { values: [Number(`${digitsOnly(intPart)}.${frac}`)], grouped: true };
  }
  // Grouping only (space, apostrophe, or a repeated comma/dot): an integer.
  if (GROUPED.test(s)) {
    const seps = new Set(s.replace(/\d/g, ''));
    if (seps.size !== 1) return null;
    const sep = [...seps][0];
    const count = s.split(sep).length - 1;
    const int = Number(digitsOnly(s));
    // One comma or dot before exactly three digits: thousands, or a decimal mark.
    if ((sep === ',' || sep === '.') && count === 1) {
      const decimal = Number(s.replace(sep, '.'));
      // `0,500` can only be a decimal comma.
      return { values: s.startsWith('0') ? [decimal] : [int, decimal], grouped: true };
    }
    return { values: [int], grouped: true };
  }
  // A single decimal comma (`1,5`, `0,500`) or a grouped integer part with a decimal comma.
  const dc = /^(\d+|\d{1,3}(?:[ '’\u00a0\u202f\u2009.]\d{3})+),(\d+)$/u.exec(s);
  if (dc) return { values: [Number(`${digitsOnly(dc[1])}.${dc[2]}`)], grouped: true };
  const dd = /^(\d{1,3}(?:[ '’\u00a0\u202f\u2009]\d{3})+)\.(\d+)$/u.exec(s);
  if (dd) return { values: [Number(`${digitsOnly(dd[1])}.${dd[2]}`)], grouped: true };
  return null;
}

function digitsOnly(s: string): string {
  return s.replace(/\D/g, '');
}

export interface NumberOptions {
  /** Accept |a - b| <= abs_tol (default 0). */
  abs_tol?: number;
  /** Accept |a - b| <= rel_tol * max(|a|, |b|) (default 1e-9: float noise only). */
  rel_tol?: number;
}

/** Python's math.isclose. */
export function isClose(a: number, b: number, o: NumberOptions = {}): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const rel = o.rel_tol ?? 1e-9;
  const abs = o.abs_tol ?? 0;
  return Math.abs(a - b) <= Math.max(rel * Math.max(Math.abs(a), Math.abs(b)), abs);
}

/**
 * The numeric readings of a leaf. Numbers are themselves; strings are parsed, and with
 * `plainDigits: false` a string without number formatting (`"001234"`, `"1.10"`) is not a
 * number: in a text field a bare digit run is an id or a code, not a quantity.
 */
export function numberReadings(v: PyValue, plainDigits: boolean): ParsedNumber | null {
  if (typeof v === 'number') return Number.isNaN(v) ? null : { values: [v], formatted: false };
  if (typeof v === 'bigint') return { values: [Number(v)], formatted: false };
  if (typeof v !== 'string') return null;
  const p = parseNumberText(v);
  if (p === null) return null;
  if (!plainDigits && !p.formatted) return null;
  return p;
}

/** Whether any reading of `a` is close to any reading of `b`. */
export function numbersMatch(a: ParsedNumber, b: ParsedNumber, o: NumberOptions): boolean {
  for (const x of a.values) for (const y of b.values) if (isClose(x, y, o)) return true;
  return false;
}
