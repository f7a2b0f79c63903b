/**
 * issue 9 items 4 and 7 for `sob build`: records, rejected.jsonl and manifest.json are written
 * under temp names and renamed in (a symlink planted at any of them is replaced, never written
 * through); --append refuses a symlink, repairs a torn last line, and one build at a time holds
 * the folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const EX = join(ROOT, 'sources/examples');
const dir = mkdtempSync(join(tmpdir(), 'sob-build-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function build(out: string, ...extra: string[]) {
  return spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'build',
      'hotpotqa',
      join(EX, 'text/passages.json'),
      '--annotations',
      join(EX, 'text/annotations.jsonl'),
      '--out',
      out,
      ...extra,
    ],
    { encoding: 'utf8' },
  );
}

const OUTSIDE = 'precious data, not ours to overwrite\n';

function outsideFiles(name: string): Record<string, string> {
  const o = join(dir, `${name}-outside`);
  mkdirSync(o);
  const files: Record<string, string> = {};
  for (const f of ['records.jsonl', 'rejected.jsonl', 'manifest.json']) {
    files[f] = join(o, f);
    writeFileSync(files[f], OUTSIDE);
  }
  return files;
}

describe('sob build writes only inside its folder, whole files or none', () => {
  test('symlinks planted at records.jsonl, rejected.jsonl and manifest.json are replaced; the targets keep their bytes', () => {
    const bench = join(dir, 'planted');
    mkdirSync(bench);
    const targets = outsideFiles('planted');
    for (const [f, t] of Object.entries(targets)) symlinkSync(t, join(bench, f));
    const r = build(join(bench, 'records.jsonl'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^6 records written, 0 rejected/);
    for (const [f, t] of Object.entries(targets)) {
      assert.equal(readFileSync(t, 'utf8'), OUTSIDE, `${f}'s link target was written through`);
      assert.equal(lstatSync(join(bench, f)).isSymbolicLink(), false, `${f} is still a link`);
    }
    assert.equal(readFileSync(join(bench, 'records.jsonl'), 'utf8').trim().split('\n').length, 6);
    assert.equal(JSON.parse(readFileSync(join(bench, 'manifest.json'), 'utf8')).records, 6);
    // No temp file or lock is left behind.
    assert.deepEqual(readdirSync(bench).sort(), ['manifest.json', 'records.jsonl', 'rejected.jsonl']);
  });

  test('--append to a symlinked records.jsonl is refused in one line; nothing is written anywhere', () => {
    const bench = join(dir, 'append-link');
    mkdirSync(bench);
    const targets = outsideFiles('append-link');
    symlinkSync(targets['records.jsonl'], join(bench, 'records.jsonl'));
    const r = build(join(bench, 'records.jsonl'), '--append');
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr.trim().split('\n').at(-1),
      `sob: refusing to write through a symbolic link: ${join(bench, 'records.jsonl')} (the records file must be a plain file)`,
    );
    assert.equal(readFileSync(targets['records.jsonl'], 'utf8'), OUTSIDE);
    assert.deepEqual(readdirSync(bench), ['records.jsonl']);
  });

  test('--append with a symlinked rejected.jsonl is refused before the records file is touched', () => {
    const bench = join(dir, 'append-rej');
    mkdirSync(bench);
    assert.equal(build(join(bench, 'records.jsonl')).status, 0);
    const before = readFileSync(join(bench, 'records.jsonl'), 'utf8');
    const targets = outsideFiles('append-rej');
    rmSync(join(bench, 'rejected.jsonl'));
    symlinkSync(targets['rejected.jsonl'], join(bench, 'rejected.jsonl'));
    const r = build(join(bench, 'records.jsonl'), '--append');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /sob: refusing to write through a symbolic link: .*rejected\.jsonl \(the rejected file must be a plain file\)\n$/,
    );
    assert.equal(readFileSync(targets['rejected.jsonl'], 'utf8'), OUTSIDE);
    assert.equal(readFileSync(join(bench, 'records.jsonl'), 'utf8'), before);
  });

  test('--append drops a torn last line left by a crash, and stale temp files of dead processes are removed', () => {
    const bench = join(dir, 'torn');
    mkdirSync(bench);
    const out = join(bench, 'records.jsonl');
    const ami = spawnSync(
      process.execPath,
      [
        join(ROOT, 'bin/sob.js'),
        'build',
        'ami',
        join(EX, 'ami'),
        '--annotations',
        join(EX, 'ami/annotations.jsonl'),
        '--out',
        out,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(ami.status, 0, ami.stderr);
    const whole = readFileSync(out, 'utf8');
    const torn = '{"metadata": {"record_id": "half';
    writeFileSync(out, `${whole}${torn}`);
    // A temp file of a process that no longer runs (pid 2^22 + 1 is beyond the default pid_max).
    writeFileSync(join(bench, '.records.jsonl.tmp-4194305-deadbeef'), 'stale');
    const r = build(out, '--append');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`dropped a torn last line \\(${torn.length} bytes\\) from `));
    assert.match(r.stderr, /removed 1 temp files left by an interrupted build/);
    assert.match(r.stdout, /benchmark now holds 8 records \(2 before \+ 6 written\)/);
    const lines = readFileSync(out, 'utf8').split('\n');
    assert.equal(lines.at(-1), '');
    assert.equal(lines.length - 1, 8);
    for (const l of lines.slice(0, -1)) JSON.parse(l);
    assert.deepEqual(readdirSync(bench).sort(), ['manifest.json', 'records.jsonl', 'rejected.jsonl']);
  });

  test('a second build on a folder another live sob holds is refused in one line, the folder untouched', () => {
    const bench = join(dir, 'locked');
    mkdirSync(bench);
    // This test process is alive: its pid in the lock file stands for a build in progress.
    writeFileSync(
      join(bench, '.sob.lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), command: 'build sob x', started: 'now' }),
    );
    const r = build(join(bench, 'records.jsonl'));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr.trim().split('\n').at(-1)!,
      /^sob: benchmark folder .*locked is in use by another sob process \(pid \d+ on \S+, since now\)/,
    );
    assert.deepEqual(readdirSync(bench), ['.sob.lock']);
  });
});
