/**
 * Per-file summaries (SPEC.md "Per-file summary"): plain and weight-weighted means of the ten
 * metrics and five categories, with percentile bootstrap intervals that reproduce the
 * reference's `random.Random(seed)` stream bit for bit.
 *
 * Records stream in through `SummaryAccumulator.add`; only a few numbers per record are kept.
 */
import { compareCodePoints } from '../src/core/pyjson.ts';
import { PyRandom } from './pyrandom.ts';
import { DIFFICULTY_WEIGHTS, type RecordScore, WEIGHT_FIELD_PRIORITY } from './record.ts';

/** Summary metrics in the reference's order, with the accessor and display name of each. */
export const SUMMARY_METRICS = [
  ['json_parse_success', 'JSON Parse Success', (s: RecordScore) => s.jsonParse],
  ['json_root_structured', 'Structured JSON Root', (s: RecordScore) => s.rootStructured],
  ['schema_valid_input', 'Schema Valid Input', (s: RecordScore) => s.schemaValidInput],
  ['schema_compliance', 'JSON Pass Rate', (s: RecordScore) => s.jsonPass],
  ['leaf_value_em', 'Truth Score', (s: RecordScore) => s.valueAccuracy],
  ['value_token_f1', 'Faithfulness Score', (s: RecordScore) => s.faithfulness],
  ['hier_path_recall', 'Path Recall', (s: RecordScore) => s.pathRecall],
  ['path_set_f1', 'Structure Coverage', (s: RecordScore) => s.structureCoverage],
  ['type_precision', 'Type Safety', (s: RecordScore) => s.typeSafety],
  ['strict_json_em', 'Perfect Response Rate', (s: RecordScore) => s.perfect],
] as const;
export type MetricKey = (typeof SUMMARY_METRICS)[number][0];

export const CATEGORIES: [string, MetricKey[]][] = [
  ['Long Context Extraction', ['leaf_value_em', 'value_token_f1', 'hier_path_recall']],
  ['Complex Schema Handling', ['schema_compliance', 'path_set_f1', 'type_precision']],
  ['Multi-Context Linking', ['leaf_value_em', 'value_token_f1']],
  ['Output Contract Reliability', ['json_parse_success', 'schema_compliance', 'type_precision']],
  ['Strict Precision', ['strict_json_em']],
];

export interface SummaryOptions {
  bootstrapSamples: number;
  seed: number;
  topKErrors: number;
  /** error_analysis is written for the image modality only (as the reference does). */
  errorAnalysis: boolean;
}

export const DEFAULT_SUMMARY_OPTIONS: SummaryOptions = {
  bootstrapSamples: 1000,
  seed: 42,
  topKErrors: 20,
  errorAnalysis: false,
};

