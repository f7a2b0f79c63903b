/**
 * Per-file summaries (docs/scoring.md "Per-file summary"): plain and weight-weighted means of the ten
 * metrics and five categories, with percentile bootstrap intervals that reproduce the
 * reference's `random.Random(seed)` stream bit for bit.
 *
 * Records stream in through `SummaryAccumulator.add`; only a few numbers per record are kept.
 */
import type {
  BenchmarkBlockOut,
  CategoryOut,
  EvalSummaryOut,
  MetricOut,
  SummaryBlockOut,
} from '../src/core/formats/eval-summary.ts';
import { compareCodePoints } from '../src/core/pyjson.ts';
import { PyRandom } from '../src/core/pyrandom.ts';
import { floatSum, floatSumOf } from '../src/core/pysum.ts';
import { LANES, SumsKernel } from './bootstrap-sums.ts';
import {
  type BootstrapMethod,
  type BootstrapMethodChoice,
  bootstrapMethodFor,
  poissonEstimates,
  type Values,
} from './poisson-bootstrap.ts';
import type { Explanation, RecordScore } from './record.ts';
import { DIFFICULTY_WEIGHTS, WEIGHT_FIELD_PRIORITY } from './weights.ts';

export type { Values };

/** Each custom name's per-record column (a record without that name, or failed, scores 0). */
export interface CustomData {
  names: string[];
  columns: Float64Array[];
}

/** What a summary needs of one record's scores (the rest of its `RecordScore` stays behind). */
export type SummaryRow = Pick<
  RecordScore,
  | 'recordId'
  | 'modelId'
  | 'weight'
  | 'knownDifficulty'
  | 'jsonParse'
  | 'rootStructured'
  | 'schemaValidInput'
  | 'jsonPass'
  | 'valueAccuracy'
  | 'faithfulness'
  | 'pathRecall'
  | 'structureCoverage'
  | 'typeSafety'
  | 'perfect'
  | 'missingGtPaths'
  | 'missingRequiredPaths'
  | 'lenientParse'
> & { explanation: Pick<Explanation, 'scoring_error' | 'schema_error'> };

/** A record's `SummaryRow`: its missing paths only where they are summarised (image). */
export function summaryRow(s: RecordScore, withPaths: boolean): SummaryRow {
  const row: SummaryRow = {
    recordId: s.recordId,
    modelId: s.modelId,
    weight: s.weight,
    knownDifficulty: s.knownDifficulty,
    jsonParse: s.jsonParse,
    rootStructured: s.rootStructured,
    schemaValidInput: s.schemaValidInput,
    jsonPass: s.jsonPass,
    valueAccuracy: s.valueAccuracy,
    faithfulness: s.faithfulness,
    pathRecall: s.pathRecall,
    structureCoverage: s.structureCoverage,
    typeSafety: s.typeSafety,
    perfect: s.perfect,
    missingGtPaths: withPaths ? s.missingGtPaths : [],
    missingRequiredPaths: withPaths ? s.missingRequiredPaths : [],
    explanation: s.explanation.scoring_error ? { scoring_error: s.explanation.scoring_error } : {},
  };
  // Rare: kept so the scorer can say on stderr which records scored 0 for their schema.
  if (s.explanation.schema_error) row.explanation.schema_error = s.explanation.schema_error;
  if (s.lenientParse !== undefined) row.lenientParse = s.lenientParse;
  return row;
}

/** Summary metrics in the reference's order, with the accessor and display name of each. */
export const SUMMARY_METRICS = [
  ['json_parse_success', 'JSON Parse Success', (s: SummaryRow) => s.jsonParse],
  ['json_root_structured', 'Structured JSON Root', (s: SummaryRow) => s.rootStructured],
  ['schema_valid_input', 'Schema Valid Input', (s: SummaryRow) => s.schemaValidInput],
  ['schema_compliance', 'JSON Pass Rate', (s: SummaryRow) => s.jsonPass],
  ['leaf_value_em', 'Truth Score', (s: SummaryRow) => s.valueAccuracy],
  ['value_token_f1', 'Faithfulness Score', (s: SummaryRow) => s.faithfulness],
  ['hier_path_recall', 'Path Recall', (s: SummaryRow) => s.pathRecall],
  ['path_set_f1', 'Structure Coverage', (s: SummaryRow) => s.structureCoverage],
  ['type_precision', 'Type Safety', (s: SummaryRow) => s.typeSafety],
  ['strict_json_em', 'Perfect Response Rate', (s: SummaryRow) => s.perfect],
] as const;
export type MetricKey = (typeof SUMMARY_METRICS)[number][0];

