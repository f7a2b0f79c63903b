/**
 * `sob score`: scores response files on a pool of worker threads (one file per worker at a
 * time) and writes, per file and modality, `<out>/<modality>/<model-dir>/eval_records.jsonl`
 * and `eval_summary.json` in the reference's format.
 *
 * Each record has a time budget. A worker stuck on one record (a catastrophic `pattern`, say)
 * is terminated; that record is reported with `scoring_error` and zero scores, and a new worker
 * goes on from where the old one stopped. Nothing already scored is lost.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SummaryAccumulator, type SummaryOptions } from '../../metrics/summary.ts';
import { Heartbeat, type Watchdog, watchHeartbeat } from '../core/budget.ts';
import { UserError } from '../core/errors.ts';
import { modalityFromPath, modelDirName } from '../core/modality.ts';
import { dumpsPy } from '../core/pyjson.ts';
import type { Modality } from '../core/record.ts';
import { summarizeJob } from './lenient.ts';
import { type LenientOutput, type LenientRun, lenientOutput } from './lenient-output.ts';
import type { LineOutcome, ProfileOptions } from './score-line.ts';
import type { SummaryJob, WorkerJob, WorkerMessage, WorkerRequest } from './worker.ts';
import { scoringWorkerUrl } from './worker-bundle.ts';

export interface ScoreTarget {
  /** The response JSONL file. */
  file: string;
  /** Output folder name under `<out>/<modality>/`; default from the file name. */
  modelDir?: string;
  /** Output root for this file; default the run's `outDir`. */
  outDir?: string;
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
  /** `sob` (default, parity with the reference) or `strict`; strict may assert formats. */
  profile?: ProfileOptions;
  /** `--match`: lenient scores beside the exact ones (rows, side file, summary block). */
  match?: LenientRun;
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
  lenient?: LenientOutput;
  private fd: number;
  private buf: string[] = [];
  private bufLen = 0;
  readonly tmp: string;
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.tmp = join(dir, `.eval_records.jsonl.${process.pid}.tmp`);
    this.fd = openSync(this.tmp, 'w');
  }
  write(line: string): void {
    this.buf.push(line);
    this.bufLen += line.length;
    if (this.bufLen > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.buf.length === 0) return;
    writeSync(this.fd, `${this.buf.join('\n')}\n`);
    this.buf = [];
    this.bufLen = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
    renameSync(this.tmp, join(this.dir, 'eval_records.jsonl'));
  }
}

class FileState {
  readonly outputs = new Map<Modality, Output>();
  readonly malformed: { line: number; error: string }[] = [];
  readonly skip: Record<number, string> = {};
  lastLine = 0;
  failed = 0;
  constructor(
    readonly target: ScoreTarget,
    readonly pathModality: Modality,
    readonly outRoot: string,
    readonly onRecord: () => void = () => {},
  ) {}

  accept(o: LineOutcome): void {
    if (o.line <= this.lastLine) return; // already have it (a message from a replaced worker)
    this.lastLine = o.line;
    this.onRecord();
    if (o.kind === 'malformed') {
      this.malformed.push({ line: o.line, error: o.error });
      return;
    }
    let out = this.outputs.get(o.modality);
    if (!out) {
      const dir = join(
        this.outRoot,
        o.modality,
        this.target.modelDir ?? modelDirName(this.target.file, o.modality),
      );
      out = new Output(dir);
      this.outputs.set(o.modality, out);
    }
    out.write(o.json);
    out.acc.add(o.score);
    if (o.lenient) lenientOutput(out, out.dir).add(o.lenient, o.score.weight);
    if (o.score.explanation.scoring_error) this.failed++;
  }
}

