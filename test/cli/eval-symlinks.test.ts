/**
 * Issue 29, finding 5: `sob eval` wrote responses, manifests and records through a symbolic link
 * at `<eval-dir>/epochs` or `<eval-dir>/benchmark` (the same link at `runs` or `evaluation` was
 * refused). Every folder it writes now goes through the one folder guard (plainDirs): this walks
 * each write path of `sob eval --epochs 2` with a link planted there, and checks the command is
 * refused with one line naming the link and that nothing is written through it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const tmp = tempDir('sob-eval-links-');
const rows = join(tmp, 'rows.jsonl');
const schema = { type: 'object', properties: { name: { type: 'string' }, city: { type: 'string' } } };
writeFileSync(
  rows,
  ['Ann', 'Bo']
    .map((n, i) =>
      JSON.stringify({
        id: `r${i}`,
        context: `${n} lives in Oslo.`,
        question: 'Who?',
        schema,
        ground_truth: { name: n, city: 'Oslo' },
      }),
    )
    .join('\n'),
);
const args = (evalDir: string) => [
  'eval',
  rows,
  '--model',
  'baseline:gold',
  '--epochs',
  '2',
  '--eval-dir',
  evalDir,
  '--no-report',
  '--bootstrap-samples',
  '10',
];

/** Every folder sob eval --epochs 2 writes inside its eval directory (one model: baseline_gold). */
const WRITE_PATHS = [
  'benchmark',
  'runs',
  'runs/baseline_gold',
  'evaluation',
  'evaluation/text',
  'epochs',
  'epochs/2',
  'epochs/2/runs',
  'epochs/2/runs/baseline_gold',
  'epochs/2/evaluation',
  'epochs/2/evaluation/text',
];

/** Every file below `dir`, relative. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

test('a link at any folder sob eval writes (epochs/ and benchmark/ included) is refused with one line; nothing is written through it', async () => {
  for (const [i, at] of WRITE_PATHS.entries()) {
    const evalDir = join(tmp, `ev-${i}`);
    const target = join(tmp, `outside-${i}`);
    mkdirSync(target);
    mkdirSync(dirname(join(evalDir, at)), { recursive: true });
    symlinkSync(target, join(evalDir, at));
    const r = await sobAsync(args(evalDir), { cwd: tmp });
    assert.equal(r.code, 1, `${at}: ${r.stderr}`);
    const refusals = r.stderr
      .split('\n')
      .filter((l) => l.includes('refusing to write through a symbolic link'));
    assert.equal(refusals.length, 1, `${at}: one line, got ${r.stderr}`);
    assert.ok(refusals[0].includes(join(evalDir, at)), `${at}: the line names the link: ${refusals[0]}`);
    assert.deepEqual(filesBelow(target), [], `${at}: nothing written through the link`);
    assert.doesNotMatch(r.stderr, /answered|scoring/, `${at}: refused before anything is asked`);
  }
  // The same command with no link: every one of those folders is written (they are real write paths).
  const evalDir = join(tmp, 'ev-plain');
  const r = await sobAsync(args(evalDir), { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  const files = filesBelow(evalDir);
  for (const at of WRITE_PATHS)
    assert.ok(
      files.some((f) => f.startsWith(`${at}/`)),
      `${at}/ holds files after a plain run: ${files.join(', ')}`,
    );
});
