/**
 * Value comparisons with the reference's Python semantics (docs/scoring.md "Raw metrics").
 */
import { type PyValue, pyStr } from '../src/core/pyjson.ts';

/**
 * Python `==` between two JSON scalars: ints and floats by value (1 == 1.0), booleans are ints
 * (True == 1), strings only equal strings, None only None, NaN equals nothing.
 */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  const x = typeof a === 'boolean' ? (a ? 1n : 0n) : a;
  const y = typeof b === 'boolean' ? (b ? 1n : 0n) : b;
  if ((typeof x === 'bigint' || typeof x === 'number') && (typeof y === 'bigint' || typeof y === 'number')) {
    // bigint == number compares exact mathematical values in JS, as Python does for int/float.
    // biome-ignore lint/suspicious/noDoubleEquals: exact int/float comparison is the point
    return x == y;
  }
  return false;
}

/**
 * Strict boolean/number semantics for the `strict` profile: booleans never equal numbers; a NaN
 * equals a NaN (the same value written twice: the ground truth scores 1 against itself).
 */
export function strictEquals(a: PyValue, b: PyValue): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b;
  if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a)) return Number.isNaN(b);
  return pyEquals(a, b);
}

function sameFloat(a: number, b: number): boolean {
  // Python's repr is injective on floats except that every NaN prints "NaN".
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return Object.is(a, b);
}

/**
 * `canonical_json(a) == canonical_json(b)` without building the strings: sorted keys make key
 * order irrelevant; ints and floats never match (`1` vs `1.0`), nor booleans and ints.
 * Iterative, so deep values are fine.
 */
export function canonicalEqual(a: PyValue, b: PyValue): boolean {
  const work: [PyValue, PyValue][] = [[a, b]];
  while (work.length > 0) {
    const [x, y] = work.pop()!;
    // Floats first: \`-0.0 === 0.0\` in JS, but Python writes them "-0.0" and "0.0".
    if (typeof x === 'number') {
      if (typeof y !== 'number' || !sameFloat(x, y)) return false;
      continue;
    }
    if (x === y) continue;
    if (x === null || y === null) return false;
    if (typeof x !== 'object' || typeof y !== 'object') return false; // scalars already !==
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) work.push([x[i], y[i]]);
      continue;
    }
    if (Array.isArray(y) || x.size !== y.size) return false;
    for (const [k, v] of x) {
      if (!y.has(k)) return false;
      work.push([v, y.get(k)!]);
    }
  }
  return true;
}

// -- Tokens --------------------------------------------------------------------------------------

/** Python's whitespace (`str.split()`, `\s`), which includes \x1c-\x1f and \x85. */
const WS =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** Python's `\w` on str: letters, numerics (Nd, Nl, No), underscore. Combining marks are not. */
const WORD = '\\p{L}\\p{N}_';
const PUNCT_RE = new RegExp(`[^${WORD}${WS}]`, 'gu');
const ARTICLES_RE = new RegExp(`(?<![${WORD}])(?:a|an|the)(?![${WORD}])`, 'gu');
const SPLIT_RE = new RegExp(`[${WS}]+`, 'u');
const ASCII_WS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ';
const PUNCT_ASCII = new RegExp(`[^A-Za-z0-9_${ASCII_WS}]`, 'g');
const ARTICLES_ASCII = /(?<![A-Za-z0-9_])(?:a|an|the)(?![A-Za-z0-9_])/g;
const SPLIT_ASCII = new RegExp(`[${ASCII_WS}]+`);
const NON_ASCII = /[^\x00-\x7f]/;

/** Tokens of non-ASCII strings seen before (ground-truth values recur across every model scored). */
const tokenCache = new Map<string, string[]>();
const TOKEN_CACHE_MAX = 200_000;

/**
 * A new empty list of strings whose elements kind is already V8's "any object" kind. A `[]`
 * literal starts as a list of small integers; left empty, it has another hidden class than the
 * lists of strings beside it (an empty leaf's tokens, an empty list of missing paths), and the
 * scorer's compiled code, built on one, was thrown away and rebuilt when the other came by.
 */
