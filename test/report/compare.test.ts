/**
 * `sob compare`: the paired bootstrap on two SOB image models, identical inputs, and the
 * Holm-Bonferroni correction on a hand-checked example.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { holm, pairedBootstrap } from '../../metrics/compare.ts';
import { comparePair, loadModelRows, pairwiseMatrix, wrapName } from '../../src/report/compare.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const IMAGE = sharedData('sob/evaluation/image');

function weightedMean(model: string, key: string): number {
  const s = JSON.parse(readFileSync(join(IMAGE, model, 'eval_summary.json'), 'utf8')) as {
    summary: { overall_weighted: { metrics: Record<string, { mean: number }> } };
  };
  return s.summary.overall_weighted.metrics[key].mean;
}

test('phi-4 vs gpt-oss on the 209 image records: the interval contains the observed difference', {
  skip: needsData('sob'),
}, async () => {
  const a = await loadModelRows(join(IMAGE, 'phi-4'));
  const b = await loadModelRows(join(IMAGE, 'gpt-oss'));
  const res = comparePair(a, b, 2000, 42);
  assert.equal(res[0].n, 209);
  // Each side's mean is the reference's weighted mean; the difference is B - A.
  assert.ok(Math.abs(res[0].meanA - weightedMean('phi-4', 'leaf_value_em')) < 1e-9);
  assert.ok(Math.abs(res[0].meanB - weightedMean('gpt-oss', 'leaf_value_em')) < 1e-9);
  assert.ok(Math.abs(res[0].difference - (res[0].meanB - res[0].meanA)) < 1e-12);
  for (const r of res) {
    assert.ok(
      r.ciLow <= r.difference && r.difference <= r.ciHigh,
      `${r.difference} in [${r.ciLow}, ${r.ciHigh}]`,
    );
    assert.ok(r.pValue >= 0 && r.pValue <= 1);
  }
  // Value Accuracy: gpt-oss is lower by 0.130, an interval clear of 0, p < 0.001.
  assert.equal(res[0].difference.toFixed(3), '-0.130');
  assert.ok(res[0].ciHigh < 0);
  assert.ok(res[0].pValue < 0.001);
});

test('identical inputs give a difference of exactly 0, the interval [0, 0] and p = 1', {
  skip: needsData('sob'),
}, async () => {
  const a = await loadModelRows(join(IMAGE, 'phi-4'));
  for (const r of comparePair(a, a, 500, 7)) {
    assert.equal(r.difference, 0);
    assert.equal(r.ciLow, 0);
    assert.equal(r.ciHigh, 0);
    assert.equal(r.pValue, 1);
  }
  const m = pairwiseMatrix([a, a], 200, 1);
  assert.equal(m.cells[0][1]!.difference, 0);
});

test('the paired bootstrap is seeded: the same seed gives the same interval', () => {
  const input = {
    a: Float64Array.from([0, 1, 0, 1]),
    b: Float64Array.from([1, 1, 1, 0]),
    weights: Float64Array.from([1, 2, 3, 1]),
  };
  const x = pairedBootstrap(input, { samples: 300, seed: 5 });
  const y = pairedBootstrap(input, { samples: 300, seed: 5 });
  assert.deepEqual(x, y);
  // Weighted: (1*1 + 0*2 + 1*3 + -1*1) / 7
  assert.equal(x.difference, 3 / 7);
});

test('Holm-Bonferroni on a hand-checked example', () => {
  // sorted 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> max(0.06, 0.04) = 0.06
  assert.deepEqual(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06]);
  assert.deepEqual(holm([0.5, 0.6]), [1, 1]);
  assert.deepEqual(holm([]), []);
});

test('sob compare prints the table; usage errors exit 2', { skip: needsData('sob') }, () => {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/sob.js'), 'compare', join(IMAGE, 'phi-4'), join(IMAGE, 'gpt-oss'), '--samples', '300'],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  // Which model is A and which is B, said first.
  assert.match(
    r.stdout,
    /^A = phi-4, B = gpt-oss: 209 records both answered .*; B - A > 0: B scores higher$/m,
  );
  assert.match(r.stdout, /Value Accuracy\s+0\.557\s+0\.427\s+-0\.130/);
  const bad = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'compare', join(IMAGE, 'phi-4')], {
    encoding: 'utf8',
  });
  assert.equal(bad.status, 2);
});

const tmp = mkdtempSync(join(tmpdir(), 'sob-compare-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function sob(...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { encoding: 'utf8', cwd: tmp });
}

/** A `sob eval` folder (runs/ beside evaluation/) holding three SOB image models' scores. */
function evalFolder(): string | undefined {
  if (!existsSync(IMAGE)) return undefined;
  const ev = join(tmp, 'eval');
  if (existsSync(ev)) return ev;
  mkdirSync(join(ev, 'runs'), { recursive: true });
  for (const m of ['phi-4', 'NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', 'Qwen3-235B-A22B-Instruct-2507'])
    cpSync(join(IMAGE, m), join(ev, 'evaluation/image', m), { recursive: true });
  return ev;
}

