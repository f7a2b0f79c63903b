/**
 * The judge for `sob score --match ... --match-judge <provider:model>`: the scoring workers hand
 * it the leaf pairs their deterministic matchers left unsettled; it answers from what it already
 * knows, then from the on-disk cache, and asks the model only for the rest
 * (`judge-matcher.ts`). Each pair is asked once per run however many workers and records hold
 * it (pairs already in flight are waited for, not asked again), and once across runs (the cache).
 *
 * Pairs wanted while a round of questions is out are asked together in the next round, so the
 * requests in flight never exceed `concurrency`. A transport failure leaves the pair without a
 * verdict (pending: not accepted, asked again next run); a failure no other pair would survive
 * (a bad key, no server, no such model) stops the asking: every later pair stays pending and
 * `fatal` says why.
 */
import type { JudgeVerdict, UnsettledPair } from '../../metrics/match/judge.ts';
import { errorMessage } from '../core/errors.ts';
import { type JudgeOptions, judgePairs } from './judge-matcher.ts';

export interface JudgeServiceOptions extends Omit<JudgeOptions, 'signal' | 'onProgress'> {
  /** Progress and failures, one line each (stderr in the CLI). */
  log?: (line: string) => void;
  /**
   * The judge's deadline for the whole run (ms from the service's start, `--judge-timeout`):
   * past it the requests in flight are abandoned and nothing more is asked; the pairs without a
   * verdict stay pending (not accepted; asked again next run).
   */
  deadlineMs?: number;
}

export class JudgeService {
  private readonly known = new Map<string, JudgeVerdict>();
  /** Pairs of the round in flight and of the next round, by hash. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private queued = new Map<string, UnsettledPair>();
  private nextRound: Promise<void> | null = null;
  private running: Promise<void> = Promise.resolve();
  /** Pairs sent to the model, answered from the cache, whose request failed, read as unscored. */
  readonly stats = { asked: 0, cached: 0, failed: 0, unscored: 0 };
  readonly errors: string[] = [];
  fatal?: string;

  /** Ended by the deadline: abandons the requests in flight. */
  private readonly stop = new AbortController();
  private readonly timer?: NodeJS.Timeout;

  constructor(private readonly o: JudgeServiceOptions) {
    if (o.deadlineMs !== undefined) {
      this.timer = setTimeout(() => {
        if (this.fatal) return;
        this.fatal = `its --judge-timeout of ${o.deadlineMs! / 1000} s was reached`;
        this.o.log?.(`judge ${this.id}: ${this.fatal}; no more pairs are asked (they stay pending)`);
        this.stop.abort();
      }, o.deadlineMs);
      this.timer.unref();
    }
  }

  /** Stops the deadline's clock (the run is over). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  get id(): string {
    return this.o.provider.id;
  }

  /** Verdicts for `pairs` ([hash, verdict]; a pair whose request failed is left out). */
  async verdicts(pairs: UnsettledPair[]): Promise<[string, JudgeVerdict][]> {
    const waits: Promise<void>[] = [];
    for (const p of pairs) {
      if (this.known.has(p.hash)) continue;
      let w = this.inFlight.get(p.hash);
      if (!w && !this.fatal) {
        this.queued.set(p.hash, p);
        w = this.schedule();
        this.inFlight.set(p.hash, w);
      }
      if (w) waits.push(w);
    }
    await Promise.all(waits);
    const out: [string, JudgeVerdict][] = [];
    for (const p of pairs) {
      const v = this.known.get(p.hash);
      if (v !== undefined) out.push([p.hash, v]);
    }
    return out;
  }

  /** The round the queued pairs will go out in (after the round in flight). */
  private schedule(): Promise<void> {
    if (this.nextRound) return this.nextRound;
    const round = this.running.then(() => this.ask());
    this.nextRound = round;
    this.running = round;
    return round;
  }

  private async ask(): Promise<void> {
    this.nextRound = null;
    const batch = [...this.queued.values()];
    this.queued = new Map();
    if (batch.length === 0) return;
    try {
      if (this.fatal) return;
      const { log, deadlineMs: _deadline, ...opts } = this.o;
      // Long rounds say how far they are, every 10 s at most.
      let said = Date.now();
      const r = await judgePairs(batch, {
        ...opts,
        signal: this.stop.signal,
        onProgress: (done, total) => {
          if (Date.now() - said < 10_000 || done === total) return;
          said = Date.now();
          log?.(`judge ${this.id}: ${done}/${total} pairs of this round answered`);
        },
      });
      for (const [h, v] of r.verdicts) {
        this.known.set(h, v);
        if (v === 'unscored') this.stats.unscored++;
      }
      // Pairs the breaker or the deadline kept from being asked: pending too.
      this.stats.failed += Math.max(0, batch.length - r.verdicts.size - r.failed);
      this.stats.asked += r.asked;
      this.stats.cached += r.cached;
      this.stats.failed += r.failed;
      for (const e of r.errors) {
        if (this.errors.length < 5 && !this.stop.signal.aborted)
          this.o.log?.(`judge ${this.id}: ${e} (left pending)`);
        this.errors.push(e);
      }
      if (r.tripped && !this.fatal) {
        this.fatal = r.tripped;
        this.o.log?.(`judge ${this.id}: ${this.fatal}; no more pairs are asked (they stay pending)`);
      }
    } catch (e) {
      const msg = errorMessage(e).split('\n')[0];
      this.fatal = msg.startsWith(`${this.id}: `) ? msg.slice(this.id.length + 2) : msg;
      this.stats.failed += batch.length;
      this.o.log?.(`judge ${this.id}: ${this.fatal}; no more pairs are asked (they stay pending)`);
    } finally {
      for (const p of batch) this.inFlight.delete(p.hash);
    }
  }

  /** One line for the end of the run. */
  summaryLine(): string {
    const s = this.stats;
    return `judge ${this.id}: ${s.asked} pairs asked, ${s.cached} from the cache, ${s.unscored} answers unreadable (unscored), ${s.failed} failed (pending: not accepted; asked again next run)`;
  }
}
