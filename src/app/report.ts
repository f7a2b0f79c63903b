/**
 * `sob report` as one use case: one self-contained HTML report of an eval, a run or an
 * evaluation folder, scoring first what is not scored yet. The command (`src/cli/report.ts`)
 * checks the folder, reads the flags into `ReportSettings` and calls `writeHtmlReport`.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.ts';
import { MODALITIES } from '../core/record.ts';
import type { ScoreTarget } from '../scoring/score-files.ts';
import { log } from './io.ts';
import { runAccess } from './run-access.ts';

/** What `sob report` was asked: the folder and how the page is made. */
export interface ReportSettings {
  /** A sob eval directory, a sob run directory, or an evaluation folder (checked to exist). */
  dir: string;
  /** Default: <dir>/report.html. */
  out?: string;
  responses?: string;
  names?: string;
  samples: number;
  maxDiffLeaves: number;
  /** Past this many records the page embeds a stated sample (default 10,000). */
  maxRecords?: number;
}

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

/** Writes the report: its path on stdout, its size and time on stderr. */
export async function writeHtmlReport(s: ReportSettings): Promise<void> {
  const { dir } = s;
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
    out: s.out ?? join(dir, 'report.html'),
    responses: s.responses,
    names: s.names,
    samples: s.samples,
    maxDiffLeaves: s.maxDiffLeaves,
    maxRecords: s.maxRecords,
    log,
    runs: await runAccess(),
  });
  const size = statSync(out).size;
  log(`report: ${out} (${(size / 1024).toFixed(0)} KB, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  process.stdout.write(`${out}\n`);
}
