/**
 * The application layer (src/app/): a command's work is one function taking typed settings, so
 * it runs without a command line. Here `evaluate` (sob eval) and `scoreTargets` (sob score) are
 * called directly, and what they write is the same as what the command writes.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { evaluate } from '../../src/app/eval.ts';
import { scoreTargets } from '../../src/app/score.ts';
import { ROOT, sobIn } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

/**
 * Runs `fn` with the process.stdout/stderr writes made inside it (its async context) captured:
 * the use cases print their tables there. Every other write (the test runner's) goes through.
 */
const capture = new AsyncLocalStorage<{ stdout: string; stderr: string }>();
for (const key of ['stdout', 'stderr'] as const) {
  const stream = process[key];
  const original = stream.write.bind(stream) as (...a: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const out = capture.getStore();
    if (!out) return original(chunk, ...rest);
    out[key] += String(chunk);
    return true;
  }) as typeof stream.write;
}
async function captured(fn: () => Promise<void>): Promise<{ stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  await capture.run(out, fn);
  return out;
}

/** The settings `sob eval` gives evaluate with no flags (its defaults). */
function evalDefaults(evalDir: string): Parameters<typeof evaluate>[0] {
  return {
    evalDir,
    gates: { thresholds: [] },
    ask: {
      concurrency: 4,
      temperature: 0,
      maxTokens: 2048,
      timeoutMs: 120_000,
      maxRetries: 5,
      coverageLimits: undefined,
    },
    baseUrl: [],
    stream: false,
    constrained: false,
    bootstrapSamples: 1000,
    seed: 42,
    epochs: 1,
    batchFallback: 'batch',
    batchPollMs: 30_000,
    progressIntervalMs: 10_000,
    report: false,
  };
}

test('evaluate(settings) without a command line: gold scores 1.000 Value Accuracy, the skeleton 0.005, the same leaderboard as sob eval', async () => {
  const direct = join(tempDir(), 'eval');
  const { stdout, stderr } = await captured(() => evaluate(evalDefaults(direct)));
  const rows = JSON.parse(readFileSync(join(direct, 'leaderboard.json'), 'utf8')) as {
    model: string;
    value_accuracy: number;
    json_pass: number;
  }[];
  assert.deepEqual(
    rows.map((r) => [r.model, Number(r.value_accuracy.toFixed(3)), r.json_pass]),
    [
      ['baseline_gold', 1, 1],
      ['baseline_skeleton', 0.005, 1],
    ],
  );
  assert.match(stdout, /baseline_gold\s+1\.000/);
  assert.match(stderr, /sob eval: 2 model\(s\) over /);

  // The command over the same corpus writes the same leaderboard (it only reads flags and calls evaluate).
  const viaCli = join(tempDir(), 'eval');
  const r = await sobIn(['eval', '--eval-dir', viaCli, '--no-report']);
  assert.equal(r.code, 0, r.stderr);
  // Every figure but the measured latencies (usage), which differ from run to run.
  const scores = (dir: string) =>
    (JSON.parse(readFileSync(join(dir, 'leaderboard.json'), 'utf8')) as { usage?: unknown }[]).map(
      ({ usage: _, ...row }) => row,
    );
  assert.deepEqual(scores(direct), scores(viaCli));
});

test('scoreTargets(settings) without a command line scores examples/responses as sob score does: text Value Accuracy 0.208 under the sob profile', async () => {
  const out = tempDir();
  const { stdout, stderr } = await captured(() =>
    scoreTargets({
      inputs: [join(ROOT, 'examples/responses')],
      gates: { thresholds: [] },
      protocol: 'jsonschemabench',
      remotes: [],
      out,
      bootstrapSamples: 1000,
      seed: 42,
      topKErrors: 20,
      recordTimeoutMs: 20_000,
      baseUrl: [],
    }),
  );
  assert.match(stderr, /profile: sob \(the default for response files/);
  const text = stdout.split('\n').find((l) => /\stext\s/.test(l));
  assert.ok(text, stdout);
  // file, source, n, JSON Pass, Val.Acc.: six text records, Value Accuracy 0.208
  assert.deepEqual(text.trim().split(/\s+/).slice(1, 5), ['text', '6', '0.625', '0.208']);
  const viaCli = tempDir();
  const r = await sobIn(['score', join(ROOT, 'examples/responses'), '--out', viaCli]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, stdout);
});
