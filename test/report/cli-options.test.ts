/**
 * `sob leaderboard --table` and `sob compare --model`: the per-source table read straight against
 * the reference eval_summary.json files, the unified default unchanged, and models named in
 * evaluation folders.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const EVAL = sharedData('sob/evaluation');

/** `sob <args>` in this process (test/kit/cli.ts). */
async function sob(...args: string[]) {
  const r = await sobIn(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

test('--table image: each model Value Accuracy and its 95% interval are eval_summary.json overall_weighted', {
  skip: needsData('sob'),
}, async () => {
  const r = await sob('leaderboard', EVAL, '--table', 'image', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as {
    rank: number;
    model: string;
    metrics: Record<string, { mean: number; ci95_low: number; ci95_high: number }>;
  }[];
  const dirs = readdirSync(join(EVAL, 'image')).filter((d) => !d.endsWith('_audio_true'));
  assert.equal(rows.length, 34);
  assert.equal(rows.length, dirs.filter((d) => !d.startsWith('.')).length);
  for (const row of rows) {
    const s = JSON.parse(readFileSync(join(EVAL, 'image', row.model, 'eval_summary.json'), 'utf8'));
    const ref = s.summary.overall_weighted.metrics;
    assert.equal(row.metrics.value_accuracy.mean, ref.leaf_value_em.mean, row.model);
    assert.equal(row.metrics.value_accuracy.ci95_low, ref.leaf_value_em.ci95_low, row.model);
    assert.equal(row.metrics.value_accuracy.ci95_high, ref.leaf_value_em.ci95_high, row.model);
    assert.equal(row.metrics.json_pass.mean, ref.schema_compliance.mean, row.model);
  }
  // Sorted by Value Accuracy, ranks 1..34.
  rows.forEach((row, i) => {
    assert.equal(row.rank, i + 1);
    if (i > 0) assert.ok(rows[i - 1].metrics.value_accuracy.mean >= row.metrics.value_accuracy.mean);
  });
  assert.equal(rows[0].model, 'gemma-4-31b-it');
  assert.equal(rows[0].metrics.value_accuracy.mean.toFixed(3), '0.672');
  // --table <m> is --source <m>; the CSV has the interval columns.
  assert.equal((await sob('leaderboard', EVAL, '--source', 'image', '--format', 'json')).stdout, r.stdout);
  const csv = (await sob('leaderboard', EVAL, '--table', 'image', '--format', 'csv')).stdout.split('\n');
  assert.match(
    csv[0],
    /^rank,model,display_name,n,value_accuracy,value_accuracy_ci95_low,value_accuracy_ci95_high,/,
  );
  assert.equal(csv.filter((l) => l !== '').length, 35);
});

test('--table unified is the default output, unchanged; a bad --table is a usage error', {
  skip: needsData('sob'),
}, async () => {
  const def = await sob('leaderboard', EVAL, '--format', 'json');
  const uni = await sob('leaderboard', EVAL, '--table', 'unified', '--format', 'json');
  assert.equal(def.status, 0, def.stderr);
  assert.equal(uni.stdout, def.stdout);
  const rows = JSON.parse(def.stdout) as { overall: number }[];
  rows.forEach((r, i) => {
    if (i > 0) assert.ok(rows[i - 1].overall >= r.overall);
  });
  assert.equal((await sob('leaderboard', EVAL, '--table', 'video')).status, 2);
  assert.equal((await sob('leaderboard', EVAL, '--table', 'text', '--source', 'image')).status, 2);
});

test('--ranks: the unified table adds each model Value Accuracy rank per source', {
  skip: needsData('sob'),
}, async () => {
  const r = await sob('leaderboard', EVAL, '--ranks', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as {
    model: string;
    rank: number;
    overall: number;
    source_ranks: Record<string, number>;
  }[];
  const plain = JSON.parse((await sob('leaderboard', EVAL, '--format', 'json')).stdout) as {
    model: string;
    overall: number;
  }[];
  assert.deepEqual(
    rows.map((x) => [x.model, x.overall]),
    plain.map((x) => [x.model, x.overall]),
  );
  const image = JSON.parse(
    (await sob('leaderboard', EVAL, '--table', 'image', '--format', 'json')).stdout,
  ) as {
    model: string;
    rank: number;
  }[];
  for (const x of image) assert.equal(rows.find((y) => y.model === x.model)?.source_ranks.image, x.rank);
  const gemini = rows.find((x) => x.model === 'gemini-3.1-pro-preview')!;
  assert.equal(gemini.rank, 2);
  assert.deepEqual(gemini.source_ranks, { text: 1, image: 2, audio: 9 });
  const table = (await sob('leaderboard', EVAL, '--ranks')).stdout.split('\n');
  assert.match(table[0], /Ranks t\/i\/a$/);
  assert.match(table[3], /Gemini-3\.1-Pro-Preview .* 1\/2\/9$/);
});

test('sob compare --model: two names of one evaluation folder, or one name in two folders', {
  skip: needsData('sob'),
}, async () => {
  const byName = await sob('compare', EVAL, '--model', 'phi-4,gpt-oss', '--samples', '300');
  assert.equal(byName.status, 0, byName.stderr);
  const byPath = await sob(
    'compare',
    join(EVAL, 'image/phi-4'),
    join(EVAL, 'image/gpt-oss'),
    '--samples',
    '300',
  );
  assert.equal(byName.stdout, byPath.stdout);
  assert.match(byName.stdout, /Value Accuracy\s+0\.557\s+0\.427\s+-0\.130/);
  assert.match(byName.stdout, /p: two-sided bootstrap, 2 x the share/);

  const same = await sob(
    'compare',
    EVAL,
    EVAL,
    '--model',
    'phi-4',
    '--modality',
    'image',
    '--format',
    'json',
  );
  assert.equal(same.status, 0, same.stderr);
  const res = JSON.parse(same.stdout) as {
    results: { n: number; difference: number; ciLow: number; ciHigh: number }[];
  };
  assert.equal(res.results.length, 7);
  for (const x of res.results) {
    assert.equal(x.n, 209);
    assert.deepEqual([x.difference, x.ciLow, x.ciHigh], [0, 0, 0]);
  }
  assert.equal((await sob('compare', EVAL, '--model', 'phi-4')).status, 2);
  const missing = await sob('compare', EVAL, EVAL, '--model', 'no-such-model');
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^sob: no eval_records\.jsonl for both /);
});

test('sob compare --all names the Holm-Bonferroni correction', { skip: needsData('sob') }, async () => {
  const r = await sob('compare', EVAL, '--all', '--modality', 'image', '--samples', '50', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout) as {
    correction: string;
    models: string[];
    cells: ({ pHolm: number; pValue: number } | null)[][];
  };
  assert.equal(m.correction, 'holm-bonferroni');
  assert.equal(m.models.length, 34);
  for (const row of m.cells) for (const c of row) if (c) assert.ok(c.pHolm >= c.pValue);
});

test('--out in a folder that does not exist yet: leaderboard and report make it (before: a raw ENOENT on the temp name, exit 1)', {
  skip: needsData('sob'),
}, async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-out-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const md = join(tmp, 'new', 'a', 'leaderboard.md');
  const l = await sob('leaderboard', EVAL, '--format', 'md', '--out', md);
  assert.equal(l.status, 0, l.stderr);
  assert.equal(
    readFileSync(md, 'utf8')
      .split('\n')
      .filter((x) => /^\| \d+ \|/.test(x)).length,
    34,
  );
  const html = join(tmp, 'new', 'b', 'report.html');
  const r = await sob('report', EVAL, '--out', html);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(html));
  assert.match(readFileSync(html, 'utf8').slice(0, 200), /^<!doctype html>/);
});

test('sob compare --all on a folder without the default source names the sources it has, in one line', {
  skip: needsData('sob'),
}, async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-cmp-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const s = await sob(
    'score',
    sharedData('sob/images_responses/response_phi-4_image.jsonl'),
    sharedData('sob/images_responses/response_gpt-oss_image.jsonl'),
    '--out',
    tmp,
    '--bootstrap-samples',
    '10',
  );
  assert.equal(s.status, 0, s.stderr);
  const c = await sob('compare', tmp, '--all');
  assert.equal(c.status, 1);
  assert.equal(c.stderr.trim(), `sob: no text results under ${tmp} (it has image: pass --modality image)`);
  const ok = await sob('compare', tmp, '--all', '--modality', 'image', '--samples', '50', '--format', 'json');
  assert.equal(ok.status, 0, ok.stderr);
});

