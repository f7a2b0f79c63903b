/**
 * ExtractBench's deterministic comparators, with its evaluator's semantics (ContextualAI/
 * extract-bench, `src/extract_bench/evaluation/metrics/`, read at commit 88bc6ac): what a schema's
 * `evaluation_config` (or our `x-sob-match`) names, for the lenient matcher (docs/lenient.md
 * "Comparators declared in the schema"). Each function returns the evaluator's `passed`.
 *
 * Common to all (`metric_utils.py` `apply_missing_null_policy`, lines 17-107): a null (or
 * missing) value on both sides passes; on one side only, fails; then the metric runs.
 * - `string_exact` (`string_metrics.py` 25-62): `str(gold) == str(extracted)`: case and
 *   whitespace count; a number is compared as Python writes it (`5` is "5", `5.0` is "5.0").
 * - `string_case_insensitive` (66-112): `casefold` on both.
 * - `string_fuzzy` (116-175): `difflib.SequenceMatcher(None, a, b).ratio() >= threshold`
 *   (default 0.8, `presets.py`), both lower-cased unless `case_sensitive`.
 * - `number_exact` (`number_metrics.py` 26-53): `float(gold) == float(extracted)`, a value
 *   `float()` cannot read being None (so two unreadable strings pass).
 * - `number_tolerance` (57-111): absolute: `|gold - extracted| <= tolerance`, or
 *   `isclose(delta, tolerance, rel_tol=1e-9, abs_tol=1e-12)` (a delta at the edge passes);
 *   the tolerance is the params' (the preset's 1e-3, the metric's own default 1e-6); one side
 *   not a number fails, both not numbers passes.
 * - `integer_exact` (115-148): `int(gold) == int(extracted)`: a float truncates (`3.9` is 3),
 *   a string must be an integer literal (`"3"` is 3, `"3.0"` is None), None == None passes.
 * - `boolean_exact` (`boolean_metrics.py` 12-56): only JSON booleans are booleans; anything
 *   else is None, and None is None passes.
 */
import { type PyValue, pyFloatRepr } from '../../src/core/pyjson.ts';

export const EXTRACTBENCH_METRICS = [
  'string_exact',
  'string_case_insensitive',
  'string_fuzzy',
  'integer_exact',
  'number_exact',
  'number_tolerance',
  'boolean_exact',
] as const;
export type ExtractBenchMetric = (typeof EXTRACTBENCH_METRICS)[number];
/** The metrics ExtractBench asks an LLM for. */
export const EXTRACTBENCH_LLM_METRICS = ['string_semantic', 'string_llm', 'array_llm'] as const;

export interface ExtractBenchParams {
  threshold?: number;
  case_sensitive?: boolean;
  tolerance?: number;
}

/** Python's `str()` of a scalar. */
export function pyStr(v: PyValue): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return pyFloatRepr(v);
  if (v === null) return 'None';
  return String(v);
}

/** Python's `str.casefold()` (full case folding, as near as JavaScript's case maps come). */
export function casefold(s: string): string {
  let out = '';
  for (const ch of s) out += ch === 'ı' ? ch : ch.toUpperCase().toLowerCase();
  return out;
}

const FLOAT_LITERAL = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const INT_LITERAL = /^[+-]?\d(?:_?\d)*$/;

/** Python's `float(v)`, or null where it raises (TypeError, ValueError). */
export function pyFloat(v: PyValue): number | null {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  if (/^[+-]?(?:inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return Number.NaN;
  if (!FLOAT_LITERAL.test(t)) return null;
  return Number(t.replace(/_/g, ''));
}

/** Python's `int(v)`, or null where it raises (TypeError, ValueError; an infinity's OverflowError too). */
export function pyInt(v: PyValue): bigint | null {
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt(Math.trunc(v)) : null;
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return INT_LITERAL.test(t) ? BigInt(t.replace(/_/g, '')) : null;
}

/** `math.isclose(a, b, rel_tol, abs_tol)`. */
function isclose(a: number, b: number, relTol: number, absTol: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const d = Math.abs(a - b);
  return d <= Math.abs(relTol * b) || d <= Math.abs(relTol * a) || d <= absTol;
}

/**
 * `difflib.SequenceMatcher(None, a, b).ratio()` (CPython 3.12 `Lib/difflib.py`): matching
 * blocks found by longest match, recursively on either side, with the "autojunk" heuristic (in a
 * `b` of 200 code points or more, one occurring more than 1% + 1 times never starts a match).
 */
export function sequenceRatio(a: string, b: string): number {
  const A = Array.from(a);
  const B = Array.from(b);
  const la = A.length;
  const lb = B.length;
  if (la + lb === 0) return 1;
  const b2j = new Map<string, number[]>();
  B.forEach((ch, j) => {
    const l = b2j.get(ch);
    if (l) l.push(j);
    else b2j.set(ch, [j]);
  });
  if (lb >= 200) {
    const ntest = Math.floor(lb / 100) + 1;
    for (const [ch, idx] of [...b2j]) if (idx.length > ntest) b2j.delete(ch);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): [number, number, number] => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(A[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    // No junk (isjunk is None): popular elements are not junk, so a match extends over them.
    while (besti > alo && bestj > blo && A[besti - 1] === B[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && A[besti + bestsize] === B[bestj + bestsize])
      bestsize++;
    return [besti, bestj, bestsize];
  };
  let matches = 0;
  const queue: [number, number, number, number][] = [[0, la, 0, lb]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k === 0) continue;
    matches += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return (2 * matches) / (la + lb);
}

/** ExtractBench's `passed` for one leaf under a deterministic metric. */
export function extractBenchPasses(
  metric: ExtractBenchMetric,
  params: ExtractBenchParams,
  gold: PyValue,
  extracted: PyValue,
): boolean {
  if (gold === null || extracted === null) return gold === extracted;
  switch (metric) {
    case 'string_exact':
      return pyStr(gold) === pyStr(extracted);
    case 'string_case_insensitive':
      return casefold(pyStr(gold)) === casefold(pyStr(extracted));
    case 'string_fuzzy': {
      const cs = params.case_sensitive ?? false;
      const g = cs ? pyStr(gold) : pyStr(gold).toLowerCase();
      const e = cs ? pyStr(extracted) : pyStr(extracted).toLowerCase();
      return sequenceRatio(g, e) >= (params.threshold ?? 0.8);
    }
    case 'number_exact': {
      const g = pyFloat(gold);
      const e = pyFloat(extracted);
      return g === null || e === null ? g === e : g === e;
    }
    case 'number_tolerance': {
      const g = pyFloat(gold);
      const e = pyFloat(extracted);
      if (g === null || e === null) return g === e;
      const tol = params.tolerance ?? 1e-6;
      const delta = Math.abs(g - e);
      return delta <= tol || isclose(delta, tol, 1e-9, 1e-12);
    }
    case 'integer_exact':
      return pyInt(gold) === pyInt(extracted);
    case 'boolean_exact': {
      const g = typeof gold === 'boolean' ? gold : null;
      const e = typeof extracted === 'boolean' ? extracted : null;
      return g === e;
    }
  }
}
