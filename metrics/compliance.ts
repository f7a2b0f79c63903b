/**
 * The schema compliance track (issue 11): per record, SchemaBench's fine-grained validation
 * (every violation, partial validity); over records, JSONSchemaBench's coverage, compliance and
 * efficiency, per dataset (`metadata.source_category`) and overall.
 *
 * - `complianceOfRecord`: one schema record's answer -> a plain JSON object (the row's
 *   `compliance` block): does the schema compile, was it refused, does the answer parse, is it
 *   valid, every violation, the constraints it meets, partial validity.
 * - `aggregateCompliance`: rows -> declared coverage, empirical coverage, compliance (bootstrap
 *   95% intervals), partial validity, the commonest violation keywords, and the medians and
 *   90th percentiles of time to first token, time per output token and total time.
 *
 * No I/O: the validator reads a remote document only through a resolver the caller passes.
 */
import { type AnswerCheck, checkAnswer, type WalkLimits } from '../src/core/constraints.ts';
import {
  type CompileResult,
  compileSchema,
  type Dialect,
  declaredDialect,
  type Protocol,
  type ValidatorOptions,
  type Violation,
} from '../src/core/validator.ts';
import { bootstrapMeanInterval } from './summary.ts';

// -- One record -----------------------------------------------------------------------------

/** The answer as the scorer read it: a parsed JSON value, or why it did not parse. */
export type ParsedAnswer = { parsed: true; value: unknown } | { parsed: false; reason: string };

