/**
 * `--no-fields` (issue 33): `sob score` and `sob eval` write no `fields.jsonl` (no empty file
 * either) and every other file byte for byte as with it; the readers cope with a folder without
 * one: the field gates stop in one line naming the folder (exit 2), `sob compare` says why it
 * shows no field flips, `sob export` writes the records, the leaderboard and the report are
 * written. The real `sob` on response files and a benchmark this test writes (worker threads).
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { before, test } from 'node:test';
import { INVOICE_SCHEMA as SCHEMA } from '../fields/invoice-schema.ts';
import { sobIn, tempDir } from '../kit/index.ts';

const tmp = tempDir('sob-no-fields-');
const responses = join(tmp, 'responses');
const withFields = join(tmp, 'with');
const without = join(tmp, 'without');

/** Record i's gold: 2 + (i % 3) line items, so 2 + 2 * (2 + i % 3) leaves. */
function gold(i: number) {
  const items = Array.from({ length: 2 + (i % 3) }, (_, k) => ({ sku: `S${i}-${k}`, amount: 10 * k + i }));
  return { total: 100 + i, due_date: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}`, line_items: items };
}

/** alpha: a wrong total on every third record; beta: a wrong date on every second. */
function answer(model: string, i: number) {
  const g = gold(i);
  if (model === 'alpha' && i % 3 === 0) return { ...g, total: g.total + 1 };
  if (model === 'beta' && i % 2 === 0) return { ...g, due_date: 'never' };
  return g;
}

const N = 60;
const leavesOf = (i: number) => 2 + 2 * (2 + (i % 3));

/** Files under a folder, relative, sorted. */
function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)));
  };
  walk(dir);
  return out.sort();
}

before(() => {
  mkdirSync(responses, { recursive: true });
  for (const m of ['alpha', 'beta'])
    writeFileSync(
      join(responses, `${m}.jsonl`),
      `${Array.from({ length: N }, (_, i) =>
        JSON.stringify({
          metadata: { record_id: `r${i}`, model_id: m, source: 'text', schema_complexity: 'hard' },
          input: {
            context: `invoice r${i} · ünïcode`,
            question: 'Extract the invoice.',
            json_schema: SCHEMA,
          },
          output: { ground_truth: gold(i), candidate_response: answer(m, i) },
        }),
      ).join('\n')}\n`,
    );
});

const score = (out: string, ...more: string[]) =>
  sobIn(['score', responses, '--out', out, '--bootstrap-samples', '50', '--jobs', '2', ...more]);

test('sob score --no-fields: no fields.jsonl, the rows and the summary byte for byte as with it', async () => {
  const a = await score(withFields);
  assert.equal(a.code, 0, a.stderr);
  const b = await score(without, '--no-fields');
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, a.stdout);
  const fa = files(withFields);
  const fb = files(without);
  assert.deepEqual(
    fa.filter((f) => f.endsWith('fields.jsonl')),
    ['text/alpha/fields.jsonl', 'text/beta/fields.jsonl'],
  );
  // The same files less fields.jsonl (no empty one).
  assert.deepEqual(
    fb,
    fa.filter((f) => !f.endsWith('fields.jsonl')),
  );
  for (const f of fb) assert.ok(readFileSync(join(without, f)).equals(readFileSync(join(withFields, f))), f);
  const rows = readFileSync(join(without, 'text/alpha/eval_records.jsonl'), 'utf8').trim().split('\n');
  assert.equal(rows.length, N);
  // With fields: one line per record and gold leaf.
  const leaves = Array.from({ length: N }, (_, i) => leavesOf(i)).reduce((x, y) => x + y, 0);
  assert.equal(
    readFileSync(join(withFields, 'text/alpha/fields.jsonl'), 'utf8').trim().split('\n').length,
    leaves,
  );
});

test('field gates: --no-fields with field: refused before scoring; a folder without fields.jsonl: one line, exit 2', async () => {
  const never = join(tmp, 'never');
  const r = await score(never, '--no-fields', '--fail-under', 'field:total=0.5');
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /--fail-under field:total reads fields\.jsonl, which --no-fields does not write/);
  assert.equal(existsSync(never), false, 'nothing scored');

  const lb = await sobIn(['leaderboard', without, '--format', 'json', '--fail-under', 'field:total=0.5']);
  assert.equal(lb.code, 2, lb.stderr);
  const errors = lb.stderr.split('\n').filter((l) => l.startsWith('sob:'));
  assert.equal(errors.length, 1, lb.stderr);
  assert.equal(
    errors[0],
    `sob: --fail-under field:total: ${join(without, 'text', 'alpha')} has no fields.jsonl (scored with --no-fields, or before fields.jsonl existed): the field gates read it; score it again without --no-fields (and 1 more folder)`,
  );
  // With fields.jsonl the same gate is checked: alpha's total is right on 40 of 60 records.
  const ok = await sobIn(['leaderboard', withFields, '--format', 'json', '--fail-under', 'field:total=0.6']);
  assert.equal(ok.code, 0, ok.stderr);
  const bad = await sobIn(['leaderboard', withFields, '--format', 'json', '--fail-under', 'field:total=0.7']);
  assert.equal(bad.code, 3, bad.stderr);
  assert.match(bad.stderr, /gate failed: alpha: field total accuracy 0\.667 < 0\.7 \(n 60\)/);
  // sob score checks a field gate on the folders it wrote (under <source>/<model>).
  const scored = await score(join(tmp, 'gated'), '--fail-under', 'field:due_date=0.6');
  assert.equal(scored.code, 3, scored.stderr);
  assert.match(scored.stderr, /gate failed: text\/beta: field due_date accuracy 0\.500 < 0\.6 \(n 60\)/);
  assert.doesNotMatch(scored.stderr, /gate failed: text\/alpha/);
});

test('sob compare, export, leaderboard and report on folders without fields.jsonl', async () => {
  const c = await sobIn([
    'compare',
    join(without, 'text', 'alpha'),
    join(without, 'text', 'beta'),
    '--samples',
    '100',
  ]);
  assert.equal(c.code, 0, c.stderr);
  assert.match(
    c.stdout,
    /field flips: .*text\/alpha has no fields\.jsonl \(scored with --no-fields, or before fields\.jsonl existed\): no field flips shown; score it again without --no-fields/,
  );
  // Record flips still: alpha wrong on every third record, beta on every second.
  assert.match(
    c.stdout,
    /Records that flip \(of 60 both answered; [^)]*\): 20 right in A \(alpha\) only, 10 right in B \(beta\) only/,
  );
  const cj = await sobIn([
    'compare',
    join(without, 'text', 'alpha'),
    join(without, 'text', 'beta'),
    '--format',
    'json',
    '--samples',
    '100',
  ]);
  assert.equal(cj.code, 0, cj.stderr);
  assert.equal(JSON.parse(cj.stdout).field_flips, undefined);

  const out = join(tmp, 'export');
  const e = await sobIn(['export', without, '--format', 'parquet', '--out', out]);
  assert.equal(e.code, 0, e.stderr);
  assert.match(
    e.stderr,
    /2 of 2 folders have no fields\.jsonl \(scored with --no-fields, or before it existed\)/,
  );
  assert.ok(existsSync(join(out, 'records.parquet')), files(out).join(', '));

  const lb = await sobIn(['leaderboard', without, '--format', 'md']);
  assert.equal(lb.code, 0, lb.stderr);
  assert.match(lb.stdout, /alpha/);
  assert.doesNotMatch(lb.stdout, /Which fields to trust/);
  const html = join(tmp, 'report.html');
  const rep = await sobIn(['report', without, '--out', html]);
  assert.equal(rep.code, 0, rep.stderr);
  assert.ok(readFileSync(html, 'utf8').length > 1000);
});

test('sob eval --no-fields: rescoring an eval directory drops fields.jsonl, every other file the same', async () => {
  const bench = join(tmp, 'bench', 'records.jsonl');
  mkdirSync(join(tmp, 'bench'));
  writeFileSync(
    bench,
    `${Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({
        metadata: { record_id: `b${i}`, source: 'text', schema_complexity: 'hard' },
        input: { context: `invoice b${i}`, question: 'Extract the invoice.', json_schema: SCHEMA },
        output: { ground_truth: gold(i) },
      }),
    ).join('\n')}\n`,
  );
  const dir = join(tmp, 'eval');
  const args = [
    'eval',
    '--benchmark',
    bench,
    '--eval-dir',
    dir,
    '--model',
    'baseline:gold',
    '--model',
    'baseline:skeleton',
    '--bootstrap-samples',
    '50',
  ];
  const a = await sobIn(args);
  assert.equal(a.code, 0, a.stderr);
  const evaluation = join(dir, 'evaluation');
  const first = join(tmp, 'eval-first');
  cpSync(evaluation, first, { recursive: true });
  assert.ok(existsSync(join(first, 'text', 'baseline_gold', 'fields.jsonl')));
  // The same command again with --no-fields: the answers resumed, the folders scored anew.
  const b = await sobIn([...args, '--no-fields']);
  assert.equal(b.code, 0, b.stderr);
  const fa = files(first);
  const fb = files(evaluation);
  assert.deepEqual(
    fa.filter((f) => f.endsWith('fields.jsonl')),
    ['text/baseline_gold/fields.jsonl', 'text/baseline_skeleton/fields.jsonl'],
  );
  assert.deepEqual(
    fb,
    fa.filter((f) => !f.endsWith('fields.jsonl')),
  );
  for (const f of fb.filter((x) => /eval_(records\.jsonl|summary\.json)$/.test(x)))
    assert.ok(readFileSync(join(evaluation, f)).equals(readFileSync(join(first, f))), f);
  assert.ok(existsSync(join(dir, 'report.html')));
  assert.ok(existsSync(join(dir, 'leaderboard.md')));
  // A field gate on it: refused at once (exit 2), nothing asked.
  const g = await sobIn([...args, '--no-fields', '--fail-under', 'field:total=0.5']);
  assert.equal(g.code, 2, g.stderr);
  assert.match(g.stderr, /--fail-under field:total reads fields\.jsonl, which --no-fields does not write/);
  rmSync(first, { recursive: true, force: true });
});
