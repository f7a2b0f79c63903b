/**
 * One count per thing (issue 32, item 6): `sob eval` against the local OpenAI server on records the
 * test writes. A text invoice that lost one line item (11 of its 14 leaves right) is zeroed by the
 * coverage gate and filed under "coverage gate" in the taxonomy, not "missing paths"; a code-fenced
 * answer and one with text after it parse after recovery and are counted as such, not as parse
 * failures, so JSON Pass and the Data quality counts agree; the leaderboard footer explains the gate.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';
import { type ProtocolServer, startProtocolServer } from '../kit/protocol-server.ts';
import { reportData } from './run.ts';

const ITEMS = [
  { desc: 'Bolts', qty: 10, amount: 12.5 },
  { desc: 'Nuts', qty: 20, amount: 8 },
  { desc: 'Washers', qty: 30, amount: 4.5 },
  { desc: 'Screws', qty: 40, amount: 16 },
];
const INVOICE = { invoice_no: 'INV-7', total: 41, line_items: ITEMS }; // 2 + 4 x 3 = 14 leaves
const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    invoice_no: { type: 'string' },
    total: { type: 'number' },
    line_items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { desc: { type: 'string' }, qty: { type: 'integer' }, amount: { type: 'number' } },
      },
    },
  },
  required: ['invoice_no', 'total', 'line_items'],
};
const ID_SCHEMA = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

const ANSWERS: Record<string, string> = {
  fenced: '```json\n{"id":"fenced"}\n```',
  trailing: '{"id":"trailing"}\nThat is the id.',
  plain: '{"id":"plain"}',
  prose: 'I could not find an id.',
  inv: JSON.stringify({ ...INVOICE, line_items: ITEMS.slice(0, 3) }),
};

let tmp: string;
let server: ProtocolServer;
let dir: string;
let code: number | null;
let stderr: string;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-counts-'));
  server = await startProtocolServer({
    script: (seen) => ({ kind: 'answer', text: ANSWERS[seen.key ?? ''] ?? '{}' }),
  });
  const record = (id: string, schema: object, gt: object, context = `Record [rid:${id}] holds ${id}.`) =>
    JSON.stringify({
      metadata: { record_id: id, schema_complexity: 'easy', source: 'text' },
      input: { context, question: 'Extract it.', json_schema: schema },
      output: { ground_truth: gt },
    });
  const lines = ['fenced', 'trailing', 'plain', 'prose'].map((id) => record(id, ID_SCHEMA, { id }));
  lines.push(
    record(
      'inv',
      INVOICE_SCHEMA,
      INVOICE,
      `[rid:inv] Invoice INV-7. Bolts 10 12.5; Nuts 20 8; Washers 30 4.5; Screws 40 16. Total 41.`,
    ),
  );
  const file = join(tmp, 'bench.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  dir = join(tmp, 'ev');
  process.env.OPENAI_API_KEY = 'sk-counts';
  process.env.OPENAI_BASE_URL = server.openaiBaseUrl;
  const r = await sobIn([
    'eval',
    file,
    '--model',
    'openai:m1',
    '--eval-dir',
    dir,
    '--bootstrap-samples',
    '50',
  ]);
  code = r.code;
  stderr = r.stderr;
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

type Taxa = { n: number; classes: Record<string, { count: number; examples: string[] }> };
interface Report {
  taxonomy: [number, string, Taxa][];
  quality: { source: string; n: number; parseFailures: number | null; recovered: number | null }[];
}

test('a text record gated to Value Accuracy 0 by the coverage gate is filed under coverage gate, not missing paths', () => {
  assert.equal(code, 0, stderr);
  const rows = readFileSync(join(dir, 'evaluation/text/openai_m1/eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const inv = rows.find((r) => r.record_id === 'inv');
  assert.equal(inv.hier_path_recall, 11 / 14);
  assert.equal(inv.leaf_value_em, 0);
  assert.equal(inv.explanation.coverage_gate, 0);
  const D = reportData<Report>(join(dir, 'report.html'));
  const [, source, t] = D.taxonomy[0];
  assert.equal(source, 'text');
  assert.equal(t.n, 5);
  assert.equal(t.classes.coverage_gate.count, 1);
  assert.deepEqual(t.classes.coverage_gate.examples, ['inv']);
  assert.equal(t.classes.missing_paths.count, 0);
  assert.equal(t.classes.parse_failure.count, 1); // the prose answer only
  assert.equal(t.classes.correct.count, 3); // fenced, trailing, plain
});

test('answers that parsed after recovery are counted as such: JSON Pass and the Data quality counts agree', () => {
  const s = JSON.parse(readFileSync(join(dir, 'evaluation/text/openai_m1/eval_summary.json'), 'utf8'));
  assert.equal(s.data_quality.json_parse_fail_count, 1);
  assert.equal(s.data_quality.lenient_parse_count, 2);
  const lb = JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8'));
  const row = (Array.isArray(lb) ? lb : lb.rows)[0];
  // 4 of 5 valid: every answer but the one parse failure.
  assert.equal(row.json_pass, 0.8);
  assert.equal(row.data_quality.text.lenient_parse_count, 2);
  const q = reportData<Report>(join(dir, 'report.html')).quality[0];
  assert.deepEqual([q.n, q.parseFailures, q.recovered], [5, 1, 2]);
  assert.equal(row.json_pass * q.n, q.n - (q.parseFailures ?? 0));
});

test('the leaderboard footer explains the coverage gate and names the recovered answers', () => {
  const md = readFileSync(join(dir, 'leaderboard.md'), 'utf8');
  assert.match(
    md,
    /Coverage gate: Value Accuracy and Faithfulness are multiplied by a gate on Structure Coverage/,
  );
  assert.match(md, /text scores 0 below 0\.95/);
  assert.match(
    md,
    /Parsed after recovery \(a code fence or text around the JSON removed; scored, not parse failures\): openai_m1 text 2\./,
  );
});
