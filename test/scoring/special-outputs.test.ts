/**
 * Issue 21 findings 7 and 17: outputs are written only as regular files or folders. Before,
 * `--out /dev/null` as root replaced the device with a regular file (`report`, `leaderboard`,
 * `build`; `build` also wrote manifest.json and rejected.jsonl beside it), a rename onto a folder
 * left a `.X.tmp-*` file, and a system error reached the user raw (`ENOTDIR: not a directory,
 * mkdir ...`). Each `--out` here is made privately by the test: a FIFO always, a character device
 * (the null device's numbers) when the test may make one (root).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-special-out-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const evalDir = join(tmp, 'ev');
const example = join(ROOT, 'examples/responses/response_example-model.jsonl');
const text = join(ROOT, 'sources/examples/text');

before(() => {
  const r = sob(['score', example, '--out', evalDir, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 0, r.stderr);
});

/** A folder holding only a special file `node` of `kind`; null when this user may not make it. */
function special(kind: 'fifo' | 'device'): string | null {
  const dir = mkdtempSync(join(tmp, `${kind}-`));
  const node = join(dir, 'node');
  const r =
    kind === 'fifo' ? spawnSync('mkfifo', [node]) : spawnSync('mknod', ['-m', '666', node, 'c', '1', '3']);
  return r.status === 0 ? node : null;
}

const commands: [string, (out: string) => string[]][] = [
  ['report', (out) => ['report', evalDir, '--out', out]],
  ['leaderboard', (out) => ['leaderboard', evalDir, '--out', out]],
  [
    'build',
    (out) => [
      'build',
      'hotpotqa',
      join(text, 'passages.json'),
      '--annotations',
      join(text, 'annotations.jsonl'),
      '--out',
      out,
    ],
  ],
];

for (const kind of ['fifo', 'device'] as const) {
  for (const [name, args] of commands) {
    test(`sob ${name} --out <a ${kind}> is refused with one line; the node stays and nothing is written beside it`, (t) => {
      const node = special(kind);
      if (!node) return t.skip(`this user cannot make a ${kind} (mknod needs root)`);
      const r = sob(args(node), tmp, 60_000);
      assert.equal(r.code, 1, r.stderr);
      const last = r.stderr.trim().split('\n').at(-1) ?? '';
      assert.match(
        last,
        new RegExp(`^sob: refusing to write .*node: it is a ${kind === 'fifo' ? 'named pipe' : 'device'}`),
      );
      const st = statSync(node);
      assert.equal(kind === 'fifo' ? st.isFIFO() : st.isCharacterDevice(), true);
      assert.deepEqual(readdirSync(join(node, '..')), ['node']);
    });
  }
}

test('leaderboard --out onto a folder: refused in one line, no .X.tmp-* left beside it', () => {
  const dir = mkdtempSync(join(tmp, 'onto-folder-'));
  mkdirSync(join(dir, 'd'));
  writeFileSync(join(dir, 'd', 'x'), '1');
  const r = sob(['leaderboard', evalDir, '--out', join(dir, 'd')], tmp);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr.trim().split('\n').at(-1) ?? '', /^sob: refusing to write .*d: it is a folder/);
  assert.deepEqual(readdirSync(dir), ['d']);
});

test('a system error is put in words with its path, not printed raw (score --out under a file)', () => {
  const dir = mkdtempSync(join(tmp, 'under-file-'));
  writeFileSync(join(dir, 'afile'), 'x');
  const r = sob(['score', example, '--out', join(dir, 'afile', 'x'), '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /E[A-Z]+: [a-z ]+, [a-z]+ '/);
  assert.match(r.stderr, /afile\/x\/text: a part of the path is not a folder \(ENOTDIR, mkdir\)/);
});
