/**
 * Leaf matchers. A matcher compares one ground-truth scalar with one predicted scalar and says
 * match / no match / unsettled (only a `judge` says unsettled: the deterministic steps did not
 * accept, and a model is to be asked), with a similarity in [0, 1] for alignment: 1 when
 * accepted, otherwise SOB's token F1 of the two values.
 *
 * Every matcher accepts first what SOB's exact comparison accepts (Python equality,
 * `metrics/values.ts`), so no matcher is ever stricter than Value Accuracy.
 */
import { distance } from 'fastest-levenshtein';
import type { PyValue } from '../../src/core/pyjson.ts';
import { type DateOptions, datesMatch, parseDate } from '../../src/core/values/dates.ts';
import {
  type NumberOptions,
  numberReadings,
  numbersMatch,
  type ParsedNumber,
} from '../../src/core/values/numbers.ts';
import { jsonTypeName } from '../types.ts';
import { pyEquals, tokenF1 } from '../values.ts';
import {
  EXTRACTBENCH_METRICS,
  type ExtractBenchMetric,
  type ExtractBenchParams,
  extractBenchPasses,
} from './extractbench.ts';
import {
  hintedTables,
  type LeafKind,
  leafKind,
  type MatcherName,
  type MatchSpec,
  type PathInfo,
  type Source,
} from './policy.ts';
import type { SynonymTable } from './tables.ts';
import { isNullish, normalizeText, scalarText, type TextOptions, tableKey } from './text.ts';

/** `needs_judge`: a declared LLM comparator (`string_semantic`) scored without `--judge`. */
export type Verdict = 'match' | 'no_match' | 'unsettled' | 'needs_judge';

export interface LeafOutcome {
  verdict: Verdict;
  /** The matcher (step) that accepted: exact, text, number, date, enum, synonyms, fuzzy. */
  by: string | null;
  similarity: number;
}

type Step =
  | { kind: 'nullish'; as: string }
  | { kind: 'text'; o: TextOptions }
  | { kind: 'number'; o: NumberOptions; needEvidence: boolean }
  | { kind: 'date'; o: DateOptions }
  | { kind: 'enum'; values: string[]; tables: SynonymTable[] }
  | { kind: 'synonyms'; tables: SynonymTable[] }
  | { kind: 'fuzzy'; threshold: number; o: TextOptions }
  | { kind: 'extractbench'; metric: ExtractBenchMetric; params: ExtractBenchParams };

export interface LeafMatcher {
  /** The configured matcher's name (what the policy says: `default`, `text`, `judge`, ...). */
  name: MatcherName;
  source: Source;
  steps: Step[];
  /** Unsettled (to the judge) when no step accepts. */
  judge: boolean;
  /** The resolved matcher as canonical JSON: part of a judge pair's hash. */
  key: string;
  /**
   * A comparator declared in the schema with ExtractBench's semantics: its verdict alone decides
   * (no Python-equality step first, so it may be stricter than exact: `5` vs `5.0` under
   * `string_exact`).
   */
  declared?: boolean;
  /** A declared LLM comparator (`string_semantic`, `array_llm`) scored without a judge. */
  needsJudge?: boolean;
}

const DEFAULT_FUZZY_THRESHOLD = 0.9;

function tablesOf(info: PathInfo, names: string[] | undefined): SynonymTable[] {
  return (names ?? [])
    .map((n) => info.policy.tables.get(n))
    .filter((t): t is SynonymTable => t !== undefined);
}

/** The steps a spec runs (after the exact comparison every matcher starts with). */
function stepsOf(spec: MatchSpec, info: PathInfo, kind: LeafKind): { steps: Step[]; judge: boolean } {
  switch (spec.match) {
    case 'exact':
      return { steps: [], judge: false };
    case 'text': {
      const steps: Step[] = [
        { kind: 'nullish', as: 'text' },
        { kind: 'text', o: spec },
      ];
      if (spec.tables) steps.push({ kind: 'synonyms', tables: tablesOf(info, spec.tables) });
      return { steps, judge: false };
    }
    case 'number':
      return {
        steps: [
          { kind: 'nullish', as: 'number' },
          { kind: 'number', o: spec, needEvidence: false },
        ],
        judge: false,
      };
    case 'date':
      return {
        steps: [
          { kind: 'nullish', as: 'date' },
          { kind: 'date', o: spec },
        ],
        judge: false,
      };
    case 'enum':
      return {
        steps: [
          {
            kind: 'enum',
            values: spec.values ?? info.hints.enum ?? [],
            tables: tablesOf(info, spec.tables ?? hintedTables(info)),
          },
        ],
        judge: false,
      };
    case 'synonyms':
      return { steps: [{ kind: 'synonyms', tables: tablesOf(info, spec.tables) }], judge: false };
    case 'fuzzy':
      return {
        steps: [{ kind: 'fuzzy', threshold: spec.threshold ?? DEFAULT_FUZZY_THRESHOLD, o: spec }],
        judge: false,
      };
    case 'judge': {
      const first = stepsOf(spec.first ?? { match: 'text' }, info, kind);
      return { steps: first.steps, judge: info.policy.useJudge };
    }
    case 'default':
      return { steps: defaultSteps(info, kind), judge: false };
    default: {
      const { match, ...params } = spec;
      return { steps: [{ kind: 'extractbench', metric: match, params }], judge: false };
    }
  }
}

