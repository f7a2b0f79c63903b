/**
 * Starting scoring workers, apart from the scorer's own modules: `sob score` starts its workers
 * first and loads the rest of the scorer meanwhile (~50 ms under tsx), so a worker's start-up
 * (~60 ms: Node's worker bootstrap, then the bundle) no longer waits for it.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { RECORD_BUDGET_MS, workerExecArgv } from '../core/budget.ts';
import { ClaimsRelay, claimsBuffer } from './claims.ts';
import { scoringWorker, validatorCacheDir } from './worker-bundle.ts';

/** A worker's first heap budget (MB); see `ScoreOptions.workerMemoryMb`. */
export const WORKER_START_MB = 384;

/**
 * A worker's young generation (MB): Node's own default. Scoring allocates much that dies young; a
 * smaller nursery (16 MB) scavenged three times as often and promoted more of it to the old
 * generation, which then grew over a long file. On the 34 SOB image files, warm, interleaved runs
 * (median of 9): 16 MB 1.30 s wall, 2.71 s CPU; 48 MB 1.20 s, 2.54 s. On those files repeated 10
 * times (1,000 samples, 4 runs each) ~9% faster; peak RSS 246-251 -> 271-282 MB at 1x, 292-313 ->
 * 306-337 MB at 10x.
 */
const WORKER_YOUNG_MB = 48;

/** How many schema texts that ran over time are remembered (per `sob score`). */
export const TIMED_OUT_MAX = 4096;

/**
 * A slot's heartbeat: [line being scored, records started, 1 while schema work runs, file index,
 * batches of rows posted by the worker, batches taken by the main thread] (the last two: the
 * rows in flight are bounded: worker.ts `BATCHES_AHEAD`).
 */
export const HEARTBEAT_BYTES = 24;

/** A worker and what its slot watches it by. */
export interface Spawned {
  worker: Worker;
  /** Its owner id in the claims table. */
  id: number;
  heartbeat: SharedArrayBuffer;
}

/** What every scoring worker of one `sob score` shares, and the workers started ahead. */
export class WorkerPool {
  /** Each schema compiled once, by one worker, its code handed to the others. */
  readonly relay = new ClaimsRelay(claimsBuffer());
  /** Schema texts that ran over the time budget (their hashes), shared with every worker. */
  readonly timedOut = new SharedArrayBuffer(4 * (1 + 2 * TIMED_OUT_MAX));
  /** Compiled validators kept for the next run. */
  readonly validatorCache = validatorCacheDir();
  private count = 0;

  /** `recordTimeoutMs`: each record's budget; a routed schema's hyperjump compile gets half of it. */
  constructor(private readonly recordTimeoutMs: number = RECORD_BUDGET_MS) {}
  private readonly early: (Spawned & { dead: boolean })[] = [];

  /** A new worker watched through `heartbeat`; throws when Node refuses to start one. */
  spawn(heartbeat: SharedArrayBuffer, heapMb: number): Spawned {
    const id = ++this.count;
    const channel = new MessageChannel();
    const script = scoringWorker();
    const worker = new Worker(script.script, {
      eval: script.eval,
      execArgv: workerExecArgv(),
      workerData: {
        heartbeat,
        timedOut: this.timedOut,
        claims: this.relay.buffer,
        codePort: channel.port2,
        owner: id,
        validatorCache: this.validatorCache,
        compileBudgetMs: this.recordTimeoutMs / 2,
      },
      transferList: [channel.port2],
      resourceLimits: {
        maxOldGenerationSizeMb: heapMb,
        maxYoungGenerationSizeMb: WORKER_YOUNG_MB,
        stackSizeMb: 64,
      },
    });
    this.relay.attach(id, channel.port1);
    return { worker, id, heartbeat };
  }

  /**
   * Starts `n` workers ahead. One Node refuses is left to the slots, which start their own and
   * say why; one that dies before a slot takes it is replaced then.
   */
  prestart(n: number, heapMb: number): void {
    for (let i = 0; i < n; i++) {
      let s: Spawned;
      try {
        s = this.spawn(new SharedArrayBuffer(HEARTBEAT_BYTES), heapMb);
      } catch {
        return;
      }
      const e = { ...s, dead: false };
      const dead = () => {
        e.dead = true;
      };
      s.worker.on('error', dead);
      s.worker.on('exit', dead);
      this.early.push(e);
    }
  }

  /** A worker started ahead and alive, for a slot's first worker; undefined when none is left. */
  take(): Spawned | undefined {
    for (let e = this.early.shift(); e; e = this.early.shift()) {
      e.worker.removeAllListeners('error');
      e.worker.removeAllListeners('exit');
      if (!e.dead) return { worker: e.worker, id: e.id, heartbeat: e.heartbeat };
      this.stop(e);
    }
    return undefined;
  }

  /** Stops a worker; the schemas it was compiling become free to claim. */
  stop(s: Spawned): void {
    this.relay.release(s.id);
    void s.worker.terminate();
  }

  /** Stops the workers started ahead that no slot took. */
  dispose(): void {
    for (const e of this.early.splice(0)) this.stop(e);
  }
}
