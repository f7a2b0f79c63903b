/**
 * Cost and speed beside accuracy: what a model's answers cost in tokens and money and how long
 * they took, from each response line's `eval_info` (docs/ci.md). Pure: the caller reads the lines.
 */
import { quantileOfSorted } from './compliance.ts';
import { Column } from './summary.ts';

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

/**
 * Totals and percentiles (linear interpolation between order statistics). A cached answer's
 * latency of 0 is no measurement of the model: leave such rows' latency out before calling.
 */
export function summarizeUsage(rows: UsageRow[]): Usage {
  const acc = new UsageAccumulator();
  for (const r of rows) acc.add(r);
  return acc.result();
}

/**
 * `summarizeUsage` one answer at a time, holding per answer only its latency and time to first
 * token (8 bytes each, for the percentiles): a million answers are not a million objects. The
 * same figures as summing and sorting the rows (the sums in answer order, from 0).
 */
export class UsageAccumulator {
  private answers = 0;
  private readonly sums: [number, number, number] = [0, 0, 0];
  private readonly seen = [false, false, false];
  private readonly latency = new Column();
  private readonly ttft = new Column();

  add(r: UsageRow): void {
    this.answers++;
    const xs = [r.input_tokens, r.output_tokens, r.cost];
    for (let i = 0; i < 3; i++) {
      const v = xs[i];
      if (!finite(v)) continue;
      this.sums[i] += v;
      this.seen[i] = true;
    }
    if (finite(r.latency_ms)) this.latency.push(r.latency_ms);
    if (finite(r.ttft_ms)) this.ttft.push(r.ttft_ms);
  }

  result(): Usage {
    const total = (i: number) => (this.seen[i] ? this.sums[i] : null);
    return {
      answers: this.answers,
      input_tokens: total(0),
      output_tokens: total(1),
      cost: total(2),
      latency_ms: percentilesOf(this.latency.view()),
      ttft_ms: percentilesOf(this.ttft.view()),
    };
  }
}

/** p50 and p95 of the values (`quantile`'s interpolation, one sort for both). */
function percentilesOf(values: Float64Array): Percentiles {
  const s = values.slice().sort();
  return { n: s.length, p50: quantileOfSorted(s, 0.5), p95: quantileOfSorted(s, 0.95) };
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
