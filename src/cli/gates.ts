/**
 * The CI gates shared by `sob eval`, `sob score` and `sob leaderboard` (docs/ci.md):
 * `--fail-under metric=min`, `--fail-on-regression <baseline>`, `--gate-summary <file.md>`.
 * A failed gate prints one line on stderr and the command exits 3.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { type FieldThreshold, parseFieldThresholds } from '../../metrics/field-table.ts';
import { type GateMetric, parseThresholds, type Threshold } from '../../metrics/gates.ts';
import type { Gates } from '../app/gates.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { evaluationDirOf } from './common.ts';

// Checking the gates (after the work) is the application's; the flags are read here.
export { applyGates, GATE_FAILED_EXIT, type Gates, hasGates, rowSubjects } from '../app/gates.ts';

export interface GateFlags {
  failUnder?: string[];
  failOnRegression?: string;
  gateSummary?: string;
}

export function gateOptions(cmd: Command): Command {
  return cmd
    .option(
      '--fail-under <metric=min>',
      "CI gate: exit 3 when a model scores below min (e.g. value_accuracy=0.80, or a field's accuracy: field:line_items[].amount=0.9; repeatable, or comma-separated)",
      (v: string, p: string[] | undefined) => [...(p ?? []), v],
    )
    .option(
      '--fail-on-regression <baseline-dir>',
      'CI gate: exit 3 when a metric is significantly worse than in this earlier evaluation (paired bootstrap, Holm-corrected)',
    )
    .option('--gate-summary <file>', 'write the gates as Markdown (for a pull-request comment)');
}

/** The gate flags checked before anything runs: a bad one is a usage error (exit 2). */
export function parseGates(flags: GateFlags, allowed?: readonly GateMetric[]): Gates {
  let thresholds: Threshold[];
  let fields: FieldThreshold[];
  try {
    thresholds = parseThresholds(flags.failUnder ?? []);
    fields = parseFieldThresholds(flags.failUnder ?? []);
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
  if (flags.gateSummary && thresholds.length === 0 && fields.length === 0 && !baseline)
    throw new UserError('--gate-summary needs --fail-under or --fail-on-regression', 2);
  return { thresholds, fields, baseline, baselineShown: flags.failOnRegression, summary: flags.gateSummary };
}

/** `--no-fields` writes no `fields.jsonl`, which a field gate reads: the two together, exit 2. */
export function refuseFieldGatesWithoutFields(gates: Gates, fields: boolean): void {
  const first = gates.fields?.[0];
  if (!fields && first)
    throw new UserError(
      `--fail-under field:${first.field} reads fields.jsonl, which --no-fields does not write: drop one of them`,
      2,
    );
}
