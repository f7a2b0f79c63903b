/**
 * local:<model-dir> on a tiny ONNX model the test writes itself (a bigram table, see
 * tiny-model.ts), through transformers.js with the hub off, inside the real runner.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { env } from '@huggingface/transformers';
import { createProvider } from '../../src/providers/index.ts';
import { LocalProvider } from '../../src/providers/local.ts';
import { loadTemplate } from '../../src/runner/prompt.ts';
import { runBenchmark } from '../../src/runner/run.ts';
import { TINY_ANSWER, writeTinyModel } from './tiny-model.ts';

let tmp: string;
let modelDir: string;
let bench: string;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-local-'));
  modelDir = writeTinyModel(tmp);
  bench = join(tmp, 'b.jsonl');
  writeFileSync(
    bench,
    Array.from(
      { length: 6 },
      (_, i) =>
        `${JSON.stringify({
          metadata: { record_id: `L${i}`, source: 'text' },
          input: {
            context: `doc ${i}`,
            question: 'id?',
            json_schema: { type: 'object', properties: { id: { type: 'string' } } },
          },
          output: { ground_truth: { id: 'local' } },
        })}\n`,
    ).join(''),
  );
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const base = {
  benchmark: '',
  concurrency: 3,
  constrained: false,
  temperature: 0,
  maxTokens: 2048,
  timeoutMs: 60_000,
  maxRetries: 0,
  template: loadTemplate(),
};

test('local model answers every record greedily; loaded once for the run; the hub stays off', async () => {
  const p = (await createProvider(`local:${modelDir}`)) as LocalProvider;
  assert.ok(p instanceof LocalProvider);
  const dir = join(tmp, 'run');
  const res = await runBenchmark({ ...base, provider: p, benchmark: bench, runDir: dir });
  assert.equal(res.status, 'complete');
  assert.equal(p.loads, 1);
  assert.equal(env.allowRemoteModels, false);
  const rows = readFileSync(join(dir, 'responses.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(rows.length, 6);
  for (const r of rows) {
    assert.equal(r.output.raw_response, TINY_ANSWER);
    assert.deepEqual(r.output.candidate_response, { id: 'local' });
    assert.equal(r.eval_info.finish_reason, 'stop');
    assert.equal(r.eval_info.output_tokens, 4, 'three answer pieces and <eos>');
    assert.ok(r.eval_info.input_tokens > 20);
  }
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(m.model, `local:${modelDir}`);
  assert.equal(m.provider_settings.decoding, 'greedy');
});

test('a local answer cut by --max-tokens is recorded as truncated', async () => {
  const p = new LocalProvider(modelDir);
  const dir = join(tmp, 'cut');
  const res = await runBenchmark({
    ...base,
    provider: p,
    benchmark: bench,
    runDir: dir,
    maxTokens: 2,
    limit: 2,
  });
  assert.equal(res.status, 'complete');
  const rows = readFileSync(join(dir, 'responses.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    rows.map((r) => [
      r.output.raw_response,
      r.eval_info.finish_reason,
      r.eval_info.error_class,
      r.eval_info.output_tokens,
    ]),
    [
      ['{"id": "local"', 'length', 'truncated', 2],
      ['{"id": "local"', 'length', 'truncated', 2],
    ],
  );
});

test('a folder without the model files is one clear error', async () => {
  await assert.rejects(createProvider(`local:${tmp}`), /local: .*config\.json is missing/);
});
