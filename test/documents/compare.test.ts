/**
 * The paired answer to "OCR or native?" (issue 31, item 6): one model asked the same records as
 * text and as documents (the real `sob run --input`, against a local server speaking OpenAI's
 * protocol), `sob compare` of the two run directories: every metric with a paired bootstrap and
 * Holm's correction over the metrics, the two sides named by their mode, and the records that
 * flip; the report's drill-down shows the page itself (embedded, size-bounded: a large page
 * downscaled under the limit, a PDF without a render a note) beside both answers, in Chromium.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { holm } from '../../metrics/compare.ts';
import { PAGE_MAX_BYTES } from '../../src/report/html.ts';
import {
  documentBenchmark,
  documentsOf,
  noisyPngOf,
  type ProtocolServer,
  pdfOf,
  pngOf,
  rows,
  type SeenRequest,
  sobIn,
  startProtocolServer,
  tempDir,
  userTextOf,
} from '../kit/index.ts';
import { CHROMIUM, launchChromium, reportData } from '../report/run.ts';

let server: ProtocolServer;
const dir = tempDir('sob-doc-compare-');
let bench: string;
let small: Buffer;

/** Records right as text: r0, r1, r2; right as documents: r2, r3, r4, r5 (the rest answer the id only). */
const RIGHT = { text: new Set(['r0', 'r1', 'r2']), document: new Set(['r2', 'r3', 'r4', 'r5']) };

before(async () => {
  server = await startProtocolServer({
    script: (r: SeenRequest) => {
      const mode = documentsOf(r).length > 0 ? 'document' : 'text';
      const right = RIGHT[mode].has(r.key as string);
      return {
        kind: 'answer',
        text: JSON.stringify(right ? { id: r.key, total: null, vendor: null } : { id: r.key }),
      };
    },
  });
  small = pngOf(60, 80, 7);
  bench = join(dir, 'bench');
  documentBenchmark(bench, [
    { id: 'r0', docs: [{ kind: 'image', mime: 'image/png', data: small }] },
    { id: 'r1', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(60, 80, 8) }] },
    { id: 'r2', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(60, 80, 9) }] },
    // A page far over the report's limit: shown downscaled.
    { id: 'r3', docs: [{ kind: 'image', mime: 'image/png', data: noisyPngOf(400, 300, 5) }] },
    // A PDF with its page's render: the render is shown.
    {
      id: 'r4',
      docs: [
        { kind: 'pdf', mime: 'application/pdf', data: await pdfOf(1), pages: [1] },
        { kind: 'image', mime: 'image/png', data: pngOf(50, 70, 4) },
      ],
    },
    // A PDF alone: a note.
    {
      id: 'r5',
      docs: [{ kind: 'pdf', mime: 'application/pdf', data: await pdfOf(1, 'Receipt'), pages: [1] }],
    },
  ]);
});
after(() => server.close());

const env = { OPENAI_API_KEY: 'k' };

