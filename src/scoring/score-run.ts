/**
 * The scorer behind `scoreFiles` (src/scoring/score-files.ts, which starts the workers first and
 * loads this module while they start), composed of named parts:
 * - the scheduler (`scheduler.ts`) hands files to the slots in order;
 * - a worker supervisor per slot (`supervisor.ts`) scores them on a worker thread, watched by the
 *   one watchdog, and runs bootstrap tasks;
 * - the bootstrap batcher (`bootstrap-batcher.ts`) makes one task per generator for the folders
 *   of one size whose rows are in;
 * - the folder committer (`folder-committer.ts`) writes each folder and swaps it in, and keeps
 *   each file's result.
 * Between them, `rowsIn` turns a file whose rows are in into the folders that wait for a bootstrap.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { SummaryOptions } from '../../metrics/summary.ts';
import { RECORD_BUDGET_MS } from '../core/budget.ts';
import { runSlots } from '../core/concurrency.ts';
import { refuseSymlink } from '../core/files.ts';
import { type Modality, SOURCES } from '../core/record.ts';
import { type Benchmark, type BenchmarkRef, loadBenchmark } from './benchmark.ts';
import { BootstrapBatcher } from './bootstrap-batcher.ts';
import { reportFile } from './file-report.ts';
import { FileState, type ScoreTarget } from './file-state.ts';
import { type FileResult, FolderCommitter, type Pending } from './folder-committer.ts';
import type { LenientRun } from './lenient-output.ts';
import { cleanEvaluationParent } from './output.ts';
import { FileScheduler } from './scheduler.ts';
import type { ProfileOptions } from './score-line.ts';
import { superviseSlot } from './supervisor.ts';
import { assertDistinctFolders } from './targets.ts';
import type { WorkerPool } from './worker-pool.ts';

export type { ScoreTarget } from './file-state.ts';
export type { FileResult, ScoredOutput } from './folder-committer.ts';

export interface ScoreOptions {
  outDir: string;
  modality?: Modality;
  summary: Omit<SummaryOptions, 'errorAnalysis'>;
  /** Worker threads; default the number of cores, at most the number of files. */
  jobs?: number;
  /** A record's scoring time budget. */
  recordTimeoutMs?: number;
  /**
   * A worker's heap budget (MB, default 3072): an answer too big for it is reported, not fatal.
   * Workers start with a smaller heap (`WORKER_START_MB`: V8 sizes its heap from the budget, so
   * memory stays flat however long the run); a record that runs out of it is retried once on a
   * worker with the full budget.
   */
  workerMemoryMb?: number;
  /** `sob` (default, parity with the reference) or `strict`; strict may assert formats. A
   * target's own `profile` wins. */
  profile?: ProfileOptions;
  /** The benchmark the answers belong to (`--benchmark`): ground truths, schemas and weights
   * come from it, and ids without a partner are reported. */
  benchmark?: BenchmarkRef;
  /** `--match`: lenient scores beside the exact ones (rows, side file, summary block). */
  match?: LenientRun;
  /** How often a progress line goes to `log` (default 5 s). */
  progressIntervalMs?: number;
  log?: (line: string) => void;
}

/** The profile a target is scored with: its own, else the run's, else the SOB profile. */
function profileFor(t: ScoreTarget, opts: ScoreOptions): ProfileOptions {
  return t.profile ?? opts.profile ?? { profile: 'sob', assertFormats: false };
}

/**
 * A file's rows are all in: the lines on what it held, then its folders wait for their bootstrap
 * (or the file fails: an error, or no records to score).
 */