test('records with no schema_complexity weigh 0: the leaderboard says so instead of printing 0.000 silently', {
  skip: needsData('sob'),
}, async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-unknown-w-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
  };
  const gt = { a: 'x', b: 'y', c: 'z' };
  const line = (id: string, complexity?: string) =>
    JSON.stringify({
      metadata: { record_id: id, ...(complexity ? { schema_complexity: complexity } : {}) },
      input: { context: 'x y z', question: 'q', json_schema: schema },
      output: { ground_truth: gt, candidate_response: gt },
    });
  const file = join(tmp, 'response_mine_image.jsonl');
  writeFileSync(file, `${[line('u1'), line('u2'), line('k1', 'easy')].join('\n')}\n`);
  const out = join(tmp, 'eval');
  const s = await sob('score', file, '--out', out, '--bootstrap-samples', '10');
  assert.equal(s.status, 0, s.stderr);
  const l = await sob('leaderboard', out, '--format', 'json');
  assert.equal(l.status, 0, l.stderr);
  const row = JSON.parse(l.stdout)[0];
  // The weighted means come from k1 alone (u1 and u2 weigh 0): all 1 here.
  assert.equal(row.value_accuracy, 1);
  assert.match(
    l.stderr,
    /warning: image\/mine: 2 records with no schema_complexity \(weight 0: left out of the weighted means;/,
  );
  // Released SOB summaries give every record a complexity: no such warning there.
  const ref = await sob('leaderboard', EVAL);
  assert.equal(ref.status, 0, ref.stderr);
  assert.doesNotMatch(ref.stderr, /no schema_complexity/);
});

