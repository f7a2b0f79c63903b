/**
 * The report's fixes of issue 20 (item 9), in headless Chromium on a `sob eval` of records written
 * here, one model answering over HTTP from a local OpenAI-protocol server: the totals card says
 * each origin once and only for sources present; the scatter's legend lists only those sources and
 * no text lies over another; JSON values read as JSON (`true`, not `True`); two chosen models'
 * answers side by side; the exact prompt sent in the drill-down (the one the server received);
 * `report --responses <runs-dir>` matches run directories and says so in one line.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';
import { CHROMIUM, launchChromium, reportData } from './run.ts';

let tmp: string;
let server: ProtocolServer;

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, active: { type: 'boolean' }, year: { type: 'integer' } },
  required: ['name', 'active', 'year'],
};

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-drill-'));
  // r1's answer says active: false where the truth is true; the others are right.
  server = await startProtocolServer({
    answer: (r) => {
      const i = Number(r.key!.slice(1));
      return JSON.stringify({ name: `item ${i}`, active: i !== 1, year: 1900 + i });
    },
  });
  writeFileSync(
    join(tmp, 'mine.jsonl'),
    [0, 1, 2]
      .map(
        (i) =>
          `${JSON.stringify({
            metadata: { record_id: `r${i}`, schema_complexity: 'easy', source: 'text' },
            input: {
              context: `[rid:r${i}] Item ${i}, made in ${1900 + i}, is active.`,
              question: 'Name, whether active, and year?',
              json_schema: SCHEMA,
            },
            output: { ground_truth: { name: `item ${i}`, active: true, year: 1900 + i } },
          })}\n`,
      )
      .join(''),
  );
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('the report in Chromium: totals once per origin, scatter legend and labels, JSON values, side by side, the exact prompt', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const ev = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--model',
      'baseline:gold',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      'mine.jsonl',
      '--eval-dir',
      'ev',
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'sk-drill' } },
  ).done;
  assert.equal(ev.code, 0, ev.stderr);
  for (const m of ['openai_m', 'baseline_gold'])
    assert.ok(existsSync(join(tmp, 'ev/evaluation/text', m, 'eval_summary.json')), `${m}: ${ev.stderr}`);
  const out = join(tmp, 'ev/report.html');
  const data = reportData<{ promptTexts: [string][] }>(out);
  assert.ok(data.promptTexts.length > 0);

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

    // Totals: text only (no image or audio records here), its origin said once.
    const totals = await page.$$eval('#totals .totals-line', (ls) => ls.map((l) => l.textContent));
    assert.deepEqual(totals, ['text 3 records, W 3 — from the benchmark manifest manifest.json']);
    assert.deepEqual(
      await page.$$eval('#totals [data-source]', (s) => s.map((x) => x.getAttribute('data-source'))),
      ['text'],
    );

    // The scatter: a legend of the sources present; no text box overlaps another.
    assert.deepEqual(await page.$$eval('#scatter .legend-item', (g) => g.map((x) => x.textContent)), [
      'text',
    ]);
    const overlaps = await page.$$eval('#scatter text', (ts) => {
      const boxes = ts.map(
        (t) =>
          [
            t.textContent,
            (
              t as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }
            ).getBBox(),
          ] as const,
      );
      const out: string[] = [];
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, p] = boxes[i];
          const [b, q] = boxes[j];
          if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height)
            out.push(`${a} / ${b}`);
        }
      return out;
    });
    assert.deepEqual(overlaps, []);

    // The drill-down of r1 for openai_m: the leaf values as JSON, and the exact prompt it was sent.
    await page.selectOption('#f-model', 'openai_m');
    await page.fill('#f-text', 'r1');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-detail');
    const active = await page.$eval('#diff tr[data-path="active"]', (tr) =>
      [...tr.querySelectorAll('td')].map((td) => td.textContent),
    );
    assert.deepEqual(active.slice(0, 4), ['active', 'wrong value', 'true', 'false']);
    assert.doesNotMatch((await page.textContent('#record-detail'))!, /\bTrue\b|\bFalse\b|\bNone\b/);
    const asked = server.requests.find((r) => r.key === 'r1')!;
    assert.equal(await page.textContent('#prompt-user'), asked.userText);
    assert.equal(await page.textContent('#prompt-system'), asked.systemText);

    // Side by side with the gold baseline: the same leaf from both models.
    await page.selectOption('#compare-with', { label: 'baseline_gold' });
    const side = await page.$$eval('#side-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    assert.deepEqual(side, [
      ['name', '"item 1"', '"item 1"', '"item 1"'],
      ['active', 'true', 'false', 'true'],
      ['year', '1901', '1901', '1901'],
    ]);
    assert.deepEqual(await page.$$eval('#side-table thead th', (ths) => ths.map((th) => th.textContent)), [
      'path',
      'ground truth',
      'openai_m',
      'baseline_gold',
    ]);

    const overflow = await page.$$eval('.card', (cards) =>
      cards
        .map((c) => ({ id: c.querySelector('[id]')?.id ?? c.className, over: c.scrollWidth - c.clientWidth }))
        .filter((x) => x.over > 0),
    );
    assert.deepEqual(overflow, []);
    await page.screenshot({ path: join(tmp, 'drill.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('report --responses <runs-dir>: run directories matched to their scores, and one line saying what matched', async () => {
  const r = await sob(
    [
      'report',
      join(tmp, 'ev/evaluation'),
      '--responses',
      join(tmp, 'ev/runs'),
      '--out',
      join(tmp, 'bare.html'),
    ],
    { cwd: tmp },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /^--responses .*ev\/runs: 2 run directories; matched 2 of 2 scored models \(baseline_gold, openai_m\)$/m,
  );
  const data = reportData<{
    models: string[];
    diffs: Record<string, unknown>;
    prompts: Record<string, unknown>;
  }>(join(tmp, 'bare.html'));
  // Every model has its three diffs (records r0..r2) and its prompts.
  assert.equal(Object.keys(data.diffs).length, 6);
  assert.equal(Object.keys(data.prompts).length, 6);
  const none = await sob(
    ['report', join(tmp, 'ev/evaluation'), '--responses', tmp, '--out', join(tmp, 'none.html')],
    { cwd: tmp },
  ).done;
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stderr, /^--responses .*: 1 response file; matched 0 of 2 scored models$/m);
});
