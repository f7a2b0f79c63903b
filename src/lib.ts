/**
 * The library API (`import { build, run, score, leaderboard, compare } from 'sob-eval'`): what the
 * commands call, with the commands' defaults, for programs that embed sob-eval. docs/library.md
 * has a typed example; the options of each step are those of its command (docs/commands.md).
 */
import type { PairedResult } from '../metrics/compare.ts';
import { type BuildOptions, type BuildResult, buildBenchmark } from '../sources/build.ts';
import { createProvider, type ProviderOptions } from './providers/index.ts';
import { COMPARED, comparePair, loadModelRows } from './report/compare.ts';
import { buildLeaderboard, type LoadOptions, loadEvaluation, readDisplayNames } from './report/evaluation.ts';
import { DEFAULT_TEMPLATE, makeTemplate } from './runner/prompt.ts';
import { type RunOptions, type RunResult, runBenchmark } from './runner/run.ts';
import type { FileResult, ScoreOptions, ScoreTarget } from './scoring/score-files.ts';
import { scoreFiles } from './scoring/score-files.ts';

export type { LeaderboardRow } from '../metrics/leaderboard.ts';
/** The on-disk formats (docs/formats.md): each file's type, version, writer's text and reader's check. */
export * as formats from './core/formats/index.ts';
export type {
  BuildOptions,
  BuildResult,
  FileResult,
  PairedResult,
  ProviderOptions,
  RunResult,
  ScoreOptions,
  ScoreTarget,
};

/** `sob build`: raw source -> checked benchmark records, rejected.jsonl and manifest.json. */
export function build(opts: BuildOptions): Promise<BuildResult> {
  return buildBenchmark({ log: () => {}, ...opts });
}

/** What `run` takes: a model id instead of a provider; every setting defaults as `sob run` does. */
export type RunInput = Partial<Omit<RunOptions, 'provider' | 'benchmark'>> & {
  /** `provider:model`, as `sob run --model` takes it (`openai:gpt-4.1`, `baseline:gold`, ...). */
  model: string;
  benchmark: string;
  provider?: ProviderOptions;
};

/** `sob run`: asks a model every record of a benchmark; a resumable run directory. */
export async function run(input: RunInput): Promise<RunResult> {
  const { model, provider, ...rest } = input;
  return runBenchmark({
    concurrency: 8,
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
    timeoutMs: 120_000,
    maxRetries: 5,
    template: makeTemplate(DEFAULT_TEMPLATE),
    log: () => {},
    ...rest,
    provider: await createProvider(model, provider),
  });
}

/** What `score` takes besides the files: `sob score`'s defaults (1,000 samples, seed 42, sob profile). */
export type ScoreInput = Partial<Omit<ScoreOptions, 'summary'>> & {
  summary?: Partial<ScoreOptions['summary']>;
};

/** `sob score`: scores response files into `<outDir>/<modality>/<model>/eval_{records.jsonl,summary.json}`. */
export function score(files: (string | ScoreTarget)[], opts: ScoreInput = {}): Promise<FileResult[]> {
  const targets = files.map((f) => (typeof f === 'string' ? { file: f } : f));
  return scoreFiles(targets, {
    outDir: 'runs/evaluation',
    ...opts,
    summary: { bootstrapSamples: 1000, seed: 42, topKErrors: 20, ...opts.summary },
  });
}

/** `sob leaderboard`: the unified leaderboard (paper Eq. 4-7) of an evaluation folder, best first. */
export async function leaderboard(dir: string, opts: LoadOptions & { names?: string } = {}) {
  const ev = await loadEvaluation(dir, opts);
  return buildLeaderboard(ev, readDisplayNames(opts.names, dir));
}

/** `sob compare`: paired bootstrap of model B against model A (evaluation folders of one model each). */
export async function compare(
  a: string,
  b: string,
  opts: { samples?: number; seed?: number } = {},
): Promise<{ metric: string; result: PairedResult }[]> {
  const results = comparePair(
    await loadModelRows(a),
    await loadModelRows(b),
    opts.samples ?? 1000,
    opts.seed ?? 42,
  );
  // The metrics by their paper names: Value Accuracy, Faithfulness, JSON Pass, ...
  return results.map((result, i) => ({ metric: COMPARED[i][1], result }));
}
