/**
 * `sob ocr` on pages that are not upright or have nothing on them (issue 12 audit):
 * - a page with /Rotate 90, 180 or 270 is read from its text layer, in its text's direction,
 *   with the same transcript (order, running head and folio dropped) as the page upright;
 * - a landscape page whose text is drawn at 90 degrees (no /Rotate) likewise;
 * - a scan of such a page (no text layer to tell) is OCR'd turned upright: tesseract reads it at
 *   four turns only when its reading as rendered doubts, and keeps the turn it reads best;
 * - a page with nothing drawn, or nothing visible, is not OCR'd, and `--explain` says so;
 * - a scan read by both engines names its footer once (PaddleOCR's boxes land where
 *   tesseract's do, so the two readings of a line are recognised as one).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sobAsync } from '../helpers/sob-async.ts';
import {
  emptyPagesPdf,
  FOOTER,
  ROTATED_HEAD,
  ROTATED_LINES,
  runningHeadsPdf,
  scannedPdf,
  turnedPdf,
} from '../sources/pdf-fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-turned-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const sob = (args: string[]) => sobAsync(args, tmp, 300_000);

interface PageLine {
  page: number;
  method: string;
  engine: string | null;
  explain?: {
    seconds: number;
    blank?: string;
    rotation?: { page: number; read: number };
    turns_tried?: number;
    layout: { furniture: { text: string }[] };
  };
}

/** `sob ocr` on one generated PDF: exit code, stderr, the lines of ocr_pages.jsonl, page N's transcript. */
async function ocr(name: string, data: Uint8Array, extra: string[] = []) {
  const pdf = join(tmp, `${name}.pdf`);
  writeFileSync(pdf, data);
  const out = join(tmp, `out-${name}`);
  const r = await sob(['ocr', pdf, '--out', out, '--explain', '--no-cache', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  const pages = readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as PageLine);
  const md = (page: number) => readFileSync(join(out, `${name}_pg${page}.md`), 'utf8');
  return { ...r, pages, md };
}

/** Where each of the 20 numbered lines starts in a transcript (-1: missing). */
function positions(md: string): number[] {
  return ROTATED_LINES.map((l) => md.indexOf(l));
}

function assertReadsLikeUpright(md: string, upright: string, what: string): void {
  const at = positions(md);
  assert.ok(
    at.every((p) => p >= 0),
    `${what}: lines missing: ${ROTATED_LINES.filter((_, i) => at[i] < 0).join(' | ')}\n${md}`,
  );
  assert.deepEqual(
    at.map((_, i) => i),
    [...at.keys()].sort((a, b) => at[a] - at[b]),
    `${what}: lines out of order`,
  );
  assert.ok(!md.includes(ROTATED_HEAD), `${what}: the running head is left in`);
  assert.equal(md, upright, `${what}: differs from the same page upright`);
}

/** The 3 pages upright, read once for the two tests that compare with them. */
let uprightRun: ReturnType<typeof ocr> | undefined;
const uprightPages = async () => {
  uprightRun ??= (async () => ocr('upright', await turnedPdf('rotate', 3, 0), ['--engine', 'tesseract']))();
  return uprightRun;
};

test('pages with /Rotate 90, 180, 270 read from their text layer like the page upright', async () => {
  const upright = await uprightPages();
  assert.deepEqual(
    upright.pages.map((p) => p.method),
    ['text-layer', 'text-layer', 'text-layer'],
  );
  for (const deg of [90, 180, 270]) {
    const r = await ocr(`rot${deg}`, await turnedPdf('rotate', 3, deg), ['--engine', 'tesseract']);
    assert.deepEqual(
      r.pages.map((p) => [p.method, p.engine]),
      [
        ['text-layer', null],
        ['text-layer', null],
        ['text-layer', null],
      ],
      r.stderr,
    );
    for (const p of [1, 2, 3]) assertReadsLikeUpright(r.md(p), upright.md(p), `/Rotate ${deg}, page ${p}`);
    assert.deepEqual(r.pages[1].explain?.rotation, { page: deg, read: 0 });
    assert.match(
      r.stderr,
      new RegExp(
        `rot${deg}_pg2: text-layer; text layer 1\\.00; read at rotation 0 \\(its /Rotate is ${deg}; `,
      ),
    );
  }
  // An upright page needs no word about rotation.
  assert.equal(upright.pages[0].explain?.rotation, undefined);
});

test('a landscape page whose text is drawn at 90 degrees reads in its text direction', async () => {
  const upright = await uprightPages();
  const r = await ocr('sideways', await turnedPdf('text', 3), ['--engine', 'tesseract']);
  assert.deepEqual(
    r.pages.map((p) => p.method),
    ['text-layer', 'text-layer', 'text-layer'],
    r.stderr,
  );
  for (const p of [1, 2, 3]) assertReadsLikeUpright(r.md(p), upright.md(p), `sideways text, page ${p}`);
  assert.deepEqual(r.pages[0].explain?.rotation, { page: 0, read: 90 });
});

test('a scan of sideways text is OCR-read turned upright, at the cost of 4 readings at half the scale and one more', async () => {
  const r = await ocr('scanside', await scannedPdf(await turnedPdf('text', 1)), ['--engine', 'tesseract']);
  assert.equal(r.pages[0].method, 'ocr', r.stderr);
  assert.deepEqual(r.pages[0].explain?.rotation, { page: 0, read: 90 });
  assert.equal(r.pages[0].explain?.turns_tried, 4);
  assert.match(
    r.stderr,
    /read at rotation 90 \(its \/Rotate is 0; of 4 turns tried, tesseract read most there\)/,
  );
  // As rendered, the four turns at half the scale, then the winner at full scale.
  assert.match(r.stderr, /\(OCR: 6 recognised, 0 from cache\)/);
  const md = r.md(1);
  const at = positions(md).filter((p) => p >= 0);
  assert.ok(at.length >= 18, `only ${at.length} of 20 lines read:\n${md}`);
  assert.deepEqual(
    at,
    [...at].sort((a, b) => a - b),
    'lines out of order',
  );
});

test('an empty page and a page painted one colour are not OCR-read; --explain says why', async () => {
  const r = await ocr('empty', await emptyPagesPdf(), ['--engine', 'both']);
  assert.deepEqual(
    r.pages.map((p) => [p.method, p.engine]),
    [
      ['blank', null],
      ['blank', null],
      ['ocr', 'both'],
    ],
    r.stderr,
  );
  assert.equal(r.md(1), '');
  assert.equal(r.md(2), '');
  assert.match(r.md(3), /Intentionally left blank/);
  // One short line read with confidence: no turns tried.
  assert.equal(r.pages[2].explain?.turns_tried, 1);
  assert.match(
    r.stderr,
    /^empty_pg1: blank, not OCR'd \(nothing drawn on it: no text, pictures or paths\); \d+\.\d{3} s$/m,
  );
  assert.match(r.stderr, /^empty_pg2: blank, not OCR'd \(it renders as one colour\); \d+\.\d{3} s$/m);
  assert.match(r.stderr, /3 pages in [\d.]+ s: 0 text layer, 1 OCR, 0 mixed, 2 blank \(OCR: 2 recognised/);
  // A fraction of the seconds an OCR pass takes (the third page's), measured in the same run, so
  // a machine busy with other tests slows both alike.
  const ocrSeconds = r.pages[2].explain?.seconds ?? 0;
  assert.ok(
    (r.pages[0].explain?.seconds ?? 99) < ocrSeconds / 4,
    `empty page took ${r.pages[0].explain?.seconds} s, the OCR'd page ${ocrSeconds} s`,
  );
  assert.ok(
    (r.pages[1].explain?.seconds ?? 99) < ocrSeconds / 4,
    `white page took ${r.pages[1].explain?.seconds} s, the OCR'd page ${ocrSeconds} s`,
  );
});

test('a scan read by both engines drops its footer once, not once per engine', async () => {
  const r = await ocr('scan', await scannedPdf(await runningHeadsPdf()), ['--engine', 'both']);
  const line = r.stderr.split('\n').find((l) => l.startsWith('scan_pg2: ')) ?? '';
  assert.match(line, /^scan_pg2: ocr by both; /, r.stderr);
  // An upright scan reads well as rendered: one reading, no turns tried.
  assert.deepEqual(
    r.pages.map((p) => p.explain?.turns_tried),
    [1, 1, 1],
  );
  assert.match(line, /, 0 PaddleOCR only; /);
  const dropped = (r.pages[1].explain?.layout.furniture ?? []).map((f) => f.text).join(' | ');
  // Each word of the footer was dropped once (before, PaddleOCR's reading of it came as a second line).
  for (const w of FOOTER.split(' ')) assert.equal(dropped.split(w).length - 1, 1, `"${w}" in: ${dropped}`);
  assert.ok(!r.md(2).includes('Confidential'), r.md(2));
});
