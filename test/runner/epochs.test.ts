/**
 * The runner's side of `sob eval --epochs`: an epoch is stamped on every answer, is part of the
 * run's identity from epoch 2 on (epoch 1 is a plain run), and is part of the response cache's
 * key, so epoch 2 never reuses epoch 1's cached answers. Real HTTP to a local OpenAI-protocol server.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { OpenAIProvider } from '../../src/providers/openai.ts';
import { loadTemplate } from '../../src/runner/prompt.ts';
import { type RunOptions, runBenchmark } from '../../src/runner/run.ts';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';

let tmp: string;
let server: ProtocolServer;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-runner-epochs-'));
  server = await startProtocolServer({ answer: (r) => JSON.stringify({ id: r.key, n: r.n }) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

function options(bench: string, runDir: string, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    provider: new OpenAIProvider('m', { baseUrls: [server.openaiBaseUrl], apiKey: 'sk-epochs' }),
    benchmark: bench,
    runDir,
    concurrency: 2,
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
    timeoutMs: 5000,
    maxRetries: 1,
    template: loadTemplate(),
    ...extra,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: rows are JSON read back from files
function rows(file: string): any[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

test('epochs: stamped on every answer, in the identity from epoch 2 on, and in the cache key', async () => {
  const bench = join(tmp, 'b.jsonl');
  writeFileSync(
    bench,
    ['x1', 'x2', 'x3']
      .map((id) =>
        JSON.stringify({
          metadata: { record_id: id, schema_complexity: 'easy', source: 'text' },
          input: {
            context: `[rid:${id}] ${id}`,
            question: 'id?',
            json_schema: { type: 'object', properties: { id: { type: 'string' } } },
          },
          output: { ground_truth: { id } },
        }),
      )
      .join('\n'),
  );
  const cacheDir = join(tmp, 'cache');
  const e1 = await runBenchmark(options(bench, join(tmp, 'e1'), { epoch: 1, cacheDir }));
  assert.equal(e1.status, 'complete');
  assert.equal(server.total, 3);
  const e2 = await runBenchmark(options(bench, join(tmp, 'e2'), { epoch: 2, cacheDir }));
  assert.equal(e2.status, 'complete');
  // Epoch 2 asked the server again (its own cache key): every record's second request.
  assert.equal(server.total, 6);
  const second = rows(join(tmp, 'e2/responses.jsonl'));
  assert.deepEqual(
    second.map((r) => [r.metadata.epoch, r.output.candidate_response.n, r.eval_info.cached ?? false]),
    [
      [2, 2, false],
      [2, 2, false],
      [2, 2, false],
    ],
  );
  assert.ok(rows(join(tmp, 'e1/responses.jsonl')).every((r) => r.metadata.epoch === 1));
  // The same epoch again from the cache: nothing asked.
  const again = await runBenchmark(options(bench, join(tmp, 'e2-again'), { epoch: 2, cacheDir }));
  assert.equal(again.status, 'complete');
  assert.equal(server.total, 6);
  assert.ok(rows(join(tmp, 'e2-again/responses.jsonl')).every((r) => r.eval_info.cached === true));

  // Identity: epoch 2's folder refuses epoch 3; epoch 1 is the plain run's identity.
  await assert.rejects(
    runBenchmark(options(bench, join(tmp, 'e2'), { epoch: 3, cacheDir })),
    /holds a run with a different epoch \(2, now 3\)/,
  );
  const m1 = JSON.parse(readFileSync(join(tmp, 'e1/manifest.json'), 'utf8'));
  assert.equal(m1.identity.epoch, undefined);
  assert.equal(m1.settings.epoch, 1);
  const plain = await runBenchmark(options(bench, join(tmp, 'e1')));
  assert.equal(plain.status, 'complete'); // resumes epoch 1's folder as a plain run: nothing asked
  assert.equal(server.total, 6);
});
