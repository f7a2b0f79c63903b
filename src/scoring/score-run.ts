/**
 * The scorer behind `scoreFiles` (src/scoring/score-files.ts, which starts the workers first and
 * loads this module while they start): files dealt to worker slots, rows folded into folders,
 * bootstraps, folders written and swapped in.
 */
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import {
  buildLenientSummary,
  LENIENT_BOOTSTRAPS,
  type LenientData,
  type LenientIntervals,
  lenientBootstrapInput,
} from '../../metrics/lenient-summary.ts';
import {
  type BootstrapInput,
  bootstrapIntervals,
  type Intervals,
  type SummaryData,
  type SummaryOptions,
  withCategories,
} from '../../metrics/summary.ts';
import { Heartbeat, type Watchdog, watchHeartbeat } from '../core/budget.ts';
import { runSlots } from '../core/concurrency.ts';
import { errorMessage, UserError, where } from '../core/errors.ts';
import { refuseSymlink } from '../core/files.ts';
import { evalSummaryText, type SummaryOut } from '../core/formats/eval-summary.ts';
import { type ParsedLine, parseLine, readLinesSync } from '../core/jsonl.ts';
import { dumpsPy } from '../core/pyjson.ts';
import { type Modality, SCORING_SKIP_KEYS, SCORING_SPAN_KEYS, SOURCES, type Source } from '../core/record.ts';
import { BENCHMARK_IDS, type Benchmark, type BenchmarkRef, loadBenchmark, someIds } from './benchmark.ts';
import { FileState, type Output, type ScoreTarget } from './file-state.ts';
import type { LenientRun } from './lenient-output.ts';
import { cleanEvaluationParent } from './output.ts';
import type { LineOutcome, ProfileOptions } from './score-line.ts';
import { assertDistinctFolders } from './targets.ts';
import { loadSchemaFolderSummary, summarizeJob, type TrackData } from './track.ts';
import type { WorkerJob, WorkerMessage, WorkerRequest } from './worker.ts';
import { HEARTBEAT_BYTES, TIMED_OUT_MAX, WORKER_START_MB, type WorkerPool } from './worker-pool.ts';

export type { ScoreTarget } from './file-state.ts';

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

export interface ScoredOutput {
  /** A modality, or `schema` (the compliance track's folder). */
  modality: Source;
  dir: string;
  records: number;
  summary: SummaryOut;
}

export interface FileResult {
  file: string;
  outputs: ScoredOutput[];
  malformed: { line: number; error: string }[];
  /** Records reported with a scoring error (over time or memory). */
  failed: number;
  error?: string;
}

/** The longest a finished file waits for its bootstrap (others may join it) before it runs. */
const FLUSH_MS = 10_000;
/** ...or until this many rows wait (their columns are held in memory until then). */
const FLUSH_ROWS = 2_000_000;
/**
 * How long a slot left without a file waits for the others' last files before it bootstraps the
 * folders already in on its own (a second group then draws its resamples again: on the 34 SOB
 * files, ~0.1 s of each worker for two folders).
 */
const EARLY_BOOTSTRAP_MS = 300;

/** A folder whose rows are in, waiting for its bootstrap. */
interface Pending {
  st: FileState;
  out: Output;
  data: SummaryData;
  opts: SummaryOptions;
  /** The compliance track's data for this folder, when it has any. */
  track?: TrackData;
  /** `--match`: what the summary's `lenient` block is computed from. */
  lenient?: LenientData;
}

/** One bootstrap (one generator) over summaries of equal size. */
interface BootstrapTask {
  seed: number;
  samples: number;
  inputs: BootstrapInput[];
  /** SOB metric columns (their categories are added where the bootstrap runs). */
  categories: boolean;
  done: (intervals: Intervals[]) => void;
}

/** A task's inputs as the bootstrap takes them. */
function taskInputs(t: Pick<BootstrapTask, 'inputs' | 'categories'>): BootstrapInput[] {
  return t.categories ? t.inputs.map(withCategories) : t.inputs;
}