test('sob compare --format json names every metric and says the difference is B - A', (t) => {
  if (!existsSync(IMAGE)) return t.skip(`no ${IMAGE}: the SOB evaluation data is absent`);
  const r = sob(
    'compare',
    join(IMAGE, 'phi-4'),
    join(IMAGE, 'gpt-oss'),
    '--samples',
    '200',
    '--format',
    'json',
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.a, 'phi-4');
  assert.equal(out.b, 'gpt-oss');
  assert.equal(out.difference, 'B - A');
  assert.deepEqual(
    out.results.map((x: { metric: string; name: string }) => [x.metric, x.name]),
    [
      ['leaf_value_em', 'Value Accuracy'],
      ['value_token_f1', 'Faithfulness'],
      ['schema_compliance', 'JSON Pass'],
      ['hier_path_recall', 'Path Recall'],
      ['path_set_f1', 'Structure Coverage'],
      ['type_precision', 'Type Safety'],
      ['strict_json_em', 'Perfect Response'],
    ],
  );
  assert.equal(out.results[0].difference.toFixed(3), '-0.130');
});

test('sob compare <eval folder> --model a,b reads its evaluation/ as --all does', (t) => {
  const ev = evalFolder();
  if (!ev) return t.skip(`no ${IMAGE}: the SOB evaluation data is absent`);
  const r = sob('compare', ev, '--model', 'phi-4,Qwen3-235B-A22B-Instruct-2507', '--samples', '200');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /reading .*eval\/evaluation \(the scores of this eval folder\)/);
  assert.match(r.stdout, /^A = phi-4, B = Qwen3-235B-A22B-Instruct-2507: 209 records both answered/m);
});

test('the --all matrix: full model names wrapped over the columns, and a legend of its marks', (t) => {
  const ev = evalFolder();
  if (!ev) return t.skip(`no ${IMAGE}: the SOB evaluation data is absent`);
  const r = sob('compare', ev, '--all', '--modality', 'image', '--samples', '200');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  // Header lines under the title, up to the first row: each column's name is whole when its pieces are joined.
  const first = lines.findIndex((l) => l.startsWith('NVIDIA-Nemotron'));
  const heads = lines.slice(1, first);
  const cols = (l: string) =>
    Array.from({ length: 3 }, (_, j) => l.slice(36 + 13 * j, 36 + 13 * (j + 1)).trim());
  const names = [0, 1, 2].map((j) => heads.map((h) => cols(h)[j]).join(''));
  assert.deepEqual(names, ['NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', 'Qwen3-235B-A22B-Instruct-2507', 'phi-4']);
  // 35 characters in pieces of at most 11, cut after a hyphen: NVIDIA- / Nemotron-3- / Nano-30B- / A3B-BF16
  assert.equal(heads.length, 4);
  assert.equal(cols(heads[3])[0], 'A3B-BF16');
  assert.match(
    r.stdout,
    /^Each cell: B - A with A = the row's model, B = the column's .*Marks: \* significant \(Holm p < 0\.05\); no mark: not significant; - the model itself\.$/m,
  );
  // Rows keep the full names too.
  assert.match(r.stdout, /^NVIDIA-Nemotron-3-Nano-30B-A3B-BF16\s+-\s/m);
});

test('wrapName cuts after a separator in the second half of a piece, else at the width', () => {
  assert.deepEqual(wrapName('claude-opus-4-7', 11), ['claude-', 'opus-4-7']);
  assert.deepEqual(wrapName('abcdefghijklmnop', 5), ['abcde', 'fghij', 'klmno', 'p']);
  assert.deepEqual(wrapName('phi-4', 11), ['phi-4']);
});
