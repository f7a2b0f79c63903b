/**
 * The CI gates checked after the work of `sob eval`, `sob score` and `sob leaderboard`
 * (docs/ci.md): thresholds (`--fail-under`), a regression against a baseline
 * (`--fail-on-regression`) and the Markdown summary (`--gate-summary`). A failed gate prints one
 * line on stderr and the command exits 3.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  checkFieldThresholds,
  type FieldGateResult,
  type FieldStat,
  type FieldThreshold,
  fieldGateLine,
} from '../../metrics/field-table.ts';
import {
  checkThresholds,
  type GateMetric,
  type GateSubject,
  regressionLine,
  regressionVerdicts,
  type Threshold,
  thresholdLine,
} from '../../metrics/gates.ts';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import type { RegressionPair } from '../report/gates.ts';
import { log } from './io.ts';

/** Exit code of a command whose results are written but a gate failed. */
export const GATE_FAILED_EXIT = 3;

export interface Gates {
  thresholds: Threshold[];
  /** `--fail-under field:<path>=<min>`: a field's accuracy per model (docs/formats.md "fields.jsonl"). */
  fields?: FieldThreshold[];
  baseline?: string;
  /** The baseline as the user wrote it (the summary never shows a local absolute path). */
  baselineShown?: string;
  summary?: string;
}

export function hasGates(g: Gates): boolean {
  return g.thresholds.length > 0 || (g.fields?.length ?? 0) > 0 || g.baseline !== undefined;
}

/**
 * Checks the gates, prints one line per failed gate, writes the Markdown summary when asked, and
 * sets exit code 3 when a gate failed (an exit code already set, e.g. 1, is kept).
 */
export async function applyGates(
  g: Gates,
  opts: {
    command: string;
    subjects: GateSubject[];
    /** The current model folders paired with the baseline's, and those only one side has. */
    pairs: (baseline: string) => { pairs: RegressionPair[]; unmatched: string[] };
    samples?: number;
    seed?: number;
    /** The per-field table the field gates check (read only when there are field gates). */
    fieldTable?: () => Promise<{ stats: FieldStat[]; models: string[] } | null>;
    /** The model folders the field gates would read that have no `fields.jsonl` (`--no-fields`). */
    withoutFields?: () => string[];
  },
): Promise<boolean> {
  if (!hasGates(g)) return true;
  // A field gate on a folder scored with --no-fields cannot be checked: a usage error, not a fail.
  const fieldGates = g.fields ?? [];
  const bare = fieldGates.length > 0 ? (opts.withoutFields?.() ?? []) : [];
  if (bare.length > 0) {
    const { noFieldsLine } = await import('../report/fields.ts');
    const more =
      bare.length > 1 ? ` (and ${bare.length - 1} more folder${bare.length === 2 ? '' : 's'})` : '';
    throw new UserError(
      `--fail-under field:${fieldGates[0].field}: ${noFieldsLine(bare[0], 'the field gates read it')}${more}`,
      2,
    );
  }
  const { gateMarkdown, regressionTests } = await import('../report/gates.ts');
  const thresholds = checkThresholds(opts.subjects, g.thresholds);
  let regression:
    | { baseline: string; results: ReturnType<typeof regressionVerdicts>; unmatched: string[] }
    | undefined;
  if (g.baseline) {
    const { pairs, unmatched } = opts.pairs(g.baseline);
    if (pairs.length === 0)
      log(
        `warning: --fail-on-regression: no <source>/<model> folder both here and in ${g.baseline}: nothing compared`,
      );
    for (const u of unmatched) log(`--fail-on-regression: ${u}: not in both, not compared`);
    const tests = await regressionTests(pairs, opts.samples ?? 2000, opts.seed ?? 42);
    regression = { baseline: g.baselineShown ?? g.baseline, results: regressionVerdicts(tests), unmatched };
  }
  let fieldResults: FieldGateResult[] = [];
  const fieldLines: string[] = [];
  if (fieldGates.length > 0) {
    const t = opts.fieldTable ? await opts.fieldTable() : null;
    if (!t)
      fieldLines.push(
        'gate failed: no fields.jsonl to check --fail-under field: on (score again with this sob)',
      );
    else {
      fieldResults = checkFieldThresholds(t.stats, t.models, fieldGates);
      fieldLines.push(...fieldResults.filter((r) => !r.ok).map(fieldGateLine));
    }
  }
  const lines = [
    ...fieldLines,
    ...(g.thresholds.length > 0 && opts.subjects.length === 0
      ? ['gate failed: no scored model to check --fail-under on']
      : []),
    ...thresholds.filter((t) => !t.ok).map(thresholdLine),
    ...(regression?.results.filter((r) => r.regressed).map(regressionLine) ?? []),
  ];
  for (const l of lines) log(l);
  const tested = thresholds.length + fieldResults.length + (regression?.results.length ?? 0);
  if (lines.length === 0) log(`gates: all ${tested} checks hold`);
  if (g.summary) {
    const shown = [...new Set<GateMetric>(['value_accuracy', ...g.thresholds.map((t) => t.metric)])];
    const md = gateMarkdown({
      command: opts.command,
      subjects: opts.subjects,
      shown,
      thresholds,
      regression,
    });
    mkdirSync(dirname(resolve(g.summary)), { recursive: true });
    writeFileAtomic(g.summary, `${md}\n`);
    log(`gate summary: ${g.summary}`);
  }
  if (lines.length > 0 && !process.exitCode) process.exitCode = GATE_FAILED_EXIT;
  return lines.length === 0;
}

/** Leaderboard rows as gate subjects: each model's aggregate figures. */
export function rowSubjects(rows: LeaderboardRow[]): GateSubject[] {
  return rows.map((r) => ({
    name: r.model,
    values: {
      value_accuracy: r.value_accuracy,
      faithfulness: r.faithfulness,
      json_pass: r.json_pass,
      path_recall: r.path_recall,
      structure_coverage: r.structure_coverage,
      type_safety: r.type_safety,
      perfect: r.perfect,
      overall: r.overall,
      coverage: r.coverage,
    },
    ...(r.usage ? { usage: r.usage } : {}),
  }));
}
