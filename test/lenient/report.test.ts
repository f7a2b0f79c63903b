/**
 * Exact and lenient side by side in the HTML report (real headless Chromium) and in `sob
 * compare`, on three SOB image models scored with the real `sob score --match default`: the
 * leaderboard's lenient columns and gap, the "Exact vs lenient" section, the record view naming
 * the matcher that accepted each leaf, and the paired comparison on the lenient metrics.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CHROMIUM, launchChromium, reportData, SOB } from '../report/run.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-lenient-report-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const MODELS = ['phi-4', 'gpt-oss', 'claude-opus-4-7'];
const responses = join(tmp, 'responses');
const evalDir = join(tmp, 'evaluation');

before(async () => {
  mkdirSync(responses);
  for (const m of MODELS)
    symlinkSync(
      join(SOB, 'images_responses', `response_${m}_image.jsonl`),
      join(responses, `response_${m}_image.jsonl`),
    );
  const r = await sob(
    ['score', responses, '--out', evalDir, '--match', 'default', '--bootstrap-samples', '200'],
    { cwd: tmp },
  ).done;
  assert.equal(r.code, 0, r.stderr);
});

// biome-ignore lint/suspicious/noExplicitAny: a summary read back from its file
function summary(model: string): any {
  return JSON.parse(readFileSync(join(evalDir, 'image', model, 'eval_summary.json'), 'utf8'));
}

test('sob compare: the lenient metrics too, paired over the records both answered', async () => {
  const r = await sob(
    [
      'compare',
      join(evalDir, 'image', 'phi-4'),
      join(evalDir, 'image', 'gpt-oss'),
      '--samples',
      '300',
      '--format',
      'json',
    ],
    { cwd: tmp },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(
    out.lenient_results.map((x: { metric: string }) => x.metric),
    ['lenient_value_accuracy', 'lenient_faithfulness', 'field_f1'],
  );
  const lva = out.lenient_results[0];
  assert.equal(lva.n, 209);
  // Over all 209 records both answered, the weighted means are the summaries' weighted means.
  const a = summary('phi-4').lenient.summary.overall_weighted.metrics;
  const b = summary('gpt-oss').lenient.summary.overall_weighted.metrics;
  assert.ok(Math.abs(lva.meanA - a.lenient_value_accuracy.mean) < 1e-12);
  assert.ok(Math.abs(lva.meanB - b.lenient_value_accuracy.mean) < 1e-12);
  assert.ok(Math.abs(out.lenient_results[2].meanB - b.field_f1.mean) < 1e-12);
  assert.ok(lva.ciLow <= lva.difference && lva.difference <= lva.ciHigh);
  assert.ok(
    lva.difference < 0 && lva.pValue < 0.05,
    `gpt-oss below phi-4 leniently too: ${JSON.stringify(lva)}`,
  );

  const t = await sob(['compare', join(evalDir, 'image', 'phi-4'), join(evalDir, 'image', 'gpt-oss')], {
    cwd: tmp,
  }).done;
  assert.match(t.stdout, /^Lenient Value Accuracy\s+0\.\d{3}\s+0\.\d{3}\s+-0\.\d{3}\s+\[/m);
  assert.match(t.stdout, /^Field F1\s+/m);
  const all = await sob(
    [
      'compare',
      evalDir,
      '--all',
      '--modality',
      'image',
      '--metric',
      'lenient_value_accuracy',
      '--samples',
      '100',
    ],
    { cwd: tmp },
  ).done;
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /^Lenient Value Accuracy, column minus row \(paired bootstrap\)/);
});

test('the report in Chromium: lenient columns and the gap, the Exact vs lenient section, the matcher of each leaf', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const out = join(tmp, 'report.html');
  const r = await sob(['report', evalDir, '--out', out, '--responses', responses], { cwd: tmp }).done;
  assert.equal(r.code, 0, r.stderr);
  const data = reportData<{
    leaderboard: { model: string; value_accuracy: number; lenient: Record<string, number> }[];
  }>(out);
  const expected = data.leaderboard;
  for (const row of expected) {
    const s = summary(row.model);
    assert.ok(
      Math.abs(
        row.lenient.value_accuracy - s.lenient.summary.overall_weighted.metrics.lenient_value_accuracy.mean,
      ) < 1e-12,
    );
  }

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

    // The unified leaderboard: Len.VA, Gap and Shift right after Val.Acc.
    const head = await page.$$eval('#leaderboard thead th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(head.slice(2, 7), ['Overall', 'Val.Acc.', 'Len.VA', 'Gap', 'Shift']);
    const rows = await page.$$eval('#leaderboard tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    rows.forEach((cells, i) => {
      const l = expected[i].lenient;
      assert.equal(cells[4], l.value_accuracy.toFixed(3));
      assert.equal(cells[5], `+${l.gap.toFixed(3)}`);
      assert.equal(cells[6], l.rank_shift > 0 ? `+${l.rank_shift}` : String(l.rank_shift));
    });

    // The section: one row per model, the gap and the share of the loss that is formatting.
    await page.click('nav a[href="#len"]');
    const lrows = await page.$$eval('#lenient-table tbody tr', (trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-model'),
        ...[...tr.querySelectorAll('td')].map((td) => td.textContent),
      ]),
    );
    assert.equal(lrows.length, MODELS.length);
    for (const row of lrows) {
      const l = expected.find((e) => e.model === row[0])!;
      assert.equal(row[2], l.value_accuracy.toFixed(3));
      assert.equal(row[3], l.lenient.value_accuracy.toFixed(3));
      assert.equal(row[4], `+${l.lenient.gap.toFixed(3)}`);
      assert.equal(row[5], `${(100 * l.lenient.gap_share).toFixed(0)}%`);
    }
    assert.match((await page.textContent('#lenient-policy'))!, /^Policy: default, no judge\. Kendall's tau/);
    assert.equal(await page.$$eval('#lenient-bars rect', (rs) => rs.length), 3 * MODELS.length);

    // The record view: lenient scores, and which matcher accepted each leaf.
    await page.selectOption('#f-model', 'gpt-oss');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#diff');
    const id = await page.$eval('#record-detail h3', (h) => h.firstChild?.textContent ?? '');
    const row = readFileSync(join(evalDir, 'image', 'gpt-oss', 'eval_records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((x) => x.record_id === id);
    assert.match(
      (await page.textContent('#lenient-scores'))!,
      new RegExp(`^Lenient \\(default\\): Value Accuracy ${row.lenient_value_accuracy.toFixed(3)} `),
    );
    const leafCells = await page.$$eval('#diff tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-status'), tr.querySelector('td.lenient-leaf')?.textContent]),
    );
    const accepted: Record<string, number> = {};
    for (const [status, text] of leafCells) {
      if (status === '3') continue;
      const by = (text ?? '').split(' (')[0];
      accepted[by] = (accepted[by] ?? 0) + 1;
    }
    // The column agrees with the row's matcher counts (every accepted leaf named by its matcher).
    for (const [matcher, n] of Object.entries(row.matcher_counts as Record<string, number>))
      assert.equal(accepted[matcher], n, `${matcher}: ${JSON.stringify(accepted)}`);
    assert.equal(accepted.missing ?? 0, row.lenient_leaves.missed);

    // Nothing overflows its card at 1400 px, and the page logs no errors.
    const overflow = await page.$$eval('.card', (cards) =>
      cards
        .map((c) => ({ id: c.querySelector('[id]')?.id ?? c.className, over: c.scrollWidth - c.clientWidth }))
        .filter((x) => x.over > 0),
    );
    assert.deepEqual(overflow, []);
    await page.locator('#len').screenshot({ path: join(tmp, 'lenient.png') });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
