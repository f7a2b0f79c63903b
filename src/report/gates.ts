/**
 * Reading what the CI gates need (docs/ci.md) and writing their Markdown summary: the model
 * folders of a current and a baseline evaluation matched by `<source>/<model>`, their per-record
 * rows compared with `sob compare`'s paired bootstrap, and a summary fit for a pull-request comment.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  GATE_METRICS,
  type GateMetric,
  type GateSubject,
  type RegressionResult,
  type RegressionTest,
  type ThresholdResult,
} from '../../metrics/gates.ts';
import { UserError } from '../core/errors.ts';
import { MODALITIES } from '../core/record.ts';
import { mdCell } from './cells.ts';
import { COMPARED, comparePair, loadModelRows } from './compare.ts';
import { scanSource } from './evaluation.ts';

/** A current model folder and the baseline's folder of the same `<source>/<model>`. */
export interface RegressionPair {
  /** `<source>/<model>` */
  subject: string;
  current: string;
  baseline: string;
}

/** COMPARED's metrics (reference field names) as gate metric names, in the same order. */
const COMPARED_METRICS: GateMetric[] = COMPARED.map(([field]) => {
  const m = Object.entries(GATE_METRICS).find(([, v]) => v.field === field);
  if (!m) throw new Error(`no gate metric for ${field}`);
  return m[0] as GateMetric;
});

/**
 * Every `<source>/<model>` folder with per-record rows in `current` paired with the same folder
 * in `baseline`; the folders only one side has are returned by name (said, not silently dropped).
 */
export function evaluationPairs(
  current: string,
  baseline: string,
): { pairs: RegressionPair[]; onlyCurrent: string[]; onlyBaseline: string[] } {
  if (!existsSync(baseline)) throw new UserError(`--fail-on-regression: no such folder: ${baseline}`, 2);
  const withRows = (dir: string) =>
    new Map(
      MODALITIES.flatMap((m) => scanSource(dir, m).folders.filter((f) => f.records)).map(
        (f) => [f.folder, f.path] as const,
      ),
    );
  const cur = withRows(current);
  const base = withRows(baseline);
  const pairs: RegressionPair[] = [];
  for (const [subject, path] of cur) {
    const b = base.get(subject);
    if (b) pairs.push({ subject, current: path, baseline: b });
  }
  return {
    pairs,
    onlyCurrent: [...cur.keys()].filter((k) => !base.has(k)),
    onlyBaseline: [...base.keys()].filter((k) => !cur.has(k)),
  };
}

/** One pair: a current `<source>/<model>` folder against the baseline's folder of that name. */
export function folderPair(subject: string, current: string, baselineDir: string): RegressionPair | null {
  const b = join(baselineDir, subject);
  return existsSync(join(b, 'eval_records.jsonl')) && existsSync(join(current, 'eval_records.jsonl'))
    ? { subject, current, baseline: b }
    : null;
}

/** The seven metrics of every pair, over the records both answered (B = current, A = baseline). */
export async function regressionTests(
  pairs: RegressionPair[],
  samples: number,
  seed: number,
): Promise<RegressionTest[]> {
  const out: RegressionTest[] = [];
  for (const p of pairs) {
    const [base, cur] = await Promise.all([loadModelRows(p.baseline), loadModelRows(p.current)]);
    const res = comparePair(base, cur, samples, seed);
    if (res[0].n === 0) continue;
    res.forEach((r, i) => {
      out.push({ ...r, subject: p.subject, metric: COMPARED_METRICS[i] });
    });
  }
  return out;
}

function num(v: number | null | undefined): string {
  return typeof v === 'number' ? v.toFixed(3) : '-';
}

function signed(v: number): string {
  return `${v >= 0 ? '+' : ''}${v.toFixed(3)}`;
}

export interface GateReport {
  /** What was gated: `sob eval`, `sob score`, `sob leaderboard`. */
  command: string;
  subjects: GateSubject[];
  /** The metrics shown for each subject (the thresholds' and Value Accuracy). */
  shown: GateMetric[];
  thresholds: ThresholdResult[];
  regression?: { baseline: string; results: RegressionResult[]; unmatched: string[] };
}

