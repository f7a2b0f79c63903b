/** `sob report`: one self-contained HTML report of an eval, a run or an evaluation folder. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { intOption, log } from './common.ts';

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
      'response JSONL files for the per-record diffs (for a bare evaluation folder)',
    )
    .option('--names <file>', 'display names: {"<model-dir>": "<name>"}')
    .option(
      '--max-diff-leaves <n>',
      'embed at most this many leaf-diff rows, wrong answers first',
      intOption('--max-diff-leaves', 0),
      400_000,
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

The file needs no network: open it in any browser.`,
    )
    .action(
      async (
        dir: string,
        flags: { out?: string; responses?: string; names?: string; samples: number; maxDiffLeaves: number },
      ) => {
        let isDir = false;
        try {
          isDir = statSync(dir).isDirectory();
        } catch {
          isDir = false;
        }
        if (!isDir) throw new UserError(`no such directory: ${dir}`);
        const { writeReport } = await import('../report/html.ts');
        const started = Date.now();
        const out = await writeReport({
          dir,
          out: flags.out ?? join(dir, 'report.html'),
          responses: flags.responses,
          names: flags.names,
          samples: flags.samples,
          maxDiffLeaves: flags.maxDiffLeaves,
          log,
        });
        const size = statSync(out).size;
        log(
          `report: ${out} (${(size / 1024).toFixed(0)} KB, ${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
        process.stdout.write(`${out}\n`);
      },
    );
}
