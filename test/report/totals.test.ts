/**
 * Coverage from the user's data, said aloud (issue 9, item 2): the SOB constants apply only to a
 * source that is recognisably SOB's, or when asked (`--benchmark-totals sob`); otherwise the
 * totals come from a benchmark manifest or the records present, and every output names the origin.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { needsData } from '../kit/shared-data.ts';
import { reportData, SOB, sobInProcess as sob } from './run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-totals-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

interface Totals {
  records: number;
  weight: number;
  origin: string;
}
interface Row {
  model: string;
  display_name: string;
  overall: number;
  overall_raw: number;
  coverage: number;
  benchmark_totals: Record<string, Totals>;
}

async function board(dir: string, ...flags: string[]): Promise<{ rows: Row[]; stderr: string }> {
  const r = await sob('leaderboard', dir, '--format', 'json', ...flags);
  assert.equal(r.status, 0, r.stderr);
  return { rows: JSON.parse(r.stdout) as Row[], stderr: r.stderr };
}

const IMAGE_ONLY = join(tmp, 'image-only');
const SUBSET = join(tmp, 'subset');

before(async () => {
  if (needsData('sob')) return;
  // The user's workflow: score only the image files of two SOB models.
  const r = await sob(
    'score',
    join(SOB, 'images_responses/response_phi-4_image.jsonl'),
    join(SOB, 'images_responses/response_gpt-oss_image.jsonl'),
    '--out',
    IMAGE_ONLY,
    '--bootstrap-samples',
    '0',
  );
  assert.equal(r.status, 0, r.stderr);
  // Their own smaller benchmark: the first 50 image records only.
  const lines = readFileSync(join(SOB, 'images_responses/response_phi-4_image.jsonl'), 'utf8').split('\n');
  mkdirSync(join(tmp, 'files'), { recursive: true });
  writeFileSync(join(tmp, 'files/response_mine_image.jsonl'), `${lines.slice(0, 50).join('\n')}\n`);
  const s = await sob(
    'score',
    join(tmp, 'files/response_mine_image.jsonl'),
    '--out',
    SUBSET,
    '--bootstrap-samples',
    '0',
  );
  assert.equal(s.status, 0, s.stderr);
});

test('scoring only the image files: coverage 1 over the image set, not 0.039 of SOB; the origin is stated', {
  skip: needsData('sob'),
}, async () => {
  const { rows, stderr } = await board(IMAGE_ONLY);
  assert.equal(rows.length, 2);
  const phi = rows.find((r) => r.model === 'phi-4')!;
  assert.equal(phi.coverage, 1);
  assert.equal(phi.overall, phi.overall_raw);
  assert.equal(phi.overall.toFixed(3), '0.689'); // not 0.027
  // Image is recognisably SOB's (209 distinct ids of weight 602); text and audio have no results.
  assert.deepEqual(phi.benchmark_totals.image, { records: 209, weight: 602, origin: 'sob' });
  assert.deepEqual(phi.benchmark_totals.text, { records: 0, weight: 0, origin: 'records' });
  assert.deepEqual(phi.benchmark_totals.audio, { records: 0, weight: 0, origin: 'records' });
  assert.match(
    stderr,
    /benchmark totals: text: 0 records, weight 0 \(records: no results for this source here\); image: 209 records, weight 602 \(sob: the released SOB set, recognised: 209 distinct record ids of total weight 602/,
  );

  // Asked for the official totals: the old numbers, said aloud.
  const asked = (await board(IMAGE_ONLY, '--benchmark-totals', 'sob')).rows.find((r) => r.model === 'phi-4')!;
  assert.equal(asked.coverage, 209 / 5324);
  assert.equal(asked.overall.toFixed(3), '0.027');
  assert.deepEqual(asked.benchmark_totals.text, { records: 5000, weight: 13054, origin: 'sob' });

  // Every format states the origin.
  const table = await sob('leaderboard', IMAGE_ONLY);
  assert.match(
    table.stdout,
    /Benchmark totals \(coverage denominators, source weights W\): text 0 records, W 0 \(records\); image 209 records, W 602 \(sob\); audio 0 records, W 0 \(records\)/,
  );
  const md = await sob('leaderboard', IMAGE_ONLY, '--format', 'md');
  assert.match(md.stdout, /\n\nBenchmark totals .*image 209 records, W 602 \(sob\)/);
  const csv = (await sob('leaderboard', IMAGE_ONLY, '--format', 'csv')).stdout.split('\n');
  const head = csv[0].split(',');
  const phiCsv = csv.find((l) => l.includes(',phi-4,'))!.split(',');
  assert.equal(phiCsv[head.indexOf('benchmark_records')], '209');
  assert.match(csv[1], /text 0 records, W 0 \(records\); image 209 records, W 602 \(sob\)/);
  assert.equal(
    (await sob('leaderboard', IMAGE_ONLY, '--benchmark-totals', 'sob', '--manifest', 'x.json')).status,
    2,
  );
});

test('the report states the totals and their origin, with the same Overall', {
  skip: needsData('sob'),
}, async () => {
  const out = join(tmp, 'image-only.html');
  const r = await sob('report', IMAGE_ONLY, '--out', out, '--samples', '20');
  assert.equal(r.status, 0, r.stderr);
  const data = reportData<{
    totals: { records: Record<string, number>; origin: Record<string, string>; note: Record<string, string> };
    leaderboard: Row[];
  }>(out);
  assert.deepEqual(data.totals.origin, { text: 'records', image: 'sob', audio: 'records' });
  assert.equal(data.totals.records.image, 209);
  assert.match(data.totals.note.image, /recognised: 209 distinct record ids of total weight 602/);
  assert.equal(data.leaderboard.find((x) => x.model === 'phi-4')!.coverage, 1);
});

test('a subset of SOB is not SOB: totals from the records present, or from a manifest when there is one', {
  skip: needsData('sob'),
}, async () => {
  const { rows } = await board(SUBSET);
  assert.deepEqual(rows[0].benchmark_totals.image.records, 50);
  assert.equal(rows[0].benchmark_totals.image.origin, 'records');
  assert.equal(rows[0].coverage, 1);
  // Weight: the 50 records' own schema-complexity weights.
  const weights = readFileSync(join(SUBSET, 'image/mine/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .reduce((n, l) => n + (JSON.parse(l) as { difficulty_weight: number }).difficulty_weight, 0);
  assert.equal(rows[0].benchmark_totals.image.weight, weights);

  // sob eval's layout: <eval>/evaluation beside <eval>/benchmark/manifest.json.
  const evalDir = join(tmp, 'eval');
  cpSync(SUBSET, join(evalDir, 'evaluation'), { recursive: true });
  mkdirSync(join(evalDir, 'benchmark'));
  writeFileSync(
    join(evalDir, 'benchmark/manifest.json'),
    JSON.stringify({ sources: { text: { records: 0, weight: 0 }, image: { records: 100, weight: 250 } } }),
  );
  const m = (await board(join(evalDir, 'evaluation'))).rows[0];
  assert.deepEqual(m.benchmark_totals.image, {
    records: 100,
    weight: 250,
    origin: 'manifest:../benchmark/manifest.json',
  });
  assert.equal(m.coverage, 0.5);
  assert.equal(m.overall, m.overall_raw * 0.5);
  // --benchmark-totals records ignores the manifest.
  assert.equal(
    (await board(join(evalDir, 'evaluation'), '--benchmark-totals', 'records')).rows[0].coverage,
    1,
  );
  // A run directory: the manifest beside the benchmark its run manifest names.
  const run = join(tmp, 'run');
  cpSync(SUBSET, join(run, 'evaluation'), { recursive: true });
  mkdirSync(join(tmp, 'bench'));
  writeFileSync(join(tmp, 'bench/records.jsonl'), '');
  writeFileSync(
    join(tmp, 'bench/manifest.json'),
    JSON.stringify({ sources: { image: { records: 200, weight: 500 } } }),
  );
  writeFileSync(
    join(run, 'manifest.json'),
    JSON.stringify({
      model: 'openai:mine',
      benchmark: { path: join(tmp, 'bench/records.jsonl'), sha256: 'x' },
    }),
  );
  const byRun = (await board(join(run, 'evaluation'))).rows[0];
  assert.equal(byRun.coverage, 0.25);
  assert.match(byRun.benchmark_totals.image.origin, /^manifest:.*bench\/manifest\.json$/);
});

test('the released SOB folder is recognised: every source at the SOB constants, Phi-4 at 5209/5324', {
  skip: needsData('sob'),
}, async () => {
  const { rows, stderr } = await board(join(SOB, 'evaluation'));
  const phi = rows.find((r) => r.display_name === 'Phi-4')!;
  assert.equal(phi.coverage, 5209 / 5324);
  assert.equal(phi.overall.toFixed(3), '0.831');
  assert.equal(rows.find((r) => r.display_name === 'GPT-5.4')!.overall.toFixed(3), '0.870');
  for (const m of ['text', 'image', 'audio']) assert.equal(phi.benchmark_totals[m].origin, 'sob');
  assert.match(
    stderr,
    /text: 5000 records, weight 13054 \(sob: the released SOB set, recognised: 5000 records per model, summaries of the SOB repository's data\/text_responses\)/,
  );
  // A copy of the text summaries alone, with their response_file renamed, is no longer SOB's.
  const copy = join(tmp, 'text-copy');
  for (const model of ['phi-4', 'gpt-oss']) {
    mkdirSync(join(copy, 'text', model), { recursive: true });
    const s = JSON.parse(readFileSync(join(SOB, 'evaluation/text', model, 'eval_summary.json'), 'utf8'));
    s.response_file = `mine/response_${model}.jsonl`;
    writeFileSync(join(copy, 'text', model, 'eval_summary.json'), JSON.stringify(s));
  }
  const t = (await board(copy)).rows[0].benchmark_totals.text;
  assert.deepEqual(t, { records: 5000, weight: 10000, origin: 'summaries' });
});
