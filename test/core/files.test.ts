/** The file-safety primitives every writer uses: atomic writes, no symlink following, locks. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  acquireLock,
  openNoFollow,
  removeStaleTemps,
  tempNameFor,
  truncateNoFollow,
  writeFileAtomic,
} from '../../src/core/files.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-files-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('writeFileAtomic replaces a symlink at the target and leaves the file it pointed to alone', () => {
  const outside = join(tmp, 'outside.txt');
  writeFileSync(outside, 'precious\n');
  const dir = mkdtempSync(join(tmp, 'd-'));
  symlinkSync(outside, join(dir, 'summary.json'));
  writeFileAtomic(join(dir, 'summary.json'), '{"ok":1}\n');
  assert.equal(readFileSync(outside, 'utf8'), 'precious\n');
  assert.equal(readFileSync(join(dir, 'summary.json'), 'utf8'), '{"ok":1}\n');
  // No temp file is left behind.
  assert.deepEqual(readdirSync(dir), ['summary.json']);
});

test('appends and truncation refuse a symlink with one line, and the target keeps its bytes', () => {
  const outside = join(tmp, 'outside2.txt');
  writeFileSync(outside, '0123456789');
  const link = join(tmp, 'responses.jsonl');
  symlinkSync(outside, link);
  assert.throws(
    () => openNoFollow(link, 'a'),
    /refusing to write through a symbolic link: .*responses\.jsonl/,
  );
  assert.throws(() => truncateNoFollow(link, 3), /symbolic link/);
  assert.equal(readFileSync(outside, 'utf8'), '0123456789');
});

test('temp names are unique per output file, not per process', () => {
  const a = tempNameFor(join(tmp, 'x', 'eval_records.jsonl'));
  const b = tempNameFor(join(tmp, 'x', 'eval_records.jsonl'));
  assert.notEqual(a, b);
  assert.match(a, new RegExp(`\\.eval_records\\.jsonl\\.tmp-${process.pid}-[0-9a-f]{8}$`));
});

test('a second writer is refused while the first holds the lock; a dead owner’s lock is taken over', () => {
  const dir = mkdtempSync(join(tmp, 'lock-'));
  const lock = acquireLock(dir, 'run directory');
  // Another process trying the same lock is refused with one line naming our pid.
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import('${join(import.meta.dirname, '../../src/core/files.ts')}').then((m) => { try { m.acquireLock(${JSON.stringify(dir)}, 'run directory'); console.log('TOOK'); } catch (e) { console.log(e.message); } })`,
    ],
    { encoding: 'utf8' },
  );
  assert.match(child.stdout, new RegExp(`is in use by another sob process \\(pid ${process.pid}`));
  assert.doesNotMatch(child.stdout, /TOOK/);
  lock.release();
  assert.equal(existsSync(join(dir, '.sob.lock')), false);
  // A lock left by a process that is gone (pid 4194311 is above Linux's largest pid_max, 4194304) is stale.
  writeFileSync(
    join(dir, '.sob.lock'),
    JSON.stringify({ pid: 4194311, host: hostname(), command: 'run', started: 'x' }),
  );
  const again = acquireLock(dir, 'run directory');
  assert.equal(JSON.parse(readFileSync(join(dir, '.sob.lock'), 'utf8')).pid, process.pid);
  again.release();
});

test('stale temp files of dead processes are removed; live ones are kept', () => {
  const dir = mkdtempSync(join(tmp, 'temps-'));
  writeFileSync(join(dir, '.eval_summary.json.tmp-4194311-deadbeef'), 'x');
  writeFileSync(join(dir, `.eval_summary.json.tmp-${process.pid}-cafebabe`), 'x');
  writeFileSync(join(dir, 'eval_summary.json'), 'x');
  assert.equal(removeStaleTemps(dir), 1);
  assert.deepEqual(readdirSync(dir).sort(), [
    `.eval_summary.json.tmp-${process.pid}-cafebabe`,
    'eval_summary.json',
  ]);
});
