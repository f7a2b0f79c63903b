/**
 * `sob run` as one use case: ask one model every record of a benchmark into a resumable run
 * directory. The command (`src/cli/run.ts`) reads the flags into `RunSettings` and calls
 * `runModel`.
 */
import type { InputMode } from '../core/attachments.ts';
import { UserError } from '../core/errors.ts';
import { checkModelId, createProvider } from '../providers/index.ts';
import { ProgressReporter } from '../runner/progress.ts';
import { loadTemplate } from '../runner/prompt.ts';
import { type RunOptions, runBenchmark } from '../runner/run.ts';
import { interruptible, log } from './io.ts';

/** How a model is asked (what `sob run` and each model of `sob eval` share). */
export type AskSettings = Pick<
  RunOptions,
  | 'source'
  | 'limit'
  | 'contextWarnChars'
  | 'concurrency'
  | 'temperature'
  | 'maxTokens'
  | 'timeoutMs'
  | 'maxRetries'
  | 'coverageLimits'
  | 'cacheDir'
  | 'skipInvalid'
  | 'allowInvalidGroundTruth'
  | 'recordTimeoutMs'
  | 'pdfOverLimit'
  | 'documentLimits'
>;

/** What `sob run` was asked: the model, the benchmark, where and how. */
export interface RunSettings {
  /** `provider:model`. */
  model: string;
  /** Benchmark records, or the user's own rows. */
  benchmark: string;
  runDir?: string;
  ask: AskSettings;
  skipInvalid?: boolean;
  /** `--map`: our field -> the column of the user's rows that holds it. */
  map?: Record<string, string>;
  baseUrl: string[];
  stream: boolean;
  promptTemplate?: string;
  constrained: boolean;
  retryBaseMs: number;
  progressIntervalMs: number;
  maxResponseMb: number;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  /** Seconds. */
  batchDeadline?: number;
  batchMaxRequests?: number;
  batchMaxMb?: number;
  /** `--input`: text (default), document or both. */
  input?: InputMode;
}

/**
 * Runs `sob run`: the run directory and its status on stdout, progress on stderr; an interrupt
 * exits 130, records failed or pending are an error naming what to do.
 */
export async function runModel(s: RunSettings): Promise<void> {
  // The model named right before any rows are built (`--model foo:bar`: one line, exit 2).
  checkModelId(s.model);
  // Flat rows a user wrote (id, context, question, schema, ground_truth) become records first,
  // in runs/benchmarks/<name>-<hash of the file> (beside the run directory when one is given).
  const { userBenchmark, userBenchmarkDir } = await import('../../sources/user-benchmark.ts');
  const benchmark = (
    await userBenchmark(s.benchmark, userBenchmarkDir(s.benchmark, s.runDir, s.map), {
      log,
      skipInvalid: s.skipInvalid,
      recordTimeoutMs: s.ask.recordTimeoutMs,
      map: s.map,
      shared: true,
    })
  ).path;
  const provider = await createProvider(s.model, {
    baseUrls: s.baseUrl,
    maxResponseBytes: Math.round(s.maxResponseMb * 1024 * 1024),
    stream: s.stream,
  });
  const template = loadTemplate(s.promptTemplate);
  const progress = new ProgressReporter(process.stderr, s.progressIntervalMs);
  const stop = interruptible(() => progress.clear());
  try {
    const res = await runBenchmark({
      provider,
      benchmark,
      runDir: s.runDir,
      ...s.ask,
      constrained: s.constrained,
      template,
      input: s.input,
      documentTools:
        s.input && s.input !== 'text'
          ? (await import('../../sources/documents.ts')).documentTools
          : undefined,
      backoff: {
        baseMs: s.retryBaseMs,
        maxMs: Math.max(s.retryBaseMs, 60_000),
        maxRetryAfterMs: 15 * 60_000,
      },
      batch: s.batch
        ? {
            fallback: s.batchFallback,
            pollMs: s.batchPollMs,
            deadlineMs: s.batchDeadline === undefined ? undefined : s.batchDeadline * 1000,
            maxRequests: s.batchMaxRequests,
            maxBytes: s.batchMaxMb === undefined ? undefined : Math.round(s.batchMaxMb * 1024 * 1024),
          }
        : undefined,
      signal: stop.signal,
      onProgress: (p) => progress.update(p),
      log: (line) => {
        progress.clear();
        log(line);
      },
    });
    progress.finish(res.progress);
    const p = res.progress;
    process.stdout.write(`${res.runDir}\t${res.status}\t${p.done}/${p.total} answered\t${p.failed} failed\n`);
    if (res.status === 'interrupted') {
      log(`interrupted: ${p.done}/${p.total} answered; re-run the same command to resume`);
      process.exitCode = 130;
    } else if (res.status === 'incomplete') {
      const pending = p.total - p.done - p.failed;
      throw new UserError(
        p.failed > 0
          ? `${p.failed} record${p.failed === 1 ? '' : 's'} failed every attempt (see ${res.runDir}/errors.jsonl); re-run the same command to retry them`
          : `${pending} record${pending === 1 ? '' : 's'} still pending in batches at the provider (--batch-deadline); re-run the same command to collect them`,
      );
    } else log(`done: ${res.runDir} (score it with: sob score ${res.runDir})`);
  } finally {
    progress.clear();
    stop.dispose();
  }
}