export function noStrings(): string[] {
  const out = [''];
  out.length = 0;
  return out;
}

/** Word characters of ASCII text: A-Z, a-z, 0-9, _. */
function isAsciiWord(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/**
 * `tokenize` of ASCII text in one pass (lowercase words, every other character a separator, the
 * articles dropped), with no regex and no cache; null at the first non-ASCII character.
 */
function asciiTokens(s: string): string[] | null {
  const out = noStrings();
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return null;
    if (!isAsciiWord(c)) {
      i++;
      continue;
    }
    const start = i;
    for (i++; i < n; i++) {
      const d = s.charCodeAt(i);
      if (d > 0x7f) return null;
      if (!isAsciiWord(d)) break;
    }
    const w = s.slice(start, i).toLowerCase();
    if (w !== 'a' && w !== 'an' && w !== 'the') out.push(w);
  }
  return out;
}

/** `normalize_tokens`: str(), lowercase, punctuation to spaces, articles out, split. */
export function normalizeTokens(value: PyValue | undefined): string[] {
  if (typeof value === 'string') {
    const fast = asciiTokens(value);
    if (fast) return fast;
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    const fast = asciiTokens(pyStr(value));
    if (fast) return fast;
  }
  if (typeof value === 'string' && value.length < 4096) {
    let hit = tokenCache.get(value);
    if (hit === undefined) {
      hit = tokenize(value);
      if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
      tokenCache.set(value, hit);
    }
    return hit;
  }
  return tokenize(value);
}

function tokenize(value: PyValue | undefined): string[] {
  let text: string;
  if (value === null || value === undefined) text = 'null';
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else text = pyStr(value);
  text = text.toLowerCase();
  if (NON_ASCII.test(text)) {
    text = text.replace(PUNCT_RE, ' ').replace(ARTICLES_RE, ' ');
    return text.split(SPLIT_RE).filter((t) => t.length > 0);
  }
  text = text.replace(PUNCT_ASCII, ' ').replace(ARTICLES_ASCII, ' ');
  return text.split(SPLIT_ASCII).filter((t) => t.length > 0);
}

/** Multiset-overlap F1 of two values' tokens (SPEC: both empty -> 1, one empty -> 0). */
export function tokenF1(gt: PyValue | undefined, pred: PyValue | undefined): number {
  // The same scalar of the same type has the same tokens: F1 is 1 (also when both are empty).
  if (gt === pred || (typeof gt === 'number' && typeof pred === 'number' && Object.is(gt, pred))) return 1;
  if ((gt === undefined || gt === null) && (pred === undefined || pred === null)) return 1;
  return tokenListF1(normalizeTokens(gt), normalizeTokens(pred));
}

/** The tokens of `null` (a missing leaf is read as null), `true` and `false`. */
const NULL_TOKENS: readonly string[] = ['null'];
const TRUE_TOKENS: readonly string[] = ['true'];
const FALSE_TOKENS: readonly string[] = ['false'];

/** `tokenF1` with the ground truth's tokens already known (`gTokens = normalizeTokens(gt)`). */
export function tokenF1Known(gt: PyValue, gTokens: string[], pred: PyValue | undefined): number {
  if (gt === pred || (typeof gt === 'number' && typeof pred === 'number' && Object.is(gt, pred))) return 1;
  if (pred === undefined || pred === null) return gt === null ? 1 : tokenListF1(gTokens, NULL_TOKENS);
  if (typeof pred === 'boolean') return tokenListF1(gTokens, pred ? TRUE_TOKENS : FALSE_TOKENS);
  if (typeof pred === 'string' && gTokens.length <= 32 && pred.length <= 4096) {
    const f = asciiTokenF1(gTokens, pred);
    if (f >= 0) return f;
  }
  return tokenListF1(gTokens, normalizeTokens(pred));
}