/** A worker's `rows` message as outcomes: the batch, with each row's JSON text put back. */
function rowsOf(msg: Extract<WorkerMessage, { type: 'rows' }>): LineOutcome[] {
  const items = JSON.parse(msg.json) as LineOutcome[];
  if (msg.rows === undefined) return items;
  const texts = msg.rows.split('\n');
  let t = 0;
  for (const o of items) if (o.kind === 'row') o.json = texts[t++];
  return items;
}

/**
 * A line of a file, parsed as a worker parses it: for a record its worker could not finish (the
 * worker is gone, so the line is read again); undefined when it cannot be read now.
 */
function lineAt(file: string, line: number): ParsedLine | undefined {
  try {
    for (const l of readLinesSync(file, line))
      return l.line === line ? parseLine(l, SCORING_SPAN_KEYS, SCORING_SKIP_KEYS) : undefined;
  } catch {
    // unreadable now
  }
  return undefined;
}

/** The record id of a parsed line, as a message names it; undefined when it has none. */
function recordIdOf(parsed: ParsedLine | undefined): string | undefined {
  if (!parsed?.ok || !(parsed.value instanceof Map)) return undefined;
  const metadata = parsed.value.get('metadata');
  const id = metadata instanceof Map ? metadata.get('record_id') : undefined;
  return id === undefined || id === null ? undefined : typeof id === 'string' ? id : dumpsPy(id);
}

