/**
 * Validation has a time budget: a catastrophic `pattern` on an untrusted answer is stopped on
 * its worker, reported, and the next validation runs on a fresh worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BudgetedWorker } from '../../src/core/budget.ts';
import { VALIDATE_TASK, type ValidateJob, type ValidateResult } from './validate-task.ts';

test('a catastrophic pattern is stopped at the budget; the next answer is validated', async () => {
  const w = new BudgetedWorker<ValidateJob, ValidateResult>({ module: VALIDATE_TASK, timeoutMs: 1500 });
  try {
    // Warm the worker so the budget measures validation, not start-up.
    const warm = await w.run({ schema: { type: 'integer' }, instance: 1 });
    assert.ok(warm.ok);
    // ^(a+)+$ against 40 a's and a '!' backtracks about 2^40 times: hours.
    const evil = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const t0 = Date.now();
    const stuck = await w.run({ schema: evil, instance: { s: `${'a'.repeat(40)}!` } });
    const took = Date.now() - t0;
    assert.equal(stuck.ok, false);
    assert.ok(!stuck.ok && stuck.timedOut, JSON.stringify(stuck));
    assert.match(!stuck.ok ? stuck.reason : '', /over the 1500 ms budget/);
    assert.ok(took >= 1500 && took < 30_000, `stopped after ${took} ms`);
    // Same schema, a harmless answer: a new worker validates it, with all the violations.
    const next = await w.run({ schema: evil, instance: { s: 'aab' } });
    assert.ok(next.ok, JSON.stringify(next));
    assert.ok(next.value.compiles);
    assert.equal(next.value.compiles && next.value.valid, false);
    assert.deepEqual(
      next.value.compiles ? next.value.violations.map((v) => `${v.instance_path} ${v.keyword}`) : [],
      ['/s pattern'],
    );
  } finally {
    await w.close();
  }
});

test('jobs queue one at a time and a job that throws fails alone', async () => {
  const w = new BudgetedWorker<ValidateJob, ValidateResult>({ module: VALIDATE_TASK, timeoutMs: 5000 });
  try {
    const outs = await Promise.all([
      w.run({ schema: { type: 'string' }, instance: 'x' }),
      w.run({ schema: { type: 'string', pattern: '(' }, instance: 'x' }),
      w.run({ schema: { minimum: 3 }, instance: 2 }),
      // A remotes folder that does not exist: this job throws, and fails alone.
      w.run({
        schema: { type: 'string' },
        instance: 'x',
        remotes: { dir: '/nonexistent-dir', baseUri: 'x:' },
      }),
    ]);
    assert.ok(outs[0].ok && outs[0].value.compiles && outs[0].value.valid);
    assert.ok(outs[1].ok && !outs[1].value.compiles);
    assert.ok(outs[2].ok && outs[2].value.compiles && !outs[2].value.valid);
    assert.equal(outs[3].ok, false);
    assert.match(!outs[3].ok ? outs[3].reason : '', /nonexistent-dir|ENOENT/);
  } finally {
    await w.close();
  }
  const after = await w.run({ schema: {}, instance: 1 });
  assert.deepEqual(after, { ok: false, reason: 'worker closed', timedOut: false });
});
