/**
 * The worker supervisor of one scoring slot: it keeps one worker thread busy with the files the
 * scheduler hands out (the next one queued behind the current, so the worker never waits for the
 * main thread) and with bootstrap tasks, and watches it with the one watchdog (`src/core/budget.ts`):
 * a record over its time budget, or a worker that crashes or runs out of memory inside a record,
 * costs that record (reported with `scoring_error`) and a new worker goes on after it. A record
 * out of the small starting heap is tried again once on a worker with the full budget.
 */
import type { Worker } from 'node:worker_threads';
import type { Intervals } from '../../metrics/summary.ts';
import { bootstrapIntervals } from '../../metrics/summary.ts';
import { Heartbeat, type Watchdog, watchHeartbeat } from '../core/budget.ts';
import { errorMessage, UserError, where } from '../core/errors.ts';
import { type ParsedLine, parseLine, readLinesSync } from '../core/jsonl.ts';
import { dumpsPy } from '../core/pyjson.ts';
import { type Modality, SCORING_SKIP_KEYS, SCORING_SPAN_KEYS } from '../core/record.ts';
import type { BenchmarkRef } from './benchmark.ts';
import { type BootstrapBatcher, type BootstrapTask, taskInputs } from './bootstrap-batcher.ts';
import type { FileState, ScoreTarget } from './file-state.ts';
import type { LenientRun } from './lenient-output.ts';
import type { FileScheduler } from './scheduler.ts';
import type { LineOutcome, ProfileOptions } from './score-line.ts';
import type { WorkerJob, WorkerMessage, WorkerRequest } from './worker.ts';
import { HEARTBEAT_BYTES, TIMED_OUT_MAX, WORKER_START_MB, type WorkerPool } from './worker-pool.ts';

/** What a slot is given: the run's parts it works with and the settings its jobs carry. */
export interface SlotContext {
  pool: WorkerPool;
  scheduler: FileScheduler;
  bootstraps: BootstrapBatcher;
  /** A record's scoring time budget. */
  timeoutMs: number;
  /** A worker's full heap budget (MB). */
  workerMemoryMb: number;
  /** `--modality`, forced on every record. */
  modality?: Modality;
  match?: LenientRun;
  profileOf: (t: ScoreTarget) => ProfileOptions;
  benchmarkRef: (t: ScoreTarget) => BenchmarkRef | undefined;
  /** A file's rows are all in; `error` when it stopped instead. */
  rowsDone: (st: FileState, error?: string) => void;
  log: (line: string) => void;
}

