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
  /**
   * Benchmark records, a folder of them, or the user's own flat rows (JSONL, JSON or CSV of id,
   * context, question, schema, ground_truth), read as `sob run --benchmark` reads them.
   */
  benchmark: string;
  /** `--map`: our field -> the column of the user's rows that holds it. */
  map?: Record<string, string>;
  provider?: ProviderOptions;
};

/**
 * The benchmark a command would use for `path`: flat rows built into records (in
 * `runs/benchmarks/<name>-<hash>/`, beside `runDir` when given), exactly as `sob run` and
 * `sob score --benchmark` build them; records or a folder as they are.
 */
async function benchmarkFor(
  path: string,
  o: {
    runDir?: string;
    map?: Record<string, string>;
    skipInvalid?: boolean;
    recordTimeoutMs?: number;
    log?: (line: string) => void;
  },
): Promise<string> {
  const { userBenchmark, userBenchmarkDir } = await import('../sources/user-benchmark.ts');
  return (
    await userBenchmark(path, userBenchmarkDir(path, o.runDir, o.map), {
      log: o.log ?? (() => {}),
      skipInvalid: o.skipInvalid,
      recordTimeoutMs: o.recordTimeoutMs,
      map: o.map,
      shared: true,
    })
  ).path;
}

/** `sob run`: asks a model every record of a benchmark; a resumable run directory. */
export async function run(input: RunInput): Promise<RunResult> {
  const { model, provider, map, ...rest } = input;
  const benchmark = await benchmarkFor(rest.benchmark, { ...rest, map });
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
    benchmark,
    provider: await createProvider(model, provider),
  });
}

/** What `score` takes besides the files: `sob score`'s defaults (1,000 samples, seed 42, sob profile). */
export type ScoreInput = Partial<Omit<ScoreOptions, 'summary'>> & {
  summary?: Partial<ScoreOptions['summary']>;
  /** `--map` for a `benchmark` of flat rows. */
  map?: Record<string, string>;
  /** `--skip-invalid`: flat rows the build rejects are left out instead of stopping the call. */
  skipInvalid?: boolean;
};

/**
 * `sob score`: scores response files into `<outDir>/<modality>/<model>/eval_{records.jsonl,summary.json}`.
 * A `benchmark` (the options' or a target's) may be records or the user's flat rows, read as
 * `sob score --benchmark` reads them.
 */
export async function score(files: (string | ScoreTarget)[], opts: ScoreInput = {}): Promise<FileResult[]> {
  const { map, skipInvalid, ...rest } = opts;
  const built = new Map<string, string>();
  const records = async <T extends { path: string } | undefined>(ref: T): Promise<T> => {
    if (!ref) return ref;
    let path = built.get(ref.path);
    if (path === undefined) {
      path = await benchmarkFor(ref.path, { map, skipInvalid, recordTimeoutMs: opts.recordTimeoutMs });
      built.set(ref.path, path);
    }
    return { ...ref, path };
  };
  const targets: ScoreTarget[] = [];
  for (const f of files) {
    const t = typeof f === 'string' ? { file: f } : f;
    targets.push(t.benchmark ? { ...t, benchmark: await records(t.benchmark) } : t);
  }
  return scoreFiles(targets, {
    outDir: 'runs/evaluation',
    ...rest,
    benchmark: await records(rest.benchmark),
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
