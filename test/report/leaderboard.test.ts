/**
 * The unified leaderboard (paper Eq. 4-7) from the SOB authors' released summaries reproduces
 * the published Overall values, and coverage counts only the sources a model has.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { leaderboardRow } from '../../metrics/leaderboard.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const EVAL = sharedData('sob/evaluation');
const SKIP = needsData('sob');

interface Row {
  model: string;
  display_name: string;
  overall: number;
  overall_raw: number;
  coverage: number;
  modalities: string[];
  per_modality: Record<string, { value_accuracy: number; n: number }>;
}

function leaderboardJson(): Row[] {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'leaderboard', EVAL, '--format', 'json'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Row[];
}

test('sob leaderboard --format json reproduces the published Overall values', { skip: SKIP }, () => {
  const rows = leaderboardJson();
  const byName = new Map(rows.map((r) => [r.display_name, r]));
  const published: [string, number][] = [
    ['GPT-5.4', 0.87],
    ['Gemini-3.1-Pro-Preview', 0.869],
    ['GLM-5.1', 0.866],
    ['Claude-Opus-4.7', 0.864],
    ['GLM-4.7', 0.861],
    ['Phi-4', 0.831],
    ['GPT-OSS-20B', 0.732],
  ];
  for (const [name, overall] of published) {
    const row = byName.get(name);
    assert.ok(row, `${name} is on the leaderboard`);
    assert.equal(row.overall.toFixed(3), overall.toFixed(3), name);
  }
  assert.equal(rows.length, 34);
  // Sorted by Overall, best first.
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].overall >= rows[i].overall);
});

test('Phi-4 has no audio: coverage 5209/5324 and Overall = raw x coverage', { skip: SKIP }, () => {
  const phi = leaderboardJson().find((r) => r.display_name === 'Phi-4')!;
  assert.deepEqual(phi.modalities, ['text', 'image']);
  assert.equal(phi.coverage, 5209 / 5324);
  assert.equal(phi.overall, phi.overall_raw * phi.coverage);
  assert.equal(phi.per_modality.image.n, 209);
  assert.equal(phi.per_modality.text.n, 5000);
});

test('Eq. 4: each metric is the source-weight-weighted mean; Perfect skips audio', { skip: SKIP }, () => {
  const row = leaderboardRow(
    'm',
    'M',
    {
      text: { records: 10, weighted: { leaf_value_em: 0.5, strict_json_em: 0.2 } },
      audio: { records: 5, weighted: { leaf_value_em: 1.0, strict_json_em: 0.9 } },
    },
    { weight: { text: 30, image: 0, audio: 10 }, records: { text: 10, image: 0, audio: 10 } },
  )!;
  assert.equal(row.value_accuracy, (0.5 * 30 + 1.0 * 10) / 40);
  assert.equal(row.perfect, 0.2);
  // Two aggregates available: raw is their mean; 15 of 20 records evaluated.
  assert.equal(row.overall_raw, (0.625 + 0.2) / 2);
  assert.equal(row.coverage, 15 / 20);
});
