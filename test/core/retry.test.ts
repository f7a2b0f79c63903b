import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Failure, type RetryOptions, retrying } from '../../src/core/retry.ts';

/** Options whose pauses are recorded, not slept. */
const recorded = (maxRetries: number, extra: Partial<RetryOptions> = {}) => {
  const pauses: [number, number | undefined][] = [];
  const o: RetryOptions = {
    maxRetries,
    delay: (failures, retryAfterMs) => {
      pauses.push([failures, retryAfterMs]);
      return 0;
    },
    sleep: async () => {},
    ...extra,
  };
  return { o, pauses };
};

test('retrying: a retry verdict is followed until maxRetries, then the last failure is returned', async () => {
  const { o, pauses } = recorded(2);
  const seen: Failure[] = [];
  let calls = 0;
  const r = await retrying(
    async () => {
      calls++;
      throw new Error(`fail ${calls}`);
    },
    (f) => {
      seen.push(f);
      return {};
    },
    o,
  );
  assert.equal(calls, 3); // one attempt and two retries
  assert.deepEqual(
    seen.map((f) => [f.attempt, f.failures, f.canRetry]),
    [
      [1, 1, true],
      [2, 2, true],
      [3, 3, false],
    ],
  );
  assert.deepEqual(pauses, [
    [1, undefined],
    [2, undefined],
  ]);
  assert.equal(r.ok, false);
  assert.ok(!r.ok && !r.aborted && (r.error as Error).message === 'fail 3');
  assert.equal(r.attempt, 3);
});

test("retrying: success after failures reports the attempt; a server's Retry-After reaches the delay", async () => {
  const { o, pauses } = recorded(5);
  let calls = 0;
  const r = await retrying(
    async ({ attempt }) => {
      calls++;
      if (attempt < 3) throw new Error('busy');
      return 'answer';
    },
    () => ({ retryAfterMs: 1500 }),
    o,
  );
  assert.deepEqual(r, { ok: true, value: 'answer', attempt: 3 });
  assert.equal(calls, 3);
  assert.deepEqual(pauses, [
    [1, 1500],
    [2, 1500],
  ]);
});

test("retrying: 'again' retries at once without counting a failure; 'stop' ends at once", async () => {
  const { o, pauses } = recorded(1);
  const verdicts = ['again', 'again', {}, 'stop'] as const;
  const failures: number[] = [];
  const r = await retrying(
    async () => {
      throw new Error('no');
    },
    (f) => {
      failures.push(f.failures);
      return verdicts[f.attempt - 1];
    },
    o,
  );
  // attempts 1 and 2 were 'again' (not counted), 3 a counted failure (retried), 4 stopped.
  assert.deepEqual(failures, [1, 1, 1, 2]);
  assert.equal(r.attempt, 4);
  assert.deepEqual(pauses, [[1, undefined]]);
});

test('retrying: an attempt over timeoutMs is aborted and its failure says timedOut', async () => {
  const { o } = recorded(0, { timeoutMs: 20 });
  let timedOut: boolean | undefined;
  const t0 = performance.now();
  const r = await retrying(
    ({ signal }) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    (f) => {
      timedOut = f.timedOut;
      return 'stop';
    },
    o,
  );
  assert.equal(r.ok, false);
  assert.equal(timedOut, true);
  assert.ok(performance.now() - t0 < 2000);
});

test("retrying: the caller's stop reaches the attempt in flight (not a timeout) and starts no other", async () => {
  const ctl = new AbortController();
  const { o } = recorded(5, { signal: ctl.signal, timeoutMs: 10_000 });
  let calls = 0;
  let timedOut: boolean | undefined;
  const r = await retrying(
    ({ signal }) => {
      calls++;
      setTimeout(() => ctl.abort(), 5);
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))));
    },
    (f) => {
      timedOut = f.timedOut;
      return {};
    },
    o,
  );
  assert.equal(calls, 1);
  assert.equal(timedOut, false);
  assert.deepEqual(r, { ok: false, attempt: 1, aborted: true });
});

test('retrying: beforeAttempt runs before every attempt; a throw from onFailure is passed on', async () => {
  let before = 0;
  const { o } = recorded(3, { beforeAttempt: () => void before++ });
  await assert.rejects(
    retrying(
      async () => {
        throw new Error('401');
      },
      (f) => {
        if (f.attempt === 2) throw new Error('fatal: bad key');
        return {};
      },
      o,
    ),
    /fatal: bad key/,
  );
  assert.equal(before, 2);
});