/** The metrics whose per-record value is 0 or 1 (their columns are bytes: `ByteColumn`). */
const BINARY: ReadonlySet<MetricKey> = new Set<MetricKey>([
  'json_parse_success',
  'json_root_structured',
  'schema_valid_input',
  'schema_compliance',
  'strict_json_em',
]);

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
  /** The profile that scored the rows, written as the summary's `profile` (ours; omitted when unset). */
  profile?: 'sob' | 'strict';
  /** Why that profile was chosen, written as `profile_reason` (ours; omitted when unset). */
  profileReason?: string;
  /** How resamples are drawn (`auto`: see `bootstrapMethodFor`); the `sob` profile is always CPython's. */
  bootstrapMethod?: BootstrapMethodChoice;
}

export const DEFAULT_SUMMARY_OPTIONS: SummaryOptions = {
  bootstrapSamples: 1000,
  seed: 42,
  topKErrors: 20,
  errorAnalysis: false,
};

/** A growable column of numbers (one per record). */
export class Column {
  /** In shared memory from the start: `take` hands it on without a copy. */
  data: Float64Array = new Float64Array(new SharedArrayBuffer(256 * 8));
  length = 0;
  push(x: number): void {
    if (this.length === this.data.length) this.resize(this.data.length * 2);
    this.data[this.length++] = x;
  }
  /** Room for `n` values in all (a file's record count, known ahead): no doubling on the way. */
  reserve(n: number): void {
    if (n > this.data.length) this.resize(n);
  }
  private resize(cap: number): void {
    const grown = new Float64Array(new SharedArrayBuffer(cap * 8));
    grown.set(this.view());
    this.data = grown;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
  release(): void {
    this.data = new Float64Array(0);
  }
  /**
   * The values, exactly `length` of them, in shared memory (a bootstrap worker is handed them
   * without a copy), and the column lets them go: its own buffer, not a copy of it (a copy made
   * a million records' columns twice over until the next collection).
   */
  take(): Float64Array {
    const out = this.view();
    this.data = new Float64Array(0);
    return out;
  }
}

/**
 * A column of a 0/1 metric (JSON Parse, Structured Root, Schema Valid Input, JSON Pass, Perfect
 * Response): one byte a record instead of eight. A value other than 0 or 1 (a -0.0, a NaN, a
 * fraction: never from today's scorer) turns it into a `Column` of doubles, so nothing read back
 * differs from what was pushed.
 */
export class ByteColumn {
  private bytes: Uint8Array = new Uint8Array(new SharedArrayBuffer(256));
  private doubles?: Column;
  length = 0;
  push(x: number): void {
    if (this.doubles) {
      this.doubles.push(x);
    } else if (x === 1 || (x === 0 && !Object.is(x, -0))) {
      if (this.length === this.bytes.length) this.resize(this.bytes.length * 2);
      this.bytes[this.length++] = x;
    } else {
      const d = new Column();
      d.reserve(this.bytes.length);
      for (let i = 0; i < this.length; i++) d.push(this.bytes[i]);
      d.push(x);
      this.doubles = d;
      this.bytes = new Uint8Array(0);
      this.length = 0;
    }
  }
  reserve(n: number): void {
    if (this.doubles) this.doubles.reserve(n);
    else if (n > this.bytes.length) this.resize(n);
  }
  private resize(cap: number): void {
    const grown = new Uint8Array(new SharedArrayBuffer(cap));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
  /** Its values, in shared memory, and lets them go (as `Column.take`). */
  take(): Values {
    if (this.doubles) return this.doubles.take();
    const out = this.bytes.subarray(0, this.length);
    this.bytes = new Uint8Array(0);
    return out;
  }
  release(): void {
    this.bytes = new Uint8Array(0);
    this.doubles?.release();
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
  /** Answers that did not parse (strict profile: not even after recovery). */
  json_parse_fail_count: number;
  json_non_structured_root_count: number;
  invalid_schema_input_count: number;
  unknown_difficulty_count: number;
  malformed_jsonl_line_count: number;
  /** Ours, always: rows whose record id repeats an earlier row's (kept in sob, dropped in strict). */
  duplicate_record_id_count: number;
  /** Ours, always: distinct record ids among the rows (a row without an id counts as one). */
  distinct_record_ids: number;
  /** Ours, when non-zero: records whose schema the provider refused (left out of rows and means). */
  schema_rejected_count?: number;
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
    duplicate_record_id_count: 0,
    distinct_record_ids: 0,
  };
}

/** The benchmark the answers were matched to (ours: `eval_summary.json`'s `benchmark`). */
export interface BenchmarkSummary {
  path: string;
  sha256: string;
  /** The benchmark's records of this modality (its selection, for a run). */
  records: number;
  /** Of those, how many have no answer. */
  missing_ids: number;
  /** Answers whose id the benchmark does not have (not scored). */
  unknown_ids: number;
}

/**
 * Everything a summary is computed from: one column per metric, the weights, and counts. Plain
 * data (structured-cloneable), so a summary can be computed on another thread.
 */
export interface SummaryData {
  /** One per metric, in `SUMMARY_METRICS` order (a 0/1 metric's as bytes). */
  columns: Values[];
  weights: Float64Array;
  modelIds: string[];
  missingGt: Map<string, number>;
  missingRequired: Map<string, number>;
  dataQuality: DataQuality;
  benchmark?: BenchmarkSummary;
  /** `--scorer`: the columns of the scorers of your own (metrics/custom.ts `CustomData`), when any scored. */
  custom?: { names: string[]; columns: Float64Array[] };
}

/** Collects what the summary needs, record by record. */
export class SummaryAccumulator {
  readonly columns = SUMMARY_METRICS.map(([key]) => (BINARY.has(key) ? new ByteColumn() : new Column()));
  readonly weights = new Column();
  readonly modelIds = new Set<string>();
  readonly missingGt = new Map<string, number>();
  readonly missingRequired = new Map<string, number>();
  readonly dataQuality = emptyDataQuality();

