/**
 * `sob eval` with no arguments, offline: the bundled corpus, the two baselines, one leaderboard.
 * The gold baseline is the ceiling; the skeleton shows the paper's gap (valid JSON, wrong values).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-eval-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

interface Row {
  model: string;
  value_accuracy: number;
  json_pass: number;
  coverage: number;
  modalities: string[];
}

function sobEval() {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'eval', '--bootstrap-samples', '100'], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, OPENAI_API_KEY: '', GEMINI_API_KEY: '' },
  });
  return r;
}

test('sob eval with no arguments scores gold at 1.0 Value Accuracy and the skeleton near 0 with full JSON Pass', () => {
  const r = sobEval();
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(readFileSync(join(tmp, 'runs/eval/leaderboard.json'), 'utf8')) as Row[];
  const gold = rows.find((x) => x.model === 'baseline_gold')!;
  const skeleton = rows.find((x) => x.model === 'baseline_skeleton')!;
  assert.equal(gold.value_accuracy, 1);
  assert.equal(gold.json_pass, 1);
  assert.equal(gold.coverage, 1);
  assert.equal(skeleton.json_pass, 1);
  assert.ok(skeleton.value_accuracy < 0.1, `skeleton value accuracy ${skeleton.value_accuracy}`);
  assert.deepEqual(gold.modalities.length >= 2, true);
  assert.match(r.stdout, /baseline_gold\s+\S+\s+1\.000/); // Overall, then Value Accuracy
  assert.ok(existsSync(join(tmp, 'runs/eval/leaderboard.md')));
  const report = readFileSync(join(tmp, 'runs/eval/report.html'), 'utf8');
  assert.match(report, /<script type="application\/json" id="sob-data">/);
  assert.doesNotMatch(report, /<script src=|<link [^>]*href="http/); // self-contained
  assert.match(r.stderr, /report: .*report\.html/);
});

test('re-running sob eval resumes: no record is asked twice, the leaderboard is the same', () => {
  const before = readFileSync(join(tmp, 'runs/eval/runs/baseline_gold/responses.jsonl'), 'utf8');
  const first = readFileSync(join(tmp, 'runs/eval/leaderboard.json'), 'utf8');
  const r = sobEval();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(join(tmp, 'runs/eval/runs/baseline_gold/responses.jsonl'), 'utf8'), before);
  assert.equal(readFileSync(join(tmp, 'runs/eval/leaderboard.json'), 'utf8'), first);
});

test('sob score on a folder of run directories scores each into its own evaluation/', () => {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/sob.js'), 'score', 'runs/eval/runs', '--bootstrap-samples', '10'],
    {
      cwd: tmp,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /baseline_gold\s+text/);
  assert.match(r.stdout, /baseline_skeleton\s+text/);
  for (const m of ['baseline_gold', 'baseline_skeleton']) {
    assert.ok(existsSync(join(tmp, 'runs/eval/runs', m, 'evaluation/text', m, 'eval_summary.json')), m);
  }
});
