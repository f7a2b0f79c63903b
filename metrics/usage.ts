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
