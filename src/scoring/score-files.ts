/**
 * `sob score`: scores response files on a pool of worker threads (one file per worker at a
 * time) and writes, per file and modality, `<out>/<modality>/<model-dir>/eval_records.jsonl`
 * and `eval_summary.json` in the reference's format.
 *
 * Each record has a time budget. A worker stuck on one record (a catastrophic `pattern`, say)
 * is terminated; that record is reported with `scoring_error` and zero scores, and a new worker
 * goes on from where the old one stopped. Nothing already scored is lost.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildSummary, SummaryAccumulator, type SummaryOptions } from '../../metrics/summary.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { refuseSymlink } from '../core/files.ts';
import { parseLine, readLinesSync } from '../core/jsonl.ts';
import { pathModality } from '../core/modality.ts';
import { dumpsPy, type PyValue } from '../core/pyjson.ts';
import { MODALITIES, type Modality, SCORING_SKIP_KEYS, SCORING_SPAN_KEYS } from '../core/record.ts';
import {
  type Benchmark,
  type BenchmarkRef,
  benchmarkSha256,
  idsByModality,
  loadBenchmark,
  someIds,
} from './benchmark.ts';
import { cleanEvaluationParent, EvalFolder } from './output.ts';
import {
  type LineOutcome,
  type ProfileOptions,
  SCHEMA_TIMED_OUT,
  schemaKeyOfLine,
  schemaTextHash,
} from './score-line.ts';
import { assertDistinctFolders, folderOf } from './targets.ts';
import type { SummaryJob, WorkerJob, WorkerMessage, WorkerRequest } from './worker.ts';
import { scoringWorkerUrl } from './worker-bundle.ts';

export interface ScoreTarget {
  /** The response JSONL file. */
  file: string;
  /** Output folder name under `<out>/<modality>/`; default from the file name. */
  modelDir?: string;
  /** Output root for this file; default the run's `outDir`. */
  outDir?: string;
  /** The profile for this file; default the run's `profile`. */
  profile?: ProfileOptions;
  /** The benchmark this file answers (a run directory's); default the run's `benchmark`. */
  benchmark?: BenchmarkRef;
}

export interface ScoreOptions {
  outDir: string;
  modality?: Modality;
  summary: Omit<SummaryOptions, 'errorAnalysis'>;
  /** Worker threads; default the number of cores, at most the number of files. */
  jobs?: number;
  /** A record's scoring time budget. */
  recordTimeoutMs?: number;
  /** A worker's heap budget (MB): an answer too big for it is reported, not fatal. */
  workerMemoryMb?: number;
  /** `sob` (default, parity with the reference) or `strict`; strict may assert formats. A
   * target's own `profile` wins. */
  profile?: ProfileOptions;
  /** The benchmark the answers belong to (`--benchmark`): ground truths, schemas and weights
   * come from it, and ids without a partner are reported. */
  benchmark?: BenchmarkRef;
  /** How often a progress line goes to `log` (default 5 s). */
  progressIntervalMs?: number;
  log?: (line: string) => void;
}

export interface ScoredOutput {
  modality: Modality;
  dir: string;
  records: number;
  summary: Record<string, unknown>;
}

