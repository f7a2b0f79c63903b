/**
 * The library API as a user embeds it: `import ... from 'sob-eval'` (the package's `exports`: the
 * built JavaScript, typed by src/lib.ts). The example of docs/library.md, run end to end.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { build, compare, leaderboard, run, score } from 'sob-eval';
import { ensureBuilt, ROOT, sobAsync } from './kit/cli.ts';
import { tempDir } from './kit/temp.ts';

before(() => ensureBuilt());

test('build -> run -> score -> leaderboard -> compare through the package API: gold scores 1, gold vs gold differs by 0', async () => {
  const dir = tempDir();
  const examples = join(ROOT, 'sources/examples/text');
  const built = await build({
    kind: 'hotpotqa',
    input: join(examples, 'passages.json'),
    annotations: join(examples, 'annotations.jsonl'),
    out: join(dir, 'bench/records.jsonl'),
  });
  assert.equal(built.out, join(dir, 'bench/records.jsonl'));

  const gold = await run({ model: 'baseline:gold', benchmark: built.out, runDir: join(dir, 'gold') });
  const skeleton = await run({
    model: 'baseline:skeleton',
    benchmark: built.out,
    runDir: join(dir, 'skeleton'),
  });
  assert.equal(gold.status, 'complete');
  assert.equal(gold.progress.done, 6);

  const evaluation = join(dir, 'evaluation');
  const results = await score(
    [
      { file: join(gold.runDir, 'responses.jsonl'), modelDir: 'gold' },
      { file: join(skeleton.runDir, 'responses.jsonl'), modelDir: 'skeleton' },
    ],
    { outDir: evaluation, summary: { bootstrapSamples: 100 } },
  );
  assert.deepEqual(
    results.map((r) => r.error),
    [undefined, undefined],
  );

  const rows = await leaderboard(evaluation);
  assert.deepEqual(
    rows.map((r) => r.model),
    ['gold', 'skeleton'],
  );
  assert.equal(rows[0].value_accuracy, 1);
  assert.equal(rows[1].json_pass, 1);
  assert.ok((rows[1].value_accuracy ?? 1) < 0.2, `skeleton Value Accuracy ${rows[1].value_accuracy}`);

  const same = await compare(join(evaluation, 'text/gold'), join(evaluation, 'text/gold'), { samples: 200 });
  assert.equal(same[0].metric, 'Value Accuracy');
  assert.equal(same[0].result.n, 6);
  assert.equal(same[0].result.difference, 0);
  assert.equal(same[0].result.pValue, 1);
});

/** A run's answers by record id: what was asked and answered (timings left out). */
function answers(runDir: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const l of readFileSync(join(runDir, 'responses.jsonl'), 'utf8').trim().split('\n')) {
    const r = JSON.parse(l);
    out.set(r.metadata.record_id, { input: r.input, output: r.output });
  }
  return out;
}

test('issue 29/12: library run() and score() read a CSV of flat rows as sob run --benchmark and sob score --benchmark do', async () => {
  const dir = tempDir();
  const schema = JSON.stringify({
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
  });
  const people = [
    ['p1', 'Ann', 30, 'Paris'],
    ['p2', 'Bo', 41, 'Oslo'],
    ['p3', 'Cy', 25, 'Rome'],
    ['p4', 'Di', 52, 'Lima'],
  ] as const;
  const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const csv = join(dir, 'people.csv');
  writeFileSync(
    csv,
    `id,context,question,schema,ground_truth\n${people
      .map(
        ([id, n, a, c]) =>
          `${id},${q(`${n}, ${a}, lives in ${c}.`)},Who is it?,${q(schema)},${q(JSON.stringify({ name: n, age: a, city: c }))}`,
      )
      .join('\n')}\n`,
  );
  const cli = await sobAsync(
    ['run', '--model', 'baseline:gold', '--benchmark', csv, '--run-dir', join(dir, 'cli', 'gold')],
    { cwd: dir },
  );
  assert.equal(cli.code, 0, cli.stderr);
  const lib = await run({ model: 'baseline:gold', benchmark: csv, runDir: join(dir, 'lib', 'gold') });
  assert.equal(lib.status, 'complete');
  assert.equal(lib.progress.done, 4);
  assert.equal(lib.progress.failed, 0);
  assert.match(cli.stdout, /\tcomplete\t4\/4 answered\t0 failed/);
  const [a, b] = [answers(join(dir, 'cli', 'gold')), answers(lib.runDir)];
  assert.deepEqual([...b.keys()].sort(), ['p1', 'p2', 'p3', 'p4']);
  assert.deepEqual(b, a);

  // score(): the same rows as the benchmark give the command's numbers.
  const cliScore = await sobAsync(
    [
      'score',
      join(dir, 'cli', 'gold'),
      '--benchmark',
      csv,
      '--out',
      join(dir, 'cli', 'evaluation'),
      '--bootstrap-samples',
      '50',
    ],
    { cwd: dir },
  );
  assert.equal(cliScore.code, 0, cliScore.stderr);
  const scored = await score(
    [{ file: join(lib.runDir, 'responses.jsonl'), modelDir: 'baseline_gold', benchmark: { path: csv } }],
    { outDir: join(dir, 'lib', 'evaluation'), summary: { bootstrapSamples: 50 } },
  );
  assert.deepEqual(
    scored.map((r) => r.error),
    [undefined],
  );
  const summary = (root: string) => {
    const s = JSON.parse(readFileSync(join(root, 'text', 'baseline_gold', 'eval_summary.json'), 'utf8'));
    return { n: s.num_records, va: s.summary.overall_weighted.metrics.leaf_value_em.mean };
  };
  assert.deepEqual(summary(join(dir, 'lib', 'evaluation')), { n: 4, va: 1 });
  assert.deepEqual(summary(join(dir, 'lib', 'evaluation')), summary(join(dir, 'cli', 'evaluation')));
});
