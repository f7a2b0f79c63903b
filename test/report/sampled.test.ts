/**
 * A report past its embedding limit (`sob report --max-records`): the summaries and the error
 * taxonomy still count every record, the page embeds the stated sample (per model the quarter of
 * the limit with the lowest Value Accuracy, and a seeded random half of it, the same ids on every
 * run), says so, and in Chromium the sampled records' drill-downs work. Under the limit, nothing is
 * sampled and the page says nothing of it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { sobHere as sob } from '../runner/sob-cli.ts';
import { CHROMIUM, launchChromium, reportData } from './run.ts';

let tmp: string;
const N = 40;
const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, year: { type: 'integer' } },
  required: ['name', 'year'],
};

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-sampled-'));
  const rows = Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      id: `r${i}`,
      context: `Item ${i} was made in ${1900 + i}.`,
      question: 'Name and year?',
      schema: SCHEMA,
      ground_truth: { name: `item ${i}`, year: 1900 + i },
    }),
  );
  writeFileSync(join(tmp, 'rows.jsonl'), `${rows.join('\n')}\n`);
  const ev = await sob(
    [
      'eval',
      'rows.jsonl',
      '--model',
      'baseline:gold',
      '--model',
      'baseline:skeleton',
      '--eval-dir',
      'ev',
      '--bootstrap-samples',
      '0',
      '--no-report',
    ],
    { cwd: tmp },
  ).done;
  assert.equal(ev.code, 0, ev.stderr);
});
after(() => rmSync(tmp, { recursive: true, force: true }));

interface Data {
  records: { id: string }[];
  rows: [number, string, unknown[][]][];
  taxonomy: [number, string, { n: number }][];
  sampling?: {
    records: number;
    limit: number;
    embedded: number;
    worst: number;
    random: number;
    seed: number;
  };
}

test('past --max-records the page embeds the stated sample, the same ids each time, and counts all', async () => {
  const a = await sob(['report', 'ev', '--max-records', '12', '--out', 'a.html'], { cwd: tmp }).done;
  assert.equal(a.code, 0, a.stderr);
  assert.match(a.stderr, /40 records is over 12: the page embeds \d+ of them/);
  const b = await sob(['report', 'ev', '--max-records', '12', '--out', 'b.html'], { cwd: tmp }).done;
  assert.equal(b.code, 0, b.stderr);
  const da = reportData<Data>(join(tmp, 'a.html'));
  const db = reportData<Data>(join(tmp, 'b.html'));
  // 12: 3 worst per model, 6 at random.
  assert.deepEqual(
    { ...da.sampling, embedded: undefined },
    { records: N, limit: 12, embedded: undefined, worst: 3, random: 6, seed: 42 },
  );
  const ids = da.records.map((r) => r.id);
  assert.equal(da.sampling!.embedded, ids.length);
  // Six random ids plus each model's three worst: between 6 and 12 distinct records.
  assert.ok(ids.length >= 6 && ids.length <= 12, `${ids.length} embedded`);
  assert.deepEqual(
    db.records.map((r) => r.id),
    ids,
  );
  // Every model scores 1.0 (gold) or the same low score (skeleton) on each record: ties go in file
  // order, so each model's three worst are r0, r1, r2.
  for (const id of ['r0', 'r1', 'r2']) assert.ok(ids.includes(id), `${id} embedded`);
  // Rows only for the embedded records, per model; the taxonomy counts all 40.
  for (const [, , list] of da.rows) assert.equal(list.length, ids.length);
  for (const [, , t] of da.taxonomy) assert.equal(t.n, N);
  // Under the limit: every record, no sampling.
  const full = await sob(['report', 'ev', '--out', 'full.html'], { cwd: tmp }).done;
  assert.equal(full.code, 0, full.stderr);
  const df = reportData<Data>(join(tmp, 'full.html'));
  assert.equal(df.sampling, undefined);
  assert.equal(df.records.length, N);
});

test('in Chromium: the sampling rule is stated and a sampled record opens its leaf diff', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const r = await sob(['report', 'ev', '--max-records', '12', '--out', 'c.html'], { cwd: tmp }).done;
  assert.equal(r.code, 0, r.stderr);
  const data = reportData<Data>(join(tmp, 'c.html'));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(join(tmp, 'c.html')).href);
    await page.waitForSelector('#leaderboard tbody tr');
    const note = (await page.textContent('#sampling'))!;
    assert.match(note, /This evaluation has 40 records, more than the 12 a page embeds/);
    assert.match(
      note,
      /the 3 with the lowest Value Accuracy per model and a seeded random sample of 6 \(seed 42/,
    );
    assert.match((await page.textContent('#drill-sampling'))!, /eval_records\.jsonl/);
    // The list holds the embedded records of both models.
    assert.equal(await page.textContent('#f-count'), `${2 * data.records.length} records`);
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-detail');
    const leaves = await page.$$eval('#diff tbody tr', (trs) => trs.length);
    assert.equal(leaves, 2, 'name and year');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
