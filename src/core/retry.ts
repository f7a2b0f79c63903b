/**
 * The project's one retry owner: `retrying` makes the attempts (each with its own time limit and
 * the caller's stop relayed into it), pauses between them (exponential backoff with jitter, or what
 * a Retry-After asks) and counts them; the caller only says, per failure, whether to try again.
 * The runner's records, the judges' and the LLM matcher's questions, and the VLM OCR pages all
 * retry through it.
 */

export interface BackoffOptions {
  /** Pause after the first failure (ms). */
  baseMs: number;
  /** Longest pause from the exponential rule (ms). */
  maxMs: number;
  /** Longest Retry-After honoured (ms); a longer one is cut to this. */
  maxRetryAfterMs?: number;
  random?: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 60_000, maxRetryAfterMs: 15 * 60_000 };

/**
 * The pause before attempt `failures + 1`: with a Retry-After, that long plus up to 10% jitter
 * (so many waiting requests do not return at the same instant); otherwise "equal jitter"
 * exponential backoff, a uniform draw in [d/2, d] with d = base * 2^(failures-1), capped.
 */
export function backoffDelay(failures: number, opts: BackoffOptions, retryAfterMs?: number): number {
  const random = opts.random ?? Math.random;
  if (retryAfterMs !== undefined) {
    const ra = Math.min(retryAfterMs, opts.maxRetryAfterMs ?? Number.POSITIVE_INFINITY);
    return Math.round(ra * (1 + 0.1 * random()));
  }
  const d = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(d / 2 + (d / 2) * random());
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** What a caller says of one failed attempt. */
export type RetryVerdict =
  /** Give up: `retrying` returns the failure. */
  | 'stop'
  /** Try again at once, not counted as a failure and with no pause (a changed request). */
  | 'again'
  /** Try again after the backoff (honouring `retryAfterMs`), while retries are left. */
  | { retryAfterMs?: number };

export interface Failure {
  error: unknown;
  /** This attempt's number, from 1, counting every attempt made. */
  attempt: number;
  /** Failures counted so far, this one included ('again' ones are not). */
  failures: number;
  /** The attempt's own time ran out (not the caller's stop). */
  timedOut: boolean;
  /** A retry verdict would be followed: `failures` is at most `maxRetries`. */
  canRetry: boolean;
}

export interface RetryOptions {
  /** Retries after the first failure; past them a retry verdict is a stop. */
  maxRetries: number;
  /** The pause before the next attempt after `failures` failures. */
  delay: (failures: number, retryAfterMs?: number) => number;
  /** How to pause (default `sleep`); given the caller's signal. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Each attempt's time; its signal aborts then and the failure says `timedOut`. */
  timeoutMs?: number;
  /** The caller's stop: relayed into each attempt's signal; no attempt starts once it has aborted. */
  signal?: AbortSignal;
  /** Awaited before each attempt (a pause every request shares, such as a server's Retry-After). */
  beforeAttempt?: () => Promise<void> | void;
}

export type RetryResult<T> =
  | { ok: true; value: T; attempt: number }
  /** Stopped by a verdict, or the retries ran out (`error` is the last failure's). */
  | { ok: false; error: unknown; attempt: number; aborted: false }
  /** The caller's signal aborted before an attempt could start (`attempt`: those made). */
  | { ok: false; attempt: number; aborted: true };

/**
 * Calls `attempt` until it resolves, `onFailure` says stop, or the retries run out. `attempt`
 * gets its number, a signal (aborted at `timeoutMs` or at the caller's stop) and `abort()` to cut
 * itself short (its failure then has `timedOut: false`). `onFailure` runs after the attempt's
 * timer is cleared and may log, count or throw (a throw ends the retries and is passed on).
 */
export async function retrying<T>(
  attempt: (a: { attempt: number; signal: AbortSignal; abort: () => void }) => Promise<T>,
  onFailure: (f: Failure) => RetryVerdict | Promise<RetryVerdict>,
  o: RetryOptions,
): Promise<RetryResult<T>> {
  const pause = o.sleep ?? sleep;
  let failures = 0;
  for (let n = 1; ; n++) {
    await o.beforeAttempt?.();
    if (o.signal?.aborted) return { ok: false, attempt: n - 1, aborted: true };
    const ctl = new AbortController();
    let timedOut = false;
    const timer =
      o.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            ctl.abort();
          }, o.timeoutMs);
    const relay = () => ctl.abort();
    o.signal?.addEventListener('abort', relay, { once: true });
    let error: unknown;
    try {
      return { ok: true, value: await attempt({ attempt: n, signal: ctl.signal, abort: relay }), attempt: n };
    } catch (e) {
      error = e;
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', relay);
    }
    const verdict = await onFailure({
      error,
      attempt: n,
      failures: failures + 1,
      timedOut,
      canRetry: failures + 1 <= o.maxRetries,
    });
    if (verdict === 'again') continue;
    failures++;
    if (verdict === 'stop' || failures > o.maxRetries)
      return { ok: false, error, attempt: n, aborted: false };
    await pause(o.delay(failures, verdict.retryAfterMs), o.signal);
  }
}