/** Strict JSON (surrounding whitespace allowed); `fences` also accepts one ```json block. */
export function parseAnswerText(
  text: string | null | undefined,
  opts: { fences?: boolean } = {},
): ParsedAnswer {
  if (typeof text !== 'string') return { parsed: false, reason: 'no answer' };
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch (e) {
    if (opts.fences) {
      const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
      if (m) {
        try {
          return { parsed: true, value: JSON.parse(m[1]) };
        } catch {
          // fall through to the first error
        }
      }
    }
    return { parsed: false, reason: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * The answer of a response row (plain values): `output.raw_response` when kept, else
 * `output.candidate_response` (the runner writes the raw text there when it did not parse).
 */
export function answerFromRow(
  raw: unknown,
  candidate: unknown,
  opts: { fences?: boolean } = {},
): ParsedAnswer {
  if (typeof raw === 'string') return parseAnswerText(raw, opts);
  // Without the raw text, a string candidate is the text that did not parse (the reference's
  // files and ours write it so).
  if (typeof candidate === 'string') return parseAnswerText(candidate, opts);
  if (candidate === undefined || candidate === null) return { parsed: false, reason: 'no answer' };
  return { parsed: true, value: candidate };
}

/**
 * Compiled schemas by schema text (records share schemas; every model's file repeats them), least
 * recently used out first, at most `max` schemas and `maxChars` characters of schema text (a
 * compiled schema holds about 8 times its text in memory).
 */
export class SchemaCache {
  private readonly map = new Map<string, CompileResult>();
  private chars = 0;
  constructor(
    private readonly max = 256,
    private readonly maxChars = Number.POSITIVE_INFINITY,
  ) {}
  get(key: string, schema: () => unknown, opts: ValidatorOptions = {}): CompileResult {
    let c = this.map.get(key);
    if (c) {
      // Most recently used last.
      this.map.delete(key);
      this.map.set(key, c);
      return c;
    }
    c = compileSchema(schema(), opts);
    while (this.map.size > 0 && (this.map.size >= this.max || this.chars + key.length > this.maxChars)) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
      this.chars -= oldest.length;
    }
    this.map.set(key, c);
    this.chars += key.length;
    return c;
  }
}

export interface RecordComplianceOptions extends ValidatorOptions {
  /** Violations listed per record (all are counted); default 100. */
  maxViolations?: number;
  limits?: WalkLimits;
}

/** The `compliance` block of a schema record's row (plain JSON). */
export interface RecordCompliance {
  /** How the schema was read (docs/compliance-protocols.md). */
  protocol: Protocol;
  dialect: Dialect;
  /** null: not known (the record ran out of its time or memory budget before it was settled). */
  schema_compiles: boolean | null;
  /** Why the schema does not compile in our validator. */
  schema_error?: string;
  /** The provider refused the schema in constrained mode (not declared). */
  schema_rejected: boolean;
  parses: boolean;
  parse_error?: string;
  /** Parses, and valid under the schema (ajv, all drafts by `$schema`). */
  valid: boolean;
  /**
   * The validator whose verdict `valid` is: `ajv`, or `hyperjump` for the Draft 2020-12 schemas
   * routed to it (docs/compliance-protocols.md); null when no validator gave one (the schema did
   * not compile or was refused, the answer did not parse, the record ran out of its budget).
   */
  validator: 'ajv' | 'hyperjump' | null;
  /** Why ajv validated a schema routed to hyperjump (hyperjump could not compile it, for a reason that is not time). */
  route_fallback?: string;
  violations: Violation[];
  violation_count: number;
  /** Violations by keyword (all of them, not only those listed). */
  violation_keywords: Record<string, number>;
  /** Constraints met / applicable (see src/core/constraints.ts); null when not measured. */
  constraints: {
    applicable: number;
    satisfied: number;
    truncated: boolean;
    atomic: boolean;
    disagrees: boolean;
  } | null;
  /** satisfied / applicable, 0 for an answer that does not parse; null when refused or uncompilable. */
  partial_validity: number | null;
  /** Validation itself failed (counted invalid). */
  validation_error?: string;
}

export interface SchemaRecordInput {
  /** The record's JSON schema (plain JS). */
  schema: unknown;
  answer: ParsedAnswer;
  /** `eval_info.schema_rejected`: the provider refused the schema. */
  schemaRejected?: boolean;
  /** The schema already compiled (records share schemas): skips compiling again. */
  compiled?: CompileResult;
}

/**
 * Partial validity from a check: satisfied / applicable, held to ajv's verdict. A valid answer
 * scores 1 even where the walk counted a violation; an invalid one where the walk found none
 * counts one more applicable, violated constraint (the schema as a whole). So the score is 1
 * exactly when the answer is valid.
 */
export function partialValidity(check: Pick<AnswerCheck, 'valid' | 'tally'>): {
  score: number;
  disagrees: boolean;
} {
  const t = check.tally;
  if (!t) return { score: check.valid ? 1 : 0, disagrees: false };
  const allMet = t.satisfied === t.applicable;
  if (check.valid) return { score: 1, disagrees: !allMet };
  if (allMet) return { score: t.satisfied / (t.applicable + 1), disagrees: t.applicable > 0 };
  return { score: t.satisfied / t.applicable, disagrees: false };
}

function keywordCounts(violations: Violation[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of violations) out[v.keyword] = (out[v.keyword] ?? 0) + 1;
  return out;
}

/** A record's compliance block before (or without) validation: not valid, nothing counted. */
export function unvalidated(
  dialect: RecordCompliance['dialect'],
  compiles: boolean | null,
  rejected: boolean,
  parses: boolean,
  protocol: Protocol = 'dialect',
): RecordCompliance {
  return {
    protocol,
    dialect,
    schema_compiles: compiles,
    schema_rejected: rejected,
    parses,
    valid: false,
    validator: null,
    violations: [],
    violation_count: 0,
    violation_keywords: {},
    constraints: null,
    partial_validity: null,
  };
}

/** One schema record's compliance (see `RecordCompliance`). Never throws. */
export function complianceOfRecord(
  input: SchemaRecordInput,
  opts: RecordComplianceOptions = {},
): RecordCompliance {
  const c = input.compiled ?? compileSchema(input.schema, opts);
  const dialect = c.ok ? c.compiled.dialect : c.dialect;
  const protocol = c.ok ? c.compiled.protocol : (c.protocol ?? opts.protocol ?? 'dialect');
  const rejected = input.schemaRejected === true;
  const out = unvalidated(dialect, c.ok, rejected, input.answer.parsed, protocol);
  if (!c.ok) out.schema_error = c.reason;
  if (!input.answer.parsed) out.parse_error = input.answer.reason;
  if (rejected || !c.ok) return out;
  if (!input.answer.parsed) {
    out.partial_validity = 0;
    return out;
  }
  // All violations are counted by keyword; only `maxViolations` are listed.
  const all = checkAnswer(c.compiled, input.answer.value, {
    maxViolations: Number.MAX_SAFE_INTEGER,
    limits: opts.limits,
  });
  const max = opts.maxViolations ?? 100;
  out.valid = all.valid;
  out.validator = c.compiled.validator;
  if (c.compiled.routeFallback !== undefined) out.route_fallback = c.compiled.routeFallback;
  out.violations = all.violations.slice(0, max);
  out.violation_count = all.violation_count;
  out.violation_keywords = keywordCounts(all.violations);
  if (all.error) out.validation_error = all.error;
  const pv = partialValidity(all);
  out.partial_validity = pv.score;
  if (all.tally) {
    out.constraints = {
      applicable: all.tally.applicable,
      satisfied: all.tally.satisfied,
      truncated: all.tally.truncated,
      atomic: all.tally.atomic,
      disagrees: pv.disagrees,
    };
  }
  return out;
}

/** The dialect a record's schema would be validated under (for tables, without compiling). */
export function recordDialect(schema: unknown, opts: ValidatorOptions = {}): Dialect {
  if (opts.protocol === 'jsonschemabench') return '2020-12';
  return opts.dialect ?? declaredDialect(schema, opts.defaultDialect);
}

// -- Many records -----------------------------------------------------------------------------

/** What the aggregate needs of one scored schema record. */
export interface ComplianceRow {
  /** `metadata.source_category` (the JSONSchemaBench dataset). */
  dataset: string;
  /** Not `schema_rejected`. */
  declared: boolean;
  /** The answer parses and validates. */
  valid: boolean;
  /** null when not measured (refused, or the schema does not compile). */
  partial_validity?: number | null;
  violation_keywords?: Record<string, number>;
  /** `eval_info` timings, when recorded. */
  ttft_ms?: number | null;
  tpot_ms?: number | null;
  latency_ms?: number | null;
}

export interface RateWithInterval {
  /** Records counted in the numerator / the denominator. */
  count: number;
  of: number;
  /** count / of (0 when `of` is 0). */
  rate: number;
  /** Percentile bootstrap 95% interval; null without resamples. */
  ci95: [number, number] | null;
}

export interface Spread {
  /** Records with this timing. */
  n: number;
  median: number | null;
  p90: number | null;
}

export interface ComplianceGroup {
  n: number;
  /** The provider accepted the schema: declared / all. */
  declared_coverage: RateWithInterval;
  /** The answer parses and validates: valid / all (a refused schema is not covered). */
  empirical_coverage: RateWithInterval;
  /** valid / declared. */
  compliance: RateWithInterval;
  /** Mean partial validity over the records where it was measured; null when none. */
  partial_validity: { n: number; mean: number | null };
  /** Records with at least one violation of each keyword, commonest first. */
  violation_keywords: { keyword: string; records: number }[];
  efficiency: { ttft_ms: Spread; tpot_ms: Spread; latency_ms: Spread };
}

export interface ComplianceSummary {
  /** By dataset name, in code-point order of the names. */
  datasets: Record<string, ComplianceGroup>;
  overall: ComplianceGroup;
  bootstrap: { samples: number; seed: number };
}

export interface AggregateOptions {
  /** Bootstrap resamples (default 1,000; 0 for no intervals). */
  bootstrapSamples?: number;
  seed?: number;
}

/**
 * The q-quantile (0..1) of `xs` by linear interpolation between order statistics (numpy's
 * default); null for no values.
 */
export function quantile(xs: number[], q: number): number | null {
  return quantileOfSorted(
    [...xs].sort((a, b) => a - b),
    q,
  );
}

/** `quantile` of values already sorted ascending (one sort for several quantiles). */
export function quantileOfSorted(s: ArrayLike<number>, q: number): number | null {
  if (s.length === 0) return null;
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo] + (s[hi] - s[lo]) * (h - lo);
}

function spread(xs: (number | null | undefined)[]): Spread {
  const vals = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return { n: vals.length, median: quantile(vals, 0.5), p90: quantile(vals, 0.9) };
}

function rate(flags: boolean[], samples: number, seed: number): RateWithInterval {
  const col = Float64Array.from(flags, (b) => (b ? 1 : 0));
  const count = flags.filter(Boolean).length;
  const of = flags.length;
  const iv = samples > 0 && of > 0 ? bootstrapMeanInterval(col, samples, seed) : null;
  return { count, of, rate: of === 0 ? 0 : count / of, ci95: iv ? [iv.low, iv.high] : null };
}

function group(rows: ComplianceRow[], samples: number, seed: number): ComplianceGroup {
  const declared = rows.filter((r) => r.declared);
  const pvs = rows
    .map((r) => r.partial_validity)
    .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const kw = new Map<string, number>();
  for (const r of rows)
    for (const k of Object.keys(r.violation_keywords ?? {})) kw.set(k, (kw.get(k) ?? 0) + 1);
  return {
    n: rows.length,
    declared_coverage: rate(
      rows.map((r) => r.declared),
      samples,
      seed,
    ),
    empirical_coverage: rate(
      rows.map((r) => r.declared && r.valid),
      samples,
      seed + 1,
    ),
    compliance: rate(
      declared.map((r) => r.valid),
      samples,
      seed + 2,
    ),
    partial_validity: {
      n: pvs.length,
      mean: pvs.length ? pvs.reduce((a, b) => a + b, 0) / pvs.length : null,
    },
    violation_keywords: [...kw]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([keyword, records]) => ({ keyword, records })),
    efficiency: {
      ttft_ms: spread(declared.map((r) => r.ttft_ms)),
      tpot_ms: spread(declared.map((r) => r.tpot_ms)),
      latency_ms: spread(declared.map((r) => r.latency_ms)),
    },
  };
}

