/**
 * Dates as people write them, to ISO 8601 (`YYYY-MM-DD`, or `YYYY-MM` / `YYYY` for a partial
 * date). Pure.
 *
 * Forms read: ISO (`2024-03-05`, `2024/03/05`, `2024-03-05T10:00:00Z`: the time is ignored),
 * numeric day-month-year (`03/05/2024`, `3-5-24`, `05.03.2024`), month names in English, full or
 * abbreviated, with or without a weekday or an ordinal (`March 5, 2024`, `5th of March 2024`,
 * `Tue, 5 Mar 2024`, `05-Mar-24`), month and year (`March 2024`, `03/2024`, `2024-03`).
 *
 * Rules:
 * - `03/05/2024` is ambiguous. With `order: "mdy"` (the default, the US reading) it is March 5;
 *   `"dmy"` reads May 3; `"either"` keeps both readings. A part above 12 settles it whatever the
 *   order (`13/05/2024` is May 13). Dots (`05.03.2024`) are always day first, as in Europe.
 * - Two-digit years follow POSIX `%y`: 69-99 are 1969-1999, 00-68 are 2000-2068.
 * - A run of digits is an id, not a date: `20240305` and `2024` are dates only with
 *   `digits: true`, which the default policy sets where the schema says `format: date`.
 */

export type DateOrder = 'mdy' | 'dmy' | 'either';

export interface DateOptions {
  order?: DateOrder;
  /** Read bare digit runs (`20240305`, `2024`) as dates (default false). */
  digits?: boolean;
}

const MONTHS: Record<string, number> = {
  january: 1,
  february: 2,
  march: 3,
  april: 4,
  may: 5,
  june: 6,
  july: 7,
  august: 8,
  september: 9,
  october: 10,
  november: 11,
  december: 12,
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const WEEKDAY =
  /\b(?:mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\b\.?,?/g;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function daysIn(y: number, m: number): number {
  return [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ][m - 1];
}

function year(s: string): number | null {
  if (s.length === 4) return Number(s);
  if (s.length === 2) {
    const n = Number(s);
    return n >= 69 ? 1900 + n : 2000 + n;
  }
  return null;
}

/** An ISO string for a valid (y, m, d), or null. `d` undefined: a month; both undefined: a year. */
function iso(y: number | null, m?: number, d?: number): string | null {
  if (y === null || y < 1 || y > 9999) return null;
  if (m === undefined) return pad(y, 4);
  if (m < 1 || m > 12) return null;
  if (d === undefined) return `${pad(y, 4)}-${pad(m)}`;
  if (d < 1 || d > daysIn(y, m)) return null;
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
}

function uniq(xs: (string | null)[]): string[] {
  return [...new Set(xs.filter((x): x is string => x !== null))];
}

const cache = new Map<string, string[]>();
const NONE: string[] = [];

/**
 * The ISO readings of a written date (one, or two for an ambiguous numeric date with
 * `order: "either"`); empty when the text is not a date.
 */
export function parseDate(text: string, o: DateOptions = {}): string[] {
  // Every written date is short and has a digit: most text is rejected before any work.
  if (text.length > 64 || text.length < 4 || !/\d/.test(text)) return NONE;
  const key = `${o.order ?? 'mdy'}${o.digits ? 1 : 0}${text}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const r = parse(text, o.order ?? 'mdy', o.digits === true);
  if (cache.size > 50_000) cache.clear();
  cache.set(key, r);
  return r;
}

function parse(text: string, order: DateOrder, digits: boolean): string[] {
  const s = text.normalize('NFKC').trim().toLowerCase();
  // ISO: 2024-03-05, 2024/3/5, 2024.03.05, 2024-03, with an optional time after T or a space.
  let m =
    /^(\d{4})([-/.])(\d{1,2})(?:\2(\d{1,2}))?(?:(?:t|\s+)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:z|[+-]\d{2}:?\d{2}|am|pm)?)?$/.exec(
      s,
    );
  if (m) return uniq([iso(Number(m[1]), Number(m[3]), m[4] === undefined ? undefined : Number(m[4]))]);
  // Numeric with the year last: 03/05/2024, 3-5-24, 05.03.2024.
  m = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})(?:[t\s]+\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm)?)?$/.exec(s);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[3]);
    const y = year(m[4]);
    const mdy = iso(y, a, b);
    const dmy = iso(y, b, a);
    if (m[2] === '.') return uniq([dmy]);
    if (a > 12 || b > 12) return uniq([mdy ?? dmy]);
    if (order === 'either') return uniq([mdy, dmy]);
    return uniq([order === 'mdy' ? mdy : dmy]);
  }
  // Month and year: 03/2024, 3-2024.
  m = /^(\d{1,2})[-/.](\d{4})$/.exec(s);
  if (m) return uniq([iso(Number(m[2]), Number(m[1]))]);
  // Digit runs: only when told they are dates.
  if (/^\d+$/.test(s)) {
    if (!digits) return [];
    if (s.length === 8) return uniq([iso(Number(s.slice(0, 4)), Number(s.slice(4, 6)), Number(s.slice(6)))]);
    if (s.length === 6) return uniq([iso(Number(s.slice(0, 4)), Number(s.slice(4)))]);
    if (s.length === 4) return uniq([iso(Number(s))]);
    return [];
  }
  return named(s);
}

/** Dates with a month name: "March 5, 2024", "5th of March 2024", "Tue, 05-Mar-24", "March 2024". */
function named(s: string): string[] {
  const t = s
    .replace(WEEKDAY, ' ')
    .replace(/(\d)(?:st|nd|rd|th)\b/g, '$1')
    .replace(/\bof\b/g, ' ')
    .replace(/[,.]/g, ' ')
    .replace(/[-/]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const parts = t.split(' ');
  if (parts.length < 2 || parts.length > 3) return [];
  const month = (w: string) => MONTHS[w];
  const num = (w: string) => (/^\d{1,2}$/.test(w) ? Number(w) : null);
  const yr = (w: string) => (/^\d{4}$|^\d{2}$/.test(w) ? year(w) : null);
  if (parts.length === 2) {
    // March 2024 / 2024 March
    const [a, b] = parts;
    if (month(a) && /^\d{4}$/.test(b)) return uniq([iso(Number(b), month(a))]);
    if (/^\d{4}$/.test(a) && month(b)) return uniq([iso(Number(a), month(b))]);
    return [];
  }
  const [a, b, c] = parts;
  // March 5 2024
  if (month(a) && num(b) !== null && yr(c) !== null) return uniq([iso(yr(c), month(a), num(b)!)]);
  // 5 March 2024
  if (num(a) !== null && month(b) && yr(c) !== null) return uniq([iso(yr(c), month(b), num(a)!)]);
  // 2024 March 5
  if (/^\d{4}$/.test(a) && month(b) && num(c) !== null) return uniq([iso(Number(a), month(b), num(c)!)]);
  return [];
}

/** Whether two written dates can be the same date (some reading of each agrees). */
export function datesMatch(a: string[], b: string[]): boolean {
  for (const x of a) if (b.includes(x)) return true;
  return false;
}
