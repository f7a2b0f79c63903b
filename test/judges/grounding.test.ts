/**
 * Grounding that understands values: a ground-truth ISO date or plain number read from the way
 * the context writes it ("March 3, 2024", "$12,480.00") is grounded, so ten such records reach
 * the judge (the local OpenAI-protocol server counts ten requests); a value truly absent is still
 * flagged, saying what was tried, and the closing line names the flag that would keep it. A
 * reviewer that fails flags, not rejects; --judge-prompt replaces the judge's instructions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GroundingIndex, groundLeaves, ungroundedWarning } from '../../src/core/grounding.ts';
import { checkRecord } from '../../src/core/record-checks.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { sobAsync } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-grounding-'));
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });

before(async () => {
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
];
const SCHEMA = {
  type: 'object',
  properties: {
    seller: { type: 'string' },
    invoice_date: { type: 'string', format: 'date' },
    total: { type: 'string' },
    net: { type: 'string' },
  },
  required: ['seller', 'invoice_date', 'total', 'net'],
};

/** Invoice i: its date written out, its amounts with thousands separators and a currency. */
function invoice(i: number, truth?: Record<string, string>) {
  const day = i + 3;
  const total = 12_000 + 480 * i; // "$12,480.00" and the like: the gold is "12480"
  const context = [
    `Harbour Supplies Ltd`,
    `Invoice HS-${100 + i}, issued ${MONTHS[i]} ${day}, 2024.`,
    `Net amount: $${(total - 1000).toLocaleString('en-US')}.50`,
    `Total due: $${total.toLocaleString('en-US')}.00 by bank transfer.`,
  ].join('\n');
  return JSON.stringify({
    metadata: { record_id: `inv-${i}`, source: 'text', schema_complexity: 'easy' },
    input: { context, question: 'Extract the invoice.', json_schema: SCHEMA },
    output: {
      ground_truth: truth ?? {
        seller: 'Harbour Supplies Ltd',
        invoice_date: `2024-${String(i + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
        total: String(total),
        net: `${total - 1000}.5`,
      },
    },
  });
}

const judgeAnswer = JSON.stringify({
  accuracy: 90,
  grounding: 90,
  schema_quality: 90,
  needs_multiple_turns: null,
  rationale: 'scripted',
});

function sob(args: string[]) {
  return sobAsync(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' } });
}
const base = () => ['--base-url', server.openaiBaseUrl, '--retry-base-ms', '5', '--max-attempts', '1'];
const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { record_id?: string; stage: string; reasons: string[] });

describe('the grounding check reads dates and numbers as the lenient matchers do', () => {
  test('each way a value is found is named: as written, a date, a number, a near match', () => {
    const g = new GroundingIndex(
      'Issued on Tuesday, March 3rd, 2024 (due 04/05/2024). Total: $1,200.50; VAT EUR 1.234,00. Signed: Emil Brandh0rst.',
    );
    const by = (v: string) => g.find(v).by;
    assert.equal(by('tuesday march'), 'text');
    assert.equal(by('2024-03-03'), 'date');
    assert.equal(by('2024-04-05'), 'date'); // 04/05/2024 read month first
    assert.equal(by('2024-05-04'), 'date'); // and day first: either reading grounds
    assert.equal(by('1200.5'), 'number');
    assert.equal(by('1234'), 'number');
    assert.equal(by('Emil Brandhorst'), 'near');
    assert.equal(by('2024-03-04'), null);
    assert.equal(by('1200.51'), null);
    assert.deepEqual(g.find('2024-03-04').readings, ['date 2024-03-04']);
    assert.deepEqual(g.find('99.5').readings, ['number 99.5']);
  });

  test('a value truly absent is flagged, saying what was tried; one on a dropped running foot says so', () => {
    const leaves = groundLeaves(
      { date: '2024-06-01', iban: 'DE89 3704 0044 0532 0130 00' },
      'Invoice of May 1, 2024',
      ['IBAN DE89 3704 0044 0532 0130 00 · Harbour Bank'],
    );
    assert.deepEqual(
      leaves.map((l) => ungroundedWarning(l)),
      [
        'ground truth value at date is not found in the context (no normaliser matched: tried as written, as a date 2024-06-01)',
        'ground truth value at iban is not found in the context (no normaliser matched: tried as written); it is on a line dropped as page furniture (a running head or foot: "IBAN DE89 3704 0044 0532 0130 00 · Harbour Bank"): --no-margins keeps it',
      ],
    );
    // The record check reads the dropped lines from the record (what `sob build pdf` writes).
    const rec = JSON.parse(
      invoice(0, {
        seller: 'Harbour Supplies Ltd',
        invoice_date: '2024-01-03',
        total: '12000',
        net: 'DE89 3704',
      }),
    );
    rec.metadata.page_furniture = ['IBAN DE89 3704 0044 0532 0130 00'];
    const c = checkRecord(rec);
    assert.deepEqual(c.errors, []);
    assert.equal(c.warnings.length, 1);
    assert.match(
      c.warnings[0],
      /^ground truth value at net is not found .*dropped as page furniture.*--no-margins keeps it$/,
    );
  });
});

describe('sob judge on records whose values are normalised from the context', () => {
  test('ten records pass the grounding check and reach the judge (ten requests); the absent value is rejected, naming --allow-ungrounded', async () => {
    const records = join(tmp, 'records.jsonl');
    const absent = invoice(10 - 1, {
      seller: 'Harbour Supplies Ltd',
      invoice_date: '2024-12-25',
      total: '16320',
      net: '15320.5',
    }).replace('"inv-9"', '"inv-absent"');
    writeFileSync(records, `${[...Array.from({ length: 10 }, (_, i) => invoice(i)), absent].join('\n')}\n`);
    script = (r) => (r.model === 'judge' ? { kind: 'answer', text: judgeAnswer } : { kind: 'drop' });
    const before = server.total;
    const r = await sob(['judge', records, '--judge', 'openai:judge', '--out', 'judged', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.total - before, 10);
    assert.deepEqual(
      server.requests
        .slice(before)
        .map((q) => q.key)
        .sort(),
      Array.from({ length: 10 }, (_, i) => `inv-${i}`).sort(),
    );
    assert.match(
      r.stdout,
      /^10 accepted, 1 rejected \(1 by the checks: 1 for ground-truth values not found in the context \(--allow-ungrounded keeps them\), 0 judge errors\)/,
    );
    // 11 records x 4 values: the seller as written, 11 dates, 22 numbers; one date not found.
    assert.match(
      r.stderr,
      /grounding: 11 values found as written, 32 after a normaliser \(date 10, number 22, near match 0\), 1 not found/,
    );
    const rejected = lines(join(tmp, 'judged/rejected.jsonl'));
    assert.deepEqual(
      rejected.map((x) => [x.record_id, x.stage, x.reasons]),
      [
        [
          'inv-absent',
          'checks',
          [
            'ground truth value at invoice_date is not found in the context (no normaliser matched: tried as written, as a date 2024-12-25)',
          ],
        ],
      ],
    );
    // --allow-ungrounded keeps it: the eleventh record is judged too.
    const kept = await sob([
      'judge',
      records,
      '--judge',
      'openai:judge',
      '--out',
      'judged-all',
      '--allow-ungrounded',
      ...base(),
    ]);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, /^11 accepted, 0 rejected \(0 by the checks, 0 judge errors\)/);
  });

  test('a reviewer that gives no valid answer flags the records and keeps them; --reject-flagged rejects them', async () => {
    const records = join(tmp, 'three.jsonl');
    writeFileSync(records, `${[0, 1, 2].map((i) => invoice(i)).join('\n')}\n`);
    script = (r) =>
      r.model === 'judge'
        ? { kind: 'answer', text: judgeAnswer }
        : { kind: 'answer', text: 'not json at all' };
    const args = ['judge', records, '--judge', 'openai:judge', '--reviewer', 'openai:reviewer', ...base()];
    const r = await sob([...args, '--out', 'reviewed']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^3 accepted, 0 rejected \(0 by the checks, 0 judge errors, 3 flagged by the reviewer \(3 where the reviewer gave no valid answer\), kept \(--reject-flagged rejects them\)\)/,
    );
    const strict = await sob([...args, '--out', 'reviewed-strict', '--reject-flagged']);
    assert.equal(strict.code, 0, strict.stderr);
    assert.match(
      strict.stdout,
      /^0 accepted, 3 rejected \(.*3 flagged by the reviewer .*rejected \(--reject-flagged\)\)/,
    );
    const rejected = lines(join(tmp, 'reviewed-strict/rejected.jsonl'));
    assert.deepEqual(
      rejected.map((x) => x.stage),
      ['reviewer', 'reviewer', 'reviewer'],
    );
    assert.match(rejected[0].reasons[0], /^reviewer error \(review:openai:reviewer\): /);
  });

  test("--judge-prompt <file> replaces the judge's instructions; the record is sent as before", async () => {
    const records = join(tmp, 'one.jsonl');
    writeFileSync(records, `${invoice(0)}\n`);
    const prompt = join(tmp, 'prompt.txt');
    writeFileSync(prompt, 'Score invoices strictly. Reply with the JSON object only.\n');
    script = () => ({ kind: 'answer', text: judgeAnswer });
    const before = server.total;
    const r = await sob([
      'judge',
      records,
      '--judge',
      'openai:judge',
      '--judge-prompt',
      prompt,
      '--out',
      'custom',
      ...base(),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const seen = server.requests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].systemText, 'Score invoices strictly. Reply with the JSON object only.\n');
    assert.match(seen[0].userText, /Harbour Supplies Ltd/);
    const judgment = JSON.parse(readFileSync(join(tmp, 'custom/judgments.jsonl'), 'utf8').trim());
    assert.notEqual(judgment.template_sha256, undefined);
    const missing = await sob([
      'judge',
      records,
      '--judge',
      'openai:judge',
      '--judge-prompt',
      join(tmp, 'nope.txt'),
      '--out',
      'x',
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--judge-prompt .*nope\.txt: cannot be read/);
  });
});
