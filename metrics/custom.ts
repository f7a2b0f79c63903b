/**
 * Scorers of your own (`--scorer ./my-scorer.mjs`, docs/metrics.md "Scorers of your own"): what
 * a scorer may return, the columns its numbers make, and their summary block, with the same
 * percentile bootstrap as the seven metrics (plain and schema-complexity weighted). Pure: the
 * modules are loaded and run in src/scoring/custom-scorers.ts.
 */
import type { MetricOut } from '../src/core/formats/eval-summary.ts';
import type { BootstrapMethod } from './poisson-bootstrap.ts';
import { bootstrapIntervals, Column, type CustomData, mean } from './summary.ts';

/** Names a scorer may not take: our own metrics' (a column must say which metric it is). */
const RESERVED = new Set([
  'overall',
  'overall_raw',
  'coverage',
  'value_accuracy',
  'faithfulness',
  'json_pass',
  'path_recall',
  'structure_coverage',
  'type_safety',
  'perfect',
  'n',
  'model',
  'display_name',
  'rank',
  'lenient_value_accuracy',
  'lenient_faithfulness',
  'field_f1',
  'value_accuracy_gap',
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * A scorer's result checked: an object of named numbers in [0, 1]. Throws an Error saying what
 * is wrong (the caller names the scorer and the record).
 */
export function checkCustomScores(value: unknown): Record<string, number> {
  if (value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function')
    throw new Error('returned a Promise: a scorer returns its object of numbers, not a Promise');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`returned ${describe(value)}, not an object of named numbers in [0, 1]`);
  const out: Record<string, number> = {};
  const keys = Object.keys(value);
  if (keys.length === 0) throw new Error('returned an empty object: name at least one number');
  for (const k of keys) {
    if (!NAME.test(k)) throw new Error(`"${k}" is not a name (letters, digits and _, not first a digit)`);
    if (RESERVED.has(k)) throw new Error(`"${k}" is one of our own metrics' names: name yours otherwise`);
    const v = (value as Record<string, unknown>)[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
      throw new Error(`${k} is ${describe(v)}, not a number in [0, 1]`);
    out[k] = v;
  }
  return out;
}

function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `the string ${JSON.stringify(v.slice(0, 40))}`;
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v;
}

/** Collects the custom columns, record by record, beside the summary's own. */
export class CustomAccumulator {
  private readonly cols = new Map<string, Column>();
  private n = 0;

  add(values: Record<string, number> | undefined): void {
    if (values)
      for (const k of Object.keys(values))
        if (!this.cols.has(k)) {
          const c = new Column();
          for (let i = 0; i < this.n; i++) c.push(0);
          this.cols.set(k, c);
        }
    for (const [k, c] of this.cols) c.push(values?.[k] ?? 0);
    this.n++;
  }

  /** The columns, or undefined when no record had a custom score. */
  data(): CustomData | undefined {
    if (this.cols.size === 0) return undefined;
    const names = [...this.cols.keys()];
    return { names, columns: names.map((k) => this.cols.get(k)!.view().slice()) };
  }
}

/** A summary's `custom_scores` block, as written (numbers are floats, n an int). */
export interface CustomBlockOut {
  scorers: string[];
  overall: { n: bigint; metrics: Record<string, MetricOut> };
  overall_weighted: { n: bigint; metrics: Record<string, MetricOut> };
}

/**
 * The `custom_scores` block: each name's plain and weighted mean with its 95% percentile
 * bootstrap interval, drawn as the summary's own metrics are (the same seeds, samples and
 * resampling method; the custom columns are resampled on their own, so the seven metrics' bits
 * do not move).
 */
export function customBlock(
  data: CustomData,
  weights: Float64Array,
  scorers: string[],
  opts: { seed: number; samples: number; method: BootstrapMethod },
): CustomBlockOut {
  const block = (weighted: boolean) => {
    const w = weighted ? weights : null;
    const [iv] = bootstrapIntervals(
      [{ columns: data.columns, weights: w }],
      opts.seed + (weighted ? 1 : 0),
      opts.samples,
      true,
      opts.method,
    );
    const metrics: Record<string, MetricOut> = {};
    data.names.forEach((name, i) => {
      metrics[name] = {
        mean: mean(data.columns[i], w),
        ci95_low: iv.low[i],
        ci95_high: iv.high[i],
        metric_name: name,
      };
    });
    return { n: BigInt(weights.length), metrics };
  };
  return { scorers, overall: block(false), overall_weighted: block(true) };
}