  add(s: SummaryRow): void {
    SUMMARY_METRICS.forEach(([, , get], i) => {
      this.columns[i].push(get(s));
    });
    this.weights.push(s.weight);
    this.modelIds.add(typeof s.modelId === 'string' ? s.modelId : String(s.modelId));
    countInto(this.missingGt, s.missingGtPaths);
    countInto(this.missingRequired, s.missingRequiredPaths);
    const dq = this.dataQuality;
    // An answer recovered from a code fence or trailing text parsed (JSON Pass may be 1): it is
    // counted as recovered (lenient_parse_count), not as a parse failure (sob: never recovered).
    if (s.jsonParse === 0 && !s.lenientParse) dq.json_parse_fail_count++;
    if (s.rootStructured === 0) dq.json_non_structured_root_count++;
    if (s.schemaValidInput === 0) dq.invalid_schema_input_count++;
    if (!s.knownDifficulty) dq.unknown_difficulty_count++;
    if (s.explanation.scoring_error) dq.scoring_error_count = (dq.scoring_error_count ?? 0) + 1;
    if (s.lenientParse !== undefined) dq.lenient_parse_count = (dq.lenient_parse_count ?? 0) + s.lenientParse;
  }

  get n(): number {
    return this.weights.length;
  }

  /** Room for `n` records (a file's benchmark count): the columns are not doubled on the way. */
  reserve(n: number): void {
    for (const c of this.columns) c.reserve(n);
    this.weights.reserve(n);
  }

  /** Lets the columns go once `data()` has been taken (they may be large). */
  release(): void {
    for (const c of this.columns) c.release();
    this.weights.release();
  }

