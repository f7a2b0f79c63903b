/**
 * Model folder names are a user's (issue 9, item 9): `constructor`, `__proto__`, `toString`,
 * `hasOwnProperty` are names like any other in `leaderboard`, `report` and `compare`; the page
 * embeds no plain-object lookup by name.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { needsData } from '../kit/shared-data.ts';
import { reportData, SOB, sob } from './run.ts';

// Every test here reads the SOB evaluation folders: the whole file needs them.
describe('folders with tricky names', { skip: needsData('sob') }, () => {
  const IMAGE = join(SOB, 'evaluation/image');
  const tmp = mkdtempSync(join(tmpdir(), 'sob-names-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const TRICKY = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
  const ev = join(tmp, 'evaluation');
  for (const m of TRICKY) cpSync(join(IMAGE, 'phi-4'), join(ev, 'image', m), { recursive: true });
  cpSync(join(IMAGE, 'gpt-oss'), join(ev, 'image/gpt-oss'), { recursive: true });
  writeFileSync(
    join(ev, 'display_names.json'),
    '{"__proto__": "Proto", "toString": "To String", "valueOf": "not a folder"}',
  );
  const phiOverall = (() => {
    const r = sob('leaderboard', join(SOB, 'evaluation'), '--format', 'json', '--table', 'image');
    const rows = JSON.parse(r.stdout) as { model: string; metrics: { value_accuracy: { mean: number } } }[];
    return rows.find((x) => x.model === 'phi-4')!.metrics.value_accuracy.mean;
  })();

  test('sob leaderboard ranks folders named constructor, __proto__, toString, hasOwnProperty', () => {
    const r = sob('leaderboard', ev, '--format', 'json');
    assert.equal(r.status, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as { model: string; display_name: string; value_accuracy: number }[];
    assert.equal(rows.length, 5);
    const by = new Map(rows.map((x) => [x.model, x]));
    for (const m of TRICKY) assert.equal(by.get(m)!.value_accuracy, phiOverall, m);
    assert.equal(by.get('__proto__')!.display_name, 'Proto');
    assert.equal(by.get('toString')!.display_name, 'To String');
    assert.equal(by.get('constructor')!.display_name, 'constructor');
    assert.equal(by.get('hasOwnProperty')!.display_name, 'hasOwnProperty');
    const table = sob('leaderboard', ev);
    assert.equal(table.status, 0, table.stderr);
    assert.equal(table.stdout.split('\n').filter((l) => /^\d+ /.test(l)).length, 5);
    const source = sob('leaderboard', ev, '--table', 'image', '--ranks', '--format', 'csv');
    assert.equal(source.status, 0, source.stderr);
    assert.equal(source.stdout.trim().split('\n').length, 6);
  });

  test('sob report and sob compare take the same folders', () => {
    const out = join(tmp, 'report.html');
    const r = sob('report', ev, '--out', out, '--samples', '20');
    assert.equal(r.status, 0, r.stderr);
    const data = reportData<{ models: string[]; names: string[]; matrix: { models: string[] } }>(out);
    assert.deepEqual(data.models, ['__proto__', 'constructor', 'gpt-oss', 'hasOwnProperty', 'toString']);
    assert.deepEqual(data.names, ['Proto', 'constructor', 'gpt-oss', 'hasOwnProperty', 'To String']);
    assert.equal(data.matrix.models.length, 5);

    const all = sob('compare', ev, '--all', '--modality', 'image', '--samples', '50', '--format', 'json');
    assert.equal(all.status, 0, all.stderr);
    const m = JSON.parse(all.stdout) as {
      models: string[];
      cells: ({ difference: number; pValue: number } | null)[][];
    };
    assert.deepEqual(m.models, ['__proto__', 'constructor', 'gpt-oss', 'hasOwnProperty', 'toString']);
    // Copies of one model: difference 0, p = 1; gpt-oss is 0.130 below them.
    assert.equal(m.cells[0][1]!.difference, 0);
    assert.equal(m.cells[0][1]!.pValue, 1);
    assert.equal(m.cells[0][2]!.difference.toFixed(3), '-0.130');
    const pair = sob(
      'compare',
      ev,
      '--model',
      'constructor,__proto__',
      '--modality',
      'image',
      '--format',
      'json',
    );
    assert.equal(pair.status, 0, pair.stderr);
    const res = JSON.parse(pair.stdout) as { a: string; b: string; results: { n: number; pValue: number }[] };
    assert.deepEqual(
      [res.a, res.b, res.results[0].n, res.results[0].pValue],
      ['constructor', '__proto__', 209, 1],
    );
  });
});
