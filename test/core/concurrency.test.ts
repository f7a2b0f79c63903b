import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapConcurrent, runSlots } from '../../src/core/concurrency.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('mapConcurrent: never more than N in flight, items started in order, results in order', async () => {
  let inFlight = 0;
  let most = 0;
  const started: number[] = [];
  const out = await mapConcurrent(
    [5, 1, 4, 2, 3, 1, 2],
    async (ms, i) => {
      started.push(i);
      most = Math.max(most, ++inFlight);
      await tick(ms * 3);
      inFlight--;
      return ms * 10;
    },
    { concurrency: 3 },
  );
  assert.equal(most, 3);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(out, [50, 10, 40, 20, 30, 10, 20]);
});

test('mapConcurrent: an abort starts no new item; those in flight finish', async () => {
  const ctl = new AbortController();
  const finished: number[] = [];
  const out = await mapConcurrent(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    async (n) => {
      if (n === 3) ctl.abort();
      await tick(5);
      finished.push(n);
      return n;
    },
    { concurrency: 2, signal: ctl.signal },
  );
  // Items 0-3 started (3 aborts while 2 is in flight); nothing after.
  assert.deepEqual(
    finished.sort((a, b) => a - b),
    [0, 1, 2, 3],
  );
  assert.equal(out.filter((x) => x !== undefined).length, 4);
});

test('mapConcurrent: stop() is asked before each item is taken', async () => {
  let tripped = false;
  const taken: number[] = [];
  await mapConcurrent(
    [0, 1, 2, 3, 4, 5],
    async (n) => {
      taken.push(n);
      if (n === 1) tripped = true;
    },
    { concurrency: 1, stop: () => tripped },
  );
  assert.deepEqual(taken, [0, 1]);
});

test('mapConcurrent: the first error rejects the call and no item starts after it', async () => {
  const taken: number[] = [];
  await assert.rejects(
    mapConcurrent(
      [0, 1, 2, 3, 4, 5, 6, 7],
      async (n) => {
        taken.push(n);
        await tick(n === 2 ? 1 : 20);
        if (n === 2) throw new Error('item 2 broke');
      },
      { concurrency: 3 },
    ),
    /item 2 broke/,
  );
  await tick(60);
  assert.deepEqual(taken, [0, 1, 2]);
});

test('mapConcurrent: an async iterator is read lazily, one next() per item taken', async () => {
  let pulled = 0;
  async function* gen() {
    for (let i = 0; i < 100; i++) {
      pulled++;
      yield i;
    }
  }
  const ctl = new AbortController();
  const seen: number[] = [];
  await mapConcurrent(
    gen(),
    async (n) => {
      seen.push(n);
      if (n === 4) ctl.abort();
    },
    { concurrency: 2, signal: ctl.signal },
  );
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.ok(pulled <= 6, `pulled ${pulled} items for 5 taken`);
});

test('mapConcurrent: yieldEveryMs lets the event loop turn during work that never awaits I/O', async () => {
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  const run = async (yieldEveryMs?: number) => {
    let turns = 0;
    const t = setInterval(() => turns++, 1);
    await mapConcurrent(
      Array.from({ length: 40 }, (_, i) => i),
      async () => busy(5),
      { concurrency: 2, yieldEveryMs },
    );
    clearInterval(t);
    return turns;
  };
  // 40 items x 5 ms = 200 ms of busy work: without turns no timer fires until the end.
  assert.equal(await run(undefined), 0);
  assert.ok((await run(50)) >= 2);
});

test('runSlots: starts every slot at once with its index, waits for all', async () => {
  const ids: number[] = [];
  let running = 0;
  let most = 0;
  await runSlots(4, async (i) => {
    ids.push(i);
    most = Math.max(most, ++running);
    await tick(5);
    running--;
  });
  assert.deepEqual(ids, [0, 1, 2, 3]);
  assert.equal(most, 4);
});