/** A growable column of numbers (one per record). */
export class Column {
  data = new Float64Array(256);
  length = 0;
  push(x: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = x;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Python's `Counter.update`: counts kept in first-seen order. */
function countInto(counts: Map<string, number>, xs: Iterable<string>): void {
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
}

/** `Counter.most_common(k)`: by count, ties in first-seen order. */
function mostCommon(counts: Map<string, number>, k: number): { path: string; count: bigint }[] {
  const items = [...counts.entries()];
  items.sort((a, b) => b[1] - a[1]); // stable sort keeps first-seen order on ties
  return items.slice(0, Math.max(0, k)).map(([path, count]) => ({ path, count: BigInt(count) }));
}

export interface DataQuality {
  json_parse_fail_count: number;
  json_non_structured_root_count: number;
  invalid_schema_input_count: number;
  unknown_difficulty_count: number;
  malformed_jsonl_line_count: number;
  /** Ours, only when non-zero: records whose scoring ran out of time or failed. */
  scoring_error_count?: number;
  /** strict profile: answers that parsed only after recovery (both parse rates can be read). */
  lenient_parse_count?: number;
}

export function emptyDataQuality(): DataQuality {
  return {
    json_parse_fail_count: 0,
    json_non_structured_root_count: 0,
    invalid_schema_input_count: 0,
    unknown_difficulty_count: 0,
    malformed_jsonl_line_count: 0,
  };
}

/**
 * Everything a summary is computed from: one column per metric, the weights, and counts. Plain
 * data (structured-cloneable), so a summary can be computed on another thread.
 */
export interface SummaryData {
  columns: Float64Array[];
  weights: Float64Array;
  modelIds: string[];
  missingGt: Map<string, number>;
  missingRequired: Map<string, number>;
  dataQuality: DataQuality;
}

/** Collects what the summary needs, record by record. */
export class SummaryAccumulator {
  readonly columns = SUMMARY_METRICS.map(() => new Column());
  readonly weights = new Column();
  readonly modelIds = new Set<string>();
  readonly missingGt = new Map<string, number>();
  readonly missingRequired = new Map<string, number>();
  readonly dataQuality = emptyDataQuality();

  add(s: RecordScore): void {
    SUMMARY_METRICS.forEach(([, , get], i) => {
      this.columns[i].push(get(s));
    });
    this.weights.push(s.weight);
    this.modelIds.add(typeof s.modelId === 'string' ? s.modelId : String(s.modelId));
    countInto(this.missingGt, s.missingGtPaths);
    countInto(this.missingRequired, s.missingRequiredPaths);
    const dq = this.dataQuality;
    if (s.jsonParse === 0) dq.json_parse_fail_count++;
    if (s.rootStructured === 0) dq.json_non_structured_root_count++;
    if (s.schemaValidInput === 0) dq.invalid_schema_input_count++;
    if (!s.knownDifficulty) dq.unknown_difficulty_count++;
    if (s.explanation.scoring_error) dq.scoring_error_count = (dq.scoring_error_count ?? 0) + 1;
    if (s.lenientParse !== undefined) dq.lenient_parse_count = (dq.lenient_parse_count ?? 0) + s.lenientParse;
  }

  get n(): number {
    return this.weights.length;
  }

  data(): SummaryData {
    return {
      columns: this.columns.map((c) => c.view().slice()),
      weights: this.weights.view().slice(),
      modelIds: [...this.modelIds],
      missingGt: this.missingGt,
      missingRequired: this.missingRequired,
      dataQuality: { ...this.dataQuality },
    };
  }
}

// -- Bootstrap ---------------------------------------------------------------------------------

const PASSES = SUMMARY_METRICS.length + CATEGORIES.length;
/** Up to 64 MB of Uint16 indices per seed: every n up to ~2,100 at 1,000 samples. */
const INDEX_CACHE_MAX_ENTRIES = 32_000_000;
const indexCache = new Map<string, (Uint16Array | Uint32Array)[]>();

/**
 * The resample indices for every pass of one summary. They depend only on (seed, n, samples),
 * so scoring many models on one benchmark draws them once. Null when too large to keep.
 */
function cachedIndices(seed: number, n: number, samples: number): (Uint16Array | Uint32Array)[] | null {
  if (PASSES * samples * n > INDEX_CACHE_MAX_ENTRIES) return null;
  const key = `${seed}:${n}:${samples}`;
  const hit = indexCache.get(key);
  if (hit) return hit;
  const rng = new PyRandom(seed);
  const passes: (Uint16Array | Uint32Array)[] = [];
  for (let p = 0; p < PASSES; p++) {
    const arr = n <= 0xffff ? new Uint16Array(samples * n) : new Uint32Array(samples * n);
    rng.fillRandrange(n, arr);
    passes.push(arr);
  }
  if (indexCache.size >= 2) indexCache.delete(indexCache.keys().next().value as string);
  indexCache.set(key, passes);
  return passes;
}

function percentileBounds(sorted: Float64Array): [number, number] {
  const len = sorted.length;
  if (len === 0) return [0, 0];
  const lo = Math.max(0, Math.floor(0.025 * (len - 1)));
  const hi = Math.min(len - 1, Math.ceil(0.975 * (len - 1)));
  return [sorted[lo], sorted[hi]];
}

function mean(values: Float64Array, weights: Float64Array | null): number {
  const n = values.length;
  if (n === 0) return 0;
  if (!weights) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[i];
    return s / n;
  }
  let tw = 0;
  for (let i = 0; i < n; i++) tw += weights[i];
  if (tw === 0) return 0;
  let s = 0;
  for (let i = 0; i < n; i++) s += values[i] * weights[i];
  return s / tw;
}

/**
 * One bootstrap pass: `samples` resamples of n rows, each estimate the (weighted) mean, then
 * the 2.5% / 97.5% order statistics. `draw` supplies the indices of resample s.
 */
function bootstrapPass(
  values: Float64Array,
  weights: Float64Array | null,
  samples: number,
  indicesOf: (s: number, out: Uint16Array | Uint32Array) => Uint16Array | Uint32Array,
  scratch: Uint16Array | Uint32Array,
): [number, number] {
  const n = values.length;
  if (n === 0) return [0, 0];
  const est = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    const idx = indicesOf(s, scratch);
    let sum = 0;
    if (weights) {
      let tw = 0;
      for (let i = 0; i < n; i++) tw += weights[idx[i]];
      for (let i = 0; i < n; i++) {
        const j = idx[i];
        sum += values[j] * weights[j];
      }
      est[s] = tw === 0 ? 0 : sum / tw;
    } else {
      for (let i = 0; i < n; i++) sum += values[idx[i]];
      est[s] = sum / n;
    }
  }
  est.sort();
  return percentileBounds(est);
}

