/**
 * Field-level results on a small benchmark this test writes (three invoices, one schema, two
 * models): `fields.jsonl` row by row as worked out by hand, the per-field table of the
 * leaderboard (Markdown and JSON), the field flips of `sob compare`, and a field gate's exit 3.
 * Real `sob score --match default` (worker threads) and `sob leaderboard`/`sob compare`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { sobIn, tempDir } from '../kit/index.ts';
import { CHROMIUM, launchChromium } from '../report/run.ts';
import { INVOICE_SCHEMA as SCHEMA } from './invoice-schema.ts';

const tmp = tempDir('sob-fields-');
const evalDir = join(tmp, 'evaluation');

/** Gold as JSON text, so `7.0` stays a float (the lossless reader keeps the lexeme). */
const GOLD: Record<string, string> = {
  r1: '{"total": 100.5, "due_date": "2024-03-05", "line_items": [{"sku": "A", "amount": 60.5}, {"sku": "B", "amount": 40}]}',
  r2: '{"total": 20, "due_date": "2024-04-01", "line_items": [{"sku": "C", "amount": 20}]}',
  r3: '{"total": 7.0, "due_date": "2024-05-01", "line_items": []}',
};

const ANSWERS: Record<string, Record<string, string>> = {
  // r1: the date written out (exact no, lenient yes by the date matcher); r2: a wrong total;
  // r3: 7 for 7.0 (Python equality: equal).
  alpha: {
    r1: '{"total": 100.5, "due_date": "March 5, 2024", "line_items": [{"sku": "A", "amount": 60.5}, {"sku": "B", "amount": 40}]}',
    r2: '{"total": 21, "due_date": "2024-04-01", "line_items": [{"sku": "C", "amount": 20}]}',
    r3: '{"total": 7, "due_date": "2024-05-01", "line_items": []}',
  },
  // r1: the line items swapped (exact no in place, lenient yes once aligned); r2: a wrong date;
  // r3: not JSON (a string answer: every leaf missing, the gate `not_structured`).
  beta: {
    r1: '{"total": 100.5, "due_date": "2024-03-05", "line_items": [{"sku": "B", "amount": 40}, {"sku": "A", "amount": 60.5}]}',
    r2: '{"total": 20, "due_date": "2024-04-02", "line_items": [{"sku": "C", "amount": 20}]}',
    r3: '"Sorry, I cannot read it."',
  },
};

function line(model: string, id: string): string {
  return `{"metadata": {"record_id": "${id}", "model_id": "${model}", "source": "text", "schema_complexity": "hard"}, "input": {"context": "invoice ${id}", "question": "Extract the invoice.", "json_schema": ${JSON.stringify(SCHEMA)}}, "output": {"ground_truth": ${GOLD[id]}, "candidate_response": ${ANSWERS[model][id]}}}`;
}