export interface FileResult {
  file: string;
  outputs: ScoredOutput[];
  malformed: { line: number; error: string }[];
  /** Records reported with a scoring error (over time or memory). */
  failed: number;
  error?: string;
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

class Output {
  readonly acc = new SummaryAccumulator();
  /** Each record id's first line (repeats are counted; the strict profile keeps the first). */
  readonly firstLine = new Map<string, number>();
  /** Rows without a record id (each counts as one distinct record). */
  noId = 0;
  duplicates = 0;
  readonly repeats: string[] = [];
  constructor(readonly folder: EvalFolder) {}
  get dir(): string {
    return this.folder.dir;
  }
}

/** A record id as a map key (an int id and a string id never collide); undefined when absent. */
function idKey(id: PyValue): string | undefined {
  if (typeof id === 'string') return id === '' ? undefined : id;
  if (id === null) return undefined;
  return `\u0000${dumpsPy(id)}`;
}

/** Evaluation folders being written by this process, and by which input (one writer each). */
const claimed = new Map<string, string>();

class FileState {
  readonly outputs = new Map<Modality, Output>();
  readonly malformed: { line: number; error: string }[] = [];
  readonly skip: Record<number, string> = {};
  lastLine = 0;
  failed = 0;
  /** Records not run because their schema ran over the time budget before. */
  remembered = 0;
  /** Records scored as text only because nothing told their modality. */
  defaulted = 0;
  readonly pathModality: Modality;
  readonly pathDefaulted: boolean;
  /** Answers whose id the known benchmark lacks, by modality. */
  readonly unknown = new Map<Modality, string[]>();
  /** Records whose schema the provider refused, by modality (their ids). */
  readonly rejected = new Map<Modality, string[]>();
  /** Set when the file cannot be written (a folder in use): the rest of it is not scored. */
  error?: string;
  constructor(
    readonly target: ScoreTarget,
    readonly outRoot: string,
    /** The strict profile keeps the first row of each record id. */
    readonly dedupe: boolean,
    readonly onRecord: () => void = () => {},
  ) {
    const p = pathModality(target.file);
    this.pathModality = p.modality;
    this.pathDefaulted = p.defaulted;
  }

  /** Takes one outcome; false when the file must stop (its error says why). */
  accept(o: LineOutcome): boolean {
    if (this.error) return false;
    if (o.line <= this.lastLine) return true; // already have it (a message from a replaced worker)
    this.lastLine = o.line;
    this.onRecord();
    if (o.kind === 'malformed') {
      this.malformed.push({ line: o.line, error: o.error });
      return true;
    }
    if (o.kind === 'unknown' || o.kind === 'rejected') {
      const byModality = o.kind === 'unknown' ? this.unknown : this.rejected;
      const list = byModality.get(o.modality);
      if (list) list.push(o.recordId);
      else byModality.set(o.modality, [o.recordId]);
      return true;
    }
    let out = this.outputs.get(o.modality);
    if (!out) {
      const dir = folderOf(this.target, this.outRoot, o.modality);
      const owner = claimed.get(dir);
      try {
        if (owner !== undefined)
          throw new UserError(`${owner} and ${this.target.file} would both be written to ${dir}`);
        out = new Output(new EvalFolder(dir));
      } catch (e) {
        this.error = `${this.target.file}: ${errorMessage(e)}`;
        return false;
      }
      claimed.set(dir, this.target.file);
      this.outputs.set(o.modality, out);
    }
    const key = idKey(o.score.recordId);
    if (key === undefined) out.noId++;
    else {
      const first = out.firstLine.get(key);
      if (first !== undefined) {
        out.duplicates++;
        if (out.repeats.length < 5)
          out.repeats.push(`${dumpsPy(o.score.recordId)} (line ${o.line}, first ${first})`);
        if (this.dedupe) return true;
      } else out.firstLine.set(key, o.line);
    }
    if (o.defaulted) this.defaulted++;
    out.folder.write(o.json);
    out.acc.add(o.score);
    if (o.score.explanation.scoring_error) {
      this.failed++;
      if (o.score.explanation.scoring_error === SCHEMA_TIMED_OUT) this.remembered++;
    }
    return true;
  }

