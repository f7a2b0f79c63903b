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
import type {
  LenientBlockOut,
  LenientSummaryOut,
  LossOut,
  MetricOut,
} from '../src/core/formats/eval-summary.ts';
import { compareCodePoints } from '../src/core/pyjson.ts';
import type { BootstrapMethod } from './poisson-bootstrap.ts';
import { bootstrapIntervals, Column, type Intervals, mean } from './summary.ts';

/** The side file of `sob score --match` beside `eval_records.jsonl`: one line per row, same order. */
export const LENIENT_SIDE_FILE = 'lenient_records.jsonl';

/** Per-record lenient metrics, in summary order: [key, display name]. */
export const LENIENT_METRICS = [
  ['lenient_value_accuracy', 'Lenient Value Accuracy'],
  ['lenient_faithfulness', 'Lenient Faithfulness'],
  ['field_precision', 'Field Precision'],
  ['field_recall', 'Field Recall'],
  ['field_f1', 'Field F1'],
  /** Lenient minus exact Value Accuracy, per record: the part of the loss that is formatting. */
  ['value_accuracy_gap', 'Value Accuracy Gap'],
  /**
   * The lenient Value Accuracy the hardening gate holds at 0: values lenient matching accepts in
   * an answer that fails its schema (`"1,000"` for a number). Loss the gap cannot show, so the
   * formatting share is not understated unseen. Last, so the other metrics' intervals stay as
   * they were (each metric's draws come after the ones before it).
   */
  ['held_by_hardening', 'Lenient Value Accuracy Held by Hardening'],
] as const;

type LenientMetric = (typeof LENIENT_METRICS)[number][0];
/** Leaf tallies per record, summed per file. */
const LEAF_COUNTS = ['gold', 'accepted', 'missed', 'invented', 'pending', 'unscored'] as const;

/** Seed offsets of the lenient blocks' generators (see the header). */
const LENIENT_SEED_OFFSET = { overall: 100, overall_weighted: 101, no_judge: 102 } as const;

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
  /** Accepted leaves of the wrong JSON type (`"1,000"` for a number). */
  typeSlips?: number;
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
  /** Accepted leaves of the wrong JSON type, summed. */
  typeSlips?: number;
}

/** Collects one file's (one source's) lenient numbers, record by record. */
export class LenientAccumulator {
  private readonly columns = LENIENT_METRICS.map(() => new Column());
  private readonly noJudge = LENIENT_METRICS.map(() => new Column());
  private readonly weights = new Column();
  private readonly counts = LEAF_COUNTS.map(() => 0);
  private readonly matchers = new Map<string, number>();
  private withJudge = false;
  private typeSlips = 0;

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
    this.typeSlips += part.typeSlips ?? 0;
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
      typeSlips: this.typeSlips,
    };
  }
}

/** The lenient block's four bootstraps (one generator each), in `LENIENT_BOOTSTRAPS` order. */
export interface LenientIntervals {
  plain: Intervals;
  weighted: Intervals;
  /** With a judge: the same without its verdicts. */
  noJudgePlain?: Intervals;
  noJudgeWeighted?: Intervals;
}

/**
 * The bootstraps of a lenient block: which columns, weighted or not, and the seed offset of each
 * one's generator. `sob score` runs them for many files at once (`bootstrapIntervals`).
 */
export const LENIENT_BOOTSTRAPS = [
  ['plain', false, false, LENIENT_SEED_OFFSET.overall],
  ['weighted', false, true, LENIENT_SEED_OFFSET.overall_weighted],
  ['noJudgePlain', true, false, LENIENT_SEED_OFFSET.no_judge],
  ['noJudgeWeighted', true, true, LENIENT_SEED_OFFSET.no_judge + 1],
] as const satisfies readonly (readonly [keyof LenientIntervals, boolean, boolean, number])[];

/** The columns and weights of one of a block's bootstraps (null: the block has no such part). */
export function lenientBootstrapInput(
  d: LenientData,
  noJudge: boolean,
  weighted: boolean,
): { columns: Float64Array[]; weights: Float64Array | null } | null {
  const columns = noJudge ? d.noJudge : d.columns;
  return columns ? { columns, weights: weighted ? d.weights : null } : null;
}

/** Computes a block's intervals here (one file alone: the same numbers as many at once). */
function lenientIntervals(
  d: LenientData,
  samples: number,
  seed: number,
  method: BootstrapMethod,
): LenientIntervals {
  const out: Partial<LenientIntervals> = {};
  for (const [key, noJudge, weighted, offset] of LENIENT_BOOTSTRAPS) {
    const input = lenientBootstrapInput(d, noJudge, weighted);
    if (input) out[key] = bootstrapIntervals([input], seed + offset, samples, true, method)[0];
  }
  return out as LenientIntervals;
}

function block(
  columns: Float64Array[],
  weights: Float64Array,
  weighted: boolean,
  iv: Intervals,
): LenientBlockOut {
  const metrics: Record<string, MetricOut> = {};
  LENIENT_METRICS.forEach(([key, name], i) => {
    metrics[key] = {
      mean: mean(columns[i], weighted ? weights : null),
      ci95_low: iv.low[i],
      ci95_high: iv.high[i],
      metric_name: name,
    };
  });
  const out: LenientBlockOut = { n: BigInt(weights.length), metrics };
  if (weighted) out.weighting = 'schema_complexity';
  return out;
}

/**
 * Where the exact Value Accuracy's loss goes (weighted means): the formatting lenient matching
 * forgives (the gap), the accepted values the hardening gate holds (an answer that fails its
 * schema scores 0 under both), and the rest (wrong or missing values, the coverage gate). Shares
 * are of the exact loss; null when nothing is lost.
 */
export function lossBreakdown(d: LenientData): LossOut {
  const col = (k: LenientMetric) =>
    mean(d.columns[LENIENT_METRICS.findIndex(([key]) => key === k)], d.weights);
  const lenient = col('lenient_value_accuracy');
  const gap = col('value_accuracy_gap');
  const held = col('held_by_hardening');
  const loss = 1 - (lenient - gap);
  const share = (x: number) => (loss > 0 ? x / loss : null);
  return {
    weighting: 'schema_complexity',
    exact_loss: loss,
    formatting: gap,
    held_by_hardening: held,
    rest: loss - gap - held,
    formatting_share: share(gap),
    held_by_hardening_share: share(held),
    type_slip_leaves: BigInt(d.typeSlips ?? 0),
  };
}

/** The summary's `lenient` block (bigints are ints, numbers floats, as `buildSummary` writes). */
export function buildLenientSummary(
  d: LenientData,
  opts: { bootstrapSamples: number; seed: number; method?: BootstrapMethod },
  given?: LenientIntervals,
): LenientSummaryOut {
  const samples = Math.max(0, opts.bootstrapSamples);
  const iv = given ?? lenientIntervals(d, samples, opts.seed, opts.method ?? 'cpython');
  const out: LenientSummaryOut = {
    policy: d.policy,
    judge: d.judge,
    summary: {
      overall: block(d.columns, d.weights, false, iv.plain),
      overall_weighted: block(d.columns, d.weights, true, iv.weighted),
    },
  };
  if (d.noJudge && iv.noJudgePlain && iv.noJudgeWeighted) {
    out.without_judge = {
      overall: block(d.noJudge, d.weights, false, iv.noJudgePlain),
      overall_weighted: block(d.noJudge, d.weights, true, iv.noJudgeWeighted),
    };
  }
  out.loss = lossBreakdown(d);
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
