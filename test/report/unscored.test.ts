/**
 * Issue 9, item 10 (the report and compare parts): `sob report` on a run directory nobody scored
 * scores it first; `sob compare --all` leaves pairs with no record in common out of the matrix
 * and out of the Holm correction, marked "no common records"; identical inputs give p = 1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pairedBootstrap } from '../../metrics/compare.ts';
import { needsData } from '../kit/shared-data.ts';
import { reportData, SOB, sobInProcess as sob } from './run.ts';

const IMAGE = join(SOB, 'evaluation/image');
const tmp = mkdtempSync(join(tmpdir(), 'sob-unscored-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('sob report on an unscored run directory scores it, then reports it', {
  skip: needsData('sob'),
}, async () => {
  // A run directory as sob run leaves it: manifest.json and 20 answers, no evaluation/.
  const run = join(tmp, 'run');
  mkdirSync(run);
  const lines = readFileSync(join(SOB, 'images_responses/response_phi-4_image.jsonl'), 'utf8')
    .split('\n')
    .slice(0, 20)
    .map((l) => {
      const r = JSON.parse(l);
      r.metadata.source = 'image';
      return JSON.stringify(r);
    });
  writeFileSync(join(run, 'responses.jsonl'), `${lines.join('\n')}\n`);
  writeFileSync(
    join(run, 'manifest.json'),
    JSON.stringify({
      model: 'openai:mine',
      status: 'complete',
      benchmark: { path: join(tmp, 'none.jsonl') },
    }),
  );
  const r = await sob('report', run, '--samples', '20');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /not scored yet; scoring 1 response file first \(strict profile/);
  const summary = join(run, 'evaluation/image/openai_mine/eval_summary.json');
  assert.equal(JSON.parse(readFileSync(summary, 'utf8')).num_records, 20);
  assert.equal(
    readFileSync(join(run, 'evaluation/image/openai_mine/eval_records.jsonl'), 'utf8').trim().split('\n')
      .length,
    20,
  );
  const data = reportData(join(run, 'report.html')) as {
    leaderboard: { model: string; per_modality: { image: { n: number } } }[];
    records: unknown[];
  };
  assert.deepEqual(
    data.leaderboard.map((x) => [x.model, x.per_modality.image.n]),
    [['openai_mine', 20]],
  );
  assert.equal(data.records.length, 20);

  // Scored now: a second report does not score again; new answers since are named.
  const before = statSync(summary).mtimeMs;
  const again = await sob('report', run, '--samples', '20');
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /not scored yet/);
  assert.equal(statSync(summary).mtimeMs, before);
  appendFileSync(join(run, 'responses.jsonl'), '\n');
  const later = Date.now() / 1000 + 5;
  spawnSync('touch', ['-d', `@${later}`, join(run, 'responses.jsonl')]);
  const stale = await sob('report', run, '--samples', '20');
  assert.equal(stale.status, 0, stale.stderr);
  assert.match(
    stale.stderr,
    /responses\.jsonl changed after it was scored: run sob score on its run directory/,
  );
  assert.ok(existsSync(join(run, 'report.html')));
});

test('compare --all: a pair with no common records is out of the matrix and of the Holm correction', {
  skip: needsData('sob'),
}, async () => {
  const ev = join(tmp, 'evaluation');
  for (const m of ['phi-4', 'gemini-2.5-pro'])
    cpSync(join(IMAGE, m), join(ev, 'image', m), { recursive: true });
  // A model answered other records than the two others.
  mkdirSync(join(ev, 'image/other'));
  cpSync(join(IMAGE, 'phi-4/eval_summary.json'), join(ev, 'image/other/eval_summary.json'));
  writeFileSync(
    join(ev, 'image/other/eval_records.jsonl'),
    readFileSync(join(IMAGE, 'phi-4/eval_records.jsonl'), 'utf8').replace(
      /"record_id": "/g,
      '"record_id": "x-',
    ),
  );
  const r = await sob('compare', ev, '--all', '--modality', 'image', '--samples', '1000', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout) as {
    models: string[];
    cells: ({ n: number; pValue: number; pHolm: number } | null)[][];
    pairs_tested: number;
    no_common_records: string[][];
  };
  assert.deepEqual(m.models, ['gemini-2.5-pro', 'other', 'phi-4']);
  assert.equal(m.pairs_tested, 1);
  assert.deepEqual(m.no_common_records, [
    ['gemini-2.5-pro', 'other'],
    ['other', 'phi-4'],
  ]);
  assert.equal(m.cells[0][1], null);
  assert.equal(m.cells[1][2], null);
  const pair = m.cells[0][2]!;
  assert.equal(pair.n, 209);
  assert.ok(pair.pValue > 0.05 && pair.pValue < 0.5, `p ${pair.pValue}`);
  // One test: the adjusted p is the p itself (three tests would have made it 3p).
  assert.equal(pair.pHolm, pair.pValue);
  assert.match(r.stderr, /gemini-2\.5-pro and other: no common records/);
  const table = await sob('compare', ev, '--all', '--modality', 'image', '--samples', '200');
  assert.match(table.stdout, /Holm-Bonferroni correction over 1 pair\n/);
  assert.match(table.stdout, /\n\s*other\s+n\/c\s+-\s+n\/c/);
  assert.match(
    table.stdout,
    /n\/c = no common records \(left out of the matrix and the correction\): gemini-2\.5-pro \/ other, other \/ phi-4/,
  );

  const out = join(tmp, 'cmp.html');
  assert.equal((await sob('report', ev, '--out', out, '--samples', '200')).status, 0);
  const data = reportData(out) as { matrix: { noCommon: number[][]; diff: unknown[][] } };
  assert.deepEqual(data.matrix.noCommon, [
    [0, 1],
    [1, 2],
  ]);
});

test('identical inputs give a difference of 0 and p = 1 on every metric', {
  skip: needsData('sob'),
}, async () => {
  const ev = join(tmp, 'same');
  cpSync(join(IMAGE, 'phi-4'), join(ev, 'image/a'), { recursive: true });
  cpSync(join(IMAGE, 'phi-4'), join(ev, 'image/b'), { recursive: true });
  const r = await sob('compare', join(ev, 'image/a'), join(ev, 'image/b'), '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const res = JSON.parse(r.stdout) as { results: { n: number; difference: number; pValue: number }[] };
  assert.equal(res.results.length, 7);
  for (const x of res.results) assert.deepEqual([x.n, x.difference, x.pValue], [209, 0, 1]);
  // A value that is not a number on both sides is still "the same": p = 1, not 0.
  const nan = Float64Array.from([Number.NaN, 0.5, 1]);
  const p = pairedBootstrap(
    { a: nan, b: Float64Array.from(nan), weights: new Float64Array(3) },
    { samples: 200, seed: 1 },
  );
  assert.equal(p.pValue, 1);
  assert.equal(p.difference, 0);
});
