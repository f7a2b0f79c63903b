/** `sob leaderboard`: the paper's unified, complexity-weighted, coverage-adjusted leaderboard. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { sourceRanks, sourceTable } from '../../metrics/ranks.ts';
import { UserError } from '../core/errors.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import { buildLeaderboard, loadEvaluation, readDisplayNames } from '../report/evaluation.ts';
import {
  leaderboardCsv,
  leaderboardJson,
  leaderboardMarkdown,
  leaderboardTable,
  sourceTableText,
} from '../report/tables.ts';
import { choiceOption, log, modalityOption } from './common.ts';

const FORMATS = ['table', 'md', 'csv', 'json'] as const;

export function registerLeaderboard(program: Command): void {
  program
    .command('leaderboard')
    .description('rank models from an evaluation folder (<dir>/<modality>/<model>/eval_summary.json)')
    .argument('<evaluation-dir>', "what sob score wrote (or the SOB repository's data/evaluation)")
    .option('--format <f>', 'table | md | csv | json', choiceOption(FORMATS), 'table')
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
      'benchmark manifest with sources.<modality>.{records, weight} (default: <dir>/manifest.json, else measured from eval_records, else the SOB set)',
    )
    .addHelpText(
      'after',
      `
Overall = mean of the seven aggregates (each source weighted by its total schema-complexity
weight W_u; Perfect Response over text and image only) x coverage (records evaluated / records
in the benchmark).

Examples:
  sob leaderboard ../shared/data/sob/evaluation --format md
  sob leaderboard ../shared/data/sob/evaluation --table image --format csv
  sob leaderboard ../shared/data/sob/evaluation --ranks`,
    )
    .action(
      async (
        dir: string,
        flags: {
          format: (typeof FORMATS)[number];
          out?: string;
          names?: string;
          manifest?: string;
          source?: Modality;
          table: 'unified' | Modality;
          ranks?: boolean;
        },
      ) => {
        const ev = await loadEvaluation(dir, flags.manifest);
        const names = readDisplayNames(flags.names, dir);
        if (flags.source && flags.table !== 'unified' && flags.source !== flags.table)
          throw new UserError(`--source ${flags.source} and --table ${flags.table} disagree`, 2);
        const source = flags.source ?? (flags.table === 'unified' ? undefined : flags.table);
        if (source) {
          // One source's table (the paper's Tables 4-6), sorted by Value Accuracy, with intervals.
          const rows = sourceTable(ev.models, names, source);
          if (rows.length === 0) throw new UserError(`no ${source} results under ${dir}`);
          const text = sourceTableText(rows, sourceRanks(ev.models), flags.format);
          if (flags.out) writeFileSync(flags.out, text.endsWith('\n') ? text : `${text}\n`);
          else process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
          return;
        }
        const rows = buildLeaderboard(ev, names);
        log(
          `${rows.length} models; source weights ${MODALITIES.map((m) => `${m} W=${ev.totals.weight[m]} N=${ev.totals.records[m]} (${ev.totalsFrom[m]})`).join(', ')}`,
        );
        const ranks = flags.ranks ? sourceRanks(ev.models) : undefined;
        const text =
          flags.format === 'json'
            ? leaderboardJson(rows, ranks)
            : flags.format === 'csv'
              ? leaderboardCsv(rows, ranks)
              : flags.format === 'md'
                ? leaderboardMarkdown(rows, ranks)
                : leaderboardTable(rows, ranks);
        if (flags.out) {
          writeFileSync(flags.out, text.endsWith('\n') ? text : `${text}\n`);
          log(`wrote ${flags.out}`);
        } else process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      },
    );
}
