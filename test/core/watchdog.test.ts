import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Heartbeat, watchHeartbeat } from '../../src/core/budget.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (at most 5 s) until `stalls` has an entry; the ms it took. */
async function firstStall(stalls: unknown[]): Promise<number> {
  const t0 = performance.now();
  while (stalls.length === 0 && performance.now() - t0 < 5000) await tick(5);
  return performance.now() - t0;
}

test('watchHeartbeat: an item in progress past its budget is reported, not before; nothing in progress, nothing reported', async () => {
  // A 16-byte heartbeat, as the scoring slots use: two slots of their own after the watched two.
  const hb = new Heartbeat(new SharedArrayBuffer(16));
  const stalls: number[] = [];
  const dog = watchHeartbeat(hb, 60, (item) => stalls.push(item), { keepAlive: true });
  try {
    hb.begin(7);
    const waited = await firstStall(stalls);
    assert.equal(stalls[0], 7);
    assert.ok(waited >= 60, `reported after ${waited} ms, budget 60 ms`);
    hb.end();
    stalls.length = 0;
    await tick(200);
    assert.deepEqual(stalls, []);
  } finally {
    dog.stop();
  }
});

test('watchHeartbeat: while watching() is false no tick counts; the budget is timed from when it turns true', async () => {
  const hb = new Heartbeat();
  const stalls: number[] = [];
  let on = false;
  const dog = watchHeartbeat(hb, 60, (item) => stalls.push(item), { watching: () => on, keepAlive: true });
  try {
    hb.begin(3);
    await tick(200);
    assert.deepEqual(stalls, []);
    on = true;
    const waited = await firstStall(stalls);
    assert.equal(stalls[0], 3);
    assert.ok(waited >= 60, `reported ${waited} ms after watching began, budget 60 ms`);
  } finally {
    dog.stop();
  }
});
