/**
 * Commands only parse flags and call one function (docs/architecture.md, "Why src/app/ exists"):
 * no action callback of src/cli/ is longer than reading its flags into settings takes. Measured
 * by scripts/longest-functions.mjs, the script the docs name for function lengths.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../kit/cli.ts';

/** The longest action today is sob leaderboard's (62 lines: its usage checks between flags). */
const MAX_ACTION_LINES = 70;

test(`every src/cli action callback is at most ${MAX_ACTION_LINES} lines: the work is in src/app/`, () => {
  const out = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts/longest-functions.mjs'), '--top', '100000', 'src/cli'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  // `lines  file:line  (callback of ...)`; the command's action is the callback of its chain.
  const callbacks = out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+):(\d+)\s+\(callback of /.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ lines: Number(m[1]), file: m[2], line: Number(m[3]) }));
  assert.ok(callbacks.length > 20, `read ${callbacks.length} callbacks: the script's output changed?`);
  const long = callbacks.filter((c) => c.lines > MAX_ACTION_LINES);
  assert.deepEqual(
    long.map((c) => `${c.file}:${c.line} ${c.lines} lines`),
    [],
    'move the work into a function of src/app/ and call it from the action',
  );
});
