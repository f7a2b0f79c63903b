/**
 * Work that can be stopped. Untrusted schemas and answers must not hang a run, and a
 * catastrophic `pattern` cannot be interrupted inside a thread, so such work runs on a worker
 * thread that marks, in a shared heartbeat, the item it is working on; the parent's watchdog
 * terminates a worker whose item has run past its time budget, and a new worker takes the next
 * item. The scoring slots watch their workers with it per record (`src/scoring/score-run.ts`,
 * whose heartbeat adds two slots of its own after these two); `BudgetedWorker` uses it per job
 * (validating an answer, generating an instance).
 */
import { Worker } from 'node:worker_threads';
import { BUILT, moduleUrl } from './paths.ts';

/**
 * Slot 0: the item in progress (0 = none); slot 1: a counter bumped at every item's start. A
 * larger buffer may carry more slots after these (the scoring workers' schema phase and file).
 */
export class Heartbeat {
  readonly buffer: SharedArrayBuffer;
  private readonly beat: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.buffer = buffer;
    this.beat = new Int32Array(buffer);
  }

  /** Worker side: item `item` (> 0) starts. */
  begin(item: number): void {
    Atomics.store(this.beat, 0, item);
    Atomics.add(this.beat, 1, 1);
  }

  /** Worker side: the item is done. */
  end(): void {
    Atomics.store(this.beat, 0, 0);
  }

  /** The item in progress (0 = none). */
  item(): number {
    return Atomics.load(this.beat, 0);
  }

  seq(): number {
    return Atomics.load(this.beat, 1);
  }

  /** Parent side, for a new worker: nothing in progress. */
  clear(): void {
    Atomics.store(this.beat, 0, 0);
  }
}

export interface Watchdog {
  /** Start timing afresh (a new worker, a new job). */
  reset(): void;
  stop(): void;
}

export interface WatchOptions {
  /** Checked at each tick: false skips it (nothing to watch now), leaving the timing as it was. */
  watching?: () => boolean;
  /** Keep the process alive while watching (default: not, as for an idle worker). */
  keepAlive?: boolean;
}

/**
 * Calls `onStall(item)` when one item has been in progress for more than `timeoutMs` (no new
 * item started since). Checks a few times per budget; after a stall it starts timing afresh.
 */
