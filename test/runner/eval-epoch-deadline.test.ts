/**
 * Issue 29, finding 2: every option `sob eval` takes reaches every step it runs. With
 * `--epochs 2 --batch --batch-deadline 2`, epoch 2's batch stuck `in_progress` ends the wait at
 * the deadline, its records pending (it used to be polled without end: the deadline went to the
 * first epoch's run only).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { tempDir } from '../kit/temp.ts';
import { rows, sob, writeBenchmark } from './sob-cli.ts';

const tmp = tempDir('sob-epoch-deadline-');
let server: ProtocolServer;

before(async () => {
  server = await startProtocolServer({
    batch: {
      // Epoch 1's batch completes; epoch 2's never leaves in_progress.
      states: (i) => (i === 0 ? ['validating', 'completed'] : ['validating', 'in_progress']),
    },
  });
});
after(async () => {
  await server.close();
});

test('sob eval --epochs 2 --batch --batch-deadline 2: epoch 2 stuck in_progress ends at the deadline with its records pending', async () => {
  const keys = ['ep0', 'ep1', 'ep2'];
  const bench = writeBenchmark(join(tmp, 'ep.jsonl'), keys);
  const evalDir = join(tmp, 'eval');
  const { child, done } = sob(
    [
      'eval',
      '--model',
      'openai:model-e',
      '--benchmark',
      bench,
      '--base-url',
      server.openaiBaseUrl,
      '--epochs',
      '2',
      '--batch',
      '--batch-poll-ms',
      '50',
      '--batch-deadline',
      '2',
      '--eval-dir',
      evalDir,
      '--bootstrap-samples',
      '10',
      '--no-report',
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'sk-epoch-deadline' } },
  );
  // Today's deadline-less epoch 2 would poll for ever: stopped here, and the test fails below.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const r = await done;
  clearTimeout(killer);
  assert.equal(r.signal, null, `still waiting after 30 s: ${r.stderr.slice(-400)}`);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(server.batches.length, 2, 'one batch per epoch');
  assert.match(
    r.stderr,
    /^openai:model-e epoch 2\/2: --batch-deadline reached: 3 records still pending in batch batch_\d+ \(in_progress\)/m,
  );
  // Epoch 1 answered every record; epoch 2 none, its batch left at the provider.
  assert.equal(rows(join(evalDir, 'runs', 'openai_model-e', 'responses.jsonl')).length, 3);
  assert.equal(rows(join(evalDir, 'epochs', '2', 'runs', 'openai_model-e', 'responses.jsonl')).length, 0);
  // Polled for about 2 s at 50 ms, not for ever.
  assert.ok(server.batches[1].polls < 200, `${server.batches[1].polls} status checks of epoch 2's batch`);
});