async function runAndScore(model: string, mode: string, runDir: string) {
  const r = await sobIn(
    [
      'run',
      '--model',
      model,
      '--benchmark',
      bench,
      '--input',
      mode,
      '--base-url',
      server.openaiBaseUrl,
      '--run-dir',
      runDir,
    ],
    { env },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = await sobIn(['score', runDir, '--bootstrap-samples', '0']);
  assert.equal(s.code, 0, s.stderr);
}

test('sob compare of two modes of one model: every metric paired, Holm over the metrics, the modes named, the records that flip', async () => {
  const A = join(dir, 'runs', 'text');
  const B = join(dir, 'runs', 'document');
  await runAndScore('openai:m', 'text', A);
  await runAndScore('openai:m', 'document', B);
  const js = await sobIn(['compare', A, B, '--samples', '500', '--format', 'json']);
  assert.equal(js.code, 0, js.stderr);
  const out = JSON.parse(js.stdout);
  assert.equal(out.a, 'openai_m · text');
  assert.equal(out.b, 'openai_m · document');
  assert.deepEqual(out.input_modes, { a: 'text', b: 'document' });
  assert.equal(out.results.length, 7);
  assert.ok(out.results.every((r: { n: number }) => r.n === 6));
  // Holm over the seven metrics' p-values, each adjusted one at least its raw p.
  const adjusted = holm(out.results.map((r: { pValue: number }) => r.pValue));
  assert.deepEqual(
    out.results.map((r: { pHolm: number }) => r.pHolm),
    adjusted,
  );
  assert.ok(out.results.every((r: { pHolm: number; pValue: number }) => r.pHolm >= r.pValue));
  // Value Accuracy: each side's mean is its records' mean (one weight: every schema is easy).
  const va = out.results[0];
  assert.equal(va.metric, 'leaf_value_em');
  const vaOf = (run: string) =>
    rows(join(run, 'evaluation/image/openai_m/eval_records.jsonl')).map((r) => r.leaf_value_em as number);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.ok(Math.abs(va.meanA - mean(vaOf(A))) < 1e-12, String(va.meanA));
  assert.ok(Math.abs(va.meanB - mean(vaOf(B))) < 1e-12, String(va.meanB));
  assert.ok(va.meanB > va.meanA);
  // The records that flip: right as text only r0, r1; right as documents only r3, r4, r5.
  assert.equal(out.record_flips.both_answered, 6);
  assert.deepEqual(
    out.record_flips.right_in_a_wrong_in_b.map((f: { id: string }) => f.id),
    ['r0', 'r1'],
  );
  assert.deepEqual(
    out.record_flips.wrong_in_a_right_in_b.map((f: { id: string }) => f.id),
    ['r3', 'r4', 'r5'],
  );
  const wrong = out.record_flips.right_in_a_wrong_in_b[0];
  assert.equal(wrong.a, 1);
  assert.ok(wrong.b < 1);

  const table = await sobIn(['compare', A, B, '--samples', '500']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^A = openai_m · text, B = openai_m · document: 6 records both answered/m);
  assert.match(table.stdout, /^metric\s+A\s+B\s+B - A\s+95% interval\s+p\s+p \(Holm\)$/m);
  assert.match(
    table.stdout,
    new RegExp(
      `^Value Accuracy\\s+${va.meanA.toFixed(3)}\\s+${va.meanB.toFixed(3)}\\s+${va.difference.toFixed(3)}\\s+\\[`,
      'm',
    ),
  );
  assert.match(
    table.stdout,
    /^Records that flip \(of 6 both answered; right = Value Accuracy 1\): 2 right in A \(openai_m · text\) only, 3 right in B \(openai_m · document\) only$/m,
  );
  assert.match(table.stdout, new RegExp(`^ {2}r0 {2}1\\.000 -> ${wrong.b.toFixed(3)}$`, 'm'));
  // One evaluation folder of several models needs --model; a model folder works as before.
  const folder = await sobIn([
    'compare',
    join(A, 'evaluation/image/openai_m'),
    join(B, 'evaluation/image/openai_m'),
  ]);
  assert.equal(folder.code, 0, folder.stderr);
  assert.match(folder.stdout, /^A = openai_m · text, B = openai_m · document/m);
});

test('the report: the drill-down shows the page itself beside both answers (Chromium), size-bounded', async (t) => {
  // One eval folder holding both modes (as sob eval lays out runs/<model>/ beside evaluation/).
  const ev = join(dir, 'ev');
  for (const mode of ['text', 'document']) {
    const runDir = join(ev, 'runs', `openai_m-${mode}`);
    await runAndScore(`openai:m-${mode}`, mode, runDir);
    const s = await sobIn(['score', runDir, '--out', join(ev, 'evaluation'), '--bootstrap-samples', '0']);
    assert.equal(s.code, 0, s.stderr);
  }
  // A folder of two models does not stand for one: one line asking for --model, exit 2.
  const two = await sobIn(['compare', ev, join(dir, 'runs', 'text')]);
  assert.equal(two.code, 2);
  assert.match(
    two.stderr,
    /holds 2 image models \(openai_m-document, openai_m-text\): name them with --model <a>,<b>/,
  );
  const named = await sobIn([
    'compare',
    ev,
    '--model',
    'openai_m-text,openai_m-document',
    '--format',
    'json',
  ]);
  assert.equal(named.code, 0, named.stderr);
  assert.deepEqual(JSON.parse(named.stdout).input_modes, { a: 'text', b: 'document' });
  const rep = await sobIn(['report', ev]);
  assert.equal(rep.code, 0, rep.stderr);
  const out = join(ev, 'report.html');
  type Page = { path: string; kind: string; src?: string; note?: string };
  const data = reportData<{ pages: Page[]; records: { id: string; page?: number }[] }>(out);
  const pageOf = (id: string) => data.pages[data.records.find((r) => r.id === id)!.page!];
  // r0: its own bytes, as they are.
  assert.equal(pageOf('r0').src, `data:image/png;base64,${small.toString('base64')}`);
  // r3: over the limit: downscaled to fit, and said.
  const big = pageOf('r3');
  const bytes = Buffer.from(big.src!.split(',')[1], 'base64');
  assert.ok(bytes.length <= PAGE_MAX_BYTES, `${bytes.length} bytes`);
  assert.match(big.note!, /400x300 px, \d+ KB: shown downscaled to a longest edge of \d+ px/);
  // r4: the render beside the PDF; r5: a PDF alone is a note.
  assert.equal(pageOf('r4').kind, 'image');
  assert.equal(pageOf('r5').src, undefined);
  assert.match(pageOf('r5').note!, /a PDF \(page 1\) with no page render attached/);
  // Each page stored once for both models.
  assert.equal(data.pages.length, 6);
  assert.ok(readFileSync(out).length < 6 * PAGE_MAX_BYTES * 1.4 + 2_000_000);

  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('#records tbody tr.rec');
    // Cost per unit: each mode's row, with the pages its records show (one each).
    const units = await page.$$eval('#usage-units tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(3, 5).map((td) => td.textContent)),
    );
    assert.deepEqual(units.sort(), [
      ['document', '6'],
      ['text', '6'],
    ]);
    await page.selectOption('#f-model', 'openai_m-document');
    await page.fill('#f-text', 'r0');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-page img');
    // The image decoded at its own size (60 x 80 px), drawn beside the answers.
    const img = await page.$eval('#record-page img', (i) => {
      const e = i as unknown as { naturalWidth: number; naturalHeight: number; complete: boolean };
      return { w: e.naturalWidth, h: e.naturalHeight, complete: e.complete };
    });
    assert.deepEqual(img, { w: 60, h: 80, complete: true });
    // The prompt shown is the one sent: the note that the document is attached, no transcript.
    const asked = server.requests.find(
      (q) => q.key === 'r0' && q.body.model === 'm-document' && documentsOf(q).length > 0,
    )!;
    const shown = await page.textContent('#prompt-user');
    assert.equal(shown, userTextOf(asked));
    assert.match(shown!, /The document is attached/);
    assert.doesNotMatch(shown!, /TRANSCRIPT-OF-/);
    await page.selectOption('#compare-with', { label: 'openai_m-text' });
    const side = await page.$$eval('#side-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    // r0: the document answer has only the id; the text answer every leaf.
    assert.deepEqual(side, [
      ['id', '"r0"', '"r0"', '"r0"'],
      ['total', 'null', '(missing)', 'null'],
      ['vendor', 'null', '(missing)', 'null'],
    ]);
    const figure = await page.$eval('#record-page', (f) => f.getBoundingClientRect().toJSON());
    const table = await page.$eval('#diff', (f) => f.getBoundingClientRect().toJSON());
    assert.ok(figure.left > table.left, 'the page is beside the answers, on the right');
    // The downscaled page decodes within the limit; the PDF alone shows its note.
    await page.fill('#f-text', 'r3');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-page img');
    const w3 = await page.$eval(
      '#record-page img',
      (i) => (i as unknown as { naturalWidth: number }).naturalWidth,
    );
    assert.ok(w3 > 0 && w3 < 400, String(w3));
    await page.fill('#f-text', 'r5');
    await page.click('#records tbody tr.rec >> nth=0');
    await page.waitForSelector('#record-page figcaption');
    assert.equal(await page.$('#record-page img'), null);
    assert.match((await page.textContent('#record-page figcaption'))!, /no page render attached/);
    await page.screenshot({ path: join(dir, 'page-drill.png'), fullPage: false });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
