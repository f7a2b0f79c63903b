/**
 * The report's schema compliance section in headless Chromium (Debian's chromium through
 * playwright-core): per-dataset coverage bars of the right lengths, the commonest violation
 * keywords, and the record view listing every violation with its paths; strict SOB rows show
 * their violations in the main record view; a folder of schema results only gets a report of
 * its own; no console errors.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CHROMIUM, launchChromium, sob } from '../report/run.ts';
import { type Line, PLANTED_ANSWER, PLANTED_SCHEMA, PLANTED_VIOLATIONS, responseLine } from './fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-compliance-report-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const S = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
const T = { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] };
const refused = {
  latency_ms: 3,
  schema_rejected: true,
  error: "HTTP 400: Invalid schema for response_format 'answer'",
};
const MODELS: Record<string, Line[]> = {
  // Alpha: 3 records, 2 declared, 1 valid. Beta: 2 records, 2 declared, 1 valid.
  m: [
    { id: 'a1', category: 'Alpha', schema: S, raw: '{"a": 1}', evalInfo: { latency_ms: 120 } },
    {
      id: 'a2',
      category: 'Alpha',
      schema: PLANTED_SCHEMA,
      raw: PLANTED_ANSWER,
      evalInfo: { latency_ms: 80 },
    },
    { id: 'a3', category: 'Alpha', schema: S, raw: null, evalInfo: refused },
    { id: 'b1', category: 'Beta', schema: S, raw: '{"a": "one"}' },
    { id: 'b2', category: 'Beta', schema: S, raw: '{"a": 2}' },
    { id: 't1', source: 'text', schema: T, raw: '{"x": "one"}', groundTruth: { x: 1 } },
    { id: 't2', source: 'text', schema: T, raw: '{"x": 2}', groundTruth: { x: 2 } },
  ],
  // Every answer valid.
  n: [
    { id: 'a1', category: 'Alpha', schema: S, raw: '{"a": 1}' },
    { id: 'a2', category: 'Alpha', schema: PLANTED_SCHEMA, raw: '{"name": "Al", "age": 3, "id": "ABC"}' },
    { id: 'a3', category: 'Alpha', schema: S, raw: '{"a": 3}' },
    { id: 'b1', category: 'Beta', schema: S, raw: '{"a": 1}' },
    { id: 'b2', category: 'Beta', schema: S, raw: '{"a": 2}' },
    { id: 't1', source: 'text', schema: T, raw: '{"x": 1}', groundTruth: { x: 1 } },
    { id: 't2', source: 'text', schema: T, raw: '{"x": 2}', groundTruth: { x: 2 } },
  ],
};

const responses = join(tmp, 'responses');
const evalDir = join(tmp, 'evaluation');
before(() => {
  mkdirSync(responses, { recursive: true });
  for (const [m, lines] of Object.entries(MODELS))
    writeFileSync(
      join(responses, `response_${m}.jsonl`),
      `${lines.map((l) => responseLine({ ...l, model: m })).join('\n')}\n`,
    );
  const r = sob('score', responses, '--out', evalDir, '--profile', 'strict', '--bootstrap-samples', '100');
  assert.equal(r.status, 0, r.stderr);
});

async function open(file: string) {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(pathToFileURL(file).href);
  return { browser, page, errors };
}

test('the compliance section: coverage bars, violation keywords, and every violation in the record view', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const out = join(tmp, 'report.html');
  const r = sob('report', evalDir, '--responses', responses, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const { browser, page, errors } = await open(out);
  try {
    await page.waitForSelector('#compliance-summary tbody tr');
    assert.ok(await page.$('#leaderboard tbody tr'), 'the value leaderboard is there too');
    assert.deepEqual(await page.$$eval('nav a', (as) => as.map((a) => a.textContent).slice(-1)), [
      'Schema compliance',
    ]);
    // Per model: empirical coverage m 2/5, n 5/5, sorted by it.
    const summary = await page.$$eval('#compliance-summary tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-model'), tr.children[3].firstChild?.textContent]),
    );
    assert.deepEqual(summary, [
      ['n', '1.000'],
      ['m', '0.400'],
    ]);
    // Datasets as columns.
    assert.deepEqual(
      await page.$$eval('#compliance-empirical_coverage thead th', (ths) => ths.map((th) => th.textContent)),
      ['Model', 'Alpha', 'Beta', 'Overall'],
    );
    // Bars: declared (light) behind empirical (dark), 460 px = 1.
    const bar = async (dataset: string, model: string) =>
      page.$eval(`#coverage-bars g[data-dataset="${dataset}"][data-model="${model}"]`, (g) => [
        Number(g.querySelector('rect.declared')!.getAttribute('width')),
        Number(g.querySelector('rect.empirical')!.getAttribute('width')),
      ]);
    assert.deepEqual(await bar('Alpha', 'm'), [
      Number(((2 / 3) * 460).toFixed(1)),
      Number(((1 / 3) * 460).toFixed(1)),
    ]);
    assert.deepEqual(await bar('Beta', 'm'), [460, 230]);
    assert.deepEqual(await bar('overall', 'm'), [368, 184]);
    assert.deepEqual(await bar('Beta', 'n'), [460, 460]);
    // Keywords: the planted answer's seven plus b1's type error (type: 2 records).
    const kw = await page.$$eval('#compliance-keywords tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-keyword'), tr.children[1].textContent]),
    );
    assert.deepEqual(kw[0], ['type', '2']);
    assert.deepEqual(kw.map((k) => k[0]).sort(), [
      'additionalProperties',
      'format',
      'maxItems',
      'minLength',
      'minimum',
      'required',
      'type',
    ]);

    // The record list: not-valid records first; filters count.
    await page.selectOption('#c-model', '1'); // m (second by empirical coverage)
    assert.equal(await page.textContent('#c-count'), '5 records');
    assert.deepEqual(
      await page.$$eval('#c-records tbody tr', (trs) => trs.map((tr) => tr.children[3].textContent)),
      ['invalid', 'refused', 'invalid', 'valid', 'valid'],
    );
    await page.selectOption('#c-outcome', '1');
    assert.equal(await page.textContent('#c-count'), '2 records');
    await page.click('#c-records tbody tr[data-record="a2"]');
    await page.waitForSelector('#compliance-record');
    assert.equal(await page.textContent('#c-verdict'), '7 violations');
    const listed = await page.$$eval('#compliance-record #violation-list tbody tr', (trs) =>
      trs.map((tr) => [tr.children[0].textContent, tr.children[2].textContent, tr.children[1].textContent]),
    );
    assert.deepEqual(listed.sort(), PLANTED_VIOLATIONS);
    assert.equal(await page.textContent('#c-answer'), PLANTED_ANSWER);
    assert.match((await page.textContent('#c-timing'))!, /Total 80\.0 ms/);
    // A refused record says why.
    await page.selectOption('#c-outcome', '3');
    await page.click('#c-records tbody tr[data-record="a3"]');
    assert.match((await page.textContent('#c-why'))!, /Invalid schema for response_format/);

    // Strict SOB rows: the main record view lists the answer's violations.
    await page.selectOption('#f-model', 'm');
    await page.click('#records tbody tr[data-record="t1"]');
    await page.waitForSelector('#record-detail #violations');
    assert.deepEqual(
      await page.$$eval('#record-detail #violation-list tbody tr', (trs) =>
        trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent]),
      ),
      [['/x', 'type']],
    );
    await page.screenshot({ path: join(process.env.SOB_SHOT_DIR ?? tmp, 'compliance.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('a folder of schema results only: a report with the compliance section and no value leaderboard', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const only = join(tmp, 'only');
  const res = join(only, 'responses');
  mkdirSync(res, { recursive: true });
  writeFileSync(
    join(res, 'response_m.jsonl'),
    `${MODELS.m
      .filter((l) => l.source === undefined)
      .map((l) => responseLine(l))
      .join('\n')}\n`,
  );
  const ev = join(only, 'evaluation');
  assert.equal(sob('score', res, '--out', ev, '--bootstrap-samples', '0').status, 0);
  const out = join(only, 'report.html');
  const r = sob('report', ev, '--responses', res, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const { browser, page, errors } = await open(out);
  try {
    await page.waitForSelector('#compliance-summary tbody tr');
    assert.equal(await page.$('#leaderboard'), null);
    assert.match(
      (await page.textContent('#compliance > p.muted'))!,
      /^1 models, 5 schema records; generated .* from evaluation$/,
    );
    assert.equal(await page.textContent('#c-count'), '5 records');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