export interface Interval {
  mean: number;
  low: number;
  high: number;
}

function summarize(
  acc: SummaryData,
  opts: SummaryOptions,
  weighted: boolean,
): { metrics: Interval[]; categories: Interval[] } {
  const n = acc.weights.length;
  const seed = opts.seed + (weighted ? 1 : 0);
  const samples = Math.max(0, opts.bootstrapSamples);
  const weights = weighted ? acc.weights : null;
  const cached = n > 0 && samples > 0 ? cachedIndices(seed, n, samples) : null;
  const rng = cached ? null : new PyRandom(seed);
  const scratch = n <= 0xffff ? new Uint16Array(n) : new Uint32Array(n);
  let pass = 0;
  const runPass = (values: Float64Array): [number, number] => {
    const p = pass++;
    const indicesOf = cached
      ? (s: number) => cached[p].subarray(s * n, (s + 1) * n)
      : (_s: number, out: Uint16Array | Uint32Array) => {
          rng!.fillRandrange(n, out);
          return out;
        };
    return bootstrapPass(values, weights, samples, indicesOf, scratch);
  };

  const metrics = acc.columns.map((values) => {
    const [low, high] = runPass(values);
    return { mean: mean(values, weights), low, high };
  });
  const keyIndex = new Map<string, number>(SUMMARY_METRICS.map(([k], i) => [k, i]));
  const categories = CATEGORIES.map(([, components]) => {
    const cols = components.map((k) => acc.columns[keyIndex.get(k)!]);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (const c of cols) s += c[i];
      values[i] = s / cols.length;
    }
    const [low, high] = runPass(values);
    return { mean: mean(values, weights), low, high };
  });
  return { metrics, categories };
}

function summaryBlock(acc: SummaryData, opts: SummaryOptions, weighted: boolean): Record<string, unknown> {
  const { metrics, categories } = summarize(acc, opts, weighted);
  const metricsOut: Record<string, unknown> = {};
  SUMMARY_METRICS.forEach(([key, name], i) => {
    metricsOut[key] = {
      mean: metrics[i].mean,
      ci95_low: metrics[i].low,
      ci95_high: metrics[i].high,
      metric_name: name,
    };
  });
  const catOut: Record<string, unknown> = {};
  CATEGORIES.forEach(([name, components], i) => {
    catOut[name] = {
      mean: categories[i].mean,
      ci95_low: categories[i].low,
      ci95_high: categories[i].high,
      category_name: name,
      components,
    };
  });
  const block: Record<string, unknown> = {
    n: BigInt(acc.weights.length),
    metrics: metricsOut,
    category_scores: catOut,
  };
  if (weighted) {
    block.weighting = 'schema_complexity';
    block.weight_field_priority = [...WEIGHT_FIELD_PRIORITY];
    block.difficulty_weights = { ...DIFFICULTY_WEIGHTS };
  }
  return block;
}

function intCounts(dq: DataQuality): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of Object.entries(dq)) if (v !== undefined) out[k] = BigInt(v);
  return out;
}

