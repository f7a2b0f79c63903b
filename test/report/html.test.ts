/**
 * The HTML report in real headless Chromium (Debian's chromium, driven by playwright-core):
 * the leaderboard shows the right numbers, clicking a record shows its diff, filters work, and
 * the page logs no console errors. The test saves a screenshot.
 */
import assert from 'node:assert/strict';
import {
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
import { pathToFileURL } from 'node:url';
import { flattenLeaves } from '../../metrics/paths.ts';
import { ERROR_CLASSES } from '../../metrics/taxonomy.ts';
import { pyEquals } from '../../metrics/values.ts';
import { readJsonl } from '../../src/core/jsonl.ts';
import { buildLeaderboard, loadEvaluation, readDisplayNames } from '../../src/report/evaluation.ts';
import { writeReport } from '../../src/report/html.ts';
import { needsData } from '../kit/shared-data.ts';
import { CHROMIUM, launchChromium, SOB, sob } from './run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-report-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const MODELS = ['phi-4', 'gpt-oss', 'gemma-4-31b-it', 'claude-opus-4-6', 'claude-opus-4-7'];

test('the report in headless Chromium: right numbers, a record diff on click, filters, no console errors', {
  skip: needsData('sob'),
}, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  // A small evaluation folder: three image models with their summaries, rows and responses.
  const evalDir = join(tmp, 'evaluation');
  const responses = join(tmp, 'responses');
  mkdirSync(responses, { recursive: true });
  for (const m of MODELS) {
    cpSync(join(SOB, 'evaluation/image', m), join(evalDir, 'image', m), { recursive: true });
    cpSync(join(SOB, 'evaluation/text', m), join(evalDir, 'text', m), { recursive: true });
    cpSync(
      join(SOB, 'images_responses', `response_${m}_image.jsonl`),
      join(responses, `response_${m}_image.jsonl`),
    );
  }
  cpSync(join(SOB, 'evaluation/display_names.json'), join(evalDir, 'display_names.json'));
  const out = join(tmp, 'report.html');
  await writeReport({ dir: evalDir, out, responses, samples: 200 });
  const expected = buildLeaderboard(await loadEvaluation(evalDir), readDisplayNames(undefined, evalDir));
  console.log(
    `report: ${(statSync(out).size / 1024).toFixed(0)} KB for ${MODELS.length} models x 209 records`,
  );

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('#leaderboard tbody tr');

    // The unified leaderboard: same models, same order, same Overall to 3 decimals.
    const rows = await page.$$eval('#leaderboard tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    assert.equal(rows.length, expected.length);
    rows.forEach((r, i) => {
      assert.equal(r[1], expected[i].display_name);
      assert.equal(r[2], expected[i].overall.toFixed(3));
      assert.equal(r[3], expected[i].value_accuracy!.toFixed(3));
    });

    // Filters: one model, then one outcome.
    const all = Number((await page.textContent('#f-count'))!.split(' ')[0]);
    assert.equal(all, MODELS.length * 209);
    await page.selectOption('#f-model', 'phi-4');
    assert.equal(await page.textContent('#f-count'), '209 records');
    await page.selectOption('#f-outcome', '0'); // parse failures: phi-4 has 3
    assert.equal(await page.textContent('#f-count'), '3 records');
    await page.selectOption('#f-outcome', '');

    // Clicking a record shows its leaf diff.
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-detail');
    const diffRows = await page.$$eval('#diff tbody tr', (trs) => trs.length);
    assert.ok(diffRows > 0, 'the diff lists leaves');
    const statuses = await page.$$eval('#diff tbody tr td:nth-child(2)', (tds) => [
      ...new Set(tds.map((td) => td.textContent)),
    ]);
    assert.ok(statuses.every((s) => ['match', 'wrong value', 'missing', 'extra'].includes(s!)));

    // The diff of that record counts what flattenLeaves/pyEquals count on phi-4's response file.
    const shownId = await page.$eval('#record-detail h3', (h) => h.firstChild?.textContent ?? '');
    const want = { match: 0, 'wrong value': 0, missing: 0, extra: 0 };
    for await (const l of readJsonl(join(SOB, 'images_responses/response_phi-4_image.jsonl'))) {
      if (!l.ok || !(l.value instanceof Map)) continue;
      const md = l.value.get('metadata') as Map<string, unknown>;
      if (md.get('record_id') !== shownId) continue;
      const out = l.value.get('output') as Map<string, never>;
      const g = flattenLeaves(out.get('ground_truth'));
      const p = flattenLeaves(out.get('candidate_response'));
      for (const [k, v] of g) {
        const pv = p.get(k);
        want[pv === undefined ? 'missing' : pyEquals(v, pv) ? 'match' : 'wrong value']++;
      }
      for (const k of p.keys()) if (!g.has(k)) want.extra++;
    }
    const got = { match: 0, 'wrong value': 0, missing: 0, extra: 0 };
    for (const s of await page.$$eval('#diff tbody tr td:nth-child(2)', (tds) =>
      tds.map((td) => td.textContent),
    ))
      got[s as keyof typeof got]++;
    assert.ok(want.match + want['wrong value'] + want.missing > 0, `record ${shownId} found with leaves`);
    assert.deepEqual(got, want);

    // The gate that fired, as the scorer computes it (schema hardening, coverage gate, or none).
    const gate = (await page.textContent('#gate')) ?? '';
    assert.match(gate, /^Gate that fired: (schema hardening|coverage gate x0\.\d{3}|none \(JSON Pass 1)/);

    // The pairwise matrix: every column header the model's full name (none cut to "baseline_g").
    const heads = await page.$$eval('#pairwise thead th', (ths) =>
      ths.slice(1).map((th) => [th.textContent ?? '', th.getAttribute('title') ?? '']),
    );
    assert.equal(heads.length, MODELS.length);
    for (const [text, title] of heads) assert.equal(text, title);
    assert.deepEqual(
      heads.filter((h) => h[1].startsWith('Claude-Opus')).map((h) => h[0]),
      ['Claude-Opus-4.6', 'Claude-Opus-4.7'],
    );

    // Nothing overflows its card at 1400 px: every card's content fits its width.
    const overflow = await page.$$eval('.card', (cards) =>
      cards
        .map((c) => ({ id: c.querySelector('[id]')?.id ?? c.className, over: c.scrollWidth - c.clientWidth }))
        .filter((x) => x.over > 0),
    );
    assert.deepEqual(overflow, []);
    const within = await page.$$eval('#source-image, #source-text, #taxonomy td.paths', (els) =>
      els.map((e) => {
        const card = e.closest('.card')!.getBoundingClientRect();
        const r = e.getBoundingClientRect();
        return r.right <= card.right && r.left >= card.left;
      }),
    );
    assert.ok(within.length >= 2 + MODELS.length, `${within.length} elements checked`);
    assert.ok(within.every(Boolean));

    // The bar charts name their metric.
    assert.match((await page.textContent('#bars-image .chart-title'))!, /^Value Accuracy by model, image/);

    // Schema complexity and SOB's source category are two filters; 33 of phi-4's records are tables.
    // (SOB's image records are medium or hard; listed by complexity, not alphabetically.)
    assert.deepEqual(await page.$$eval('#f-complexity option', (os) => os.map((o) => o.textContent)), [
      'all complexities',
      'medium',
      'hard',
    ]);
    await page.selectOption('#f-model', 'phi-4');
    await page.selectOption('#f-source-category', 'tables');
    assert.equal(await page.textContent('#f-count'), '33 records');
    await page.selectOption('#f-source-category', '');
    await page.selectOption('#f-model', '');

    // A click on a record-table header sorts every filtered record, a second click reverses.
    const col = await page.$$eval('#records thead th', (ths) =>
      ths.findIndex((th) => th.textContent === 'Val.Acc.'),
    );
    const vaColumn = async () =>
      (await page.$$eval(
        '#records tbody tr',
        (trs, c) => trs.map((tr) => Number(tr.children[c].textContent)),
        col,
      )) as number[];
    const header = page.locator('#records thead th', { hasText: 'Val.Acc.' });
    await header.click();
    assert.equal(await header.getAttribute('aria-sort'), 'descending');
    let va = await vaColumn();
    assert.equal(va.length, 50);
    assert.equal(va[0], 1);
    for (let i = 1; i < va.length; i++) assert.ok(va[i - 1] >= va[i], `${va[i - 1]} >= ${va[i]}`);
    await header.click();
    assert.equal(await header.getAttribute('aria-sort'), 'ascending');
    va = await vaColumn();
    assert.equal(va[0], 0);
    for (let i = 1; i < va.length; i++) assert.ok(va[i - 1] <= va[i]);

    // The page names the evaluation folder relative to the report, never by its absolute path.
    assert.match((await page.textContent('#app > p.muted'))!, / from evaluation$/);
    assert.ok(!readFileSync(out, 'utf8').includes(tmp), 'the local path is not in the page');

    // Kept after the test (outside the repository) for a person to look at.
    const shot = join(tmpdir(), 'sob-report-screenshot.png');
    await page.screenshot({ path: shot, fullPage: false });
    assert.ok(statSync(shot).size > 10_000);
    console.log(`screenshot: ${shot}`);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('a diff budget keeps the report small: wrong answers are embedded first, the rest counted as left out', {
  skip: needsData('sob'),
}, async () => {
  const { buildReportData } = await import('../../src/report/html.ts');
  const evalDir = join(tmp, 'budget');
  cpSync(join(SOB, 'evaluation/image/phi-4'), join(evalDir, 'image/phi-4'), { recursive: true });
  const responses = join(tmp, 'budget-responses');
  mkdirSync(responses, { recursive: true });
  cpSync(
    join(SOB, 'images_responses/response_phi-4_image.jsonl'),
    join(responses, 'response_phi-4_image.jsonl'),
  );
  const full = await buildReportData({ dir: evalDir, out: '', responses, samples: 10 });
  const small = await buildReportData({ dir: evalDir, out: '', responses, samples: 10, maxDiffLeaves: 500 });
  const leaves = (d: Record<string, unknown>) =>
    Object.values(d.diffs as Record<string, unknown>).reduce<number>(
      (n, v) => n + (Array.isArray(v) ? v.length : 0),
      0,
    );
  assert.equal(full.diffsOmitted, 0);
  assert.ok((small.diffsOmitted as number) > 150, `${small.diffsOmitted} left out`);
  assert.ok(leaves(small) < 500 + 300, `${leaves(small)} leaves embedded`); // one diff may cross the line
  // Every embedded structured diff under the budget belongs to a record that is not fully correct.
  const [mi, , rows] = (small.rows as [number, string, unknown[][]][]).find((x) => x[1] === 'image')!;
  assert.equal((small.models as string[])[mi], 'phi-4');
  const code = ERROR_CLASSES.indexOf('correct');
  const correct = new Set(rows.filter((r) => r[8] === code).map((r) => `${mi}|${r[0]}`));
  for (const [k, v] of Object.entries(small.diffs as Record<string, unknown>))
    if (Array.isArray(v)) assert.ok(!correct.has(k), k);
});

test('long questions and contexts are cut for display, and "show all" shows the whole text', {
  skip: needsData('sob'),
}, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  // Three records of a response file; the first one's question is 3,000 characters, its context 30,000.
  const dir = join(tmp, 'long');
  mkdirSync(join(dir, 'responses'), { recursive: true });
  const lines = readFileSync(join(SOB, 'images_responses/response_phi-4_image.jsonl'), 'utf8')
    .split('\n')
    .slice(0, 4);
  const first = JSON.parse(lines[0]);
  first.input.question = `${first.input.question} `.repeat(100).slice(0, 3000);
  first.input.context = `${first.input.context}\n`.repeat(20).slice(0, 30_000);
  lines[0] = JSON.stringify(first);
  writeFileSync(join(dir, 'responses/response_long_image.jsonl'), `${lines.join('\n')}\n`);
  const scored = sob(
    'score',
    join(dir, 'responses'),
    '--out',
    join(dir, 'evaluation'),
    '--bootstrap-samples',
    '0',
  );
  assert.equal(scored.status, 0, scored.stderr);
  const out = join(dir, 'report.html');
  const r = sob('report', join(dir, 'evaluation'), '--responses', join(dir, 'responses'), '--out', out);
  assert.equal(r.status, 0, r.stderr);

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.fill('#f-text', first.metadata.record_id.slice(0, 16));
    assert.equal(await page.textContent('#f-count'), '1 records');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-detail');
    // The question: its first 300 characters and a button.
    const clip = (await page.textContent('#question .clip'))!;
    assert.equal(clip.length, 301); // 300 + the ellipsis
    assert.equal(await page.textContent('#question button'), 'show all (3000 characters)');
    await page.click('#question button');
    assert.equal((await page.textContent('#question .clip'))!, first.input.question);
    assert.equal(await page.textContent('#question button'), 'show less');
    // The context: 1,500 characters shown; all shows the 20,000 embedded and says how much there is.
    await page.click('#context-box summary');
    assert.equal((await page.textContent('#context .clip'))!.length, 1501);
    await page.click('#context button');
    const whole = (await page.textContent('#context .clip'))!;
    assert.ok(whole.startsWith(first.input.context.slice(0, 20_000)));
    assert.match(
      whole,
      /\[the report keeps the first 20000 of 30000 characters; the whole text is in the response file\]$/,
    );
    // The fourth record's coverage gate, written for people.
    await page.fill('#f-text', '33259c9b0a8b');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#why');
    assert.equal(
      await page.textContent('#why'),
      'Why: coverage gate 0.67: structure F1 0.74 below 0.90 for image, so Value Accuracy and Faithfulness x 0.67',
    );
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
  // The page embeds the whole question and at most 20,000 characters of a context.
  const html = readFileSync(out, 'utf8');
  assert.ok(html.includes(JSON.stringify(first.input.question).slice(1, -1)));
  assert.ok(!html.includes(JSON.stringify(first.input.context.slice(0, 20_001)).slice(1, -1)));
});