export function watchHeartbeat(
  hb: Heartbeat,
  timeoutMs: number,
  onStall: (item: number) => void,
  opts: WatchOptions = {},
): Watchdog {
  let seenSeq = -1;
  let seenAt = Date.now();
  const timer = setInterval(
    () => {
      if (opts.watching && !opts.watching()) return;
      const seq = hb.seq();
      const item = hb.item();
      const now = Date.now();
      if (seq !== seenSeq) {
        seenSeq = seq;
        seenAt = now;
        return;
      }
      if (item > 0 && now - seenAt > timeoutMs) {
        seenSeq = -1;
        seenAt = now;
        onStall(item);
      }
    },
    Math.min(250, Math.max(10, timeoutMs / 4)),
  );
  if (!opts.keepAlive) timer.unref();
  return {
    reset() {
      seenSeq = -1;
      seenAt = Date.now();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** V8 options Node takes in NODE_OPTIONS (its documentation's list): a worker refuses them. */
const V8_PROCESS_FLAGS = new Set([
  '--abort-on-uncaught-exception',
  '--disallow-code-generation-from-strings',
  '--enable-etw-stack-walking',
  '--expose-gc',
  '--huge-max-old-generation-size',
  '--interpreted-frames-native-stack',
  '--jitless',
  '--max-old-space-size',
  '--max-semi-space-size',
  '--perf-basic-prof',
  '--perf-basic-prof-only-functions',
  '--perf-prof',
  '--perf-prof-unwinding-info',
  '--stack-trace-limit',
]);

/**
 * The process's flags a worker takes, without its preloads (`--import tsx` and the like: a
 * worker loads what it needs itself, and a preload named relative to the working folder fails
 * there once the process has changed folder; a TypeScript loader also doubles its start-up). Passed explicitly, V8 and process-wide flags (`--max-semi-space-size=64`,
 * `--stack-size=...`) would stop every worker from starting (ERR_WORKER_INVALID_EXEC_ARGV), so
 * only Node's own options are kept; the worker's heap is set by its resource limits.
 */
export function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  const nodeOption = (a: string) => {
    const name = a.split('=')[0].replaceAll('_', '-');
    return process.allowedNodeEnvironmentFlags.has(name) && !V8_PROCESS_FLAGS.has(name);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (/^(--import|--loader|--experimental-loader|--require|-r)$/.test(a)) i++;
    else if (!/^(--import|--loader|--experimental-loader|--require)=/.test(a) && nodeOption(a)) out.push(a);
  }
  return out;
}

// -- Jobs on a worker, each with a budget ----------------------------------------------------------

export type TaskOutcome<R> = { ok: true; value: R } | { ok: false; reason: string; timedOut: boolean };

/** The per-record time budget of untrusted work (`--record-timeout-ms`): scoring and the record check. */
export const RECORD_BUDGET_MS = 20_000;

export interface BudgetedWorkerOptions {
  /** The module the worker runs: it exports `handle(job)` (sync or async), given as a file URL. */
  module: URL;
  /** A job's time budget. */
  timeoutMs: number;
  /** The worker's heap budget (MB): a job that needs more fails alone. Default 2048. */
  memoryMb?: number;
  /**
   * Jobs handed to the worker ahead of their turn (default 1: one at a time). The worker still
   * runs them one by one, each timed on its own; a window saves the round trip between small
   * jobs (the record check's, one per record).
   */
  window?: number;
}

interface Pending<J, R> {
  id: number;
  job: J;
  resolve: (o: TaskOutcome<R>) => void;
}

type FromWorker<R> = { id: number; ok: true; value: R } | { id: number; ok: false; reason: string };

// Built, the worker's own JavaScript; from source, a script that loads it through tsx.
const ENTRY = BUILT
  ? moduleUrl('./budget-worker.ts', import.meta.url)
  : new URL('./budget-worker-entry.mjs', import.meta.url);

/**
 * Runs jobs one at a time on a worker thread; a job over its time budget (or its memory) fails
 * with the reason, its worker is replaced, and the jobs after it run on the new one. The worker
 * does not keep the process alive while idle.
 */
export class BudgetedWorker<J, R> {
  private worker: Worker | null = null;
  private readonly hb = new Heartbeat();
  private readonly queue: Pending<J, R>[] = [];
  /** Jobs handed to the current worker, in the order it runs them. */
  private posted: Pending<J, R>[] = [];
  private nextId = 1;
  private watchdog: Watchdog | null = null;
  private closed = false;

  constructor(private readonly opts: BudgetedWorkerOptions) {}

  run(job: J): Promise<TaskOutcome<R>> {
    if (this.closed) return Promise.resolve({ ok: false, reason: 'worker closed', timedOut: false });
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, job, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watchdog?.stop();
    this.watchdog = null;
    const closed: TaskOutcome<R> = { ok: false, reason: 'worker closed', timedOut: false };
    for (const p of [...this.posted.splice(0), ...this.queue.splice(0)]) p.resolve(closed);
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private start(): Worker {
    const w = new Worker(ENTRY, {
      workerData: { heartbeat: this.hb.buffer, module: this.opts.module.href },
      execArgv: workerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: this.opts.memoryMb ?? 2048, stackSizeMb: 16 },
    });
    this.hb.clear();
    w.on('message', (msg: FromWorker<R>) => {
      if (w !== this.worker) return;
      const i = this.posted.findIndex((p) => p.id === msg.id);
      if (i < 0) return;
      const [p] = this.posted.splice(i, 1);
      this.settle(
        p,
        msg.ok ? { ok: true, value: msg.value } : { ok: false, reason: msg.reason, timedOut: false },
      );
      this.pump();
    });
    const lost = (reason: string) => {
      if (w !== this.worker) return;
      this.replace(this.hb.item(), { ok: false, reason, timedOut: false });
    };
    w.on('error', (e: Error) => lost(`worker failed: ${e.message.split('\n')[0]}`));
    w.on('exit', (code) => lost(`worker exited (code ${code})`));
    this.watchdog ??= watchHeartbeat(this.hb, this.opts.timeoutMs, (item) => {
      if (!this.worker || !this.posted.some((p) => p.id === item)) return;
      this.replace(item, { ok: false, reason: `over the ${this.opts.timeoutMs} ms budget`, timedOut: true });
    });
    this.watchdog.reset();
    return w;
  }

  /**
   * The worker is dropped: job `item` (else the first handed over) fails with `o`, and the
   * others it held go back to the front of the queue, for the next worker.
   */
  private replace(item: number, o: TaskOutcome<R>): void {
    const old = this.worker;
    this.worker = null;
    void old?.terminate();
    let i = this.posted.findIndex((p) => p.id === item);
    if (i < 0 && this.posted.length > 0) i = 0;
    const failed = i >= 0 ? this.posted.splice(i, 1)[0] : undefined;
    this.queue.unshift(...this.posted.splice(0));
    if (failed) this.settle(failed, o);
    this.pump();
  }

  private settle(p: Pending<J, R>, o: TaskOutcome<R>): void {
    if (this.posted.length === 0) this.worker?.unref();
    p.resolve(o);
  }

  private pump(): void {
    const window = Math.max(1, this.opts.window ?? 1);
    while (!this.closed && this.posted.length < window && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.worker ??= this.start();
      this.worker.ref();
      try {
        // A job the structured clone cannot copy (an object nested thousands deep) fails alone.
        this.worker.postMessage({ id: next.id, job: next.job });
      } catch (e) {
        this.settle(next, { ok: false, reason: (e as Error).message, timedOut: false });
        continue;
      }
      this.posted.push(next);
    }
  }
}