/**
 * `tokenListF1(g, normalizeTokens(s))` for ASCII `s` and at most 32 ground-truth tokens, without
 * building `s`'s tokens: each word of `s` is compared in place, lowercased as it is read, with the
 * first unpaired equal token of `g` (pairing greedily gives the multiset overlap). -1 at the first
 * non-ASCII character (the caller then tokenizes as usual).
 */
function asciiTokenF1(g: readonly string[], s: string): number {
  const n = s.length;
  let mask = 0; // bit i: g[i] already paired
  let overlap = 0;
  let count = 0;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return -1;
    if (!isAsciiWord(c)) {
      i++;
      continue;
    }
    const start = i;
    for (i++; i < n; i++) {
      const d = s.charCodeAt(i);
      if (d > 0x7f) return -1;
      if (!isAsciiWord(d)) break;
    }
    const len = i - start;
    if (len <= 3 && isArticle(s, start, len)) continue;
    count++;
    for (let k = 0; k < g.length; k++) {
      if ((mask & (1 << k)) !== 0) continue;
      const t = g[k];
      if (t.length !== len) continue;
      let j = 0;
      while (j < len && lower(s.charCodeAt(start + j)) === t.charCodeAt(j)) j++;
      if (j === len) {
        mask |= 1 << k;
        overlap++;
        break;
      }
    }
  }
  if (g.length === 0 && count === 0) return 1;
  if (g.length === 0 || count === 0 || overlap === 0) return 0;
  const precision = overlap / count;
  const recall = overlap / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** ASCII lowercase of a char code. */
function lower(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/** Whether `s[start, start + len)` is "a", "an" or "the", in any case. */
function isArticle(s: string, start: number, len: number): boolean {
  const a = lower(s.charCodeAt(start));
  if (len === 1) return a === 97;
  if (len === 2) return a === 97 && lower(s.charCodeAt(start + 1)) === 110;
  return a === 116 && lower(s.charCodeAt(start + 1)) === 104 && lower(s.charCodeAt(start + 2)) === 101;
}

/** Multiset-overlap F1 of two token lists. */
function tokenListF1(g: readonly string[], p: readonly string[]): number {
  if (g.length === 0 && p.length === 0) return 1;
  if (g.length === 0 || p.length === 0) return 0;
  let overlap = 0;
  if (g.length <= 32) {
    // Small lists (the usual case): pair tokens off directly, no allocation of a counter.
    let mask = 0; // bit i: g[i] already paired
    for (const t of p) {
      for (let i = 0; i < g.length; i++) {
        if ((mask & (1 << i)) === 0 && g[i] === t) {
          mask |= 1 << i;
          overlap++;
          break;
        }
      }
    }
  } else {
    // A long ground truth (a paragraph) recurs in every model's file: its token counts are
    // built once, and each answer's tokens are looked up in them.
    const ix = tokenIndex(g);
    const used = new Int32Array(ix.counts.length);
    for (const t of p) {
      const id = ix.ids.get(t);
      if (id !== undefined && used[id] < ix.counts[id]) {
        used[id]++;
        overlap++;
      }
    }
  }
  if (overlap === 0) return 0;
  const precision = overlap / p.length;
  const recall = overlap / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** A token list's distinct tokens (an id each) and how often each occurs. */
interface TokenIndex {
  ids: Map<string, number>;
  counts: Int32Array;
}

/** Token lists' indexes, kept per list (a ground truth's tokens are one list, built once). */
const tokenIndexes = new WeakMap<readonly string[], TokenIndex>();

function tokenIndex(g: readonly string[]): TokenIndex {
  let ix = tokenIndexes.get(g);
  if (!ix) {
    const ids = new Map<string, number>();
    const counts: number[] = [];
    for (const t of g) {
      const id = ids.get(t);
      if (id === undefined) {
        ids.set(t, counts.length);
        counts.push(1);
      } else counts[id]++;
    }
    ix = { ids, counts: Int32Array.from(counts) };
    tokenIndexes.set(g, ix);
  }
  return ix;
}
