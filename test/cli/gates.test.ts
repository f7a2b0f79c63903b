/**
 * CI gates (docs/ci.md): `--fail-under` and `--fail-on-regression` on `sob score`,
 * `sob leaderboard` and `sob eval` exit 3 with one line per failed gate when a gate fails and 0
 * when it holds, and write a Markdown summary. Every command is the real `sob` on data written here.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-gates-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** `sob <args>` in this process (test/kit/cli.ts), in the test's folder, without provider keys. */
async function sob(...args: string[]) {
  const r = await sobIn(args, { cwd: tmp, env: { OPENAI_API_KEY: '', GEMINI_API_KEY: '' } });
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

const N = 30;
const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, year: { type: 'integer' } },
  required: ['name', 'year'],
  additionalProperties: false,
};

function record(i: number) {
  return {
    metadata: { record_id: `r${String(i).padStart(2, '0')}`, source: 'text', schema_complexity: 'easy' },
    input: { context: `Item ${i} was made in ${1900 + i}.`, question: 'Name and year?', json_schema: SCHEMA },
    output: { ground_truth: { name: `item ${i}`, year: 1900 + i } },
  };
}

/** A response file: every answer right, or the year wrong on the first `wrong` records. */
function responses(file: string, wrong: number): void {
  const lines = Array.from({ length: N }, (_, i) => {
    const r = record(i);
    const year = i < wrong ? 1800 : 1900 + i;
    return JSON.stringify({
      ...r,
      metadata: { ...r.metadata, model_id: 'm' },
      output: { ...r.output, candidate_response: { name: `item ${i}`, year } },
    });
  });
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}

// One model, two versions: the baseline answers all 30 right, the candidate gets 18 years wrong.
responses(join(tmp, 'before/response_m.jsonl'), 0);
responses(join(tmp, 'after/response_m.jsonl'), 18);
// The same model a little worse (2 of 30): not a significant regression after Holm's correction.
responses(join(tmp, 'slight/response_m.jsonl'), 2);

test('sob score --fail-under: exit 3 with one line per failed gate, 0 when every minimum holds', async () => {
  const base = await sob(
    'score',
    'before/response_m.jsonl',
    '--out',
    'ev-before',
    '--bootstrap-samples',
    '0',
  );
  assert.equal(base.status, 0, base.stderr);
  // after: 18 records with 1 of 2 leaves wrong: Value Accuracy = (12 + 18 x 0.5) / 30 = 0.700,
  // Faithfulness the same ("1800" shares no token with "1918"), Perfect Response 12/30 = 0.400
  const fail = await sob(
    'score',
    'after/response_m.jsonl',
    '--out',
    'ev-after',
    '--bootstrap-samples',
    '0',
    '--fail-under',
    'value_accuracy=0.80,json_pass=0.9',
    '--fail-under',
    'faithfulness=0.75',
  );
  assert.equal(fail.status, 3, fail.stderr);
  const lines = fail.stderr.split('\n').filter((l) => l.startsWith('gate failed'));
  assert.deepEqual(lines, [
    'gate failed: text/m: value_accuracy 0.700 < 0.8',
    'gate failed: text/m: faithfulness 0.700 < 0.75',
  ]);
  const hold = await sob(
    'score',
    'after/response_m.jsonl',
    '--out',
    'ev-after',
    '--bootstrap-samples',
    '0',
    '--fail-under',
    'value_accuracy=0.70',
    '--fail-under',
    'leaf_value_em=0.7,json_pass=1',
  );
  assert.equal(hold.status, 0, hold.stderr);
  assert.match(hold.stderr, /gates: all 3 checks hold/);
});

test('a bad --fail-under is a usage error (exit 2) naming the item, before anything is scored', async () => {
  const r = await sob(
    'score',
    'after/response_m.jsonl',
    '--out',
    'ev-x',
    '--fail-under',
    'value_acuracy=0.8',
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown metric "value_acuracy"/);
  const o = await sob('score', 'after/response_m.jsonl', '--out', 'ev-x', '--fail-under', 'overall=0.8');
  assert.equal(o.status, 2);
  assert.match(o.stderr, /overall: a leaderboard figure/);
  const v = await sob('leaderboard', 'ev-before', '--fail-under', 'value_accuracy=80');
  assert.equal(v.status, 2);
  assert.match(v.stderr, /from 0 to 1/);
});

