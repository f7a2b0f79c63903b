/**
 * The library API as a user embeds it: `import ... from 'sob-eval'` (the package's `exports`: the
 * built JavaScript, typed by src/lib.ts). The example of docs/library.md, run end to end.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { build, compare, leaderboard, run, score } from 'sob-eval';
import { ensureBuilt, ROOT } from './kit/cli.ts';
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