  /** What the summary is computed from; the columns are taken (`Column.take`): call it once. */
  data(): SummaryData {
    return {
      columns: this.columns.map((c) => c.take()),
      weights: this.weights.take(),
      modelIds: [...this.modelIds],
      missingGt: this.missingGt,
      missingRequired: this.missingRequired,
      dataQuality: { ...this.dataQuality },
    };
  }
}

// -- Bootstrap ---------------------------------------------------------------------------------

/** Bootstrap passes, in the order the generator is used: the ten metrics, then the categories. */
export const PASSES = SUMMARY_METRICS.length + CATEGORIES.length;

/** Each pass's 95% interval: `low[p]`, `high[p]` (p as in `PASSES`). */
export interface Intervals {
  low: Float64Array;
  high: Float64Array;
}

function percentileBounds(values: Float64Array): [number, number] {
  const len = values.length;
  if (len === 0) return [0, 0];
  const lo = Math.max(0, Math.floor(0.025 * (len - 1)));
  const hi = Math.min(len - 1, Math.ceil(0.975 * (len - 1)));
  // The two order statistics, not a sort of all the estimates: `select` puts the value that
  // belongs at `hi` there and the `hi` values before it in front, then the one at `lo` among those.
  select(values, hi, 0, len - 1);
  if (lo < hi) select(values, lo, 0, hi - 1);
  return [values[lo], values[hi]];
}

/**
 * Whether `a` comes before `b` in `Float64Array.prototype.sort`'s order (ascending, -0 before
 * +0, NaN last): the order statistics are the very values a sort would put there, bit for bit.
 */
function before(a: number, b: number): boolean {
  if (a < b) return true;
  if (a === b) return a === 0 && 1 / a < 0 && 1 / b > 0;
  return !Number.isNaN(a) && Number.isNaN(b); // a number before NaN
}

/**
 * Rearranges `v[left..right]` so that `v[k]` holds the value a sort would put at k, with no
 * later value before it and no earlier one after it (Hoare's selection, median-of-three pivots,
 * three-way partitions: estimates repeat a lot, a column with few non-zero records has few
 * distinct means). A bootstrap's 1,000 estimates per metric: 15 metrics x 34 files sorted in full
 * took ~25 ms of a ~100 ms bootstrap; two selections take a fraction of that.
 */
export function select(v: Float64Array, k: number, left: number, right: number): void {
  let l = left;
  let r = right;
  while (r > l) {
    const m = (l + r) >>> 1;
    // The median of v[l], v[m], v[r] as the pivot.
    const a = v[l];
    const b = v[m];
    const c = v[r];
    const pivot = before(a, b)
      ? before(b, c)
        ? b
        : before(a, c)
          ? c
          : a
      : before(a, c)
        ? a
        : before(b, c)
          ? c
          : b;
    // v[l..lt) before the pivot, v[lt..i) equal to it, v(gt..r] after it.
    let lt = l;
    let i = l;
    let gt = r;
    while (i <= gt) {
      const x = v[i];
      // Plain comparisons first; `before` only for equal values (+0 and -0) and NaN.
      if (x < pivot || (!(x > pivot) && before(x, pivot))) {
        v[i] = v[lt];
        v[lt] = x;
        lt++;
        i++;
      } else if (x > pivot || (!(x < pivot) && before(pivot, x))) {
        v[i] = v[gt];
        v[gt] = x;
        gt--;
      } else i++;
    }
    if (k < lt) r = lt - 1;
    else if (k > gt) l = gt + 1;
    else return;
  }
}

/**
 * The plain (weights null) or weighted mean of a column; 0 when empty or all weights are 0.
 * Both sums are Python 3.12's `sum` (`floatSum`), as the reference's `arithmetic_mean` and
 * `weighted_mean` compute them.
 */
export function mean(values: Values, weights: Float64Array | null): number {
  return meanOf(values.length, (i) => values[i], weights);
}

/**
 * `mean` of the n values `at` gives, without an array of them (nor of a weighted mean's `v w`
 * terms): the same additions in the same order.
 */
function meanOf(n: number, at: (i: number) => number, weights: Float64Array | null): number {
  if (n === 0) return 0;
  if (!weights) return floatSumOf(n, at) / n;
  const tw = floatSum(weights);
  if (tw === 0) return 0;
  return floatSumOf(n, (i) => at(i) * weights[i]) / tw;
}

const KEY_INDEX = new Map<string, number>(SUMMARY_METRICS.map(([k], i) => [k, i]));

/** Each row's category score: the plain mean of its components (`sum(...) / len(...)`, Python's sum). */
export function categoryColumns(
  data: Pick<SummaryData, 'columns'>,
  /** Arrays to write into where they have the length (kept there for the next call). */
  reuse?: Float64Array[],
): Float64Array[] {
  const n = data.columns[0]?.length ?? 0;
  return CATEGORIES.map((_, c) => {
    const at = categoryScores(data, c);
    let values = reuse?.[c];
    if (values?.length !== n) {
      values = new Float64Array(n);
      if (reuse) reuse[c] = values;
    }
    for (let i = 0; i < n; i++) values[i] = at(i);
    return values;
  });
}

/** Category `c`'s score of row i, computed when asked (what `categoryColumns` holds). */
function categoryScores(data: Pick<SummaryData, 'columns'>, c: number): (i: number) => number {
  const cols = CATEGORIES[c][1].map((k) => data.columns[KEY_INDEX.get(k)!]);
  const parts = new Float64Array(cols.length);
  return (i) => {
    for (let k = 0; k < cols.length; k++) parts[k] = cols[k][i];
    return floatSum(parts) / cols.length;
  };
}

/** The plain or weighted mean of category `c`'s scores, as `mean` of its column, without the column. */
export function categoryMean(
  data: Pick<SummaryData, 'columns'>,
  c: number,
  weights: Float64Array | null,
): number {
  return meanOf(data.columns[0]?.length ?? 0, categoryScores(data, c), weights);
}

/**
 * What one summary's bootstrap needs: its columns (a SOB summary's `PASSES`, categories
 * included; the lenient block's six), and its weights when weighted.
 */
export interface BootstrapInput {
  columns: Values[];
  weights: Float64Array | null;
}

/**
 * The bootstrap intervals of several summaries of equal n at once. The resample indices depend
 * only on (seed, n, samples), and every model scored on one benchmark has the same n: each
 * resample is drawn once (Python's `random.Random(seed)`, bit for bit) and applied to every
 * summary, so no index is stored (memory does not grow with n) and none is drawn twice. Each
 * estimate is summed in the same order as one summary alone would (the same bits). Columns are
 * drawn one after another, `samples` resamples each, as the reference draws its metrics; every
 * input has as many columns.
 */
export function bootstrapIntervals(
  inputs: BootstrapInput[],
  seed: number,
  samplesAsked: number,
  /** false: the JavaScript loop even where WebAssembly runs (tests compare the two). */
  wasm = true,
  /** `poisson`: the strict profile's resampling for large summaries (metrics/poisson-bootstrap.ts). */
  method: BootstrapMethod = 'cpython',
): Intervals[] {
  // The passes, in the order the generator is used: the columns (all inputs have as many).
  const passes = inputs[0]?.columns.length ?? PASSES;
  const out = inputs.map(() => ({ low: new Float64Array(passes), high: new Float64Array(passes) }));
  const n = inputs[0]?.columns[0]?.length ?? 0;
  const samples = Math.max(0, samplesAsked);
  if (n === 0 || samples === 0) return out;
  if (method === 'poisson') {
    const est = poissonEstimates(inputs, seed, samples);
    est.forEach((e, f) => {
      for (let p = 0; p < passes; p++)
        [out[f].low[p], out[f].high[p]] = percentileBounds(e.subarray(p * samples, (p + 1) * samples));
    });
    return out;
  }
  const F = inputs.length;
  const rng = new PyRandom(seed);
  // Inputs with equal weights share their resamples' total weight (the same sum, in the same
  // order): every model scored on one benchmark has its records' weights.
  const groups: Float64Array[] = [];
  const groupOf = inputs.map((d) => {
    const w = d.weights;
    if (!w) return -1;
    let g = groups.findIndex((x) => x.length === w.length && x.every((y, i) => y === w[i]));
    if (g < 0) g = groups.push(w) - 1;
    return g;
  });
  const G = groups.length;
  // The sums in WebAssembly when it can (the same bits, see bootstrap-sums.ts): a lane per
  // summary and per weight group.
  const kernel = wasm ? SumsKernel.create(n, F + G) : null;
  const idx = kernel ? kernel.idx : n <= 0xffff ? new Uint16Array(n) : new Uint32Array(n);
  const est = inputs.map(() => new Float64Array(samples));
  // All weights positive: a constant column's estimate is that constant, whatever the draw.
  const positive = inputs.map((d) => d.weights === null || d.weights.every((w) => w > 0));
  const tw = new Float64Array(G);
  // Per pass, the terms of every summary drawn together: row j holds each summary's term for
  // record j (its value, or value x weight: the product the reference sums), so a resample
  // reads one row per draw. Each summary's sum still adds its terms in draw order: same bits.
  const terms = new Float64Array(kernel ? 0 : n * F);
  const sums = new Float64Array(F);
  const drawn = new Float64Array(kernel ? 0 : n);
  const active = new Int32Array(F);
  for (let p = 0; p < passes; p++) {
    // A column of all 0 or all 1 (every answer parsed, say) needs no sums: its bounds are itself.
    const constant = inputs.map((d, f) => {
      const v = d.columns[p];
      const c = v[0];
      if (c !== 0 && c !== 1) return null;
      if (c === 1 && !positive[f]) return null;
      for (let i = 1; i < n; i++) if (v[i] !== c) return null;
      return c;
    });
    let A = 0;
    for (let f = 0; f < F; f++) if (constant[f] === null) active[A++] = f;
    let weightedActive = false;
    for (let k = 0; k < A; k++) if (inputs[active[k]].weights) weightedActive = true;
    // The kernel also sums each weight group's weights over the draw (its resample's total
    // weight: the same additions, in the same order, as a loop of its own), in the lanes after
    // the A terms: on the SOB files they fit in the padding the terms leave.
    const W = kernel && weightedActive ? G : 0;
    // Row j holds the summaries' terms for record j: A of them, then W weights (the kernel's
    // rows are `stride` long, the lanes past A + W zero).
    const stride = kernel ? (A + W + LANES - 1) & -LANES : A;
    const rows = kernel ? kernel.terms : terms;
    if (kernel) rows.fill(0, 0, n * stride);
    // Whether every sum of this pass is exact whatever the draw (integer terms, n times the
    // largest at most 2^53): then no addition rounds and the kernel may add plainly.
    let maxAbs = 0;
    let integral = true;
    const note = (x: number) => {
      if (integral && !Number.isInteger(x)) integral = false;
      else if (Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
    };
    for (let k = 0; k < A; k++) {
      const { columns, weights } = inputs[active[k]];
      const v = columns[p];
      if (weights) for (let j = 0; j < n; j++) note((rows[j * stride + k] = v[j] * weights[j]));
      else for (let j = 0; j < n; j++) note((rows[j * stride + k] = v[j]));
    }
    for (let g = 0; g < W; g++) {
      const w = groups[g];
      for (let j = 0; j < n; j++) note((rows[j * stride + A + g] = w[j]));
    }
    const exact = integral && maxAbs * n <= 2 ** 53;
    for (let s = 0; s < samples; s++) {
      rng.fillRandrange(n, idx);
      if (A === 0) continue;
      if (kernel) {
        kernel.run(stride, exact);
        const got = kernel.sums;
        for (let k = 0; k < A; k++) sums[k] = got[k];
        for (let g = 0; g < W; g++) tw[g] = got[A + g];
      } else {
        if (weightedActive) for (let g = 0; g < G; g++) tw[g] = drawnSum(groups[g], idx, n, 1, 0, drawn);
        for (let k = 0; k < A; k++) sums[k] = drawnSum(terms, idx, n, A, k, drawn);
      }
      for (let k = 0; k < A; k++) {
        const f = active[k];
        const g = groupOf[f];
        if (g < 0) est[f][s] = sums[k] / n;
        else est[f][s] = tw[g] === 0 ? 0 : sums[k] / tw[g];
      }
    }
    for (let f = 0; f < F; f++) {
      const c = constant[f];
      if (c !== null) {
        out[f].low[p] = c;
        out[f].high[p] = c;
        continue;
      }
      [out[f].low[p], out[f].high[p]] = percentileBounds(est[f]);
    }
  }
  return out;
}

/**
 * Column k of `terms` (rows of `stride` doubles) summed over the rows in `idx`, in draw order,
 * with Python's `sum` (`floatSum`, on the drawn values gathered into `drawn`): the reference
 * the WebAssembly kernel is tested against.
 */
function drawnSum(
  terms: Float64Array,
  idx: Uint16Array | Uint32Array,
  n: number,
  stride: number,
  k: number,
  drawn: Float64Array,
): number {
  for (let i = 0; i < n; i++) drawn[i] = terms[idx[i] * stride + k];
  return floatSum(drawn, 0, n);
}

/** The bootstrap input of one summary (plain or weighted). */
export function bootstrapInput(data: SummaryData, weighted: boolean): BootstrapInput {
  return withCategories({ columns: data.columns, weights: weighted ? data.weights : null });
}

/** A summary's metric columns with its category columns added (`PASSES` columns in all). */
export function withCategories(input: BootstrapInput, reuse?: Float64Array[]): BootstrapInput {
  return { columns: [...input.columns, ...categoryColumns(input, reuse)], weights: input.weights };
}

/** The resampling a summary of `n` records uses under these options. */
export function summaryBootstrapMethod(opts: SummaryOptions, n: number): BootstrapMethod {
  return bootstrapMethodFor(opts.bootstrapMethod, opts.profile, n);
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
  given?: Intervals,
): { metrics: Interval[]; categories: Interval[] } {
  const weights = weighted ? acc.weights : null;
  const method = summaryBootstrapMethod(opts, acc.weights.length);
  // The category columns are made only for a bootstrap run here; their means need no column.
  const iv =
    given ??
    bootstrapIntervals(
      [bootstrapInput(acc, weighted)],
      opts.seed + (weighted ? 1 : 0),
      opts.bootstrapSamples,
      true,
      method,
    )[0];
  const M = SUMMARY_METRICS.length;
  const at = (p: number): Interval => ({
    mean: p < M ? mean(acc.columns[p], weights) : categoryMean(acc, p - M, weights),
    low: iv.low[p],
    high: iv.high[p],
  });
  return {
    metrics: SUMMARY_METRICS.map((_, i) => at(i)),
    categories: CATEGORIES.map((_, i) => at(SUMMARY_METRICS.length + i)),
  };
}

function summaryBlock(
  acc: SummaryData,
  opts: SummaryOptions,
  weighted: boolean,
  given?: Intervals,
): SummaryBlockOut {
  const { metrics, categories } = summarize(acc, opts, weighted, given);
  const metricsOut: Record<string, MetricOut> = {};
  SUMMARY_METRICS.forEach(([key, name], i) => {
    metricsOut[key] = {
      mean: metrics[i].mean,
      ci95_low: metrics[i].low,
      ci95_high: metrics[i].high,
      metric_name: name,
    };
  });
  const catOut: Record<string, CategoryOut> = {};
  CATEGORIES.forEach(([name, components], i) => {
    catOut[name] = {
      mean: categories[i].mean,
      ci95_low: categories[i].low,
      ci95_high: categories[i].high,
      category_name: name,
      components,
    };
  });
  const block: SummaryBlockOut = {
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

/** A summary's `benchmark` block (counts as Python ints). */
export function benchmarkBlock(b: BenchmarkSummary): BenchmarkBlockOut {
  return {
    path: b.path,
    sha256: b.sha256,
    records: BigInt(b.records),
    missing_ids: BigInt(b.missing_ids),
    unknown_ids: BigInt(b.unknown_ids),
  };
}

/**
 * The reference's `eval_summary.json` payload (bigints are ints, numbers floats). `intervals`:
 * the bootstrap's, when already computed with other summaries (`bootstrapIntervals`).
 */
export function buildSummary(
  acc: SummaryData,
  responseFile: string,
  opts: SummaryOptions = DEFAULT_SUMMARY_OPTIONS,
  intervals?: { plain: Intervals; weighted: Intervals },
): EvalSummaryOut {
  // Key order is the file's (the reference's, with ours where it has none).
  const payload: EvalSummaryOut = {
    response_file: responseFile,
    ...(opts.profile ? { profile: opts.profile } : {}),
    ...(opts.profileReason ? { profile_reason: opts.profileReason } : {}),
    // Named only when it is not the reference's draws (so a summary that is is unchanged).
    ...(opts.bootstrapSamples > 0 && summaryBootstrapMethod(opts, acc.weights.length) === 'poisson'
      ? { bootstrap_method: 'poisson' }
      : {}),
    num_records: BigInt(acc.weights.length),
    model_ids: [...acc.modelIds].sort(compareCodePoints),
    data_quality: intCounts(acc.dataQuality),
    ...(acc.benchmark ? { benchmark: benchmarkBlock(acc.benchmark) } : {}),
    summary: {
      overall: summaryBlock(acc, opts, false, intervals?.plain),
      overall_weighted: summaryBlock(acc, opts, true, intervals?.weighted),
    },
  };
  if (opts.errorAnalysis) {
    const ea: NonNullable<EvalSummaryOut['error_analysis']> = {};
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
  const idx = n <= 0xffff ? new Uint16Array(n) : new Uint32Array(n);
  const est = new Float64Array(samples);
  const drawn = new Float64Array(n);
  for (let s = 0; s < samples; s++) {
    rng.fillRandrange(n, idx);
    est[s] = drawnSum(values, idx, n, 1, 0, drawn) / n;
  }
  const [low, high] = percentileBounds(est);
  return { mean: m, low, high };
}