/** The reference's `eval_summary.json` payload (bigints are ints, numbers floats). */
export function buildSummary(
  acc: SummaryData,
  responseFile: string,
  opts: SummaryOptions = DEFAULT_SUMMARY_OPTIONS,
): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    response_file: responseFile,
    num_records: BigInt(acc.weights.length),
    model_ids: [...acc.modelIds].sort(compareCodePoints),
    data_quality: intCounts(acc.dataQuality),
    summary: {
      overall: summaryBlock(acc, opts, false),
      overall_weighted: summaryBlock(acc, opts, true),
    },
  };
  if (opts.errorAnalysis) {
    const ea: Record<string, unknown> = {};
    if (acc.missingGt.size > 0) ea.top_missing_gt_paths = mostCommon(acc.missingGt, opts.topKErrors);
    if (acc.missingRequired.size > 0)
      ea.top_missing_required_paths = mostCommon(acc.missingRequired, opts.topKErrors);
    if (Object.keys(ea).length > 0) payload.error_analysis = ea;
  }
  return payload;
}

/**
 * The percentile bootstrap 95% interval of a plain mean, with the summaries' resampling
 * (`random.Random(seed)`, `randrange(n)` draws) and order statistics; for other tracks'
 * per-record columns (the compliance track's coverage and compliance).
 */
export function bootstrapMeanInterval(values: Float64Array, samples: number, seed: number): Interval {
  const n = values.length;
  const m = mean(values, null);
  if (n === 0 || samples <= 0) return { mean: m, low: m, high: m };
  const rng = new PyRandom(seed);
  const scratch = n <= 0xffff ? new Uint16Array(n) : new Uint32Array(n);
  const [low, high] = bootstrapPass(
    values,
    null,
    samples,
    (_s, out) => {
      rng.fillRandrange(n, out);
      return out;
    },
    scratch,
  );
  return { mean: m, low, high };
}

/**
 * Percentile bootstrap 95% intervals of several columns' (weighted) means from one generator of
 * their own, `random.Random(seed)`, drawn column after column in the order given (as the summary
 * draws its metrics); for blocks beside the reference's (the lenient metrics), so its streams
 * stay untouched.
 */
export function bootstrapIntervals(
  columns: Float64Array[],
  weights: Float64Array | null,
  samples: number,
  seed: number,
): Interval[] {
  const n = columns[0]?.length ?? 0;
  const cached = n > 0 && samples > 0 ? cachedSequence(seed, n, samples, columns.length) : null;
  const rng = cached ? null : new PyRandom(seed);
  const scratch = n <= 0xffff ? new Uint16Array(n) : new Uint32Array(n);
  return columns.map((values, p) => {
    const m = mean(values, weights);
    if (n === 0 || samples <= 0) return { mean: m, low: m, high: m };
    const draw = cached
      ? (s: number) => cached[p].subarray(s * n, (s + 1) * n)
      : (_s: number, out: Uint16Array | Uint32Array) => {
          rng!.fillRandrange(n, out);
          return out;
        };
    const [low, high] = bootstrapPass(values, weights, samples, draw, scratch);
    return { mean: m, low, high };
  });
}

/** `bootstrapIntervals`' draws by (seed, n, samples, columns): many files of one benchmark share them. */
const sequenceCache = new Map<string, (Uint16Array | Uint32Array)[]>();

function cachedSequence(
  seed: number,
  n: number,
  samples: number,
  passes: number,
): (Uint16Array | Uint32Array)[] | null {
  if (passes * samples * n > INDEX_CACHE_MAX_ENTRIES) return null;
  const key = `${seed}:${n}:${samples}:${passes}`;
  const hit = sequenceCache.get(key);
  if (hit) return hit;
  const rng = new PyRandom(seed);
  const out: (Uint16Array | Uint32Array)[] = [];
  for (let p = 0; p < passes; p++) {
    const arr = n <= 0xffff ? new Uint16Array(samples * n) : new Uint32Array(samples * n);
    rng.fillRandrange(n, arr);
    out.push(arr);
  }
  if (sequenceCache.size >= 4) sequenceCache.delete(sequenceCache.keys().next().value as string);
  sequenceCache.set(key, out);
  return out;
}
