/**
 * `sob eval --batch` with several models: every batch model's batch is at the provider before
 * the first one is waited on (a batch may take up to 24 h: models one after another would add
 * those up), each record of each model is answered once, models without a batch interface say
 * so and run as usual, and every line about a batch names its model.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { rows, sob, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
const END = ['validating', 'in_progress', 'in_progress', 'in_progress', 'completed'];
/** How many status checks the first batch had seen when the second one was first looked at. */
let firstPollsAtSecond: number | undefined;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-eval-batch-'));
  server = await startProtocolServer({
    batch: {
      states: (i) => {
        if (i === 1 && firstPollsAtSecond === undefined) firstPollsAtSecond = server.batches[0].polls;
        return END;
      },
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('sob eval --batch: both models batches go out before either is waited on; each record answered once per model', async () => {
  const keys = Array.from({ length: 6 }, (_, i) => `eb${i}`);
  const bench = writeBenchmark(join(tmp, 'eb.jsonl'), keys);
  const evalDir = join(tmp, 'eval');
  const evalBatch = (models: string[]) =>
    sob(
      [
        'eval',
        ...models.flatMap((m) => ['--model', m]),
        '--benchmark',
        bench,
        '--base-url',
        server.openaiBaseUrl,
        '--batch',
        '--batch-poll-ms',
        '20',
        '--eval-dir',
        evalDir,
        '--bootstrap-samples',
        '10',
        '--no-report',
      ],
      { cwd: tmp, env: { OPENAI_API_KEY: 'sk-eval-batch' } },
    ).done;
  const r = await evalBatch(['openai:model-a', 'openai:model-b', 'baseline:gold']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.batches.length, 2);
  assert.deepEqual(
    server.batches.map((b) => b.requests.length),
    [6, 6],
  );
  // The second batch was created while the first was still short of its end.
  assert.ok(
    firstPollsAtSecond !== undefined && firstPollsAtSecond < END.length - 1,
    `first batch had ${firstPollsAtSecond} status checks when the second appeared`,
  );
  for (const k of keys) assert.equal(server.counts.get(k), 2, `${k} asked once per model`);
  for (const m of ['openai_model-a', 'openai_model-b', 'baseline_gold'])
    assert.equal(rows(join(evalDir, 'runs', m, 'responses.jsonl')).length, 6, m);
  const [a, b] = server.batches.map((x) => x.id);
  assert.match(r.stderr, new RegExp(`^openai:model-a: batch ${a}: 6 requests`, 'm'));
  assert.match(r.stderr, new RegExp(`^openai:model-b: batch ${b}: 6 requests`, 'm'));
  assert.match(
    r.stderr,
    /^baseline:gold: no batch interface \(--batch is for openai: and gemini:\); asked as usual$/m,
  );
  // A second run finds everything answered and submits nothing.
  const again = await evalBatch(['openai:model-a', 'openai:model-b']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.batches.length, 2);
});