/** A worker's `rows` message as outcomes: the batch, with each row's JSON text put back. */
function rowsOf(msg: Extract<WorkerMessage, { type: 'rows' }>): LineOutcome[] {
  const items = JSON.parse(msg.json) as LineOutcome[];
  if (msg.rows === undefined) return items;
  const texts = msg.rows.split('\n');
  const bytes = msg.fieldBytes;
  const ends = msg.fieldEnds;
  let t = 0;
  let from = 0;
  for (const o of items) {
    if (o.kind !== 'row') continue;
    o.json = texts[t];
    // The row's fields.jsonl lines: its slice of the batch's bytes (no copy).
    if (bytes && ends && ends[t] >= 0) {
      o.fields = bytes.subarray(from, ends[t]);
      from = ends[t];
    }
    t++;
  }
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

/**
 * The schema of a line (`parsed`, of `st`'s file) ran over time: its text's hash goes into the
 * table every worker reads (the pool's `timedOut`), so none runs that schema again.
 */
async function rememberTimedOut(
  table: Int32Array,
  st: FileState,
  parsed: ParsedLine | undefined,
  profile: ProfileOptions,
): Promise<void> {
  if (!parsed) return;
  const { schemaKeyOfLine, schemaTextHash } = await import('./score-line.ts');
  const key = schemaKeyOfLine(parsed, {
    pathModality: st.pathModality,
    profile,
    benchmark: st.benchmark?.records,
  });
  if (key === undefined) return;
  const [a, b] = schemaTextHash(key);
  const n = Atomics.load(table, 0);
  if (n >= TIMED_OUT_MAX) return;
  for (let i = 0; i < n; i++) if (table[1 + 2 * i] === a && table[2 + 2 * i] === b) return;
  table[1 + 2 * n] = a;
  table[2 + 2 * n] = b;
  Atomics.store(table, 0, n + 1);
}

/** Runs one slot until nothing is left to score or bootstrap; rejects if no worker can start. */
export function superviseSlot(ctx: SlotContext): Promise<void> {
  return new Promise<void>((resolve, reject) => new WorkerSupervisor(ctx, resolve, reject).start());
}

class WorkerSupervisor {
  /** The slot's first worker: one started ahead, when there is one. */
  private ahead: ReturnType<WorkerPool['take']>;
  /** [line being scored, records started, 1 while schema work runs, the file's index] */
  private readonly heartbeat: SharedArrayBuffer;
  private readonly beat: Int32Array;
  private worker: Worker | null = null;
  /** The pool's id of `worker` (the schemas it compiles are claimed under it). */
  private workerId = 0;
  private current: FileState | null = null;
  /**
   * The file this slot's worker scores after `current`, handed over in advance: the worker
   * goes on without waiting for the main thread to take its last rows and send the next job.
   */
  private queued: FileState | null = null;
  private task: BootstrapTask | null = null;
  private watchdog: Watchdog | null = null;
  private heapMb: number;
  private readonly timedOutTable: Int32Array;

  constructor(
    private readonly ctx: SlotContext,
    private readonly resolve: () => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.ahead = ctx.pool.take();
    this.heartbeat = this.ahead?.heartbeat ?? new SharedArrayBuffer(HEARTBEAT_BYTES);
    this.beat = new Int32Array(this.heartbeat);
    this.heapMb = Math.min(WORKER_START_MB, ctx.workerMemoryMb);
    this.timedOutTable = new Int32Array(ctx.pool.timedOut);
  }

  start(): void {
    const { timeoutMs } = this.ctx;
    // One record (a heartbeat item is its line) over its time: the worker is replaced.
    this.watchdog = watchHeartbeat(
      new Heartbeat(this.heartbeat),
      timeoutMs,
      () => this.replaceWorker(`scoring exceeded ${timeoutMs} ms`, true),
      {
        // Not while the worker is on the queued file: this file's 'done' is on its way.
        watching: () =>
          this.current !== null && this.worker !== null && Atomics.load(this.beat, 3) === this.current.idx,
        keepAlive: true,
      },
    );
    try {
      this.startWorker();
    } catch (e) {
      // A worker Node refuses to start (its flags, its resources): say so, do not wait forever.
      this.watchdog?.stop();
      this.reject(new UserError(`the scoring workers cannot start: ${errorMessage(e)}`));
      return;
    }
    this.next();
  }

  /** `current` is done; the queued file becomes current (`fresh`: a new worker has no job yet). */
  private fileDone(error?: string, fresh = false): void {
    const st = this.current!;
    this.current = this.queued;
    this.queued = null;
    this.ctx.scheduler.fileDone();
    // The worker may be on the queued file already: its heartbeat is its own.
    if (!this.current) Atomics.store(this.beat, 0, 0);
    else if (fresh) this.dispatch();
    this.ctx.rowsDone(st, error);
    this.next();
  }

  /** A bootstrap task's intervals (null: its worker failed, run it here instead). */
  private taskDone(iv: Intervals[] | null): void {
    const t = this.task!;
    this.task = null;
    t.done(iv ?? bootstrapIntervals(taskInputs(t), t.seed, t.samples, true, t.method));
    this.next();
  }

  /** Stops this slot's worker; the schemas it was compiling become free to claim. */
  private stopWorker(): void {
    const old = this.worker;
    this.worker = null;
    if (old) this.ctx.pool.relay.release(this.workerId);
    void old?.terminate();
  }

  private startWorker(): void {
    const { worker: w, id } = this.ahead ?? this.ctx.pool.spawn(this.heartbeat, this.heapMb);
    this.ahead = undefined;
    w.on('message', (msg: WorkerMessage) => this.onMessage(w, id, msg));
    w.on('error', (e: Error) => {
      if (w !== this.worker) return;
      if (this.task) {
        this.stopWorker();
        this.startWorker();
        this.taskDone(null);
        return;
      }
      if (
        (e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' &&
        this.heapMb < this.ctx.workerMemoryMb
      ) {
        // A big answer: the same record again, on a worker with the full heap budget.
        this.heapMb = this.ctx.workerMemoryMb;
        this.stopWorker();
        this.startWorker();
        this.dispatch();
        return;
      }
      // Out of memory or a crash inside one record: report that record, go on after it.
      this.replaceWorker(`scoring failed: ${e.message.split('\n')[0]}`);
    });
    w.on('exit', () => {
      if (w !== this.worker) return;
      if (this.task) {
        this.stopWorker();
        this.startWorker();
        this.taskDone(null);
      } else if (this.current) this.replaceWorker('scoring worker exited unexpectedly');
    });
    this.worker = w;
    this.workerId = id;
    Atomics.store(this.beat, 0, 0);
  }

  private onMessage(w: Worker, id: number, msg: WorkerMessage): void {
    if (msg.type === 'compiled') {
      // Even from a worker being replaced: the code is good.
      this.ctx.pool.relay.publish(id, msg.compiled);
      return;
    }
    if (w !== this.worker) return;
    if (msg.type === 'judge') {
      // Verdicts for a worker's unsettled pairs; asking is not timed against the record.
      void (this.ctx.match?.judge?.verdicts(msg.pairs) ?? Promise.resolve([])).then((verdicts) => {
        if (w === this.worker)
          w.postMessage({ type: 'verdicts', id: msg.id, verdicts } satisfies WorkerRequest);
      });
      return;
    }
    if (this.task) {
      if (msg.type === 'intervals') this.taskDone(msg.intervals);
      else if (msg.type === 'fatal') this.taskDone(null);
      return;
    }
    const current = this.current;
    if (!current) return;
    if (msg.type === 'batch' || msg.type === 'rows') {
      // Taken: the worker may post another (BATCHES_AHEAD).
      Atomics.add(this.beat, 5, 1);
      Atomics.notify(this.beat, 5);
      const items = msg.type === 'rows' ? rowsOf(msg) : msg.items;
      for (const item of items) {
        if (current.accept(item)) continue;
        // The file cannot be written (its folder is in use): stop scoring it.
        this.stopWorker();
        this.startWorker();
        this.fileDone(undefined, true);
        return;
      }
    } else if (msg.type === 'done') this.fileDone();
    else if (msg.type === 'fatal') this.fileDone(`${current.target.file}: ${msg.error}`);
  }

  private replaceWorker(reason: string, overTime = false): void {
    this.stopWorker();
    if (!this.current) return;
    const st = this.current;
    // A line of the queued file (its 'done' not read yet) is not this file's.
    const line = Atomics.load(this.beat, 3) === st.idx ? Atomics.load(this.beat, 0) : 0;
    if (line > 0 && st.skip[line] === undefined) {
      // Over time inside a scorer of your own (`--scorer`): the reason names it.
      const phase = Atomics.load(this.beat, 2);
      const scorer = phase >= 2 ? this.ctx.profileOf(st.target).scorers?.[phase - 2] : undefined;
      if (scorer) reason = `scorer ${scorer.name}: ${reason} (the record's time budget, --record-timeout-ms)`;
      st.skip[line] = reason;
      // Over time inside schema work: every record with that schema text is reported the same
      // way, by every worker, without running it again.
      const inSchema = overTime && Atomics.load(this.beat, 2) === 1;
      const parsed = lineAt(st.target.file, line);
      this.ctx.log(
        `${where(st.target.file, line, recordIdOf(parsed))}: ${reason}; reported with scoring_error${inSchema ? ' (it was in its schema: every later record with that schema is reported the same way, not run again)' : ''}`,
      );
      this.startWorker();
      if (inSchema)
        void rememberTimedOut(this.timedOutTable, st, parsed, this.ctx.profileOf(st.target)).finally(() =>
          this.dispatch(),
        );
      else this.dispatch();
      return;
    }
    // No progress possible on this file.
    this.startWorker();
    this.fileDone(`${st.target.file}: ${reason}`, true);
  }

  /** Hands `current`, then `queued`, to the worker (a new one, or after a restart). */
  private dispatch(): void {
    if (!this.current || !this.worker) return;
    this.watchdog?.reset();
    this.post(this.current);
    if (this.queued) this.post(this.queued);
  }

  private post(st: FileState): void {
    const { ctx } = this;
    const job: WorkerJob = {
      id: st.idx,
      file: st.target.file,
      startLine: st.lastLine + 1,
      pathModality: st.pathModality,
      pathDefaulted: st.pathDefaulted,
      forced: ctx.modality,
      skip: st.skip,
      profile: ctx.profileOf(st.target),
      benchmark: ctx.benchmarkRef(st.target),
      match: ctx.match?.job,
    };
    this.worker!.postMessage({ type: 'score', job } satisfies WorkerRequest);
  }

  /** Queues the next file behind `current` (not while bootstrap tasks wait for a worker). */
  private topUp(): void {
    const { scheduler, bootstraps } = this.ctx;
    if (!this.current || this.queued || !this.worker || bootstraps.hasTasks || !scheduler.hasMore) return;
    this.queued = scheduler.take();
    this.post(this.queued);
  }

  /** What this slot does next: a bootstrap task, a file, wait for the others, or stop. */
  private next(): void {
    const { scheduler, bootstraps } = this.ctx;
    bootstraps.flush(scheduler.drained);
    if (this.current) {
      // The queued file is being scored already.
      this.topUp();
      return;
    }
    const task = bootstraps.take();
    if (task) {
      this.task = task;
      scheduler.wakeIdle();
      if (!this.worker) this.startWorker();
      this.worker!.postMessage({
        type: 'bootstrap',
        inputs: task.inputs,
        seed: task.seed,
        samples: task.samples,
        categories: task.categories,
        method: task.method,
      } satisfies WorkerRequest);
      return;
    }
    if (scheduler.hasMore) {
      this.current = scheduler.take();
      this.dispatch();
      this.topUp();
      return;
    }
    if (scheduler.busy) {
      scheduler.park(() => this.next());
      return;
    }
    scheduler.wakeIdle();
    this.watchdog?.stop();
    this.stopWorker();
    this.resolve();
  }
}
