/**
 * Issue 29, finding 7: `sob score` on a full disk died with an uncaught ENOSPC (a 23-line stack
 * trace) and left its `.<model>.tmp-<pid>-<hex>` folder holding the disk's last space; `sob run`
 * and `sob report` said one line, but without the path. A full disk is made here without root:
 * a file size limit (`ulimit -f` in a spawned shell, SIGXFSZ ignored, so a write past it fails
 * with EFBIG as a full disk fails with ENOSPC). Each command says one line naming the file, exits
 * 1, and leaves no temporary file or folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { BIN, ensureBuilt, sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const tmp = tempDir('sob-write-failures-');
const rows = join(tmp, 'rows.jsonl');
const runDir = join(tmp, 'run');

/** `sob <args>` in a shell whose files may not grow past `kb` KiB (SIGXFSZ ignored: EFBIG instead). */
function sobLimited(kb: number, args: string[]) {
  ensureBuilt();
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const r = spawnSync('bash', ['-c', `trap '' XFSZ; ulimit -f ${kb}; exec ${quoted}`], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every name below `dir` that is a temporary file or folder of ours. */
function temps(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((p) => /\.tmp-\d+-[0-9a-f]+/.test(p));
}

/** The stderr lines that are errors (`sob: ...`), and whether a stack trace is among the lines. */
function errorLines(stderr: string): { errors: string[]; stack: boolean } {
  const lines = stderr.split('\n');
  return {
    errors: lines.filter((l) => l.startsWith('sob: ')),
    stack: lines.some((l) => /^\s+at |RangeError|node:internal|^Error:/.test(l)),
  };
}

before(async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, city: { type: 'string' }, age: { type: 'integer' } },
  };
  writeFileSync(
    rows,
    Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({
        id: `r${i}`,
        context: `Person ${i} lives in Oslo and is ${i} years old. `.repeat(5),
        question: 'Who?',
        schema,
        ground_truth: { name: `p${i}`, city: 'Oslo', age: i },
      }),
    ).join('\n'),
  );
  const r = await sobAsync(['run', '--model', 'baseline:gold', '--benchmark', rows, '--run-dir', runDir], {
    cwd: tmp,
  });
  assert.equal(r.code, 0, r.stderr);
});

test('sob score past the file size limit: one line naming eval_records.jsonl, exit 1, no .tmp- folder left', () => {
  const out = join(tmp, 'evaluation');
  const r = sobLimited(200, ['score', runDir, '--out', out, '--bootstrap-samples', '10']);
  assert.equal(r.code, 1, r.stderr);
  const { errors, stack } = errorLines(r.stderr);
  assert.equal(stack, false, r.stderr);
  assert.equal(errors.length, 1, r.stderr);
  assert.match(
    errors[0],
    new RegExp(
      `${join(out, 'text', 'baseline_gold', 'eval_records.jsonl')}: file too large \\(over the file size limit\\) \\(EFBIG, write\\)$`,
    ),
  );
  assert.deepEqual(temps(out), []);
  assert.deepEqual(readdirSync(join(out, 'text')), [], 'no folder, whole or temporary');
});

test('sob run and sob report past the file size limit: one line naming the file', async () => {
  const run = sobLimited(100, [
    'run',
    '--model',
    'baseline:gold',
    '--benchmark',
    rows,
    '--run-dir',
    join(tmp, 'run-limited'),
  ]);
  assert.equal(run.code, 1, run.stderr);
  const r1 = errorLines(run.stderr);
  assert.equal(r1.stack, false, run.stderr);
  assert.deepEqual(r1.errors, [
    `sob: ${join(tmp, 'run-limited', 'responses.jsonl')}: file too large (over the file size limit) (EFBIG, write)`,
  ]);

  const scored = await sobAsync(['score', runDir, '--out', join(tmp, 'ev'), '--bootstrap-samples', '10'], {
    cwd: tmp,
  });
  assert.equal(scored.code, 0, scored.stderr);
  const html = join(tmp, 'report.html');
  const report = sobLimited(20, ['report', join(tmp, 'ev'), '--out', html]);
  assert.equal(report.code, 1, report.stderr);
  const r2 = errorLines(report.stderr);
  assert.equal(r2.stack, false, report.stderr);
  assert.deepEqual(r2.errors, [`sob: ${html}: file too large (over the file size limit) (EFBIG, write)`]);
  assert.deepEqual(
    temps(tmp).filter((p) => !p.includes('/')),
    [],
    'no temp file beside report.html',
  );
});