test('sob leaderboard <run-dir or eval folder> reads its evaluation/ (before: "no <modality>/<model>/eval_summary.json")', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-lb-run-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
  };
  const bench = join(tmp, 'records.jsonl');
  writeFileSync(
    bench,
    `${['r1', 'r2']
      .map((id) =>
        JSON.stringify({
          metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
          input: { context: 'x y z', question: 'q', json_schema: schema },
          output: { ground_truth: { a: 'x', b: 'y', c: 'z' } },
        }),
      )
      .join('\n')}\n`,
  );
  const run = join(tmp, 'run');
  const r = await sob('run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', run);
  assert.equal(r.status, 0, r.stderr);
  const s = await sob('score', run, '--bootstrap-samples', '10');
  assert.equal(s.status, 0, s.stderr);
  const viaRun = await sob('leaderboard', run, '--format', 'json');
  assert.equal(viaRun.status, 0, viaRun.stderr);
  assert.match(viaRun.stderr, /^reading .*run\/evaluation \(the scores of this run directory\)/);
  const direct = await sob('leaderboard', join(run, 'evaluation'), '--format', 'json');
  assert.equal(viaRun.stdout, direct.stdout);
  const rows = JSON.parse(viaRun.stdout);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].model, 'baseline_gold');
  assert.equal(rows[0].overall, 1);
  // sob compare --all reads it the same way (it needs two models: it gets that far).
  const c = await sob('compare', run, '--all');
  assert.equal(c.status, 1);
  assert.match(c.stderr, /^reading .*run\/evaluation \(the scores of this run directory\)/);
  assert.match(c.stderr, /need at least two models with eval_records\.jsonl under /);
});
