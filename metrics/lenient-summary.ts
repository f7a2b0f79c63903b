/**
 * The lenient block of a per-file summary (`eval_summary.json` -> `lenient`): plain and
 * schema-complexity weighted means of the lenient metrics with percentile bootstrap intervals,
 * the leaf tallies and how many leaves each matcher accepted. Pure; records stream in through
 * `LenientAccumulator.add`, a few numbers each.
 *
 * Intervals come from generators of their own, never from the exact metrics' (whose streams,
 * `random.Random(seed)` and `seed + 1`, stay bit-identical to the reference's):
 * `random.Random(seed + 100)` for the plain block and `seed + 101` for the weighted one, drawn in
 * the order of `LENIENT_METRICS`; the "without judge" blocks use `seed + 102` and `seed + 103`.
 */
import { compareCodePoints } from '../src/core/pyjson.ts';
import { bootstrapIntervals, Column, type Interval } from './summary.ts';

/** Per-record lenient metrics, in summary order: [key, display name]. */
export const LENIENT_METRICS = [
  ['lenient_value_accuracy', 'Lenient Value Accuracy'],
  ['lenient_faithfulness', 'Lenient Faithfulness'],
  ['field_precision', 'Field Precision'],
  ['field_recall', 'Field Recall'],
  ['field_f1', 'Field F1'],
  /** Lenient minus exact Value Accuracy, per record: the part of the loss that is formatting. */
  ['value_accuracy_gap', 'Value Accuracy Gap'],
] as const;
export type LenientMetric = (typeof LENIENT_METRICS)[number][0];

/** Leaf tallies per record, summed per file. */
export const LEAF_COUNTS = ['gold', 'accepted', 'missed', 'invented', 'pending', 'unscored'] as const;
export type LeafCount = (typeof LEAF_COUNTS)[number];

/** Seed offsets of the lenient blocks' generators (see the header). */
export const LENIENT_SEED_OFFSET = { overall: 100, overall_weighted: 101, no_judge: 102 } as const;

/** One record's lenient numbers, as the scorer hands them over (structured-cloneable). */
export interface LenientPart {
  /** LENIENT_METRICS order. */
  values: number[];
  /** The same without the judge (only when a judge was used). */
  noJudge?: number[];
  /** LEAF_COUNTS order. */
  counts: number[];
  /** Leaves accepted per matcher (`exact`, `text`, `number`, ..., `judge`). */
  matchers: Record<string, number>;
}

/** What the lenient block is computed from (structured-cloneable, like `SummaryData`). */
export interface LenientData {
  policy: string;
  judge: string | null;
  columns: Float64Array[];
  noJudge: Float64Array[] | null;
  weights: Float64Array;
  counts: number[];
  matchers: Record<string, number>;
}

/** Collects one file's (one source's) lenient numbers, record by record. */
export class LenientAccumulator {
  private readonly columns = LENIENT_METRICS.map(() => new Column());
  private readonly noJudge = LENIENT_METRICS.map(() => new Column());
  private readonly weights = new Column();
  private readonly counts = LEAF_COUNTS.map(() => 0);
  private readonly matchers = new Map<string, number>();
  private withJudge = false;

  add(part: LenientPart, weight: number): void {
    part.values.forEach((v, i) => {
      this.columns[i].push(v);
    });
    const nj = part.noJudge ?? part.values;
    nj.forEach((v, i) => {
      this.noJudge[i].push(v);
    });
    if (part.noJudge) this.withJudge = true;
    this.weights.push(weight);
    part.counts.forEach((c, i) => {
      this.counts[i] += c;
    });
    for (const [k, n] of Object.entries(part.matchers)) this.matchers.set(k, (this.matchers.get(k) ?? 0) + n);
  }

  /** `policy` as the summary names it; `judge` the judge's provider id (null: none answered). */
  data(policy: string, judge: string | null): LenientData {
    const matchers: Record<string, number> = {};
    for (const k of [...this.matchers.keys()].sort(compareCodePoints)) matchers[k] = this.matchers.get(k)!;
    return {
      policy,
      judge,
      columns: this.columns.map((c) => c.view().slice()),
      noJudge: judge !== null || this.withJudge ? this.noJudge.map((c) => c.view().slice()) : null,
      weights: this.weights.view().slice(),
      counts: [...this.counts],
      matchers,
    };
  }
}

function block(
  columns: Float64Array[],
  weights: Float64Array,
  weighted: boolean,
  samples: number,
  seed: number,
): Record<string, unknown> {
  const intervals: Interval[] = bootstrapIntervals(columns, weighted ? weights : null, samples, seed);
  const metrics: Record<string, unknown> = {};
  LENIENT_METRICS.forEach(([key, name], i) => {
    metrics[key] = {
      mean: intervals[i].mean,
      ci95_low: intervals[i].low,
      ci95_high: intervals[i].high,
      metric_name: name,
    };
  });
  const out: Record<string, unknown> = { n: BigInt(weights.length), metrics };
  if (weighted) out.weighting = 'schema_complexity';
  return out;
}

function blocks(columns: Float64Array[], weights: Float64Array, samples: number, seed: number) {
  return {
    overall: block(columns, weights, false, samples, seed),
    overall_weighted: block(columns, weights, true, samples, seed + 1),
  };
}

/** The summary's `lenient` block (bigints are ints, numbers floats, as `buildSummary` writes). */
export function buildLenientSummary(
  d: LenientData,
  opts: { bootstrapSamples: number; seed: number },
): Record<string, unknown> {
  const samples = Math.max(0, opts.bootstrapSamples);
  const out: Record<string, unknown> = {
    policy: d.policy,
    judge: d.judge,
    summary: blocks(d.columns, d.weights, samples, opts.seed + LENIENT_SEED_OFFSET.overall),
  };
  if (d.noJudge) {
    out.without_judge = blocks(d.noJudge, d.weights, samples, opts.seed + LENIENT_SEED_OFFSET.no_judge);
  }
  const leaves: Record<string, bigint> = {};
  LEAF_COUNTS.forEach((k, i) => {
    leaves[k] = BigInt(d.counts[i]);
  });
  out.leaves = leaves;
  const matchers: Record<string, bigint> = {};
  for (const [k, n] of Object.entries(d.matchers)) matchers[k] = BigInt(n);
  out.matcher_counts = matchers;
  out.bootstrap = {
    samples: BigInt(samples),
    seeds: {
      overall: BigInt(opts.seed + LENIENT_SEED_OFFSET.overall),
      overall_weighted: BigInt(opts.seed + LENIENT_SEED_OFFSET.overall_weighted),
      ...(d.noJudge
        ? {
            without_judge: BigInt(opts.seed + LENIENT_SEED_OFFSET.no_judge),
            without_judge_weighted: BigInt(opts.seed + LENIENT_SEED_OFFSET.no_judge + 1),
          }
        : {}),
    },
  };
  return out;
}
