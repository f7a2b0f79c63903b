/**
 * Cost and speed beside accuracy: what a model's answers cost in tokens and money and how long
 * they took, from each response line's `eval_info` (docs/ci.md). Pure: the caller reads the lines.
 */
import { quantile } from './compliance.ts';

/** One answer's `eval_info` figures (null or absent: not recorded). */
export interface UsageRow {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost?: number | null;
  latency_ms?: number | null;
  ttft_ms?: number | null;
}

export interface Percentiles {
  /** Answers with this figure. */
  n: number;
  p50: number | null;
  p95: number | null;
}

export interface Usage {
  /** Answers read. */
  answers: number;
  /** Sums over the answers that recorded them (null when none did). */
  input_tokens: number | null;
  output_tokens: number | null;
  /** In the provider's currency (USD for the built-in price tables); null when no answer had a cost. */
  cost: number | null;
  latency_ms: Percentiles;
  ttft_ms: Percentiles;
  /**
   * The value track's units (docs/leaderboard.md "Cost per unit"), set by `unitCosts`: the input
   * mode the answers were asked in, the pages their records' documents show, the leaves answered
   * right, and the cost and input tokens per record, page and correct field (null: unknown).
   */
  input_mode?: string;
  pages?: number;
  correct_fields?: number | null;
  cost_per_record?: number | null;
  cost_per_page?: number | null;
  cost_per_correct_field?: number | null;
  input_tokens_per_record?: number | null;
  input_tokens_per_page?: number | null;
}

function finite(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function sum(xs: (number | null | undefined)[]): number | null {
  const vals = xs.filter(finite);
  return vals.length === 0 ? null : vals.reduce((a, b) => a + b, 0);
}

function percentiles(xs: (number | null | undefined)[]): Percentiles {
  const vals = xs.filter(finite);
  return { n: vals.length, p50: quantile(vals, 0.5), p95: quantile(vals, 0.95) };
}

/**
 * Totals and percentiles (linear interpolation between order statistics). A cached answer's
 * latency of 0 is no measurement of the model: leave such rows' latency out before calling.
 */
export function summarizeUsage(rows: UsageRow[]): Usage {
  return {
    answers: rows.length,
    input_tokens: sum(rows.map((r) => r.input_tokens)),
    output_tokens: sum(rows.map((r) => r.output_tokens)),
    cost: sum(rows.map((r) => r.cost)),
    latency_ms: percentiles(rows.map((r) => r.latency_ms)),
    ttft_ms: percentiles(rows.map((r) => r.ttft_ms)),
  };
}

/** `a / b`, null when either is unknown or `b` is 0. */
function per(a: number | null | undefined, b: number | null | undefined): number | null {
  return finite(a) && finite(b) && b > 0 ? a / b : null;
}

/**
 * The per-unit figures of a model's usage: cost and input tokens per answered record and per
 * page (the pages its records' documents show, `documentPages`), cost per leaf answered right
 * (`correctFields`, from fields.jsonl; undefined: not known). `mode`: the input mode(s) seen.
 */
export function unitCosts(
  u: Usage,
  units: { pages: number; mode?: string; correctFields?: number | null },
): Usage {
  const correct = units.correctFields ?? null;
  return {
    ...u,
    ...(units.mode !== undefined ? { input_mode: units.mode } : {}),
    pages: units.pages,
    correct_fields: correct,
    cost_per_record: per(u.cost, u.answers),
    cost_per_page: per(u.cost, units.pages),
    cost_per_correct_field: per(u.cost, correct),
    input_tokens_per_record: per(u.input_tokens, u.answers),
    input_tokens_per_page: per(u.input_tokens, units.pages),
  };
}
