/**
 * Readers of an evaluation folder (issue 9, item 6, the reader side): `leaderboard`, `report` and
 * `compare --all` ignore dot-folders (a writer's temp or old folders) and name every other model
 * folder they leave out, with why, on stderr and in the report.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { needsData } from '../kit/shared-data.ts';
import { reportData, SOB, sob } from './run.ts';

// Every test here reads the SOB evaluation folders: the whole file needs them.
describe('broken evaluation folders are skipped and named', { skip: needsData('sob') }, () => {
  const IMAGE = join(SOB, 'evaluation/image');
  const tmp = mkdtempSync(join(tmpdir(), 'sob-skipped-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  // Two whole folders; a crashed writer's temp and old folders; three broken ones.
  const ev = join(tmp, 'evaluation');
  for (const m of ['phi-4', 'gpt-oss']) cpSync(join(IMAGE, m), join(ev, 'image', m), { recursive: true });
  cpSync(join(IMAGE, 'phi-4'), join(ev, 'image/.phi-4.tmp-4242-deadbeef'), { recursive: true });
  cpSync(join(IMAGE, 'gpt-oss'), join(ev, 'image/.gpt-oss.old-4242-cafef00d'), { recursive: true });
  mkdirSync(join(ev, 'image/torn'));
  cpSync(join(IMAGE, 'phi-4/eval_records.jsonl'), join(ev, 'image/torn/eval_records.jsonl'));
  mkdirSync(join(ev, 'image/broken'));
  cpSync(join(IMAGE, 'phi-4/eval_records.jsonl'), join(ev, 'image/broken/eval_records.jsonl'));
  writeFileSync(join(ev, 'image/broken/eval_summary.json'), '{"num_records": 209, "summ');
  mkdirSync(join(ev, 'image/empty'));
  writeFileSync(join(ev, 'image/empty/notes.txt'), 'nothing here\n');

  const EXPECTED = [
    'skipped image/broken: unreadable eval_summary.json: not valid JSON',
    'skipped image/empty: no eval_summary.json',
    'skipped image/torn: records without a summary (eval_records.jsonl but no eval_summary.json',
  ];

  function skippedLines(stderr: string): string[] {
    return stderr.split('\n').filter((l) => l.startsWith('skipped '));
  }

  test('sob leaderboard lists the two whole models and names the three folders it left out', () => {
    const r = sob('leaderboard', ev, '--format', 'json');
    assert.equal(r.status, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as { model: string }[];
    assert.deepEqual(rows.map((x) => x.model).sort(), ['gpt-oss', 'phi-4']);
    const lines = skippedLines(r.stderr);
    assert.equal(lines.length, 3, r.stderr);
    for (const [i, l] of lines.entries()) assert.ok(l.startsWith(EXPECTED[i]), l);
    assert.doesNotMatch(r.stderr, /\.phi-4\.tmp|\.gpt-oss\.old/);
  });

  test('sob compare --all compares the two whole models and names the folders it left out', () => {
    // A folder with a summary but no per-record rows cannot be compared: named too.
    mkdirSync(join(ev, 'image/summary-only'));
    cpSync(join(IMAGE, 'phi-4/eval_summary.json'), join(ev, 'image/summary-only/eval_summary.json'));
    try {
      const r = sob('compare', ev, '--all', '--modality', 'image', '--samples', '20', '--format', 'json');
      assert.equal(r.status, 0, r.stderr);
      const m = JSON.parse(r.stdout) as { models: string[] };
      assert.deepEqual(m.models, ['gpt-oss', 'phi-4']);
      const lines = skippedLines(r.stderr);
      assert.equal(lines.length, 4, r.stderr);
      assert.match(lines[3], /^skipped image\/torn: records without a summary/);
      assert.equal(
        lines[2],
        'skipped image/summary-only: no eval_records.jsonl (a comparison needs the per-record rows)',
      );
    } finally {
      rmSync(join(ev, 'image/summary-only'), { recursive: true });
    }
  });

  test('sob report names the left-out folders on stderr and in the page', () => {
    const out = join(tmp, 'report.html');
    const r = sob('report', ev, '--out', out, '--samples', '10');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(skippedLines(r.stderr).length, 3, r.stderr);
    const html = readFileSync(out, 'utf8');
    const data = reportData<{ skipped: { folder: string; reason: string }[]; leaderboard: unknown[] }>(out);
    assert.deepEqual(
      data.skipped.map((s) => s.folder),
      ['image/broken', 'image/empty', 'image/torn'],
    );
    assert.equal(data.leaderboard.length, 2);
    assert.doesNotMatch(html, /deadbeef|cafef00d/);
  });
});
