/**
 * Issue 29, finding 1: the record check runs under the scorer's per-record budget
 * (`--record-timeout-ms`), on a worker. A ground truth a catastrophic `pattern` backtracks on
 * (`^(a|a)+$` against 40 `a`s and a `!`: at 28 characters the match alone takes 16 s, doubling
 * per character) is rejected within the budget, naming the record and the keyword, exit 2,
 * nothing asked; and SIGTERM during such a check ends the command within 2 s (the main thread is
 * never in the regex). Timed: listed in SERIAL (scripts/test.mjs).
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sobAsync, sobSpawn } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const tmp = tempDir('sob-record-budget-');

const EVIL_SCHEMA = {
  type: 'object',
  properties: {
    code: { type: 'string', pattern: '^(a|a)+$' },
    note: { type: 'string' },
    kind: { type: 'string' },
  },
};
const EVIL_TRUTH = { code: `${'a'.repeat(40)}!`, note: 'x', kind: 'y' };

const goodRow = {
  id: 'fine',
  context: 'Ann, 30, lives in Paris.',
  question: 'Who?',
  schema: {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
  },
  ground_truth: { name: 'Ann', age: 30, city: 'Paris' },
};

test('a catastrophic pattern in the record check: rejected within the budget + 2 s, naming the record and `pattern`; exit 2, nothing asked', async () => {
  const rows = join(tmp, 'rows.jsonl');
  const evil = {
    id: 'evil-row',
    context: 'aaaa',
    question: 'Code?',
    schema: EVIL_SCHEMA,
    ground_truth: EVIL_TRUTH,
  };
  writeFileSync(rows, `${JSON.stringify(goodRow)}\n${JSON.stringify(evil)}\n`);
  const evalDir = join(tmp, 'eval');
  const budgetMs = 400;
  const t0 = Date.now();
  const r = await sobAsync(
    ['eval', rows, '--eval-dir', evalDir, '--record-timeout-ms', String(budgetMs), '--no-report'],
    { cwd: tmp, timeoutMs: 60_000 },
  );
  const took = Date.now() - t0;
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /rejected evil-row: the check did not finish within its 400 ms budget \(--record-timeout-ms\) while checking the ground truth against the schema's `pattern` "\^\(a\|a\)\+\$" at properties\.code/,
  );
  assert.match(r.stderr, /1 row rejected .*nothing was asked/);
  // Start-up, the good row and one budget: far from the 16 s one 28-character match takes.
  assert.ok(took < budgetMs + 2_000 + 2_500, `took ${took} ms`);
  assert.equal(existsSync(join(evalDir, 'runs')), false, 'no model was asked');
});

test('SIGTERM during a slow record check (the default 20 s budget) ends sob run within 2 s, exit 130, nothing asked', async () => {
  const bench = join(tmp, 'evil-records.jsonl');
  const record = {
    metadata: { record_id: 'evil-record', source: 'text' },
    input: { context: 'aaaa', question: 'Code?', json_schema: EVIL_SCHEMA },
    output: { ground_truth: EVIL_TRUTH },
  };
  writeFileSync(bench, `${JSON.stringify(record)}\n`);
  const runDir = join(tmp, 'run');
  const { child, done } = sobSpawn(
    ['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', runDir],
    {
      cwd: tmp,
    },
  );
  // Start-up and the check under way (the match would run for hours).
  await new Promise((r) => setTimeout(r, 2_000));
  const t0 = Date.now();
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const exit = await done;
  clearTimeout(killer);
  const took = Date.now() - t0;
  assert.ok(took < 2_000, `ended ${took} ms after SIGTERM (signal ${exit.signal})`);
  assert.equal(exit.code, 130, exit.stderr);
  assert.match(exit.stderr, /interrupted during the record check: nothing was asked/);
  assert.equal(existsSync(join(runDir, 'responses.jsonl')), false);
});
