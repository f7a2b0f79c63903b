/** `sob report`: one self-contained HTML report of an eval, a run or an evaluation folder. */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { writeHtmlReport } from '../app/report.ts';
import { UserError } from '../core/errors.ts';
import { intOption } from './common.ts';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'write one self-contained HTML report: leaderboards, charts, errors, pairwise tests, per-record diffs',
    )
    .argument('<run-or-evaluation-dir>', 'a sob eval directory, a sob run directory, or an evaluation folder')
    .option('--out <file>', 'where to write it (default <dir>/report.html)')
    .option(
      '--responses <dir>',
      'response JSONL files, or run directories (runs/<name>/responses.jsonl), for the per-record diffs (for a bare evaluation folder); stderr says what matched',
    )
    .option('--names <file>', 'display names: {"<model-dir>": "<name>"}')
    .option(
      '--max-diff-leaves <n>',
      'embed at most this many leaf-diff rows, wrong answers first',
      intOption('--max-diff-leaves', 0),
      400_000,
    )
    .option(
      '--max-records <n>',
      'embed every record up to this many; past it, a quarter of it per model with the lowest Value Accuracy and a seeded random half (2,500 and 5,000 at 10,000; the rule is stated on the page)',
      intOption('--max-records', 1),
      10_000,
    )
    .option(
      '--samples <n>',
      'bootstrap resamples for the pairwise comparison',
      intOption('--samples', 1),
      300,
    )
    .addHelpText(
      'after',
      `
Examples:
  sob report runs/eval
  sob report ../shared/data/sob/evaluation --responses ../shared/data/sob/images_responses --out sob.html

A run directory (sob run) or an eval directory whose runs are not scored yet is scored first,
into its evaluation/ (strict profile, as for a user's own benchmark). Model folders left out
(no summary, unreadable summary, records without a summary) are named on stderr and in the page.
The file needs no network: open it in any browser.`,
    )
    .action(
      async (
        dir: string,
        flags: {
          out?: string;
          responses?: string;
          names?: string;
          samples: number;
          maxDiffLeaves: number;
          maxRecords: number;
        },
      ) => {
        let isDir = false;
        try {
          isDir = statSync(dir).isDirectory();
        } catch {
          isDir = false;
        }
        if (!isDir) throw new UserError(`no such directory: ${dir}`);
        await writeHtmlReport({ ...flags, dir });
      },
    );
}
