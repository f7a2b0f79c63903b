/**
 * Text normalisation for the lenient matchers: Unicode NFKC, case, whitespace, punctuation,
 * English articles, and (optionally) accents. Pure and cached: ground-truth strings recur in
 * every model's file.
 */
import { type PyValue, pyStr } from '../../src/core/pyjson.ts';

export interface TextOptions {
  /** Ignore letter case (default true). */
  ignore_case?: boolean;
  /** Punctuation (Unicode `P`) counts as a space (default true). */
  ignore_punctuation?: boolean;
  /** Drop the words a, an, the (default true). */
  ignore_articles?: boolean;
  /** Drop combining marks after decomposition: "Cañon" = "Canon" (default false). */
  ignore_accents?: boolean;
}

const PUNCT = /\p{P}+/gu;
const WS = /[\s\u0085\u200b\u2060\ufeff]+/gu;
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
const MARKS = /\p{M}+/gu;

function flagsOf(o: TextOptions): number {
  return (
    (o.ignore_case === false ? 0 : 1) |
    (o.ignore_punctuation === false ? 0 : 2) |
    (o.ignore_articles === false ? 0 : 4) |
    (o.ignore_accents === true ? 8 : 0)
  );
}

const caches: Map<string, string>[] = Array.from({ length: 16 }, () => new Map());
const CACHE_MAX = 100_000;

/** The normal form of a string under the options (flags are bits, so each set has its own cache). */
export function normalizeText(s: string, o: TextOptions = {}): string {
  const flags = flagsOf(o);
  const cache = caches[flags];
  const hit = cache.get(s);
  if (hit !== undefined) return hit;
  let t = s.normalize('NFKC');
  if (flags & 1) t = t.toLowerCase().replace(/ß/g, 'ss');
  if (flags & 8) t = t.normalize('NFD').replace(MARKS, '').normalize('NFC');
  if (flags & 2) t = t.replace(PUNCT, ' ');
  // Articles are only English words when case is ignored or they are written in lower case.
  if (flags & 4) t = t.replace(ARTICLES, ' ');
  t = t.replace(WS, ' ').trim();
  if (s.length < 4096) {
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(s, t);
  }
  return t;
}

/** A scalar as text for the text matcher: strings as they are, numbers as Python prints them. */
export function scalarText(v: PyValue): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null) return '';
  return pyStr(v);
}

/** Written forms of "no value": null, "", "N/A", "none", "-", ... (kept in normal form). */
const NULL_WORDS = new Set(
  [
    '',
    'null',
    'none',
    'nil',
    'n/a',
    'na',
    'not available',
    'not applicable',
    'not specified',
    'not provided',
    'not given',
  ].map((w) => normalizeText(w)),
);

/** The longest written "no value" (with room for spaces and punctuation). */
const NULL_MAX = 24;

/** Whether a value means "no value": null or one of the written forms above. */
export function isNullish(v: PyValue): boolean {
  if (v === null) return true;
  if (typeof v !== 'string' || v.length > NULL_MAX) return false;
  return NULL_WORDS.has(normalizeText(v));
}

/** A compact key for table look-ups: normalised, accents dropped, spaces removed ("U.S." -> "us"). */
export function tableKey(s: string): string {
  return normalizeText(s, { ignore_accents: true }).replace(/ /g, '');
}
