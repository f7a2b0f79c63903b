/**
 * Scorers of your own (issue 32, item 9): `sob eval --scorer` and `sob score --scorer` on six
 * records the test writes, a model asked through the local OpenAI server. A scorer's numbers are
 * columns with their 95% bootstrap intervals in the leaderboards (md, csv, json) and the report
 * (headless Chromium); a scorer that throws, one that returns a bad value and one that never
 * returns are each that record's scoring_error, named, and the run finishes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { sobIn } from '../kit/cli.ts';
import { type ProtocolServer, startProtocolServer } from '../kit/protocol-server.ts';
import { CHROMIUM, launchChromium, reportData } from '../report/run.ts';

const IDS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
const SCHEMA = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

let tmp: string;
let server: ProtocolServer;
let dir: string;
let evalRun: { code: number | null; stdout: string; stderr: string };
const rowsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-scorer-'));
  // The model gets every id right but r4's.
  server = await startProtocolServer({
    script: (seen) => ({
      kind: 'answer',
      text: JSON.stringify({ id: seen.key === 'r4' ? 'wrong' : seen.key }),
    }),
  });
  writeFileSync(
    join(tmp, 'bench.jsonl'),
    `${IDS.map((id, i) =>
      JSON.stringify({
        metadata: { record_id: id, schema_complexity: i % 2 ? 'hard' : 'easy', source: 'text' },
        input: { context: `Record [rid:${id}] holds ${id}.`, question: 'Which id?', json_schema: SCHEMA },
        output: { ground_truth: { id } },
      }),
    ).join('\n')}\n`,
  );
  // id_match: the answer's id is the truth's; context_seen: the record reaches the scorer whole.
  writeFileSync(
    join(tmp, 'good.mjs'),
    `export default function (record, answer) {
  return {
    id_match: answer && answer.id === record.ground_truth.id ? 1 : 0,
    context_seen: String(record.context).includes(record.record_id) && record.schema.type === 'object' ? 1 : 0,
  };
}
`,
  );
  writeFileSync(
    join(tmp, 'bad.mjs'),
    `export default function (record) {
  if (record.record_id === 'r3') throw new Error('boom on r3');
  if (record.record_id === 'r2') return { checked: 1.5 };
  return { checked: 1 };
}
`,
  );
  writeFileSync(
    join(tmp, 'loop.mjs'),
    `export default function (record) {
  if (record.record_id === 'r5') for (;;) {}
  return { finished: 1 };
}
`,
  );
  writeFileSync(join(tmp, 'nofunc.mjs'), 'export default 42;\n');
  process.env.OPENAI_API_KEY = 'sk-scorer';
  process.env.OPENAI_BASE_URL = server.openaiBaseUrl;
  dir = join(tmp, 'ev');
  // prettier-ignore
  evalRun = await sobIn([
    'eval',
    join(tmp, 'bench.jsonl'),
    '--model',
    'openai:m1',
    '--eval-dir',
    dir,
    '--bootstrap-samples',
    '200',
    '--record-timeout-ms',
    '2000',
    '--scorer',
    join(tmp, 'good.mjs'),
    '--scorer',
    join(tmp, 'bad.mjs'),
    '--scorer',
    join(tmp, 'loop.mjs'),
  ]);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const EVAL = () => join(dir, 'evaluation/text/openai_m1');

test('a throwing, a bad-valued and a non-terminating scorer are one record each, named; the run finishes', () => {
  assert.equal(evalRun.code, 0, evalRun.stderr);
  const rows = rowsOf(join(EVAL(), 'eval_records.jsonl'));
  assert.equal(rows.length, 6);
  const err = (id: string) => rows.find((r) => r.record_id === id).explanation?.scoring_error ?? null;
  assert.match(err('r3'), /^scorer bad\.mjs threw: Error: boom on r3$/);
  assert.match(err('r2'), /^scorer bad\.mjs checked is 1\.5, not a number in \[0, 1\]$/);
  assert.match(
    err('r5'),
    /^scorer loop\.mjs: scoring exceeded 2000 ms \(the record's time budget, --record-timeout-ms\)$/,
  );
  for (const id of ['r1', 'r4', 'r6']) assert.equal(err(id), null, id);
  // A failed record scores 0 everywhere, as a record over its budget does.
  assert.equal(rows.find((r) => r.record_id === 'r3').leaf_value_em, 0);
  const s = JSON.parse(readFileSync(join(EVAL(), 'eval_summary.json'), 'utf8'));
  assert.equal(s.data_quality.scoring_error_count, 3);
  assert.match(evalRun.stderr, /loop\.mjs: scoring exceeded 2000 ms/);
});

test("each scorer's numbers are columns of the rows and the summary, with the metrics' bootstrap", () => {
  const rows = rowsOf(join(EVAL(), 'eval_records.jsonl'));
  const r1 = rows.find((r) => r.record_id === 'r1');
  assert.deepEqual(r1.custom_scores, { id_match: 1, context_seen: 1, checked: 1, finished: 1 });
  assert.equal(rows.find((r) => r.record_id === 'r4').custom_scores.id_match, 0);
  const s = JSON.parse(readFileSync(join(EVAL(), 'eval_summary.json'), 'utf8'));
  const c = s.custom_scores;
  assert.deepEqual(c.scorers, ['good.mjs', 'bad.mjs', 'loop.mjs']);
  // r1 and r6 right (r4 wrong; r2, r3, r5 failed: 0). Weights: r1 easy 1, r6 hard 3; 1+3+1+3+1+3 = 12.
  assert.equal(c.overall.metrics.id_match.mean, 2 / 6);
  assert.equal(c.overall_weighted.metrics.id_match.mean, 4 / 12);
  assert.equal(c.overall.n, 6);
  for (const block of [c.overall, c.overall_weighted])
    for (const [name, m] of Object.entries(block.metrics) as [
      string,
      { mean: number; ci95_low: number; ci95_high: number },
    ][]) {
      assert.ok(m.ci95_low <= m.mean && m.mean <= m.ci95_high, `${name}: ${JSON.stringify(m)}`);
      assert.ok(m.ci95_low < m.ci95_high, `${name}: a real interval over 6 records of 0 and 1`);
    }
  // The seven metrics are untouched by the scorers' columns: Value Accuracy 2 of 6 (the 3 failed are 0).
  assert.equal(s.summary.overall.metrics.leaf_value_em.mean, 2 / 6);
});

test('the leaderboards show each scorer as a column with its interval (md, csv, json, per-source)', async () => {
  const m = JSON.parse(readFileSync(join(EVAL(), 'eval_summary.json'), 'utf8')).custom_scores.overall_weighted
    .metrics.id_match;
  const cell = `${m.mean.toFixed(3)} [${m.ci95_low.toFixed(3)}, ${m.ci95_high.toFixed(3)}]`;
  const md = readFileSync(join(dir, 'leaderboard.md'), 'utf8');
  const [head, , row] = md.split('\n');
  const cols = head.split(' | ');
  const at = cols.indexOf('id_match');
  assert.ok(at > 0, head);
  assert.equal(row.split(' | ')[at], cell);
  const json = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  const lb = (Array.isArray(json) ? json : json.rows)[0];
  assert.equal(lb.custom.id_match.value, m.mean);
  assert.deepEqual(lb.custom.id_match.per_modality.text, {
    mean: m.mean,
    ci95_low: m.ci95_low,
    ci95_high: m.ci95_high,
  });
  const csv = readFileSync(join(dir, 'leaderboard.csv'), 'utf8').trim().split('\n');
  const h = csv[0].split(',');
  const v = csv[1].split(',');
  assert.equal(Number(v[h.indexOf('id_match_text_ci95_low')]), m.ci95_low);
  assert.equal(Number(v[h.indexOf('id_match')]), m.mean);
  const table = await sobIn(['leaderboard', join(dir, 'evaluation'), '--table', 'text', '--format', 'md']);
  assert.equal(table.code, 0, table.stderr);
  assert.ok(table.stdout.includes(`| ${cell} |`), table.stdout);
});

test('the report shows each scorer as a column, its interval under it per source (Chromium)', async (t) => {
  const D = reportData<{ custom: string[] }>(join(dir, 'report.html'));
  assert.deepEqual(D.custom, ['id_match', 'context_seen', 'checked', 'finished']);
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed: the browser part cannot run');
    return;
  }
  const m = JSON.parse(readFileSync(join(EVAL(), 'eval_summary.json'), 'utf8')).custom_scores.overall_weighted
    .metrics.id_match;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    await page.waitForSelector('#leaderboard tbody tr');
    const lbHeads = await page.$$eval('#leaderboard thead th', (ths) =>
      ths.map((th) => th.textContent ?? ''),
    );
    const i = lbHeads.findIndex((x) => x.startsWith('id_match'));
    assert.ok(i > 0, JSON.stringify(lbHeads));
    const lbCell = await page.$eval(`#leaderboard tbody tr td:nth-child(${i + 1})`, (td) => td.textContent);
    assert.equal(lbCell, `${m.mean.toFixed(3)} [${m.ci95_low.toFixed(3)}, ${m.ci95_high.toFixed(3)}]`);
    const heads = await page.$$eval('#source-text thead th', (ths) => ths.map((th) => th.textContent ?? ''));
    const j = heads.findIndex((x) => x.startsWith('id_match'));
    assert.ok(j > 0, JSON.stringify(heads));
    const [mean, ci] = await page.$eval(`#source-text tbody tr td:nth-child(${j + 1})`, (td) => [
      td.firstChild?.textContent ?? '',
      td.querySelector('.ci')?.textContent ?? '',
    ]);
    assert.equal(mean, m.mean.toFixed(3));
    assert.equal(ci, `[${m.ci95_low.toFixed(3)}, ${m.ci95_high.toFixed(3)}]`);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('sob score --scorer on the run directory gives the same column; a module without a function is refused first', async () => {
  const out = join(tmp, 'rescored');
  const r = await sobIn([
    'score',
    join(dir, 'runs/openai_m1'),
    '--out',
    out,
    '--bootstrap-samples',
    '200',
    '--scorer',
    join(tmp, 'good.mjs'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'text/openai_m1/eval_summary.json'), 'utf8'));
  // Without the failing scorers only r4 misses: 5 of 6.
  assert.equal(s.custom_scores.overall.metrics.id_match.mean, 5 / 6);
  assert.equal(s.data_quality.scoring_error_count, undefined);
  const bad = await sobIn([
    'score',
    join(dir, 'runs/openai_m1'),
    '--out',
    join(tmp, 'x'),
    '--scorer',
    join(tmp, 'nofunc.mjs'),
  ]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /--scorer nofunc\.mjs: its default export is number, not a function/);
  assert.equal(existsSync(join(tmp, 'x')), false);
});
