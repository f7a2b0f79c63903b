/** `sob leaderboard`: the paper's unified, complexity-weighted, coverage-adjusted leaderboard. */
import type { Command } from 'commander';
import type { RankBy } from '../../metrics/lenient-leaderboard.ts';
import { complianceLeaderboard, writeLeaderboard } from '../app/leaderboard.ts';
import { UserError } from '../core/errors.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import type { TotalsMode } from '../report/evaluation.ts';
import { choiceOption, evaluationDirOf, modalityOption } from './common.ts';
import { type GateFlags, gateOptions, parseGates } from './gates.ts';

const FORMATS = ['table', 'md', 'csv', 'json'] as const;
const TOTALS = ['auto', 'sob', 'records'] as const satisfies readonly TotalsMode[];

export function registerLeaderboard(program: Command): void {
  const cmd = program
    .command('leaderboard')
    .description('rank models from an evaluation folder (<dir>/<modality>/<model>/eval_summary.json)')
    .argument('<evaluation-dir>', "what sob score wrote (or the SOB repository's data/evaluation)")
    .option('--format <f>', 'table | md | csv | json', choiceOption(FORMATS), 'table')
    .option(
      '--track <t>',
      'sob (the value leaderboard) | compliance (schema records: declared/empirical coverage, compliance per dataset)',
      choiceOption(['sob', 'compliance'] as const),
      'sob',
    )
    .option('--out <file>', 'write to a file instead of stdout')
    .option(
      '--source <m>',
      "one source's table (text | image | audio), sorted by Value Accuracy, with 95% intervals and ranks",
      modalityOption,
    )
    .option(
      '--table <t>',
      "unified (default: Overall, the paper's Table 2) | text | image | audio (the same as --source <m>)",
      choiceOption(['unified', ...MODALITIES] as const),
      'unified',
    )
    .option(
      '--ranks',
      "unified table: add each model's Value Accuracy rank on every source (how ranks shift between sources)",
    )
    .option('--names <file>', 'display names: {"<model-dir>": "<name>"} (default: <dir>/display_names.json)')
    .option(
      '--manifest <file>',
      'benchmark manifest with sources.<modality>.{records, weight} (default: one found in or near the folder)',
    )
    .option(
      '--benchmark-totals <t>',
      'auto (a manifest, else per source: the SOB constants when recognisably SOB, else the records present) | sob | records',
      choiceOption(TOTALS),
      'auto',
    )
    .option(
      '--sensitivity',
      "how stable is the ranking? re-rank under exact, lenient and lenient-without-judge scores (needs summaries scored with sob score --match): ranks, Kendall's tau, the models that move",
    )
    .option(
      '--rank-by <m>',
      "with --sensitivity: overall (default; with --table <source>: that source's Value Accuracy) | value_accuracy",
      choiceOption(['overall', 'value_accuracy'] as const),
    );
  gateOptions(cmd)
    .addHelpText(
      'after',
      `
Overall = mean of the seven aggregates (each source weighted by its total schema-complexity
weight W_u; Perfect Response over text and image only) x coverage (records evaluated / records
in the benchmark).

Benchmark totals (W_u and the records per source) come from, in order: --manifest, or a
manifest.json in the folder, in ../benchmark/ (sob eval), or beside the benchmark a run or the
summaries name; else, per source, the official SOB constants when the source is recognisably
SOB's (its largest model has exactly SOB's records, and its eval_records.jsonl hold SOB's 209
image ids of weight 602, or its summaries name the SOB repository's data/<source>_responses/),
else the distinct record ids in the eval_records.jsonl present. Every output says which.
Model folders left out (no summary, unreadable summary, records without a summary) are named.

Examples:
  sob leaderboard ../shared/data/sob/evaluation --format md
  sob leaderboard ../shared/data/sob/evaluation --table image --format csv
  sob leaderboard ../shared/data/sob/evaluation --ranks
  sob leaderboard runs/evaluation --benchmark-totals sob   # coverage against the whole SOB set
  sob leaderboard runs/eval/evaluation --track compliance --format md
  sob leaderboard runs/evaluation --sensitivity             # exact vs lenient rankings (sob score --match)

Summaries scored with sob score --match add, beside the exact columns, the lenient Value
Accuracy (Len.VA), the gap (Len.VA - Val.Acc.: the part of the loss that is formatting),
the lenient Overall and each model's rank shift between the exact and lenient rankings.

--track compliance reads <dir>/schema/<model>/eval_summary.json (schema records, sob build
jsonschemabench / schemas / probes): JSONSchemaBench's table, datasets as columns: declared
coverage (the provider accepted the schema), empirical coverage (the answer parses and
validates), compliance (valid among declared), partial validity, and the median / p90 of time to
first token, time per output token and total time where the runs recorded them.`,
    )
    .action(
      async (
        dirArg: string,
        flags: GateFlags & {
          format: (typeof FORMATS)[number];
          out?: string;
          names?: string;
          manifest?: string;
          benchmarkTotals: TotalsMode;
          source?: Modality;
          table: 'unified' | Modality;
          ranks?: boolean;
          track: 'sob' | 'compliance';
          sensitivity?: boolean;
          rankBy?: RankBy;
        },
      ) => {
        if (flags.rankBy && !flags.sensitivity) throw new UserError('--rank-by goes with --sensitivity', 2);
        const dir = evaluationDirOf(dirArg);
        const gates = parseGates(flags);
        if (flags.track === 'compliance') {
          if (gates.thresholds.length > 0 || gates.baseline)
            throw new UserError(
              '--fail-under and --fail-on-regression gate the value leaderboard (--track sob)',
              2,
            );
          const sobOnly = [
            flags.source && '--source',
            flags.table !== 'unified' && '--table',
            flags.ranks && '--ranks',
            flags.manifest && '--manifest',
            flags.benchmarkTotals !== 'auto' && '--benchmark-totals',
            flags.sensitivity && '--sensitivity',
          ].filter((x): x is string => typeof x === 'string');
          return complianceLeaderboard(dir, {
            format: flags.format,
            out: flags.out,
            names: flags.names,
            sobOnly,
          });
        }
        if (flags.manifest && flags.benchmarkTotals !== 'auto')
          throw new UserError(
            `--manifest and --benchmark-totals ${flags.benchmarkTotals} disagree: give one`,
            2,
          );
        if (flags.source && flags.table !== 'unified' && flags.source !== flags.table)
          throw new UserError(`--source ${flags.source} and --table ${flags.table} disagree`, 2);
        await writeLeaderboard({
          dir,
          dirArg,
          gates,
          format: flags.format,
          out: flags.out,
          names: flags.names,
          manifest: flags.manifest,
          benchmarkTotals: flags.benchmarkTotals,
          source: flags.source ?? (flags.table === 'unified' ? undefined : flags.table),
          ranks: flags.ranks,
          sensitivity: flags.sensitivity,
          rankBy: flags.rankBy,
        });
      },
    );
}