// biome-ignore lint/suspicious/noExplicitAny: rows read back from their file
function rows(model: string): any[] {
  return readFileSync(join(evalDir, 'text', model, 'fields.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

before(async () => {
  const responses = join(tmp, 'responses');
  mkdirSync(responses);
  for (const m of Object.keys(ANSWERS))
    writeFileSync(
      join(responses, `${m}.jsonl`),
      `${['r1', 'r2', 'r3'].map((id) => line(m, id)).join('\n')}\n`,
    );
  const r = await sobIn([
    'score',
    responses,
    '--out',
    evalDir,
    '--match',
    'default',
    '--bootstrap-samples',
    '50',
  ]);
  assert.equal(r.code, 0, r.stderr);
});

test('fields.jsonl: one row per record and gold leaf, checked by hand', () => {
  const got = rows('alpha').map((r) => [
    r.record_id,
    r.path,
    r.field,
    r.gold,
    r.answer,
    r.exact,
    r.lenient,
    r.comparator,
    r.gate,
    r.model_id,
  ]);
  assert.deepEqual(got, [
    ['r1', 'total', 'total', '100.5', '100.5', true, true, 'exact', null, 'alpha'],
    ['r1', 'due_date', 'due_date', '"2024-03-05"', '"March 5, 2024"', false, true, 'date', null, 'alpha'],
    ['r1', 'line_items[0].sku', 'line_items[].sku', '"A"', '"A"', true, true, 'exact', null, 'alpha'],
    ['r1', 'line_items[0].amount', 'line_items[].amount', '60.5', '60.5', true, true, 'exact', null, 'alpha'],
    ['r1', 'line_items[1].sku', 'line_items[].sku', '"B"', '"B"', true, true, 'exact', null, 'alpha'],
    ['r1', 'line_items[1].amount', 'line_items[].amount', '40', '40', true, true, 'exact', null, 'alpha'],
    ['r2', 'total', 'total', '20', '21', false, false, 'default', null, 'alpha'],
    ['r2', 'due_date', 'due_date', '"2024-04-01"', '"2024-04-01"', true, true, 'exact', null, 'alpha'],
    ['r2', 'line_items[0].sku', 'line_items[].sku', '"C"', '"C"', true, true, 'exact', null, 'alpha'],
    ['r2', 'line_items[0].amount', 'line_items[].amount', '20', '20', true, true, 'exact', null, 'alpha'],
    // 7 for 7.0: Python equality holds (the gold keeps its float lexeme, the answer its int one).
    ['r3', 'total', 'total', '7.0', '7', true, true, 'exact', null, 'alpha'],
    ['r3', 'due_date', 'due_date', '"2024-05-01"', '"2024-05-01"', true, true, 'exact', null, 'alpha'],
  ]);
  const beta = rows('beta');
  // Swapped line items: wrong in place, right once aligned (pred_path names where the answer was).
  const b1 = beta.filter((r) => r.record_id === 'r1' && r.field.startsWith('line_items'));
  assert.deepEqual(
    b1.map((r) => [r.path, r.exact, r.lenient, r.pred_path]),
    [
      ['line_items[0].sku', false, true, 'line_items[1].sku'],
      ['line_items[0].amount', false, true, 'line_items[1].amount'],
      ['line_items[1].sku', false, true, 'line_items[0].sku'],
      ['line_items[1].amount', false, true, 'line_items[0].amount'],
    ],
  );
  // The string answer: every leaf missing, the gate named.
  const b3 = beta.filter((r) => r.record_id === 'r3');
  assert.deepEqual(
    b3.map((r) => [r.path, r.answer, r.exact, r.lenient, r.lenient_verdict, r.gate]),
    [
      ['total', null, false, false, 'missing', 'not_structured'],
      ['due_date', null, false, false, 'missing', 'not_structured'],
    ],
  );
  // One schema: every row names the same one.
  assert.equal(new Set([...rows('alpha'), ...beta].map((r) => r.schema)).size, 1);
});

test('the leaderboard lists each field per model, worst first, with its interval and n', async () => {
  const r = await sobIn(['leaderboard', evalDir, '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const board = JSON.parse(r.stdout);
  const cells = Object.fromEntries(
    // biome-ignore lint/suspicious/noExplicitAny: rows read back
    board.map((row: any) => [row.model, row.fields.map((f: any) => [f.field, f.right, f.n, f.by])]),
  );
  assert.deepEqual(cells.beta, [
    ['due_date', 1, 3, 'lenient'],
    ['total', 2, 3, 'lenient'],
    ['line_items[].amount', 3, 3, 'lenient'],
    ['line_items[].sku', 3, 3, 'lenient'],
  ]);
  // Ties (3 of 3) by name.
  assert.deepEqual(cells.alpha, [
    ['total', 2, 3, 'lenient'],
    ['due_date', 3, 3, 'lenient'],
    ['line_items[].amount', 3, 3, 'lenient'],
    ['line_items[].sku', 3, 3, 'lenient'],
  ]);
  // biome-ignore lint/suspicious/noExplicitAny: rows read back
  const due = board.find((x: any) => x.model === 'beta').fields[0];
  // Wilson interval for 1 of 3: [0.0615, 0.7923]; the exact comparison: 1 of 3 as well.
  assert.equal(due.accuracy.toFixed(4), '0.3333');
  assert.equal(due.ci95_low.toFixed(4), '0.0615');
  assert.equal(due.ci95_high.toFixed(4), '0.7923');
  assert.equal(due.exact_accuracy.toFixed(4), '0.3333');
  assert.equal(due.schema, null);
  const md = await sobIn(['leaderboard', evalDir, '--format', 'md']);
  assert.match(md.stdout, /## Which fields to trust \(worst first\)/);
  assert.match(md.stdout, /\| `due_date` \| beta \| 0\.333 \[0\.061, 0\.792\] \| 3 \| lenient \| 0\.333 \|/);
});

test('sob compare lists field flips both ways with counts', async () => {
  const r = await sobIn([
    'compare',
    join(evalDir, 'text', 'alpha'),
    join(evalDir, 'text', 'beta'),
    '--format',
    'json',
    '--samples',
    '100',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const f = JSON.parse(r.stdout).field_flips;
  // alpha -> beta: total r2 wrong->right, r3 right->wrong; due_date r2 and r3 right->wrong;
  // the line items are right in both (leniently), so no flip there.
  assert.equal(f.leaves, 12);
  assert.equal(f.right_in_a_wrong_in_b, 3);
  assert.equal(f.wrong_in_a_right_in_b, 1);
  assert.deepEqual(
    // biome-ignore lint/suspicious/noExplicitAny: rows read back
    f.fields.map((x: any) => [x.field, x.n, x.lost, x.gained]),
    // Most flips first, then most lost.
    [
      ['due_date', 3, 2, 0],
      ['total', 3, 1, 1],
      ['line_items[].amount', 3, 0, 0],
      ['line_items[].sku', 3, 0, 0],
    ],
  );
  const t = await sobIn([
    'compare',
    join(evalDir, 'text', 'alpha'),
    join(evalDir, 'text', 'beta'),
    '--samples',
    '100',
  ]);
  assert.match(
    t.stdout,
    /field flips \(12 leaves both scored\): 3 right in alpha and wrong in beta, 1 the reverse/,
  );
});

test('--fail-under field:<path>=<min> exits 3 naming the model and field; a field that holds passes', async () => {
  const bad = await sobIn(['leaderboard', evalDir, '--format', 'json', '--fail-under', 'field:due_date=0.5']);
  assert.equal(bad.code, 3, bad.stderr);
  assert.match(bad.stderr, /gate failed: beta: field due_date accuracy 0\.333 < 0\.5 \(n 3\)/);
  assert.doesNotMatch(bad.stderr, /gate failed: alpha/);
  const ok = await sobIn([
    'leaderboard',
    evalDir,
    '--format',
    'json',
    '--fail-under',
    'field:line_items[0].amount=0.9',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  const none = await sobIn(['leaderboard', evalDir, '--format', 'json', '--fail-under', 'field:nope=0.1']);
  assert.equal(none.code, 3);
  assert.match(none.stderr, /field nope has no scored leaf/);
  const usage = await sobIn(['leaderboard', evalDir, '--fail-under', 'field:=0.5']);
  assert.equal(usage.code, 2);
});

test('the report in Chromium: the "Which fields to trust" table, worst first', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const out = join(tmp, 'report.html');
  const r = await sobIn(['report', evalDir, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('#fields-table tbody tr');
    const head = await page.$$eval('#fields-table thead th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(head, ['Field', 'Model', 'Accuracy', '95% CI', 'n', 'By', 'Exact']);
    const cells = await page.$$eval('#fields-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    assert.equal(cells.length, 8);
    assert.deepEqual(cells[0], ['due_date', 'beta', '0.333', '[0.061, 0.792]', '3', 'lenient', '0.333']);
    assert.deepEqual(cells[1], ['total', 'alpha', '0.667', '[0.208, 0.939]', '3', 'lenient', '0.667']);
    assert.ok(await page.$('nav a[href="#fields"]'), 'the section is in the navigation');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('without --match (rows as one UTF-8 buffer a batch): 70 records over three batches, non-ASCII kept, in order', async () => {
  const dir = join(tmp, 'plain');
  mkdirSync(join(dir, 'responses'), { recursive: true });
  const lines: string[] = [];
  for (let i = 0; i < 70; i++) {
    // Every 7th record answers a different city (exact false); one with no leaf at all (r5).
    const gold = i === 5 ? '{}' : `{"city": "Zürich ${i} €", "n": ${i}}`;
    const answer = i % 7 === 0 ? `{"city": "Genève ${i}", "n": ${i}}` : gold;
    lines.push(
      `{"metadata": {"record_id": "r${i}", "model_id": "gamma", "source": "text"}, "input": {"context": "c", "question": "q", "json_schema": {"type": "object"}}, "output": {"ground_truth": ${gold}, "candidate_response": ${answer}}}`,
    );
  }
  writeFileSync(join(dir, 'responses', 'gamma.jsonl'), `${lines.join('\n')}\n`);
  const r = await sobIn([
    'score',
    join(dir, 'responses'),
    '--out',
    join(dir, 'evaluation'),
    '--bootstrap-samples',
    '0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const got = readFileSync(join(dir, 'evaluation', 'text', 'gamma', 'fields.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(got.length, 69 * 2);
  const ids = [...Array(70).keys()].filter((i) => i !== 5);
  assert.deepEqual(
    got.filter((x) => x.path === 'city').map((x) => [x.record_id, x.gold, x.answer, x.exact, x.lenient]),
    ids.map((i) => [
      `r${i}`,
      `"Zürich ${i} €"`,
      i % 7 === 0 ? `"Genève ${i}"` : `"Zürich ${i} €"`,
      i % 7 !== 0,
      null,
    ]),
  );
  assert.deepEqual(
    got.filter((x) => x.path === 'n').map((x) => [x.answer, x.exact]),
    ids.map((i) => [String(i), true]),
  );
});