test('--fail-on-regression: exit 3 when a metric is significantly worse, 0 against itself and for a slight dip', async () => {
  // score: the 18 wrong years are a significant drop of Value Accuracy (1.000 -> 0.700).
  const r = await sob(
    'score',
    'after/response_m.jsonl',
    '--out',
    'ev-after',
    '--bootstrap-samples',
    '0',
    '--fail-on-regression',
    'ev-before',
    '--gate-summary',
    'gates.md',
  );
  assert.equal(r.status, 3, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('gate failed'));
  assert.ok(
    lines.some((l) => l.startsWith('gate failed: text/m: value_accuracy regressed 1.000 -> 0.700 (-0.300')),
    lines.join('\n'),
  );
  // Perfect Response falls the same way; JSON Pass, Path Recall, Structure Coverage, Type Safety do not move.
  assert.equal(lines.length, 3, lines.join('\n')); // value accuracy, faithfulness, perfect
  const md = readFileSync(join(tmp, 'gates.md'), 'utf8');
  assert.match(md, /^### ❌ sob: 3 gates failed/);
  assert.match(md, /\| ❌ \| text\/m \| Value Accuracy \| 30 \| 1\.000 \| 0\.700 \| -0\.300 \|/);
  assert.match(md, /7 tests Holm-corrected together/);
  assert.match(md, /4 other tests: no change/);

  // leaderboard: the same verdict from the folders alone.
  const lb = await sob('leaderboard', 'ev-after', '--fail-on-regression', 'ev-before', '--format', 'json');
  assert.equal(lb.status, 3, lb.stderr);
  assert.equal(lb.stderr.split('\n').filter((l) => l.startsWith('gate failed')).length, 3);
  assert.equal(JSON.parse(lb.stdout)[0].value_accuracy, 0.7); // the table is still printed

  const same = await sob('leaderboard', 'ev-before', '--fail-on-regression', 'ev-before');
  assert.equal(same.status, 0, same.stderr);
  assert.match(same.stderr, /gates: all 7 checks hold/);

  // 2 wrong of 30: lower, but p after Holm over 7 tests is not below 0.05.
  const s = await sob(
    'score',
    'slight/response_m.jsonl',
    '--out',
    'ev-slight',
    '--bootstrap-samples',
    '0',
    '--fail-on-regression',
    'ev-before',
  );
  assert.equal(s.status, 0, s.stderr);
});

test('sob eval: --fail-under fails the skeleton baseline (exit 3) and holds for gold; regression against itself holds', async () => {
  const bench = join(tmp, 'bench');
  mkdirSync(bench, { recursive: true });
  writeFileSync(
    join(bench, 'records.jsonl'),
    `${Array.from({ length: 6 }, (_, i) => JSON.stringify(record(i))).join('\n')}\n`,
  );
  const common = ['--benchmark', 'bench/records.jsonl', '--bootstrap-samples', '0', '--no-report'];
  const gold = await sob(
    'eval',
    '--model',
    'baseline:gold',
    '--eval-dir',
    'e-gold',
    ...common,
    '--fail-under',
    'value_accuracy=0.8',
  );
  assert.equal(gold.status, 0, gold.stderr);
  const md = readFileSync(join(tmp, 'e-gold/gate-summary.md'), 'utf8');
  assert.match(md, /^### ✅ sob: every gate holds/);
  assert.match(md, /\| ✅ \| baseline_gold \| Value Accuracy \| 1\.000 \| 0\.8 \|/);

  const sk = await sob(
    'eval',
    '--model',
    'baseline:skeleton',
    '--eval-dir',
    'e-sk',
    ...common,
    '--fail-under',
    'value_accuracy=0.8',
  );
  assert.equal(sk.status, 3, sk.stderr);
  assert.match(sk.stderr, /^gate failed: baseline_skeleton: value_accuracy 0\.000 < 0\.8$/m);

  const again = await sob(
    'eval',
    '--model',
    'baseline:gold',
    '--eval-dir',
    'e-gold',
    ...common,
    '--fail-on-regression',
    'e-gold',
  );
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stderr, /gates: all 7 checks hold/);
});

test('--fail-on-regression with no such folder: exit 2 before anything is asked or scored', async () => {
  const r = await sob(
    'eval',
    '--model',
    'baseline:gold',
    '--benchmark',
    'bench/records.jsonl',
    '--eval-dir',
    'e-typo',
    '--fail-on-regression',
    'e-gld',
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^sob: --fail-on-regression: no such folder: e-gld$/m);
  assert.equal(existsSync(join(tmp, 'e-typo/runs')), false);
});
