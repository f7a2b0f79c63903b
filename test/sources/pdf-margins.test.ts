/**
 * PDF text keeps what the page shows, through the real `sob build pdf` and `sob ocr` on PDFs
 * this test writes: a one-page invoice keeps its letterhead (the seller) and its foot (the IBAN);
 * a two-page report loses the header repeated on both pages; `--margins layout` (what `sob ocr`
 * drops) and `--no-margins` on `build pdf`; a value on a dropped line is named by the grounding
 * warning; two blocks side by side stay two paragraphs; the `both` engine reads the scanned
 * invoice's table without a fragment read twice.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sobAsync } from '../kit/cli.ts';
import { sharedOcrCache } from '../kit/ocr-cache.ts';
import {
  IBAN_LINE,
  INVOICE_ROWS,
  invoicePdf,
  REPORT_HEAD,
  SELLER,
  scannedPdf,
  twoPageReportPdf,
} from './pdf-fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-pdf-margins-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pdfs = join(tmp, 'pdfs');
const env = { XDG_CACHE_HOME: sharedOcrCache().home };

const SCHEMA = {
  type: 'object',
  properties: {
    seller: { type: 'string' },
    iban: { type: 'string' },
    issued: { type: 'string' },
    total: { type: 'string' },
  },
};
const annotations = [
  {
    source_id: 'invoice_pg1',
    record_id: 'invoice',
    question: 'Who sells, to which account, when, and for how much?',
    json_schema: SCHEMA,
    ground_truth: {
      seller: SELLER,
      iban: 'DE89 3704 0044 0532 0130 00',
      issued: '2024-03-03',
      total: '401.5',
    },
  },
  ...[1, 2].map((p) => ({
    source_id: `report_pg${p}`,
    record_id: `report-${p}`,
    question: 'Which part?',
    json_schema: {
      type: 'object',
      properties: { part: { type: 'string' }, a: { type: 'string' }, b: { type: 'string' } },
    },
    ground_truth: { part: `Part ${p}` },
  })),
];

type Rec = { metadata: Record<string, unknown>; input: { context: string } };
async function build(name: string, extra: string[] = []) {
  const out = join(tmp, name, 'records.jsonl');
  const r = await sobAsync(
    ['build', 'pdf', pdfs, '--annotations', join(tmp, 'ann.jsonl'), '--out', out, ...extra],
    { env, timeoutMs: 300_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const recs = new Map<string, Rec>();
  for (const l of readFileSync(out, 'utf8').trim().split('\n')) {
    const rec = JSON.parse(l) as Rec;
    recs.set(String(rec.metadata.record_id), rec);
  }
  return { ...r, recs };
}

before(async () => {
  mkdirSync(pdfs, { recursive: true });
  writeFileSync(join(pdfs, 'invoice.pdf'), await invoicePdf());
  writeFileSync(join(pdfs, 'report.pdf'), await twoPageReportPdf());
  writeFileSync(join(tmp, 'ann.jsonl'), annotations.map((a) => JSON.stringify(a)).join('\n'));
});

describe('sob build pdf keeps what the page shows', () => {
  test('a one-page invoice keeps its letterhead and foot; the header repeated on both pages of a report is dropped', async () => {
    const { recs, stdout } = await build('default');
    assert.match(stdout, /^3 records written, 0 rejected, 0 warnings/);
    const invoice = recs.get('invoice')!.input.context;
    assert.ok(invoice.includes(SELLER), invoice.slice(0, 80));
    assert.ok(invoice.includes(IBAN_LINE), invoice.slice(-80));
    assert.equal(recs.get('invoice')!.metadata.page_furniture, undefined);
    for (const p of [1, 2]) {
      const report = recs.get(`report-${p}`)!;
      assert.equal(report.input.context.includes(REPORT_HEAD), false, report.input.context.slice(0, 80));
      assert.ok(report.input.context.startsWith(`## Part ${p}`), report.input.context.slice(0, 40));
      assert.deepEqual(report.metadata.page_furniture, [REPORT_HEAD]);
    }
  });

  test('two blocks side by side (the parties) stay two paragraphs, each in its order', async () => {
    const { recs } = await build('default');
    const invoice = recs.get('invoice')!.input.context;
    assert.match(
      invoice,
      /\n\nBill to: Meridian Ferry Company 12 Quay Street Portsmouth PO1 2AB\n\nShip to: Gull Rock Lighthouse Harbour Road 4 St Ives TR26 1LP\n\n/,
    );
    for (const [item, qty, unit, amount] of INVOICE_ROWS)
      assert.ok(invoice.includes(`| ${item} | ${qty} | ${unit} | ${amount} |`), item);
  });

  test('--margins layout drops the letterhead and foot, and the grounding warning names the dropped line; --no-margins keeps the repeated header', async () => {
    const layout = await build('layout', ['--margins', 'layout']);
    const invoice = layout.recs.get('invoice')!;
    assert.equal(invoice.input.context.includes(SELLER), false);
    assert.deepEqual(invoice.metadata.page_furniture, [SELLER, IBAN_LINE]);
    assert.match(layout.stdout, /^3 records written, 0 rejected, 2 warnings/);
    assert.match(
      layout.stderr,
      /warning: invoice: ground truth value at seller is not found in the context \(no normaliser matched: tried as written\); it is on a line dropped as page furniture \(a running head or foot: "Harbour Supplies Ltd"\): --no-margins keeps it/,
    );
    assert.match(
      layout.stderr,
      /warning: invoice: ground truth value at iban is not found .*"IBAN DE89 3704 0044 0532 0130 00 - Harbour Bank, Kiel"/,
    );
    const all = await build('none', ['--no-margins']);
    for (const p of [1, 2]) assert.ok(all.recs.get(`report-${p}`)!.input.context.includes(REPORT_HEAD));
    assert.ok(all.recs.get('invoice')!.input.context.includes(SELLER));
  });

  test('--margins is for pdf inputs only', async () => {
    const r = await sobAsync([
      'build',
      'hotpotqa',
      join(tmp, 'ann.jsonl'),
      '--annotations',
      join(tmp, 'ann.jsonl'),
      '--out',
      join(tmp, 'x/records.jsonl'),
      '--no-margins',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--no-margins is for pdf inputs only/);
  });
});

describe('the both engine on a scan of the invoice', () => {
  test('the table is read without a fragment read twice ("192.00", not "192.00 .00")', async () => {
    const scans = join(tmp, 'scans');
    mkdirSync(scans, { recursive: true });
    writeFileSync(join(scans, 'invoice.pdf'), await scannedPdf(await invoicePdf(), 150));
    const out = join(tmp, 'scan-out');
    const r = await sobAsync(
      ['ocr', scans, '--out', out, '--engine', 'both', '--margins', 'repeated', '--explain'],
      {
        env,
        timeoutMs: 300_000,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /invoice_pg1: ocr by both/);
    const md = readFileSync(join(out, 'invoice_pg1.md'), 'utf8');
    for (const [, , unit, amount] of INVOICE_ROWS) {
      const row = md.split('\n').find((l) => l.includes(amount));
      assert.ok(row, `${amount} is read: ${md}`);
      // Each figure once on its row, and no piece of one beside it.
      assert.equal(row.split(amount).length - 1, unit === amount ? 2 : 1, row);
      assert.doesNotMatch(row, /\d\.\d\d \.\d\d|\d+\. \d/, row);
    }
    // The letterhead and the foot are kept (a scan at 150 dpi may misread a letter of the IBAN).
    assert.ok(md.includes(SELLER) && md.includes('3704 0044 0532 0130 00 - Harbour Bank'), md);
  });
});
