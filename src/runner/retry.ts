/** Backoff for the runner's single retry layer: exponential with jitter, or what Retry-After asks. */

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