  /** Drops every folder this file was building (the old folders stay as they were). */
  abort(): void {
    for (const out of this.outputs.values()) {
      claimed.delete(out.dir);
      out.folder.abort();
    }
    this.outputs.clear();
  }
}

/** How many schema texts that ran over time are remembered (per `sob score`). */
const TIMED_OUT_MAX = 4096;

/** The side file listing a folder's unanswered and unknown ids, when a benchmark is known. */
export const BENCHMARK_IDS = 'benchmark_ids.json';

/**
 * Scores every target; resolves with one result per file, in input order. Throws a UserError
 * before scoring anything when two targets would write one evaluation folder, or a benchmark
 * cannot be read.
 */
export async function scoreFiles(targets: ScoreTarget[], opts: ScoreOptions): Promise<FileResult[]> {
  const log = opts.log ?? (() => {});
  assertDistinctFolders(targets, opts.outDir, opts.modality);
  const benchmarkRef = (t: ScoreTarget) => t.benchmark ?? opts.benchmark;
  const benchmarks = new Map<number, Benchmark>();
  targets.forEach((t, i) => {
    const ref = benchmarkRef(t);
    if (ref) benchmarks.set(i, loadBenchmark(ref));
  });

  /** One line per folder on repeated ids and, with a benchmark, on ids without a partner. */
  const reportIds = (
    st: FileState,
    modality: Modality,
    out: Output,
    benchIds: Map<Modality, string[]> | undefined,
    missing: string[],
  ) => {
    const name = `${st.target.file} (${modality})`;
    if (out.duplicates > 0)
      log(
        `${name}: ${out.duplicates} rows repeat an earlier record id (${out.firstLine.size + out.noId} distinct): ${out.repeats.join(', ')}${out.duplicates > out.repeats.length ? ', ...' : ''}; ${st.dedupe ? 'strict profile: only the first row of each id is scored' : 'sob profile: every row is scored, as the reference does (--profile strict keeps the first of each id)'}`,
      );
    if (!benchIds) return;
    const unknown = st.unknown.get(modality) ?? [];
    if (missing.length > 0 || unknown.length > 0)
      log(
        `${name}: ${missing.length} of the benchmark's ${benchIds.get(modality)?.length ?? 0} ${modality} records have no answer${missing.length ? ` (${someIds(missing)})` : ''}; ${unknown.length} answers are not in the benchmark${unknown.length ? ` (${someIds(unknown)}; not scored)` : ''}; lists in ${join(out.dir, BENCHMARK_IDS)}`,
      );
  };
  // Leftovers of killed runs (temp folders, folders moved aside, locks) go first.
  for (const t of targets) if (t.outDir) refuseSymlink(t.outDir, 'evaluation folder');
  for (const root of new Set(targets.map((t) => t.outDir ?? opts.outDir)))
    for (const m of MODALITIES) cleanEvaluationParent(resolve(root, m));
  const timeoutMs = opts.recordTimeoutMs ?? 20_000;
  const jobs = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), targets.length));
  const results: FileResult[] = new Array(targets.length);
  const profileOf = (t: ScoreTarget): ProfileOptions =>
    t.profile ?? opts.profile ?? { profile: 'sob', assertFormats: false };
  let nextTarget = 0;
  let filesDone = 0;
  let recordsSeen = 0;
  // Schema texts that ran over the time budget (their hashes), shared with every worker.
  const timedOut = new SharedArrayBuffer(4 * (1 + 2 * TIMED_OUT_MAX));
  const timedOutTable = new Int32Array(timedOut);
  /** The schema of `file:line` ran over time: its text's hash goes to every worker. */
  const rememberTimedOut = (st: FileState, line: number) => {
    let key: string | undefined;
    for (const l of readLinesSync(st.target.file, line)) {
      const ref = benchmarkRef(st.target);
      key = schemaKeyOfLine(parseLine(l, SCORING_SPAN_KEYS, SCORING_SKIP_KEYS), {
        pathModality: st.pathModality,
        profile: profileOf(st.target),
        benchmark: ref ? loadBenchmark(ref).records : undefined,
      });
      break;
    }
    if (key === undefined) return;
    const [a, b] = schemaTextHash(key);
    const n = Atomics.load(timedOutTable, 0);
    if (n >= TIMED_OUT_MAX) return;
    for (let i = 0; i < n; i++) if (timedOutTable[1 + 2 * i] === a && timedOutTable[2 + 2 * i] === b) return;
    timedOutTable[1 + 2 * n] = a;
    timedOutTable[2 + 2 * n] = b;
    Atomics.store(timedOutTable, 0, n + 1);
  };

  /** Closes a file's outputs and writes its summaries (computed by `summarize`, on a worker). */
  const finishFile = async (
    idx: number,
    st: FileState,
    summarize: (items: SummaryJob[]) => Promise<Record<string, unknown>[]>,
    error?: string,
  ) => {
    if (error || st.error) {
      st.abort();
      results[idx] = {
        file: st.target.file,
        outputs: [],
        malformed: st.malformed,
        failed: st.failed,
        error: error ?? st.error,
      };
      filesDone++;
      return;
    }
    const outs = [...st.outputs];
    const bench = benchmarks.get(idx);
    const missingByModality = new Map<Modality, string[]>();
    const benchIds = bench ? idsByModality(bench, opts.modality ?? st.pathModality) : undefined;
    if (benchIds) {
      for (const [m, ids] of benchIds) {
        // A record the provider refused was asked: it is not missing.
        const answered = st.outputs.get(m)?.firstLine;
        const refused = new Set(st.rejected.get(m) ?? []);
        missingByModality.set(
          m,
          ids.filter((id) => !answered?.has(id) && !refused.has(id)),
        );
      }
    }
    const items: SummaryJob[] = outs.map(([modality, out]) => {
      out.folder.closeRows();
      const dq = out.acc.dataQuality;
      dq.malformed_jsonl_line_count = st.malformed.length;
      dq.duplicate_record_id_count = out.duplicates;
      dq.distinct_record_ids = out.firstLine.size + out.noId;
      dq.schema_rejected_count = st.rejected.get(modality)?.length ?? 0;
      const data = out.acc.data();
      if (bench)
        data.benchmark = {
          path: bench.path,
          sha256: benchmarkSha256(bench),
          records: benchIds?.get(modality)?.length ?? 0,
          missing_ids: missingByModality.get(modality)?.length ?? 0,
          unknown_ids: st.unknown.get(modality)?.length ?? 0,
        };
      return {
        data,
        responseFile: st.target.file,
        opts: { ...opts.summary, errorAnalysis: modality === 'image', profile: profileOf(st.target).profile },
      };
    });
    let summaries: Record<string, unknown>[];
    try {
      summaries = items.length > 0 ? await summarize(items) : [];
    } catch {
      summaries = items.map((it) => buildSummary(it.data, it.responseFile, it.opts));
    }
    const outputs: ScoredOutput[] = outs.map(([modality, out], i) => {
      const files: Record<string, string> = {
        'eval_summary.json': `${dumpsPy(summaries[i], { indent: 2 })}\n`,
      };
      if (bench)
        files[BENCHMARK_IDS] = `${JSON.stringify(
          {
            benchmark: bench.path,
            missing_ids: missingByModality.get(modality) ?? [],
            unknown_ids: st.unknown.get(modality) ?? [],
          },
          null,
          2,
        )}\n`;
      out.folder.commit(files);
      claimed.delete(out.dir);
      reportIds(st, modality, out, benchIds, missingByModality.get(modality) ?? []);
      return { modality, dir: out.dir, records: out.acc.n, summary: summaries[i] };
    });
    if (bench) {
      // Benchmark records of a source this file has no answer for at all.
      for (const [m, missing] of missingByModality)
        if (!st.outputs.has(m) && missing.length > 0)
          log(
            `${st.target.file}: none of the benchmark's ${missing.length} ${m} records has an answer (no ${m} folder written); ids: ${someIds(missing)}`,
          );
      for (const [m, ids] of st.unknown)
        if (!st.outputs.has(m))
          log(
            `${st.target.file}: ${ids.length} ${m} answers are not in the benchmark (not scored): ${someIds(ids)}`,
          );
    }
    const refused = [...st.rejected.values()].reduce((n, l) => n + l.length, 0);
    if (refused > 0)
      log(
        `${st.target.file}: ${refused} records whose schema the provider refused (eval_info.schema_rejected) are left out of the scores (data_quality.schema_rejected_count)`,
      );
    if (st.defaulted > 0)
      log(
        `${st.target.file}: ${st.defaulted === 1 ? '1 record names' : `${st.defaulted} records name`} no source (metadata.source) and the file name does not tell one (text_response, image_response, audio_response, _image, _audio): scored as text; --modality chooses`,
      );
    if (st.remembered > 0)
      log(
        `${st.target.file}: ${st.remembered} records share a schema that ran over the time budget earlier: reported with scoring_error, not run again`,
      );
    for (const m of st.malformed.slice(0, 5)) log(`${st.target.file}:${m.line}: skipped: ${m.error}`);
    if (st.malformed.length > 5)
      log(`${st.target.file}: ${st.malformed.length - 5} more malformed lines skipped`);
    let err: string | undefined;
    if (outputs.length === 0) {
      const unknown = [...st.unknown.values()].reduce((n, l) => n + l.length, 0);
      const why = [
        st.malformed.length ? `${st.malformed.length} malformed lines` : '',
        unknown ? `${unknown} answers not in the benchmark` : '',
        refused ? `${refused} with a schema the provider refused` : '',
      ].filter(Boolean);
      err = `${st.target.file}: no records to score${why.length ? ` (${why.join(', ')})` : ''}`;
    }
    results[idx] = { file: st.target.file, outputs, malformed: st.malformed, failed: st.failed, error: err };
    filesDone++;
  };

  const runSlot = (): Promise<void> =>
    new Promise<void>((resolveSlot) => {
      const heartbeat = new SharedArrayBuffer(12);
      const beat = new Int32Array(heartbeat);
      let worker: Worker | null = null;
      let current: { idx: number; st: FileState } | null = null;
      let seenSeq = -1;
      let seenAt = Date.now();
      let watchdog: NodeJS.Timeout | null = null;
      let pendingSummary: {
        resolve: (s: Record<string, unknown>[]) => void;
        reject: (e: Error) => void;
      } | null = null;

      const summarize = (items: SummaryJob[]) =>
        new Promise<Record<string, unknown>[]>((resolveSummary, reject) => {
          if (!worker) return reject(new Error('no worker'));
          pendingSummary = { resolve: resolveSummary, reject };
          worker.postMessage({ type: 'summarize', items } satisfies WorkerRequest);
        });

      const fileDone = (error?: string) => {
        const c = current!;
        current = null;
        Atomics.store(beat, 0, 0);
        finishFile(c.idx, c.st, summarize, error).then(nextFile, (e: unknown) => {
          c.st.abort();
          results[c.idx] = {
            file: c.st.target.file,
            outputs: [],
            malformed: c.st.malformed,
            failed: c.st.failed,
            error: `${c.st.target.file}: could not write results: ${e instanceof Error ? e.message : String(e)}`,
          };
          nextFile();
        });
      };

      const startWorker = () => {
        const w = new Worker(scoringWorkerUrl(), {
          workerData: { heartbeat, timedOut },
          resourceLimits: {
            maxOldGenerationSizeMb: opts.workerMemoryMb ?? 3072,
            maxYoungGenerationSizeMb: 48,
            stackSizeMb: 64,
          },
        });
        w.on('message', (msg: WorkerMessage) => {
          if (w !== worker) return;
          if (msg.type === 'summaries' || (msg.type === 'fatal' && pendingSummary)) {
            const p = pendingSummary;
            pendingSummary = null;
            if (msg.type === 'summaries') p?.resolve(msg.summaries);
            else p?.reject(new Error(msg.error));
            return;
          }
          if (!current) return;
          if (msg.type === 'batch') {
            for (const item of msg.items) {
              if (current.st.accept(item)) continue;
              // The file cannot be written (its folder is in use): stop scoring it.
              const old = worker;
              worker = null;
              void old?.terminate();
              startWorker();
              fileDone();
              return;
            }
          } else if (msg.type === 'done') fileDone();
          else if (msg.type === 'fatal') fileDone(`${current.st.target.file}: ${msg.error}`);
        });
        w.on('error', (e: Error) => {
          if (w !== worker) return;
          if (pendingSummary) {
            const p = pendingSummary;
            pendingSummary = null;
            p.reject(e);
            startWorker();
            return;
          }
          // Out of memory or a crash inside one record: report that record, go on after it.
          replaceWorker(`scoring failed: ${e.message.split('\n')[0]}`);
        });
        w.on('exit', () => {
          if (w !== worker) return;
          if (pendingSummary) {
            const p = pendingSummary;
            pendingSummary = null;
            p.reject(new Error('scoring worker exited'));
            startWorker();
          } else if (current) replaceWorker('scoring worker exited unexpectedly');
        });
        worker = w;
        Atomics.store(beat, 0, 0);
      };

      const replaceWorker = (reason: string, overTime = false) => {
        const old = worker;
        worker = null;
        void old?.terminate();
        if (!current) return;
        const line = Atomics.load(beat, 0);
        const st = current.st;
        if (line > 0 && st.skip[line] === undefined) {
          st.skip[line] = reason;
          // Over time inside schema work: every record with that schema text is reported the same
          // way, by every worker, without running it again.
          const inSchema = overTime && Atomics.load(beat, 2) === 1;
          if (inSchema) rememberTimedOut(st, line);
          log(
            `${st.target.file}:${line}: ${reason}; reported with scoring_error${inSchema ? ' (it was in its schema: every later record with that schema is reported the same way, not run again)' : ''}`,
          );
        } else {
          // No progress possible on this file.
          startWorker();
          fileDone(`${st.target.file}: ${reason}`);
          return;
        }
        startWorker();
        dispatch();
      };

      const dispatch = () => {
        if (!current || !worker) return;
        const st = current.st;
        seenSeq = -1;
        seenAt = Date.now();
        const job: WorkerJob = {
          file: st.target.file,
          startLine: st.lastLine + 1,
          pathModality: st.pathModality,
          pathDefaulted: st.pathDefaulted,
          forced: opts.modality,
          skip: st.skip,
          profile: profileOf(st.target),
          benchmark: benchmarkRef(st.target),
        };
        worker.postMessage({ type: 'score', job } satisfies WorkerRequest);
      };

      const nextFile = () => {
        if (nextTarget >= targets.length) {
          if (watchdog) clearInterval(watchdog);
          void worker?.terminate();
          worker = null;
          resolveSlot();
          return;
        }
        const idx = nextTarget++;
        const t = targets[idx];
        current = {
          idx,
          st: new FileState(t, t.outDir ?? opts.outDir, profileOf(t).profile === 'strict', () => {
            recordsSeen++;
          }),
        };
        dispatch();
      };

      watchdog = setInterval(
        () => {
          if (!current || !worker) return;
          const seq = Atomics.load(beat, 1);
          const line = Atomics.load(beat, 0);
          const now = Date.now();
          if (seq !== seenSeq) {
            seenSeq = seq;
            seenAt = now;
            return;
          }
          if (line > 0 && now - seenAt > timeoutMs) replaceWorker(`scoring exceeded ${timeoutMs} ms`, true);
        },
        Math.min(250, Math.max(10, timeoutMs / 4)),
      );

      startWorker();
      nextFile();
    });

  // Progress on long work: a line every 5 s on stderr (files done, records scored, rate).
  const started = Date.now();
  const progress = setInterval(() => {
    const secs = (Date.now() - started) / 1000;
    log(
      `... ${filesDone}/${targets.length} files, ${recordsSeen} records scored (${Math.round(recordsSeen / secs)}/s)`,
    );
  }, opts.progressIntervalMs ?? 5000);
  progress.unref();
  try {
    await Promise.all(Array.from({ length: jobs }, runSlot));
  } finally {
    clearInterval(progress);
  }
  return results;
}

/** Default output root (DESIGN.md): `runs/evaluation`. */
export function defaultOutDir(): string {
  return resolve('runs', 'evaluation');
}
