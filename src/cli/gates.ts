/**
 * The CI gates shared by `sob eval`, `sob score` and `sob leaderboard` (docs/ci.md):
 * `--fail-under metric=min`, `--fail-on-regression <baseline>`, `--gate-summary <file.md>`.
 * A failed gate prints one line on stderr and the command exits 3.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  checkThresholds,
  type GateMetric,
  type GateSubject,
  parseThresholds,
  regressionLine,
  regressionVerdicts,
  type Threshold,
  thresholdLine,
} from '../../metrics/gates.ts';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import type { RegressionPair } from '../report/gates.ts';
import { evaluationDirOf, log } from './common.ts';

/** Exit code of a command whose results are written but a gate failed. */
export const GATE_FAILED_EXIT = 3;

export interface GateFlags {
  failUnder?: string[];
  failOnRegression?: string;
  gateSummary?: string;
}

export function gateOptions(cmd: Command): Command {
  return cmd
    .option(
      '--fail-under <metric=min>',
      'CI gate: exit 3 when a model scores below min (e.g. value_accuracy=0.80; repeatable, or comma-separated)',
      (v: string, p: string[] | undefined) => [...(p ?? []), v],
    )
    .option(
      '--fail-on-regression <baseline-dir>',
      'CI gate: exit 3 when a metric is significantly worse than in this earlier evaluation (paired bootstrap, Holm-corrected)',
    )
    .option('--gate-summary <file>', 'write the gates as Markdown (for a pull-request comment)');
}

export interface Gates {
  thresholds: Threshold[];
  baseline?: string;
  /** The baseline as the user wrote it (the summary never shows a local absolute path). */
  baselineShown?: string;
  summary?: string;
}

/** The gate flags checked before anything runs: a bad one is a usage error (exit 2). */
export function parseGates(flags: GateFlags, allowed?: readonly GateMetric[]): Gates {
  let thresholds: Threshold[];
  try {
    thresholds = parseThresholds(flags.failUnder ?? []);
  } catch (e) {
    throw new UserError(`--fail-under ${errorMessage(e)}`, 2);
  }
  if (allowed)
    for (const t of thresholds)
      if (!allowed.includes(t.metric))
        throw new UserError(
          `--fail-under ${t.metric}: a leaderboard figure, not one of a scored file (use it on sob eval or sob leaderboard)`,
          2,
        );
  let baseline: string | undefined;
  if (flags.failOnRegression) {
    // Checked before anything is asked or scored: a typo must not cost a whole run.
    if (!existsSync(flags.failOnRegression) || !statSync(flags.failOnRegression).isDirectory())
      throw new UserError(`--fail-on-regression: no such folder: ${flags.failOnRegression}`, 2);
    baseline = evaluationDirOf(resolve(flags.failOnRegression));
  }
  if (flags.gateSummary && thresholds.length === 0 && !baseline)
    throw new UserError('--gate-summary needs --fail-under or --fail-on-regression', 2);
  return { thresholds, baseline, baselineShown: flags.failOnRegression, summary: flags.gateSummary };
}

export function hasGates(g: Gates): boolean {
  return g.thresholds.length > 0 || g.baseline !== undefined;
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
  },
): Promise<boolean> {
  if (!hasGates(g)) return true;
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
  const lines = [
    ...(g.thresholds.length > 0 && opts.subjects.length === 0
      ? ['gate failed: no scored model to check --fail-under on']
      : []),
    ...thresholds.filter((t) => !t.ok).map(thresholdLine),
    ...(regression?.results.filter((r) => r.regressed).map(regressionLine) ?? []),
  ];
  for (const l of lines) log(l);
  const tested = thresholds.length + (regression?.results.length ?? 0);
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