/** Scores every target; resolves with one result per file, in input order. */
export async function scoreFiles(targets: ScoreTarget[], opts: ScoreOptions): Promise<FileResult[]> {
  const log = opts.log ?? (() => {});
  const timeoutMs = opts.recordTimeoutMs ?? 20_000;
  const jobs = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), targets.length));
  const results: FileResult[] = new Array(targets.length);
  let nextTarget = 0;
  let filesDone = 0;
  let recordsSeen = 0;

  /** Closes a file's outputs and writes its summaries (computed by `summarize`, on a worker). */
  const finishFile = async (
    idx: number,
    st: FileState,
    summarize: (items: SummaryJob[]) => Promise<Record<string, unknown>[]>,
    error?: string,
  ) => {
    const outs = [...st.outputs];
    const items: SummaryJob[] = outs.map(([modality, out]) => {
      out.close();
      out.acc.dataQuality.malformed_jsonl_line_count = st.malformed.length;
      return {
        data: out.acc.data(),
        responseFile: st.target.file,
        opts: { ...opts.summary, errorAnalysis: modality === 'image' },
        ...(out.lenient && opts.match ? { lenient: out.lenient.close(opts.match) } : {}),
      };
    });
    let summaries: Record<string, unknown>[];
    try {
      summaries = items.length > 0 ? await summarize(items) : [];
    } catch {
      summaries = items.map(summarizeJob);
    }
    const outputs: ScoredOutput[] = outs.map(([modality, out], i) => {
      writeFileSync(join(out.dir, 'eval_summary.json'), `${dumpsPy(summaries[i], { indent: 2 })}\n`);
      return { modality, dir: out.dir, records: out.acc.n, summary: summaries[i] };
    });
    for (const m of st.malformed.slice(0, 5)) log(`${st.target.file}:${m.line}: skipped: ${m.error}`);
    if (st.malformed.length > 5)
      log(`${st.target.file}: ${st.malformed.length - 5} more malformed lines skipped`);
    let err = error;
    if (!err && outputs.length === 0) {
      err = `${st.target.file}: no records to score${st.malformed.length ? ` (${st.malformed.length} malformed lines)` : ''}`;
    }
    results[idx] = { file: st.target.file, outputs, malformed: st.malformed, failed: st.failed, error: err };
    filesDone++;
  };

  const runSlot = (): Promise<void> =>
    new Promise<void>((resolveSlot) => {
      const hb = new Heartbeat();
      let worker: Worker | null = null;
      let current: { idx: number; st: FileState } | null = null;
      let watchdog: Watchdog | null = null;
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
        hb.clear();
        finishFile(c.idx, c.st, summarize, error).then(nextFile, (e: unknown) => {
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
          workerData: { heartbeat: hb.buffer },
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
          if (msg.type === 'judge') {
            // Verdicts for a worker's unsettled pairs; asking is not timed against the record.
            void (opts.match?.judge?.verdicts(msg.pairs) ?? Promise.resolve([])).then((verdicts) => {
              if (w === worker)
                w.postMessage({ type: 'verdicts', id: msg.id, verdicts } satisfies WorkerRequest);
            });
            return;
          }
          if (!current) return;
          if (msg.type === 'batch') for (const item of msg.items) current.st.accept(item);
          else if (msg.type === 'done') fileDone();
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
        hb.clear();
      };

      const replaceWorker = (reason: string) => {
        const old = worker;
        worker = null;
        void old?.terminate();
        if (!current) return;
        const line = hb.item();
        const st = current.st;
        if (line > 0 && st.skip[line] === undefined) {
          st.skip[line] = reason;
          log(`${st.target.file}:${line}: ${reason}; reported with scoring_error`);
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
        watchdog?.reset();
        const job: WorkerJob = {
          file: st.target.file,
          startLine: st.lastLine + 1,
          pathModality: st.pathModality,
          forced: opts.modality,
          skip: st.skip,
          profile: opts.profile ?? { profile: 'sob', assertFormats: false },
          match: opts.match?.job,
        };
        worker.postMessage({ type: 'score', job } satisfies WorkerRequest);
      };

      const nextFile = () => {
        if (nextTarget >= targets.length) {
          watchdog?.stop();
          void worker?.terminate();
          worker = null;
          resolveSlot();
          return;
        }
        const idx = nextTarget++;
        const t = targets[idx];
        current = {
          idx,
          st: new FileState(t, modalityFromPath(t.file), t.outDir ?? opts.outDir, () => {
            recordsSeen++;
          }),
        };
        dispatch();
      };

      watchdog = watchHeartbeat(hb, timeoutMs, () => {
        if (current && worker) replaceWorker(`scoring exceeded ${timeoutMs} ms`);
      });

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
