/**
 * `sob score`: scores response files on a pool of worker threads (one file per worker at a
 * time) and writes, per file and modality, `<out>/<modality>/<model-dir>/eval_records.jsonl`
 * and `eval_summary.json` in the reference's format.
 *
 * Each record has a time budget. A worker stuck on one record (a catastrophic `pattern`, say)
 * is terminated; that record is reported with `scoring_error` and zero scores, and a new worker
 * goes on from where the old one stopped. Nothing already scored is lost.
 *
 * The bootstrap runs once the rows are in, for many files together: every file of the same size
 * uses the same resample indices, so each is drawn once, on the workers (the plain and the
 * weighted summaries in parallel), without storing any (memory flat in the input's size). Files
 * wait for it at most `FLUSH_MS`, so a long run's finished folders keep landing as it goes.
 * Folders are then written and swapped in asynchronously: the disk never holds up scoring.
 *
 * This module is light on purpose: `scoreFiles` starts the workers, then loads the scorer
 * (`score-run.ts`) while they start.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { checkFirstLine } from '../core/formats/jsonl-version.ts';
import { RESPONSE_LINE } from '../core/formats/response-line.ts';
import { FormatVersionError } from '../core/formats/version.ts';
import type { ScoreTarget } from './file-state.ts';
import type { FileResult, ScoreOptions } from './score-run.ts';
import { WORKER_START_MB, WorkerPool } from './worker-pool.ts';

export type { ScoreTarget } from './file-state.ts';
export type { FileResult, ScoredOutput, ScoreOptions } from './score-run.ts';

/**
 * Scores every target; resolves with one result per file, in input order. Throws a UserError
 * before scoring anything when two targets would write one evaluation folder, or a benchmark
 * cannot be read.
 */
export async function scoreFiles(targets: ScoreTarget[], opts: ScoreOptions): Promise<FileResult[]> {
  for (const t of targets) checkResponseFile(t.file);
  const pool = new WorkerPool(opts.recordTimeoutMs);
  pool.prestart(
    Math.max(1, Math.min(opts.jobs ?? availableParallelism(), targets.length)),
    Math.min(WORKER_START_MB, opts.workerMemoryMb ?? 3072),
  );
  try {
    const { runScoring } = await import('./score-run.ts');
    return await runScoring(targets, opts, pool);
  } finally {
    pool.dispose();
  }
}

/**
 * A response file written by a newer sob-eval stops the command before anything is scored (one
 * line, exit 2): its first line says its version. A file that cannot be read here is left to the
 * scorer, which names it in its own words.
 */
function checkResponseFile(file: string): void {
  try {
    if (!statSync(file).isFile()) return;
    checkFirstLine(file, RESPONSE_LINE);
  } catch (e) {
    if (e instanceof FormatVersionError) throw e;
  }
}

/** Expands directory arguments to their `*.jsonl` files (sorted, as the reference does). */
export function expandInputs(inputs: string[]): string[] {
  const files: string[] = [];
  for (const input of inputs) {
    if (!existsSync(input)) throw new UserError(`no such file or directory: ${input}`);
    if (statSync(input).isDirectory()) {
      const found = readdirSync(input)
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
        .map((f) => join(input, f));
      if (found.length === 0) throw new UserError(`no *.jsonl response files in ${input}`);
      files.push(...found);
    } else files.push(input);
  }
  return files;
}

/** Default output root (docs/design.md): `runs/evaluation`. */
export function defaultOutDir(): string {
  return resolve('runs', 'evaluation');
}