/** `scoreFiles` (see there), on `pool`'s workers. */
export async function runScoring(
  targets: ScoreTarget[],
  opts: ScoreOptions,
  pool: WorkerPool,
): Promise<FileResult[]> {
  const log = opts.log ?? (() => {});
  assertDistinctFolders(targets, opts.outDir, opts.modality);
  const benchmarkRef = (t: ScoreTarget) => t.benchmark ?? opts.benchmark;
  const benchmarks = new Map<number, Benchmark>();
  targets.forEach((t, i) => {
    const ref = benchmarkRef(t);
    if (ref) benchmarks.set(i, loadBenchmark(ref));
  });
  // Leftovers of killed runs (temp folders, folders moved aside, locks) go first.
  for (const t of targets) if (t.outDir) refuseSymlink(t.outDir, 'evaluation folder');
  for (const root of new Set(targets.map((t) => t.outDir ?? opts.outDir)))
    for (const m of SOURCES) cleanEvaluationParent(resolve(root, m));

  const timeoutMs = opts.recordTimeoutMs ?? 20_000;
  const jobs = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), targets.length));
  const results: FileResult[] = new Array(targets.length);
  const profileOf = (t: ScoreTarget): ProfileOptions =>
    t.profile ?? opts.profile ?? { profile: 'sob', assertFormats: false };
  let nextTarget = 0;
  let filesDone = 0;
  let recordsSeen = 0;
  let scoring = 0; // files handed to a worker and not done yet (a slot's current and queued)

  // Each schema compiled once, by one worker, its code handed to the others.
  const relay = pool.relay;
  // Schema texts that ran over the time budget (their hashes), shared with every worker.
  const timedOutTable = new Int32Array(pool.timedOut);
  /** The schema of a line (`parsed`, of `st`'s file) ran over time: its text's hash goes to every worker. */
  const rememberTimedOut = async (st: FileState, parsed: ParsedLine | undefined) => {
    if (!parsed) return;
    const { schemaKeyOfLine, schemaTextHash } = await import('./score-line.ts');
    const key = schemaKeyOfLine(parsed, {
      pathModality: st.pathModality,
      profile: profileOf(st.target),
      benchmark: st.benchmark?.records,
    });
    if (key === undefined) return;
    const [a, b] = schemaTextHash(key);
    const n = Atomics.load(timedOutTable, 0);
    if (n >= TIMED_OUT_MAX) return;
    for (let i = 0; i < n; i++) if (timedOutTable[1 + 2 * i] === a && timedOutTable[2 + 2 * i] === b) return;
    timedOutTable[1 + 2 * n] = a;
    timedOutTable[2 + 2 * n] = b;
    Atomics.store(timedOutTable, 0, n + 1);
  };

  // -- Files: rows in, then summaries, then folders swapped in ---------------------------------

  /** Folders of each file still to be written; a file's result is complete when it is 0. */
  const remaining = new Map<number, { outputs: ScoredOutput[]; left: number }>();
  const commits: Promise<void>[] = [];
  let pending: Pending[] = [];
  let pendingSince = 0;
  let pendingRows = 0;
  /** Bootstrap tasks queued or running (for the progress line). */
  let bootstrapsLeft = 0;
  const tasks: BootstrapTask[] = [];

  const fail = (st: FileState, error: string) => {
    st.abort();
    results[st.idx] = {
      file: st.target.file,
      outputs: [],
      malformed: st.malformed,
      failed: st.failed,
      error,
    };
    filesDone++;
  };

  /** The lines a finished file says on stderr (repeats, benchmark ids, refusals, defaults...). */
  const reportFile = (st: FileState) => {
    const file = st.target.file;
    const bench = st.benchmarkIds(opts.modality);
    for (const out of st.outputs.values()) {
      const name = `${file} (${out.modality})`;
      if (out.duplicates > 0)
        log(
          `${name}: ${out.duplicates} rows repeat an earlier record id (${out.distinct} distinct): ${out.repeats.join(', ')}${out.duplicates > out.repeats.length ? ', ...' : ''}; ${st.dedupe ? 'strict profile: only the first row of each id is scored' : 'sob profile: every row is scored, as the reference does (--profile strict keeps the first of each id)'}`,
        );
      if (out.noId > 0)
        log(
          `${name}: ${out.noId} rows name no metadata.record_id (line${out.noIdLines.length > 1 ? 's' : ''} ${out.noIdLines.join(', ')}${out.noId > out.noIdLines.length ? ', ...' : ''}): scored, but they cannot be told apart, checked for repeats or matched to a benchmark`,
        );
      if (out.badSchema > 0)
        log(
          `${name}: ${out.badSchema === 1 ? '1 record has' : `${out.badSchema} records have`} an input.json_schema that is not a usable JSON Schema, so ${out.badSchema === 1 ? 'it scores' : 'they score'} 0 (data_quality.invalid_schema_input_count): ${out.badSchemaSeen.join('; ')}${out.badSchema > out.badSchemaSeen.length ? '; ...' : ''}`,
        );
      const unweighted = out.acc.dataQuality.unknown_difficulty_count;
      if (out.modality !== 'schema' && unweighted > 0)
        log(
          `${name}: ${unweighted === out.rows ? `none of its ${unweighted} records names` : `${unweighted} of its ${out.rows} records name no`} schema_complexity or difficulty (easy, medium, hard): weight 0, so ${unweighted === out.rows ? 'every weighted mean is 0.000' : 'they are left out of the weighted means'} (the reference's rule); give metadata.schema_complexity, or score against the benchmark with --benchmark`,
        );
      if (!bench) continue;
      const missing = bench.missing.get(out.modality as Source) ?? [];
      const unknown = st.unknown.get(out.modality as Source) ?? [];
      if (missing.length > 0 || unknown.length > 0)
        log(
          `${name}: ${missing.length} of the benchmark's ${bench.ids.get(out.modality as Source)?.length ?? 0} ${out.modality} records have no answer${missing.length ? ` (${someIds(missing)})` : ''}; ${unknown.length} answers are not in the benchmark${unknown.length ? ` (${someIds(unknown)}; not scored)` : ''}; lists in ${join(out.dir, BENCHMARK_IDS)}`,
        );
    }
    if (bench) {
      // Benchmark records of a source this file has no answer for at all.
      for (const [m, missing] of bench.missing)
        if (!st.outputs.has(m) && missing.length > 0)
          log(
            `${file}: none of the benchmark's ${missing.length} ${m} records has an answer (no ${m} folder written); ids: ${someIds(missing)}`,
          );
      for (const [m, ids] of st.unknown)
        if (!st.outputs.has(m))
          log(`${file}: ${ids.length} ${m} answers are not in the benchmark (not scored): ${someIds(ids)}`);
    }
    const refused = [...st.rejected.values()].reduce((n, l) => n + l.length, 0);
    if (refused > 0)
      log(
        `${file}: ${refused} records whose schema the provider refused (eval_info.schema_rejected) are left out of the scores (data_quality.schema_rejected_count)`,
      );
    if (st.defaulted > 0)
      log(
        `${file}: ${st.defaulted === 1 ? '1 record names' : `${st.defaulted} records name`} no source (metadata.source) and the file name does not tell one (text_response, image_response, audio_response, _image, _audio): scored as text; --modality chooses`,
      );
    if (st.remembered > 0)
      log(
        `${file}: ${st.remembered} records share a schema that ran over the time budget earlier: reported with scoring_error, not run again`,
      );
    for (const m of st.malformed.slice(0, 5)) log(`${file}:${m.line}: skipped: ${m.error}`);
    if (st.malformed.length > 5) log(`${file}: ${st.malformed.length - 5} more malformed lines skipped`);
  };

  /** A file's rows are all in: its folders wait for their bootstrap; lines on what it held. */
  const rowsDone = (st: FileState, error?: string) => {
    if (error || st.error) return fail(st, (error ?? st.error)!);
    const done = st.endRows(opts.modality);
    reportFile(st);
    if (done.length === 0) {
      const unknown = [...st.unknown.values()].reduce((n, l) => n + l.length, 0);
      const refused = [...st.rejected.values()].reduce((n, l) => n + l.length, 0);
      const why = [
        st.malformed.length ? `${st.malformed.length} malformed lines` : '',
        unknown ? `${unknown} answers not in the benchmark` : '',
        refused ? `${refused} with a schema the provider refused` : '',
      ].filter(Boolean);
      return fail(st, `${st.target.file}: no records to score${why.length ? ` (${why.join(', ')})` : ''}`);
    }
    remaining.set(st.idx, { outputs: [], left: done.length });
    if (pending.length === 0) pendingSince = Date.now();
    for (const { out, data } of done) {
      const lenient = out.lenient && opts.match ? out.lenient.data(opts.match) : undefined;
      pending.push({
        lenient,
        st,
        out,
        data,
        opts: {
          ...opts.summary,
          errorAnalysis: out.modality === 'image',
          profile: profileOf(st.target).profile,
          profileReason: profileOf(st.target).reason,
        },
        track: out.track.data(profileOf(st.target).profile, profileOf(st.target).protocol),
      });
      pendingRows += data.weights.length;
    }
  };

  const folderDone = (st: FileState, o: ScoredOutput) => {
    const r = remaining.get(st.idx);
    if (!r) return; // another folder of this file failed: the file is reported failed
    r.outputs.push(o);
    if (--r.left > 0) return;
    remaining.delete(st.idx);
    // In modality order of first appearance, as the rows came.
    const order = [...st.outputs.keys()];
    r.outputs.sort((a, b) => order.indexOf(a.modality) - order.indexOf(b.modality));
    results[st.idx] = {
      file: st.target.file,
      outputs: r.outputs,
      malformed: st.malformed,
      failed: st.failed,
    };
    filesDone++;
  };

  const folderFailed = (st: FileState, out: Output, e: unknown) => {
    out.folder.abort();
    st.release(out);
    const r = remaining.get(st.idx);
    if (r) remaining.delete(st.idx);
    if (results[st.idx]) return;
    results[st.idx] = {
      file: st.target.file,
      outputs: r?.outputs ?? [],
      malformed: st.malformed,
      failed: st.failed,
      error: `${st.target.file}: could not write ${out.dir}: ${errorMessage(e)}`,
    };
    filesDone++;
  };

  /** Writes one folder (summary, side file) and swaps it in, in the background. */
  const commit = (
    p: Pending,
    intervals: { plain: Intervals; weighted: Intervals },
    lenientIv: LenientIntervals | undefined,
  ) => {
    // A schema folder's summary needs the compliance track's metrics (loaded on first use).
    if (p.track?.schema) {
      commits.push(
        loadSchemaFolderSummary().then(
          () => writeFolder(p, intervals, lenientIv),
          (e: unknown) => folderFailed(p.st, p.out, e),
        ),
      );
      return;
    }
    writeFolder(p, intervals, lenientIv);
  };
  const writeFolder = (
    p: Pending,
    intervals: { plain: Intervals; weighted: Intervals },
    lenientIv: LenientIntervals | undefined,
  ) => {
    const { st, out, data } = p;
    let summary: SummaryOut;
    const files: Record<string, string> = {};
    try {
      // The SOB summary, with the compliance track's block when the folder has its records.
      summary = summarizeJob({ data, responseFile: st.target.file, opts: p.opts, track: p.track, intervals });
      // `--match`: the lenient block, from its own generators.
      if (p.lenient) summary.lenient = buildLenientSummary(p.lenient, p.opts, lenientIv);
      files['eval_summary.json'] = evalSummaryText(summary);
      const bench = st.benchmarkIds(opts.modality);
      if (st.benchmark && bench)
        files[BENCHMARK_IDS] = `${JSON.stringify(
          {
            benchmark: st.benchmark.path,
            missing_ids: bench.missing.get(out.modality as Source) ?? [],
            unknown_ids: st.unknown.get(out.modality as Source) ?? [],
          },
          null,
          2,
        )}\n`;
    } catch (e) {
      folderFailed(st, out, e);
      return;
    }
    commits.push(
      out.folder.commit(files).then(
        () => {
          st.release(out);
          folderDone(st, { modality: out.modality, dir: out.dir, records: out.written, summary });
        },
        (e: unknown) => folderFailed(st, out, e),
      ),
    );
  };

  /**
   * Turns the waiting folders into bootstrap tasks (one plain and one weighted per size), when
   * forced (nothing else to score) or when they have waited long enough.
   */
  const flush = (force: boolean): void => {
    if (pending.length === 0) return;
    // Without resamples there is nothing to share: each folder is summarised and written as soon
    // as its rows are in (behind the scoring of the others, not after it).
    if (
      !force &&
      opts.summary.bootstrapSamples > 0 &&
      Date.now() - pendingSince < FLUSH_MS &&
      pendingRows < FLUSH_ROWS
    )
      return;
    const batch = pending;
    pending = [];
    pendingRows = 0;
    const groups = new Map<string, Pending[]>();
    for (const p of batch) {
      const key = `${p.data.weights.length}:${p.opts.bootstrapSamples}:${p.opts.seed}`;
      const g = groups.get(key);
      if (g) g.push(p);
      else groups.set(key, [p]);
    }
    for (const group of groups.values()) {
      const { seed, bootstrapSamples: samples } = group[0].opts;
      const got: { plain?: Intervals[]; weighted?: Intervals[] } = {};
      // `--match`: each folder's lenient intervals, four generators of their own.
      const lenientGot = group.map((p) => (p.lenient ? ({} as Partial<LenientIntervals>) : undefined));
      // Bootstraps not yet in; the folders commit when none is left (1 until all are queued).
      let waiting = 1;
      const finish = () => {
        if (--waiting > 0) return;
        group.forEach((p, i) => {
          commit(p, { plain: got.plain![i], weighted: got.weighted![i] }, lenientGot[i] as LenientIntervals);
        });
      };
      /** One generator's bootstrap over the group's folders that have those columns. */
      const run = (
        taskSeed: number,
        categories: boolean,
        inputs: BootstrapInput[],
        done: (iv: Intervals[]) => void,
      ) => {
        if (inputs.length === 0) return;
        waiting++;
        const whenDone = (iv: Intervals[]) => {
          done(iv);
          finish();
        };
        // Nothing to draw: no need for a worker.
        if (samples <= 0 || group[0].data.weights.length === 0)
          whenDone(bootstrapIntervals(taskInputs({ inputs, categories }), taskSeed, samples));
        else {
          bootstrapsLeft++;
          tasks.push({
            seed: taskSeed,
            samples,
            inputs,
            categories,
            done: (iv) => {
              bootstrapsLeft--;
              whenDone(iv);
            },
          });
        }
      };
      // The weighted bootstrap first: it takes longest (a slot idle before the others are done
      // starts on it).
      for (const weighted of [true, false]) {
        // The metric columns only: categories are added where the bootstrap runs.
        run(
          seed + (weighted ? 1 : 0),
          true,
          group.map((p) => ({ columns: p.data.columns, weights: weighted ? p.data.weights : null })),
          (iv) => {
            got[weighted ? 'weighted' : 'plain'] = iv;
          },
        );
      }
      for (const [key, noJudge, weighted, offset] of LENIENT_BOOTSTRAPS) {
        const members: number[] = [];
        const inputs: BootstrapInput[] = [];
        group.forEach((p, i) => {
          const input = p.lenient ? lenientBootstrapInput(p.lenient, noJudge, weighted) : null;
          if (!input) return;
          members.push(i);
          inputs.push(input);
        });
        run(seed + offset, false, inputs, (iv) => {
          members.forEach((m, k) => {
            lenientGot[m]![key] = iv[k];
          });
        });
      }
      finish();
    }
  };

  // -- Worker slots ----------------------------------------------------------------------------

  /** Slots with nothing to do, waiting for the others' files to finish (then the bootstrap). */
  const idle: (() => void)[] = [];
  /** Set while a slot left without a file waits for the others before bootstrapping alone. */
  let earlyBootstrap: NodeJS.Timeout | null = null;
  const wakeIdle = () => {
    for (const w of idle.splice(0)) w();
  };

  const runSlot = (): Promise<void> =>
    new Promise<void>((resolveSlot, rejectSlot) => {
      // The slot's first worker: one started ahead, when there is one.
      let ahead = pool.take();
      // [line being scored, records started, 1 while schema work runs, the file's index]
      const heartbeat = ahead?.heartbeat ?? new SharedArrayBuffer(HEARTBEAT_BYTES);
      const beat = new Int32Array(heartbeat);
      let worker: Worker | null = null;
      let current: FileState | null = null;
      /**
       * The file this slot's worker scores after `current`, handed over in advance: the worker
       * goes on without waiting for the main thread to take its last rows and send the next job.
       */
      let queued: FileState | null = null;
      let task: BootstrapTask | null = null;
      let watchdog: Watchdog | null = null;
      const fullMb = opts.workerMemoryMb ?? 3072;
      let heapMb = Math.min(WORKER_START_MB, fullMb);

      /** `current` is done; the queued file becomes current (`fresh`: a new worker has no job yet). */
      const fileDone = (error?: string, fresh = false) => {
        const st = current!;
        current = queued;
        queued = null;
        scoring--;
        // The worker may be on the queued file already: its heartbeat is its own.
        if (!current) Atomics.store(beat, 0, 0);
        else if (fresh) dispatch();
        rowsDone(st, error);
        next();
      };

      /** A bootstrap task's intervals (null: its worker failed, run it here instead). */
      const taskDone = (iv: Intervals[] | null) => {
        const t = task!;
        task = null;
        t.done(iv ?? bootstrapIntervals(taskInputs(t), t.seed, t.samples));
        next();
      };

      /** Stops this slot's worker; the schemas it was compiling become free to claim. */
      let workerId = 0;
      const stopWorker = () => {
        const old = worker;
        worker = null;
        if (old) relay.release(workerId);
        void old?.terminate();
      };

      const startWorker = () => {
        const { worker: w, id } = ahead ?? pool.spawn(heartbeat, heapMb);
        ahead = undefined;
        w.on('message', (msg: WorkerMessage) => {
          if (msg.type === 'compiled') {
            // Even from a worker being replaced: the code is good.
            relay.publish(id, msg.compiled);
            return;
          }
          if (w !== worker) return;
          if (msg.type === 'judge') {
            // Verdicts for a worker's unsettled pairs; asking is not timed against the record.
            void (opts.match?.judge?.verdicts(msg.pairs) ?? Promise.resolve([])).then((verdicts) => {
              if (w === worker)
                w.postMessage({ type: 'verdicts', id: msg.id, verdicts } satisfies WorkerRequest);
            });
            return;
          }
          if (task) {
            if (msg.type === 'intervals') taskDone(msg.intervals);
            else if (msg.type === 'fatal') taskDone(null);
            return;
          }
          if (!current) return;
          if (msg.type === 'batch' || msg.type === 'rows') {
            const items = msg.type === 'rows' ? rowsOf(msg) : msg.items;
            for (const item of items) {
              if (current.accept(item)) continue;
              // The file cannot be written (its folder is in use): stop scoring it.
              stopWorker();
              startWorker();
              fileDone(undefined, true);
              return;
            }
          } else if (msg.type === 'done') fileDone();
          else if (msg.type === 'fatal') fileDone(`${current.target.file}: ${msg.error}`);
        });
        w.on('error', (e: Error) => {
          if (w !== worker) return;
          if (task) {
            stopWorker();
            startWorker();
            taskDone(null);
            return;
          }
          if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' && heapMb < fullMb) {
            // A big answer: the same record again, on a worker with the full heap budget.
            heapMb = fullMb;
            stopWorker();
            startWorker();
            dispatch();
            return;
          }
          // Out of memory or a crash inside one record: report that record, go on after it.
          replaceWorker(`scoring failed: ${e.message.split('\n')[0]}`);
        });
        w.on('exit', () => {
          if (w !== worker) return;
          if (task) {
            stopWorker();
            startWorker();
            taskDone(null);
          } else if (current) replaceWorker('scoring worker exited unexpectedly');
        });
        worker = w;
        workerId = id;
        Atomics.store(beat, 0, 0);
      };

      const replaceWorker = (reason: string, overTime = false) => {
        stopWorker();
        if (!current) return;
        const st = current;
        // A line of the queued file (its 'done' not read yet) is not this file's.
        const line = Atomics.load(beat, 3) === st.idx ? Atomics.load(beat, 0) : 0;
        if (line > 0 && st.skip[line] === undefined) {
          st.skip[line] = reason;
          // Over time inside schema work: every record with that schema text is reported the same
          // way, by every worker, without running it again.
          const inSchema = overTime && Atomics.load(beat, 2) === 1;
          const parsed = lineAt(st.target.file, line);
          log(
            `${where(st.target.file, line, recordIdOf(parsed))}: ${reason}; reported with scoring_error${inSchema ? ' (it was in its schema: every later record with that schema is reported the same way, not run again)' : ''}`,
          );
          startWorker();
          if (inSchema) void rememberTimedOut(st, parsed).finally(dispatch);
          else dispatch();
          return;
        }
        // No progress possible on this file.
        startWorker();
        fileDone(`${st.target.file}: ${reason}`, true);
      };

      /** Hands `current`, then `queued`, to the worker (a new one, or after a restart). */
      const dispatch = () => {
        if (!current || !worker) return;
        watchdog?.reset();
        post(current);
        if (queued) post(queued);
      };
      const post = (st: FileState) => {
        const job: WorkerJob = {
          id: st.idx,
          file: st.target.file,
          startLine: st.lastLine + 1,
          pathModality: st.pathModality,
          pathDefaulted: st.pathDefaulted,
          forced: opts.modality,
          skip: st.skip,
          profile: profileOf(st.target),
          benchmark: benchmarkRef(st.target),
          match: opts.match?.job,
        };
        worker!.postMessage({ type: 'score', job } satisfies WorkerRequest);
      };

      const newFile = (): FileState => {
        const idx = nextTarget++;
        const t = targets[idx];
        scoring++;
        return new FileState(
          idx,
          t,
          t.outDir ?? opts.outDir,
          profileOf(t).profile === 'strict',
          benchmarks.get(idx),
          () => {
            recordsSeen++;
          },
        );
      };

      /** Queues the next file behind `current` (not while bootstrap tasks wait for a worker). */
      const topUp = () => {
        if (!current || queued || !worker || tasks.length > 0 || nextTarget >= targets.length) return;
        queued = newFile();
        post(queued);
      };

      /** What this slot does next: a bootstrap task, a file, wait for the others, or stop. */
      const next = () => {
        flush(nextTarget >= targets.length && scoring === 0);
        if (current) {
          // The queued file is being scored already.
          topUp();
          return;
        }
        if (tasks.length > 0) {
          task = tasks.shift()!;
          wakeIdle();
          if (!worker) startWorker();
          worker!.postMessage({
            type: 'bootstrap',
            inputs: task.inputs,
            seed: task.seed,
            samples: task.samples,
            categories: task.categories,
          } satisfies WorkerRequest);
          return;
        }
        if (nextTarget < targets.length) {
          current = newFile();
          dispatch();
          topUp();
          return;
        }
        if (scoring > 0) {
          // Others are still scoring. Their last files mostly end within moments: waiting keeps
          // every folder in one bootstrap group (the resamples drawn once, not once per group).
          // When they do not end within EARLY_BOOTSTRAP_MS, this slot runs the bootstrap of the
          // folders already in rather than stay idle (a folder's intervals do not depend on
          // which others share its draws: the same seed gives each the same resamples).
          idle.push(next);
          if (pending.length > 0 && !earlyBootstrap)
            earlyBootstrap = setTimeout(() => {
              earlyBootstrap = null;
              if (scoring > 0 && pending.length > 0 && idle.length > 0) {
                flush(true);
                wakeIdle();
              }
            }, EARLY_BOOTSTRAP_MS);
          return;
        }
        wakeIdle();
        watchdog?.stop();
        stopWorker();
        resolveSlot();
      };

      // One record (a heartbeat item is its line) over its time: the worker is replaced.
      watchdog = watchHeartbeat(
        new Heartbeat(heartbeat),
        timeoutMs,
        () => replaceWorker(`scoring exceeded ${timeoutMs} ms`, true),
        {
          // Not while the worker is on the queued file: this file's 'done' is on its way.
          watching: () => current !== null && worker !== null && Atomics.load(beat, 3) === current.idx,
          keepAlive: true,
        },
      );

      try {
        startWorker();
      } catch (e) {
        // A worker Node refuses to start (its flags, its resources): say so, do not wait forever.
        watchdog?.stop();
        rejectSlot(new UserError(`the scoring workers cannot start: ${errorMessage(e)}`));
        return;
      }
      next();
    });

  // Progress on long work: a line every 5 s on stderr (files done, records scored, rate).
  const started = Date.now();
  const progress = setInterval(() => {
    const secs = (Date.now() - started) / 1000;
    log(
      `... ${filesDone}/${targets.length} files, ${recordsSeen} records scored (${Math.round(recordsSeen / secs)}/s)${bootstrapsLeft > 0 ? `; bootstrapping confidence intervals (${opts.summary.bootstrapSamples} samples): ${bootstrapsLeft} task${bootstrapsLeft === 1 ? '' : 's'} left` : ''}`,
    );
  }, opts.progressIntervalMs ?? 5000);
  progress.unref();
  try {
    await runSlots(jobs, runSlot);
    // Every folder's write lands before the results are given.
    for (let i = 0; i < commits.length; i++) await commits[i];
  } finally {
    clearInterval(progress);
    if (earlyBootstrap) clearTimeout(earlyBootstrap);
  }
  return results;
}
