/** `sob report`: one self-contained HTML report of an eval, a run or an evaluation folder. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { runAccess } from '../app/run-access.ts';
import { UserError } from '../core/errors.ts';
import { MODALITIES } from '../core/record.ts';
import type { ScoreTarget } from '../scoring/score-files.ts';
import { intOption, log } from './common.ts';

/**
 * What is left to score before a report: a run directory (`sob run`) or an eval directory's runs
 * (`runs/<model>/`) whose `evaluation/` holds no summary yet. A scored run whose responses
 * changed since is named, not re-scored (its profile was the user's choice).
 */
async function unscored(dir: string): Promise<ScoreTarget[]> {
  const { scanSource } = await import('../report/evaluation.ts');
  const { runsToReport } = await import('../scoring/run-targets.ts');
  const evaluation = join(dir, 'evaluation');
  const { scanCompliance } = await import('../report/compliance.ts');
  const summaries = [
    ...MODALITIES.flatMap((m) => scanSource(evaluation, m).folders),
    ...scanCompliance(evaluation).folders,
  ];
  const runs = runsToReport(dir);
  if (summaries.length === 0) return runs;
  for (const t of runs) {
    const mine = summaries.filter((f) => f.model === t.modelDir);
    const newest = Math.max(0, ...mine.map((f) => statSync(join(f.path, 'eval_summary.json')).mtimeMs));
    if (mine.length > 0 && existsSync(t.file) && statSync(t.file).mtimeMs > newest)
      log(
        `warning: ${t.file} changed after it was scored: run sob score on its run directory to score it again`,
      );
  }
  return [];
}

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
        flags: { out?: string; responses?: string; names?: string; samples: number; maxDiffLeaves: number },
      ) => {
        let isDir = false;
        try {
          isDir = statSync(dir).isDirectory();
        } catch {
          isDir = false;
        }
        if (!isDir) throw new UserError(`no such directory: ${dir}`);
        const started = Date.now();
        const targets = await unscored(dir);
        if (targets.length > 0) {
          // An unscored run is scored first, as `sob score` would (a user's own benchmark: strict).
          log(
            `${dir}: not scored yet; scoring ${targets.length} response file${targets.length === 1 ? '' : 's'} first (strict profile; sob score --profile sob for parity)`,
          );
          const { scoreFiles } = await import('../scoring/score-files.ts');
          const results = await scoreFiles(targets, {
            outDir: join(dir, 'evaluation'),
            summary: { bootstrapSamples: 1000, seed: 42, topKErrors: 20 },
            profile: { profile: 'strict', assertFormats: false },
            log,
          });
          const failed = results.find((r) => r.error);
          if (failed) throw new UserError(`could not score ${dir}: ${failed.error}`);
        }
        const { writeReport } = await import('../report/html.ts');
        const out = await writeReport({
          dir,
          out: flags.out ?? join(dir, 'report.html'),
          responses: flags.responses,
          names: flags.names,
          samples: flags.samples,
          maxDiffLeaves: flags.maxDiffLeaves,
          log,
          runs: await runAccess(),
        });
        const size = statSync(out).size;
        log(
          `report: ${out} (${(size / 1024).toFixed(0)} KB, ${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
        process.stdout.write(`${out}\n`);
      },
    );
}
