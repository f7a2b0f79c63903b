/**
 * Writes never follow a link out (issue 9, item 7): `sob report` and `sob leaderboard --out`
 * replace a symlink at the target by the new file; the file it pointed to is left as it was, and a
 * dangling link never creates its target.
 */
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { needsData } from '../kit/shared-data.ts';
import { SOB, sob } from './run.ts';

// Every test here reads the SOB evaluation folders: the whole file needs them.
describe('symlinked outputs are replaced, never followed', { skip: needsData('sob') }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-links-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const evalDir = join(tmp, 'evaluation');
  const outside = join(tmp, 'outside');
  cpSync(join(SOB, 'evaluation/image/phi-4'), join(evalDir, 'image/phi-4'), { recursive: true });
  mkdirSync(outside);

  test('sob report replaces a symlinked report.html; the file outside is untouched', () => {
    const secret = join(outside, 'secret.txt');
    writeFileSync(secret, 'keep me\n');
    symlinkSync(secret, join(evalDir, 'report.html'));
    const r = sob('report', evalDir, '--samples', '10');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(secret, 'utf8'), 'keep me\n');
    const st = lstatSync(join(evalDir, 'report.html'));
    assert.equal(st.isSymbolicLink(), false);
    assert.ok(st.size > 10_000, `${st.size} bytes`);
    assert.match(readFileSync(join(evalDir, 'report.html'), 'utf8'), /^<!doctype html>/);

    // A dangling link: its target is never created.
    const ghost = join(outside, 'ghost.html');
    symlinkSync(ghost, join(tmp, 'dangling.html'));
    const d = sob('report', evalDir, '--out', join(tmp, 'dangling.html'), '--samples', '10');
    assert.equal(d.status, 0, d.stderr);
    assert.equal(existsSync(ghost), false);
    assert.equal(lstatSync(join(tmp, 'dangling.html')).isSymbolicLink(), false);
  });

  test('sob leaderboard --out replaces a symlink; the file outside is untouched', () => {
    const target = join(outside, 'board.md');
    writeFileSync(target, 'mine\n');
    const link = join(tmp, 'leaderboard.md');
    symlinkSync(target, link);
    const r = sob('leaderboard', evalDir, '--format', 'md', '--out', link);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(target, 'utf8'), 'mine\n');
    assert.equal(lstatSync(link).isSymbolicLink(), false);
    assert.match(readFileSync(link, 'utf8'), /^\| # \| Model \| Overall/);
    // The per-source table too.
    const t = sob('leaderboard', evalDir, '--table', 'image', '--format', 'csv', '--out', link);
    assert.equal(t.status, 0, t.stderr);
    assert.equal(readFileSync(target, 'utf8'), 'mine\n');
    assert.match(readFileSync(link, 'utf8'), /^rank,model,display_name,n,value_accuracy/);
  });
});