/** The Markdown summary: a verdict line, the figures, every threshold, the regression tests. */
export function gateMarkdown(r: GateReport): string {
  const failedThresholds = r.thresholds.filter((t) => !t.ok);
  const regressed = r.regression?.results.filter((x) => x.regressed) ?? [];
  const failed = failedThresholds.length + regressed.length;
  // Cost and speed beside the figures, where the answers recorded them.
  const usage = r.subjects.some((s) => s.usage);
  const usageHead = usage ? ['Cost', 'Latency p50 / p95 ms'] : [];
  const usageCells = (s: GateSubject) => {
    if (!usage) return [];
    const u = s.usage;
    const ms = (v: number | null | undefined) => (typeof v === 'number' ? String(Math.round(v)) : '-');
    return [
      typeof u?.cost === 'number' ? `$${u.cost.toFixed(u.cost < 1 ? 4 : 2)}` : '-',
      u && u.latency_ms.p50 !== null ? `${ms(u.latency_ms.p50)} / ${ms(u.latency_ms.p95)}` : '-',
    ];
  };
  const out = [
    `### ${failed === 0 ? '✅' : '❌'} sob: ${failed === 0 ? 'every gate holds' : `${failed} gate${failed === 1 ? '' : 's'} failed`}`,
    '',
    `| Model | ${[...r.shown.map((m) => GATE_METRICS[m].label), ...usageHead].join(' | ')} |`,
    `| --- |${[...r.shown, ...usageHead].map(() => ' ---: ').join('|')}|`,
    ...r.subjects.map(
      (s) =>
        `| ${mdCell(s.name)} | ${[...r.shown.map((m) => num(s.values[m])), ...usageCells(s)].join(' | ')} |`,
    ),
  ];
  if (r.thresholds.length > 0) {
    out.push(
      '',
      '**Minimums** (`--fail-under`)',
      '',
      '| | Model | Metric | Value | Minimum |',
      '| --- | --- | --- | ---: | ---: |',
    );
    for (const t of r.thresholds)
      out.push(
        `| ${t.ok ? '✅' : '❌'} | ${mdCell(t.subject)} | ${GATE_METRICS[t.metric].label} | ${num(t.value)} | ${t.min} |`,
      );
  }
  if (r.regression) {
    const res = r.regression.results;
    out.push(
      '',
      `**Against the baseline** \`${r.regression.baseline}\` (\`--fail-on-regression\`: paired bootstrap over the records both answered, ${res.length} tests Holm-corrected together; a gate fails when a metric is lower and Holm p < 0.05)`,
      '',
    );
    const row = (x: RegressionResult) =>
      `| ${x.regressed ? '❌' : x.difference > 0 && x.pHolm < 0.05 ? '⬆️' : ''} | ${mdCell(x.subject)} | ${GATE_METRICS[x.metric].label} | ${x.n} | ${x.meanA.toFixed(3)} | ${x.meanB.toFixed(3)} | ${signed(x.difference)} | [${signed(x.ciLow)}, ${signed(x.ciHigh)}] | ${x.pHolm < 0.001 ? '<0.001' : x.pHolm.toFixed(3)} |`;
    const head = [
      '| | Source/model | Metric | n | Baseline | Now | Change | 95% CI | Holm p |',
      '| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |',
    ];
    const changed = res.filter((x) => x.difference !== 0);
    if (res.length === 0) out.push('No model folder in common with the baseline: nothing compared.');
    else if (changed.length === 0) out.push(`No metric changed on any of the ${res.length} tests.`);
    else out.push(...head, ...changed.map(row));
    const same = res.length - changed.length;
    if (same > 0 && changed.length > 0)
      out.push('', `${same} other test${same === 1 ? '' : 's'}: no change.`);
    if (r.regression.unmatched.length > 0)
      out.push('', `Not compared (not in both): ${r.regression.unmatched.join(', ')}`);
  }
  out.push(
    '',
    `<sub>${r.command}; minimums compare the unrounded value; docs/ci.md explains each gate.</sub>`,
  );
  return out.join('\n');
}
