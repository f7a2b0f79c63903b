/**
 * The project's one bounded-concurrency pool. Every place that runs "at most N at once" (records
 * asked online, PDFs and pages read, judge questions, scoring slots) goes through here, so how
 * work is taken, stopped and failed is decided once.
 */

export interface MapConcurrentOptions {
  /** At most this many calls in flight (at least 1). */
  concurrency: number;
  /** Once aborted (or once `stop()` answers true), no new item is started; those in flight finish. */
  signal?: AbortSignal;
  /** Checked before each item is taken: true stops taking new ones (a caller's own "tripped" state). */
  stop?: () => boolean;
  /**
   * Give the event loop a turn (setImmediate) when this many ms have passed since the last turn,
   * so work that never does I/O (a provider answering from memory) still lets signals and timers in.
   */
  yieldEveryMs?: number;
}

/**
 * Starts `slots` copies of `slot` at once and waits for all of them; the first to reject rejects
 * the whole (as `Promise.all` does). For long-lived workers that take their own work.
 */
export async function runSlots(slots: number, slot: (index: number) => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: Math.max(1, slots) }, (_, i) => slot(i)));
}

/**
 * Runs `fn` over `items` with at most `concurrency` calls in flight, items started in their
 * order (`index` counts items taken, from 0); the results keep that order. Items may come from an
 * array, any iterable, or an async iterable read lazily (one `next()` at a time). When `fn`
 * rejects, no new item is started and the call rejects with that error; a caller that wants
 * per-item errors catches them inside `fn`. Items not started (stopped, aborted) have no result.
 */
export async function mapConcurrent<T, R>(
  items: Iterable<T> | AsyncIterable<T> | Iterator<T> | AsyncIterator<T>,
  fn: (item: T, index: number) => Promise<R> | R,
  opts: MapConcurrentOptions,
): Promise<R[]> {
  const it = iteratorOf(items);
  const known = Array.isArray(items) ? items.length : Number.POSITIVE_INFINITY;
  const results: R[] = [];
  let taken = 0;
  let failed = false;
  let turnedAt = performance.now();
  const halted = () => failed || opts.signal?.aborted === true || opts.stop?.() === true;
  const slot = async () => {
    while (!halted()) {
      const next = await it.next();
      // Asked again: the wait for an async source may have outlasted a stop.
      if (next.done || halted()) return;
      const i = taken++;
      try {
        results[i] = await fn(next.value, i);
      } catch (e) {
        failed = true;
        throw e;
      }
      if (opts.yieldEveryMs !== undefined && performance.now() - turnedAt > opts.yieldEveryMs) {
        await new Promise((r) => setImmediate(r));
        turnedAt = performance.now();
      }
    }
  };
  await runSlots(Math.min(Math.max(1, opts.concurrency), Math.max(1, known)), slot);
  return results;
}

function iteratorOf<T>(
  items: Iterable<T> | AsyncIterable<T> | Iterator<T> | AsyncIterator<T>,
): Iterator<T> | AsyncIterator<T> {
  if (Symbol.asyncIterator in items) return (items as AsyncIterable<T>)[Symbol.asyncIterator]();
  if (Symbol.iterator in items) return (items as Iterable<T>)[Symbol.iterator]();
  return items as Iterator<T> | AsyncIterator<T>;
}
