/**
 * Gates for CI (docs/ci.md): a minimum per metric (`--fail-under value_accuracy=0.80`) and "no
 * metric significantly worse than a baseline" (`--fail-on-regression`: the paired bootstrap of
 * `sob compare`, Holm-corrected over every test made). Pure: the commands read the files.
 */
import { holm, type PairedResult } from './compare.ts';
import type { Usage } from './usage.ts';

/** The metrics a gate may name, in the paper's words; the reference's field name where it has one. */
export const GATE_METRICS = {
  value_accuracy: { label: 'Value Accuracy', field: 'leaf_value_em' },
  faithfulness: { label: 'Faithfulness', field: 'value_token_f1' },
  json_pass: { label: 'JSON Pass', field: 'schema_compliance' },
  path_recall: { label: 'Path Recall', field: 'hier_path_recall' },
  structure_coverage: { label: 'Structure Coverage', field: 'path_set_f1' },
  type_safety: { label: 'Type Safety', field: 'type_precision' },
  perfect: { label: 'Perfect Response', field: 'strict_json_em' },
  overall: { label: 'Overall', field: null },
  coverage: { label: 'Coverage', field: null },
} as const;

export type GateMetric = keyof typeof GATE_METRICS;

export interface Threshold {
  metric: GateMetric;
  min: number;
}

/** A metric by its name or the reference's field name (`leaf_value_em` = `value_accuracy`). */
export function gateMetric(name: string): GateMetric | undefined {
  if (Object.hasOwn(GATE_METRICS, name)) return name as GateMetric;
  for (const [k, v] of Object.entries(GATE_METRICS)) if (v.field === name) return k as GateMetric;
  return undefined;
}

/**
 * `metric=min` items, each argument a comma-separated list (`value_accuracy=0.8,json_pass=0.95`).
 * Throws an Error saying which item is wrong and why.
 */
export function parseThresholds(args: string[]): Threshold[] {
  const out: Threshold[] = [];
  for (const arg of args)
    for (const item of arg.split(',')) {
      const t = item.trim();
      // `field:<path>=<min>` is a field gate (metrics/field-table.ts `parseFieldThresholds`).
      if (t === '' || t.startsWith('field:')) continue;
      const eq = t.indexOf('=');
      if (eq < 0) throw new Error(`"${t}": expected metric=minimum, e.g. value_accuracy=0.80`);
      const metric = gateMetric(t.slice(0, eq).trim());
      if (!metric)
        throw new Error(
          `"${t}": unknown metric "${t.slice(0, eq).trim()}" (one of ${Object.keys(GATE_METRICS).join(', ')})`,
        );
      const v = t.slice(eq + 1).trim();
      const min = Number(v);
      if (v === '' || !Number.isFinite(min) || min < 0 || min > 1)
        throw new Error(`"${t}": the minimum must be a number from 0 to 1`);
      out.push({ metric, min });
    }
  return out;
}

/** What a threshold is checked on: one model (or one model on one source) and its figures. */
export interface GateSubject {
  name: string;
  values: Partial<Record<GateMetric, number | null>>;
  /** Cost and speed of its answers, shown beside the figures (never gated). */
  usage?: Usage;
}

export interface ThresholdResult {
  subject: string;
  metric: GateMetric;
  min: number;
  /** null: the subject has no such figure (fails: a gate that cannot be checked does not hold). */
  value: number | null;
  ok: boolean;
}

/** Every threshold on every subject. Values are compared unrounded (not as printed to 3 decimals). */
export function checkThresholds(subjects: GateSubject[], thresholds: Threshold[]): ThresholdResult[] {
  const out: ThresholdResult[] = [];
  for (const t of thresholds)
    for (const s of subjects) {
      const v = s.values[t.metric];
      const value = typeof v === 'number' && Number.isFinite(v) ? v : null;
      out.push({
        subject: s.name,
        metric: t.metric,
        min: t.min,
        value,
        ok: value !== null && value >= t.min,
      });
    }
  return out;
}

/** One paired test of the current scores against the baseline's (B = current, A = baseline). */
export interface RegressionTest extends PairedResult {
  /** `<source>/<model>` */
  subject: string;
  metric: GateMetric;
}

export interface RegressionResult extends RegressionTest {
  /** Holm-Bonferroni adjusted over every test of the run. */
  pHolm: number;
  /** Worse (current below baseline) and significant after the correction. */
  regressed: boolean;
}

/** Holm-corrects the tests together; a test fails when the current is lower and p_Holm < alpha. */
export function regressionVerdicts(tests: RegressionTest[], alpha = 0.05): RegressionResult[] {
  const adjusted = holm(tests.map((t) => t.pValue));
  return tests.map((t, i) => ({
    ...t,
    pHolm: adjusted[i],
    regressed: t.difference < 0 && adjusted[i] < alpha,
  }));
}

/** The one line a failed threshold prints. */
export function thresholdLine(r: ThresholdResult): string {
  return r.value === null
    ? `gate failed: ${r.subject}: ${r.metric} not available (needs >= ${r.min})`
    : `gate failed: ${r.subject}: ${r.metric} ${r.value.toFixed(3)} < ${r.min}`;
}

/** The one line a significant regression prints. */
export function regressionLine(r: RegressionResult): string {
  return `gate failed: ${r.subject}: ${r.metric} regressed ${r.meanA.toFixed(3)} -> ${r.meanB.toFixed(3)} (${r.difference.toFixed(3)}, 95% CI [${r.ciLow.toFixed(3)}, ${r.ciHigh.toFixed(3)}], Holm p ${r.pHolm < 0.001 ? '<0.001' : r.pHolm.toFixed(3)}, n ${r.n})`;
}