function rowsIn(
  st: FileState,
  error: string | undefined,
  opts: ScoreOptions,
  committer: FolderCommitter,
  bootstraps: BootstrapBatcher,
): void {
  if (error || st.error) {
    committer.fail(st, (error ?? st.error)!);
    return;
  }
  const done = st.endRows(opts.modality);
  reportFile(st, opts.modality, opts.log ?? (() => {}));
  if (done.length === 0) {
    const unknown = [...st.unknown.values()].reduce((n, l) => n + l.length, 0);
    const refused = [...st.rejected.values()].reduce((n, l) => n + l.length, 0);
    const why = [
      st.malformed.length ? `${st.malformed.length} malformed lines` : '',
      unknown ? `${unknown} answers not in the benchmark` : '',
      refused ? `${refused} with a schema the provider refused` : '',
    ].filter(Boolean);
    committer.fail(st, `${st.target.file}: no records to score${why.length ? ` (${why.join(', ')})` : ''}`);
    return;
  }
  committer.expect(st, done.length);
  const profile = profileFor(st.target, opts);
  const folders: Pending[] = done.map(({ out, data }) => ({
    lenient: out.lenient && opts.match ? out.lenient.data(opts.match) : undefined,
    st,
    out,
    data,
    opts: {
      ...opts.summary,
      errorAnalysis: out.modality === 'image',
      profile: profile.profile,
      profileReason: profile.reason,
    },
    track: out.track.data(profile.profile, profile.protocol),
    scorers: profile.scorers,
  }));
  bootstraps.add(folders);
}

/** `scoreFiles` (see there), on `pool`'s workers. */
export async function runScoring(
  targets: ScoreTarget[],
  opts: ScoreOptions,
  pool: WorkerPool,
): Promise<FileResult[]> {
  const log = opts.log ?? (() => {});
  assertDistinctFolders(targets, opts.outDir, opts.modality);
  const refOf = (t: ScoreTarget) => t.benchmark ?? opts.benchmark;
  const benchmarks = new Map<number, Benchmark>();
  targets.forEach((t, i) => {
    const ref = refOf(t);
    if (ref) benchmarks.set(i, loadBenchmark(ref));
  });
  // The workers share the main thread's index of the benchmark (nothing read twice, no copy).
  const benchmarkRef = (t: ScoreTarget): BenchmarkRef | undefined => {
    const ref = refOf(t);
    const share = ref ? loadBenchmark(ref).records.share() : undefined;
    return ref && share ? { ...ref, share } : ref;
  };
  // Leftovers of killed runs (temp folders, folders moved aside, locks) go first.
  for (const t of targets) if (t.outDir) refuseSymlink(t.outDir, 'evaluation folder');
  for (const root of new Set(targets.map((t) => t.outDir ?? opts.outDir)))
    for (const m of SOURCES) cleanEvaluationParent(resolve(root, m));

  const profileOf = (t: ScoreTarget) => profileFor(t, opts);
  const committer = new FolderCommitter(targets.length, opts.modality);
  const bootstraps = new BootstrapBatcher(opts.summary.bootstrapSamples, committer.commit);
  const scheduler = new FileScheduler(
    targets.length,
    (idx, onRecord) => {
      const t = targets[idx];
      return new FileState(
        idx,
        t,
        t.outDir ?? opts.outDir,
        profileOf(t).profile === 'strict',
        benchmarks.get(idx),
        onRecord,
        profileOf(t).fields !== false,
      );
    },
    bootstraps,
  );

  // Progress on long work: a line every 5 s on stderr (files done, records scored, rate).
  const started = Date.now();
  const progress = setInterval(() => {
    const secs = (Date.now() - started) / 1000;
    const seen = scheduler.recordsSeen;
    const left = bootstraps.left;
    log(
      `... ${committer.filesDone}/${targets.length} files, ${seen} records scored (${Math.round(seen / secs)}/s)${left > 0 ? `; bootstrapping confidence intervals (${opts.summary.bootstrapSamples} samples): ${left} task${left === 1 ? '' : 's'} left` : ''}`,
    );
  }, opts.progressIntervalMs ?? 5000);
  progress.unref();
  try {
    const jobs = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), targets.length));
    await runSlots(jobs, () =>
      superviseSlot({
        pool,
        scheduler,
        bootstraps,
        timeoutMs: opts.recordTimeoutMs ?? RECORD_BUDGET_MS,
        workerMemoryMb: opts.workerMemoryMb ?? 3072,
        modality: opts.modality,
        match: opts.match,
        profileOf,
        benchmarkRef,
        rowsDone: (st, error) => rowsIn(st, error, opts, committer, bootstraps),
        log,
      }),
    );
    // Every folder's write lands before the results are given.
    await committer.settled();
  } finally {
    clearInterval(progress);
    scheduler.stop();
  }
  return committer.results;
}