/**
 * The built-in default by leaf kind:
 * - number / integer: `number` (any written number; tolerance: float noise only);
 * - string with `format: date` or `date-time`: `date` (digit runs read as dates), then `text`;
 * - string with `enum`: `enum` (plus the tables the field's name hints at), then `text`;
 * - boolean: `text` (`true` = "True" = "true");
 * - other strings and nulls: `text`, then `number` when one side is written as a quantity
 *   (a currency, a percent, grouped thousands, or a JSON number), then `date` when both sides
 *   are written dates (never a bare digit run), then `synonyms` in the tables the field's name
 *   or description hints at (country, currency, state).
 * Every chain also takes the written forms of "no value" as null.
 */
function defaultSteps(info: PathInfo, kind: LeafKind): Step[] {
  const nullish: Step = { kind: 'nullish', as: 'text' };
  switch (kind) {
    case 'number':
    case 'integer':
      return [
        { ...nullish, as: 'number' },
        { kind: 'number', o: {}, needEvidence: false },
      ];
    case 'boolean':
      return [{ kind: 'text', o: {} }];
    case 'date':
      return [
        { ...nullish, as: 'date' },
        { kind: 'date', o: { digits: true } },
        { kind: 'text', o: {} },
      ];
    case 'enum':
      return [
        nullish,
        { kind: 'enum', values: info.hints.enum ?? [], tables: tablesOf(info, hintedTables(info)) },
        { kind: 'text', o: {} },
      ];
    default: {
      const steps: Step[] = [
        nullish,
        { kind: 'text', o: {} },
        { kind: 'number', o: {}, needEvidence: true },
        { kind: 'date', o: {} },
      ];
      const tables = tablesOf(info, hintedTables(info));
      if (tables.length > 0) steps.push({ kind: 'synonyms', tables });
      return steps;
    }
  }
}

/** The matcher for a leaf at `info` whose ground-truth value is `gold` (memoised per path and kind). */
export function matcherFor(info: PathInfo, gold: PyValue): LeafMatcher {
  const valueType = jsonTypeName(gold);
  const memo = info.matcherMemo.get(valueType) as LeafMatcher | undefined;
  if (memo) return memo;
  const kind = leafKind(info.hints, valueType);
  const { spec, source } = info.resolveMatch(kind);
  const { steps, judge } = stepsOf(spec, info, kind);
  // A declared LLM comparator keeps its name (string_semantic): with a judge it is asked, without
  // one it is marked "needs a judge", never scored as its first matcher.
  const llm = spec.match === 'judge' ? spec.metric : undefined;
  const name = (llm ??
    (spec.match === 'judge' && !judge ? (spec.first?.match ?? 'text') : spec.match)) as MatcherName;
  const m: LeafMatcher = { name, source, steps, judge, key: JSON.stringify([spec, kind]) };
  if ((EXTRACTBENCH_METRICS as readonly string[]).includes(spec.match)) m.declared = true;
  if (llm && !judge) m.needsJudge = true;
  info.matcherMemo.set(valueType, m);
  return m;
}

/**
 * What the default steps need of a string, computed once per distinct string: its normal form,
 * its number readings, its date readings (one Map look-up per string instead of one per step).
 */
interface Facts {
  nullish?: boolean;
  norm?: string;
  num?: ParsedNumber | null;
  date?: string[];
  dateDigits?: string[];
}
const facts = new Map<string, Facts>();
const FACTS_MAX = 200_000;

function factsOf(s: string): Facts {
  let f = facts.get(s);
  if (f === undefined) {
    f = {};
    if (s.length < 4096) {
      if (facts.size >= FACTS_MAX) facts.clear();
      facts.set(s, f);
    }
  }
  return f;
}

function isDefaultText(o: TextOptions): boolean {
  return (
    o.ignore_case === undefined &&
    o.ignore_punctuation === undefined &&
    o.ignore_articles === undefined &&
    o.ignore_accents === undefined
  );
}

// A leaf value `v` and, for a string, its facts `f` (looked up once per comparison).

function normOf(v: PyValue, f: Facts | undefined, o: TextOptions): string {
  if (f === undefined || !isDefaultText(o)) return normalizeText(scalarText(v), o);
  if (f.norm === undefined) f.norm = normalizeText(v as string);
  return f.norm;
}

function nullishOf(v: PyValue, f: Facts | undefined): boolean {
  if (f === undefined) return isNullish(v);
  return (f.nullish ??= isNullish(v));
}