/**
 * Coverage, compliance and efficiency per dataset and overall. Each rate's interval resamples the
 * records of its own denominator (all records for the coverages, the declared ones for
 * compliance); seeds are `seed`, `seed + 1`, `seed + 2` for the three rates, per group.
 * Timings summarise the declared records that carry them.
 */
export function aggregateCompliance(rows: ComplianceRow[], opts: AggregateOptions = {}): ComplianceSummary {
  const samples = Math.max(0, opts.bootstrapSamples ?? 1000);
  const seed = opts.seed ?? 42;
  const byDataset = new Map<string, ComplianceRow[]>();
  for (const r of rows) {
    let l = byDataset.get(r.dataset);
    if (!l) {
      l = [];
      byDataset.set(r.dataset, l);
    }
    l.push(r);
  }
  // No prototype: a dataset named `__proto__` or `constructor` is a key like any other.
  const datasets: Record<string, ComplianceGroup> = Object.create(null);
  for (const name of [...byDataset.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    datasets[name] = group(byDataset.get(name)!, samples, seed);
  }
  return { datasets, overall: group(rows, samples, seed), bootstrap: { samples, seed } };
}

/** The aggregate's input from a record's compliance block and its `eval_info`. */
export function complianceRow(
  dataset: string,
  c: Pick<RecordCompliance, 'schema_rejected' | 'valid' | 'partial_validity' | 'violation_keywords'>,
  evalInfo: { ttft_ms?: unknown; tpot_ms?: unknown; latency_ms?: unknown } = {},
): ComplianceRow {
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  return {
    dataset,
    declared: !c.schema_rejected,
    valid: !c.schema_rejected && c.valid,
    partial_validity: c.partial_validity,
    violation_keywords: c.violation_keywords,
    ttft_ms: num(evalInfo.ttft_ms),
    tpot_ms: num(evalInfo.tpot_ms),
    latency_ms: num(evalInfo.latency_ms),
  };
}
