/**
 * The per-source leaderboard (the paper's Table for images): built from our own scoring of the
 * 34 SOB image response files, it matches the table built from the reference's summaries, means
 * and 95% intervals, rank by rank.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sourceRanks, sourceTable } from '../../metrics/ranks.ts';
import { loadEvaluation, readDisplayNames } from '../../src/report/evaluation.ts';
import { scoreFiles } from '../../src/scoring/score-files.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const SOB = sharedData('sob');
const tmp = mkdtempSync(join(tmpdir(), 'sob-table-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the image table from our scoring of the 34 files equals the one from the reference summaries', {
  skip: needsData('sob'),
}, async () => {
  const dir = join(SOB, 'images_responses');
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  const res = await scoreFiles(
    files.map((f) => ({ file: join(dir, f) })),
    { outDir: tmp, summary: { bootstrapSamples: 1000, seed: 42, topKErrors: 20 } },
  );
  assert.ok(res.every((r) => !r.error));
  const names = readDisplayNames(join(SOB, 'evaluation/display_names.json'), tmp);
  const ours = sourceTable((await loadEvaluation(tmp)).models, names, 'image');
  const ref = sourceTable((await loadEvaluation(join(SOB, 'evaluation'))).models, names, 'image');
  assert.equal(ours.length, 34);
  assert.deepEqual(
    ours.map((r) => r.model),
    ref.map((r) => r.model),
  );
  let compared = 0;
  ours.forEach((r, i) => {
    for (const [k, m] of Object.entries(r.metrics)) {
      for (const f of ['mean', 'ci95_low', 'ci95_high'] as const) {
        assert.ok((m[f] ?? 0) === (ref[i].metrics[k][f] ?? 0), `${r.model} ${k} ${f}`);
        compared++;
      }
    }
  });
  assert.equal(compared, 34 * 7 * 3);
  // The paper's headline: the best image Value Accuracy is Gemma-4-31B's 0.672.
  assert.equal(ours[0].display_name, 'Gemma-4-31B');
  assert.equal(ours[0].metrics.value_accuracy.mean?.toFixed(3), '0.672');
});

test('ranks shift between sources; sob leaderboard --source prints the table with intervals', {
  skip: needsData('sob'),
}, () => {
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'leaderboard',
      join(SOB, 'evaluation'),
      '--source',
      'image',
      '--format',
      'json',
    ],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as {
    display_name: string;
    rank: number;
    ranks: Record<string, number>;
  }[];
  const gemma = rows.find((x) => x.display_name === 'Gemma-4-31B')!;
  assert.equal(gemma.rank, 1);
  assert.equal(gemma.ranks.image, 1);
  assert.ok(gemma.ranks.text > 1, 'first on images, not on text');
});

test('sourceRanks gives every model a rank on each source it has', { skip: needsData('sob') }, async () => {
  const ev = await loadEvaluation(join(SOB, 'evaluation'));
  const ranks = sourceRanks(ev.models);
  const phi = ranks.get('phi-4')!;
  assert.equal(phi.audio, undefined); // Phi-4 has no audio results
  assert.ok(phi.text! >= 1 && phi.image! >= 1);
});