function readingsOf(v: PyValue, f: Facts | undefined): ParsedNumber | null {
  if (f === undefined) return numberReadings(v, true);
  if (f.num === undefined) f.num = numberReadings(v, true);
  return f.num;
}

function datesOf(v: PyValue, f: Facts | undefined, o: DateOptions): string[] {
  if (f === undefined || o.order !== undefined) return parseDate(scalarText(v), o);
  if (o.digits) return (f.dateDigits ??= parseDate(v as string, o));
  return (f.date ??= parseDate(v as string, o));
}

function isScalarNumber(v: PyValue): boolean {
  return typeof v === 'number' || typeof v === 'bigint';
}

function runStep(step: Step, g: PyValue, gf: Facts | undefined, p: PyValue, pf: Facts | undefined): boolean {
  switch (step.kind) {
    case 'nullish':
      return nullishOf(g, gf) && nullishOf(p, pf);
    case 'text':
      if (g === null || p === null) return false;
      return normOf(g, gf, step.o) === normOf(p, pf, step.o);
    case 'number': {
      if (typeof g === 'boolean' || typeof p === 'boolean') return false;
      const a = readingsOf(g, gf);
      if (a === null) return false;
      const b = readingsOf(p, pf);
      if (b === null) return false;
      // In a text field a bare digit run is an id: compare as numbers only when one side is
      // written as a quantity or is a JSON number.
      if (step.needEvidence && !(a.formatted || b.formatted || isScalarNumber(g) || isScalarNumber(p)))
        return false;
      return numbersMatch(a, b, step.o);
    }
    case 'date': {
      if (typeof g === 'boolean' || typeof p === 'boolean' || g === null || p === null) return false;
      const a = datesOf(g, gf, step.o);
      if (a.length === 0) return false;
      return datesMatch(a, datesOf(p, pf, step.o));
    }
    case 'enum':
      return enumMatch(step, g, p);
    case 'synonyms': {
      if (typeof g !== 'string' || typeof p !== 'string') return false;
      return step.tables.some((t) => t.same(g, p));
    }
    case 'fuzzy':
      if (g === null || p === null) return false;
      return fuzzyRatio(scalarText(g), scalarText(p), step.o) >= step.threshold;
    case 'extractbench':
      return extractBenchPasses(step.metric, step.params, g, p);
  }
}

/** 1 - Levenshtein distance / longer length, on normalised text (1 for two empty strings). */
export function fuzzyRatio(a: string, b: string, o: TextOptions = {}): number {
  const x = normalizeText(a, o);
  const y = normalizeText(b, o);
  const longest = Math.max(x.length, y.length);
  if (longest === 0) return 1;
  return 1 - distance(x, y) / longest;
}

/** Both values name the same enum member (by normal form or by a table), or are equal text. */
function enumMatch(step: Extract<Step, { kind: 'enum' }>, g: PyValue, p: PyValue): boolean {
  if (g === null || p === null) return false;
  const gs = scalarText(g);
  const ps = scalarText(p);
  const members = (s: string) => {
    const out: number[] = [];
    step.values.forEach((v, i) => {
      if (tableKey(v) === tableKey(s) || step.tables.some((t) => t.same(v, s))) out.push(i);
    });
    return out;
  };
  const gm = members(gs);
  if (gm.length > 0) {
    const pm = members(ps);
    return gm.some((i) => pm.includes(i));
  }
  return tableKey(gs) === tableKey(ps) || step.tables.some((t) => t.same(gs, ps));
}

const EXACT: LeafOutcome = { verdict: 'match', by: 'exact', similarity: 1 };

/** Compares one ground-truth scalar with one predicted scalar. */
export function matchLeaf(m: LeafMatcher, g: PyValue, p: PyValue): LeafOutcome {
  if (m.declared) {
    const step = m.steps[0] as Extract<Step, { kind: 'extractbench' }>;
    return extractBenchPasses(step.metric, step.params, g, p)
      ? { verdict: 'match', by: step.metric, similarity: 1 }
      : { verdict: 'no_match', by: null, similarity: tokenF1(g, p) };
  }
  if (pyEquals(g, p)) return EXACT;
  if (m.needsJudge) return { verdict: 'needs_judge', by: null, similarity: tokenF1(g, p) };
  if (m.steps.length === 0)
    return { verdict: m.judge ? 'unsettled' : 'no_match', by: null, similarity: tokenF1(g, p) };
  const gf = typeof g === 'string' ? factsOf(g) : undefined;
  const pf = typeof p === 'string' ? factsOf(p) : undefined;
  for (const step of m.steps) {
    if (runStep(step, g, gf, p, pf))
      return { verdict: 'match', by: step.kind === 'nullish' ? step.as : step.kind, similarity: 1 };
  }
  return { verdict: m.judge ? 'unsettled' : 'no_match', by: null, similarity: tokenF1(g, p) };
}
