/**
 * `sob leaderboard` with lenient summaries, through the real command, on a folder built here with
 * numbers chosen so every figure can be worked by hand: the lenient columns beside the exact
 * ones, the gap and its share of the loss, the rank shifts, and `--sensitivity` (ranks under
 * exact, lenient and lenient-without-judge scores, Kendall's tau between each pair, the movers).
 *
 * Five image models, 10 records each; every metric but Value Accuracy and Faithfulness is 0.8
 * (Perfect 0.1), so Overall orders by VA + Faithfulness:
 *
 *   model  VA    Faith  | lenient VA  Faith | without judge VA  Faith
 *   A      0.60  0.70   | 0.62        0.72  | (no judge)
 *   B      0.55  0.65   | 0.70        0.80  | (no judge)
 *   C      0.50  0.60   | 0.58        0.68  | 0.52  0.62
 *   D      0.45  0.55   | 0.66        0.76  | 0.50  0.60
 *   E      0.40  0.50   | (not scored with --match)
 *
 * Ranks (A-D): exact A B C D; lenient B D A C; without judge B A C D.
 * tau(exact, lenient) = (3 - 3) / 6 = 0; tau(exact, without) = (5 - 1) / 6 = 0.667;
 * tau(lenient, without) = (4 - 2) / 6 = 0.333.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sob } from '../report/run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-lenient-lb-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const METRICS = [
  'json_parse_success',
  'json_root_structured',
  'schema_valid_input',
  'schema_compliance',
  'leaf_value_em',
  'value_token_f1',
  'hier_path_recall',
  'path_set_f1',
  'type_precision',
  'strict_json_em',
];

function block(means: Record<string, number>) {
  const metrics: Record<string, unknown> = {};
  for (const [k, mean] of Object.entries(means))
    metrics[k] = { mean, ci95_low: mean - 0.05, ci95_high: mean + 0.05, metric_name: k };
  return { overall: { n: 10, metrics }, overall_weighted: { n: 10, metrics } };
}

function lenient(va: number, faith: number) {
  return {
    lenient_value_accuracy: va,
    lenient_faithfulness: faith,
    field_precision: va,
    field_recall: va,
    field_f1: va,
    value_accuracy_gap: 0,
  };
}

const MODELS: [string, number, number, [number, number] | null, [number, number] | null][] = [
  ['A', 0.6, 0.7, [0.62, 0.72], null],
  ['B', 0.55, 0.65, [0.7, 0.8], null],
  ['C', 0.5, 0.6, [0.58, 0.68], [0.52, 0.62]],
  ['D', 0.45, 0.55, [0.66, 0.76], [0.5, 0.6]],
  ['E', 0.4, 0.5, null, null],
];

const evalDir = join(tmp, 'evaluation');
before(() => {
  writeFileSync(
    join(tmp, 'manifest.json'),
    JSON.stringify({ sources: { image: { records: 10, weight: 20 } } }),
  );
  for (const [model, va, faith, len, nj] of MODELS) {
    const means: Record<string, number> = {};
    for (const k of METRICS) means[k] = 0.8;
    means.leaf_value_em = va;
    means.value_token_f1 = faith;
    means.strict_json_em = 0.1;
    const summary: Record<string, unknown> = {
      response_file: `${model}.jsonl`,
      num_records: 10,
      model_ids: [model],
      data_quality: {},
      summary: block(means),
    };
    if (len) {
      const l = lenient(len[0], len[1]);
      l.value_accuracy_gap = len[0] - va;
      summary.lenient = {
        policy: 'default',
        judge: nj ? 'openai:judge-1' : null,
        summary: block(l),
        ...(nj ? { without_judge: block(lenient(nj[0], nj[1])) } : {}),
      };
    }
    mkdirSync(join(evalDir, 'image', model), { recursive: true });
    writeFileSync(join(evalDir, 'image', model, 'eval_summary.json'), JSON.stringify(summary, null, 2));
  }
});

const lb = (...args: string[]) =>
  sob('leaderboard', evalDir, '--manifest', join(tmp, 'manifest.json'), ...args);

test('the leaderboard JSON carries exact and lenient side by side: gap, share of the loss, ranks, shift', () => {
  const r = lb('--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as {
    model: string;
    overall: number;
    value_accuracy: number;
    lenient?: Record<string, number | null>;
  }[];
  assert.deepEqual(
    rows.map((x) => x.model),
    ['A', 'B', 'C', 'D', 'E'],
  );
  const by = new Map(rows.map((x) => [x.model, x]));
  const d = by.get('D')!.lenient!;
  assert.ok(Math.abs((d.value_accuracy as number) - 0.66) < 1e-12);
  assert.ok(Math.abs((d.gap as number) - 0.21) < 1e-12);
  assert.ok(Math.abs((d.gap_share as number) - 0.21 / 0.55) < 1e-12);
  // Lenient Overall: (0.66 + 0.76 + 4 x 0.8 + 0.1) / 7, coverage 1.
  assert.ok(Math.abs((d.overall as number) - (0.66 + 0.76 + 3.2 + 0.1) / 7) < 1e-12);
  assert.deepEqual(
    ['A', 'B', 'C', 'D'].map((m) => [
      by.get(m)!.lenient!.rank_exact,
      by.get(m)!.lenient!.rank_lenient,
      by.get(m)!.lenient!.rank_shift,
    ]),
    [
      [1, 3, -2],
      [2, 1, 1],
      [3, 4, -1],
      [4, 2, 2],
    ],
  );
  assert.equal(by.get('E')!.lenient, undefined);
  assert.match(r.stderr, /1 of 5 models have no lenient scores/);
});

test('the table, Markdown and CSV show the lenient columns beside Val.Acc., and tau in the footer', () => {
  const t = lb();
  assert.equal(t.status, 0, t.stderr);
  const lines = t.stdout.split('\n');
  assert.match(lines[0], /Overall\s+Val\.Acc\.\s+Len\.VA\s+Gap\s+Len\.Overall\s+Shift\s+Faithful\./);
  const d = lines.find((l) => /^4\s+D\s/.test(l))!;
  assert.match(d, /0\.450\s+0\.660\s+\+0\.210\s+0\.674\s+\+2\s+0\.550/);
  const e = lines.find((l) => /^5\s+E\s/.test(l))!;
  assert.match(e, /0\.400\s+-\s+-\s+-\s+-\s+0\.500/);
  assert.match(t.stdout, /Kendall's tau between the two rankings 0\.000/);
  const md = lb('--format', 'md');
  assert.match(
    md.stdout,
    /\| # \| Model \| Overall \| Val\.Acc\. \| Len\.VA \| Gap \| Len\.Overall \| Shift \|/,
  );
  assert.match(md.stdout, /\| 2 \| B \| [0-9.]+ \| 0\.550 \| 0\.700 \| \+0\.150 \| [0-9.]+ \| \+1 \|/);
  const csv = lb('--format', 'csv');
  // Cells may be quoted (the totals hold commas).
  const cells = (line: string) =>
    [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].map((m) => m[1]).slice(0, -1);
  const [head, ...body] = csv.stdout.trim().split('\n');
  const cols = cells(head);
  const a = cells(body[0]);
  assert.equal(a[cols.indexOf('model')], 'A');
  assert.equal(Number(a[cols.indexOf('value_accuracy_gap')]).toFixed(6), '0.020000');
  assert.equal(a[cols.indexOf('rank_shift')], '-2');
  assert.equal(a[cols.indexOf('lenient_policy')], 'default');
});

test('--sensitivity: ranks under exact, lenient and lenient without judge; tau between each pair; the movers', () => {
  const r = lb('--sensitivity', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  assert.equal(s.rank_by, 'overall');
  const tau = Object.fromEntries(
    s.tau.map((t: { a: string; b: string; tau: number }) => [`${t.a}~${t.b}`, t.tau]),
  );
  assert.equal(tau['exact~lenient'], 0);
  assert.ok(Math.abs(tau['exact~lenient_without_judge'] - 4 / 6) < 1e-12);
  assert.ok(Math.abs(tau['lenient~lenient_without_judge'] - 2 / 6) < 1e-12);
  assert.deepEqual(
    s.models.map((m: { model: string; ranks: Record<string, number>; max_shift: number }) => [
      m.model,
      m.ranks.exact,
      m.ranks.lenient,
      m.ranks.lenient_without_judge,
      m.max_shift,
    ]),
    [
      ['A', 1, 3, 2, 2],
      ['D', 4, 2, 4, 2],
      ['B', 2, 1, 1, 1],
      ['C', 3, 4, 3, 1],
    ],
  );
  assert.deepEqual(s.left_out, ['E']);
  const t = lb('--sensitivity');
  assert.equal(t.status, 0, t.stderr);
  assert.match(t.stdout, /Kendall's tau-b, exact vs lenient: 0\.000 over 4 models/);
  assert.match(t.stdout, /Kendall's tau-b, exact vs lenient_without_judge: 0\.667 over 4 models/);
  assert.match(t.stdout, /Kendall's tau-b, lenient vs lenient_without_judge: 0\.333 over 4 models/);
  assert.match(
    t.stdout,
    /Models whose rank moves .*: A \(1 \/ 3 \/ 2\), D \(4 \/ 2 \/ 4\), B \(2 \/ 1 \/ 1\), C \(3 \/ 4 \/ 3\)/,
  );
  assert.match(t.stdout, /Left out .*: E/);
});

test('--sensitivity --rank-by value_accuracy, and a folder without lenient scores is one clear line', () => {
  const r = lb('--sensitivity', '--rank-by', 'value_accuracy', '--format', 'json');
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  // By Value Accuracy alone: exact A B C D; lenient B D A C; without judge B A C D (the same).
  assert.deepEqual(
    s.models.map((m: { model: string; ranks: Record<string, number> }) => [m.model, m.ranks.lenient]),
    [
      ['A', 3],
      ['D', 2],
      ['B', 1],
      ['C', 4],
    ],
  );
  const plain = join(tmp, 'plain');
  mkdirSync(join(plain, 'image'), { recursive: true });
  cpSync(join(evalDir, 'image', 'E'), join(plain, 'image', 'E'), { recursive: true });
  const none = sob('leaderboard', plain, '--sensitivity');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /^sob: no lenient scores under .*: score the responses with sob score --match/m);
  const usage = lb('--rank-by', 'overall');
  assert.equal(usage.status, 2);
});
