/**
 * `sob eval`: build (when needed) -> run each model -> score -> leaderboard -> report, in one
 * eval directory, resumable as a whole (each step skips what is already done). With no
 * arguments: the bundled example corpus and the two built-in baselines, offline.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { UserError } from '../core/errors.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { batchOptions, interruptible, intOption, log } from './common.ts';

interface EvalFlags {
  model: string[];
  benchmark?: string;
  evalDir: string;
  concurrency: number;
  limit?: number;
  baseUrl: string[];
  constrained: boolean;
  bootstrapSamples: number;
  report: boolean;
  progressIntervalMs: number;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
}

const DEFAULT_MODELS = ['baseline:gold', 'baseline:skeleton'];
const EXAMPLES = resolve(PACKAGE_ROOT, 'sources/examples');

/** The bundled corpus as one benchmark (text passages, four PDF pages, two meetings), built once. */
async function buildExampleBenchmark(dir: string): Promise<string> {
  const out = join(dir, 'records.jsonl');
  if (existsSync(out) && existsSync(join(dir, 'manifest.json'))) return out;
  const { buildBenchmark } = await import('../../sources/build.ts');
  const steps: { kind: 'hotpotqa' | 'ami' | 'pdf'; input: string; annotations: string }[] = [
    {
      kind: 'hotpotqa',
      input: join(EXAMPLES, 'text/passages.json'),
      annotations: join(EXAMPLES, 'text/annotations.jsonl'),
    },
    { kind: 'pdf', input: join(EXAMPLES, 'pdf'), annotations: join(EXAMPLES, 'pdf/annotations.jsonl') },
    { kind: 'ami', input: join(EXAMPLES, 'ami'), annotations: join(EXAMPLES, 'ami/annotations.jsonl') },
    {
      kind: 'ami',
      input: join(EXAMPLES, 'ami-rows/SOB02a.csv'),
      annotations: join(EXAMPLES, 'ami-rows/annotations.jsonl'),
    },
  ];
  // Built in a scratch folder and moved in whole, so a crash never leaves half a benchmark.
  const scratch = join(dir, '.building');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  let first = true;
  for (const s of steps) {
    await buildBenchmark({ ...s, out: join(scratch, 'records.jsonl'), append: !first, log: () => {} });
    first = false;
  }
  for (const f of ['rejected.jsonl', 'manifest.json', 'records.jsonl']) {
    if (existsSync(join(scratch, f))) renameSync(join(scratch, f), join(dir, f));
  }
  rmSync(scratch, { recursive: true, force: true });
  return out;
}

export function registerEval(program: Command): void {
  const cmd = program
    .command('eval')
    .description(
      'run, score and report in one go: every model over a benchmark, one leaderboard and one HTML report',
    )
    .option(
      '--model <provider:model>',
      'a model to evaluate; repeat for several (default: baseline:gold and baseline:skeleton)',
      (v: string, p: string[] | undefined) => [...(p ?? []), v],
    )
    .option(
      '--benchmark <path>',
      'benchmark records (JSONL, with manifest.json beside it); default: the bundled example corpus',
    )
    .option('--eval-dir <dir>', 'where everything goes; re-running the same command resumes', 'runs/eval')
    .option('--concurrency <n>', 'requests in flight per model', intOption('--concurrency', 1), 8)
    .option('--limit <n>', 'only the first N records', intOption('--limit', 1))
    .option(
      '--base-url <url>',
      'OpenAI-compatible endpoint (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--constrained', "also hand the schema to the provider's structured-output mode", false)
    .option(
      '--bootstrap-samples <n>',
      'bootstrap resamples for the intervals',
      intOption('--bootstrap-samples'),
      1000,
    );
  batchOptions(cmd, "ask through each provider's batch interface (openai:, gemini:); see sob run --help")
    .option('--no-report', 'skip the HTML report')
    .addOption(
      new Option('--progress-interval-ms <n>', 'progress line period when stderr is not a terminal')
        .argParser(intOption('--progress-interval-ms', 1))
        .default(10_000)
        .hideHelp(),
    )
    .addHelpText(
      'after',
      `
Examples:
  sob eval                                   # offline: the bundled corpus, gold vs skeleton baselines
  sob eval --model openai:gpt-4.1-mini --model gemini:gemini-2.5-flash --benchmark bench/records.jsonl

Layout: <eval-dir>/benchmark (when built), <eval-dir>/runs/<model>/ (one run directory each),
<eval-dir>/evaluation/<source>/<model>/ (scores), leaderboard.{md,csv,json}, report.html.
A benchmark of schema records (sob build jsonschemabench / schemas / probes) is scored on the
compliance track (evaluation/schema/<model>/) and gets leaderboard-compliance.{md,csv,json}:
declared and empirical coverage and compliance per dataset (add --constrained to hand the schema
to the provider's structured-output mode, where declared coverage means something).`,
    )
    .action(async (flags: EvalFlags) => {
      const evalDir = resolve(flags.evalDir);
      mkdirSync(evalDir, { recursive: true });
      // One `sob eval` per eval directory: a second one is refused before it builds or asks anything.
      const { acquireLock } = await import('../core/files.ts');
      acquireLock(evalDir, 'eval directory');
      const models = flags.model?.length ? flags.model : DEFAULT_MODELS;
      const benchmark = flags.benchmark
        ? resolve(flags.benchmark)
        : await buildExampleBenchmark(join(evalDir, 'benchmark'));
      if (!existsSync(benchmark)) throw new UserError(`no such benchmark: ${benchmark}`);
      log(`sob eval: ${models.length} model(s) over ${benchmark} -> ${evalDir}`);
      log(
        "profile: strict (your own benchmark: the reference's defects fixed; sob score --profile sob for parity)",
      );

      const { createProvider } = await import('../providers/index.ts');
      const { runBenchmark, resolveBenchmark } = await import('../runner/run.ts');
      const { loadTemplate } = await import('../runner/prompt.ts');
      const { sanitizeModelId } = await import('../runner/run-dir.ts');
      const { scoreFiles } = await import('../scoring/score-files.ts');
      const { ProgressReporter } = await import('../runner/progress.ts');
      const evaluation = join(evalDir, 'evaluation');
      const template = loadTemplate();
      let failed = 0;
      let answeredModels = 0;
      let progress: InstanceType<typeof ProgressReporter> | undefined;
      const stop = interruptible(() => progress?.clear());
      const interrupted = () => {
        log(
          `interrupted: re-run the same command to resume${flags.batch ? ' (batches already submitted, of every model, keep running at the provider and are collected then)' : ''}`,
        );
        process.exitCode = 130;
      };
      type Provider = Awaited<ReturnType<typeof createProvider>>;
      /** What every model's run shares: the benchmark, its run directory, the paper's settings. */
      const runOptions = (model: string, provider: Provider) => ({
        provider,
        benchmark,
        runDir: join(evalDir, 'runs', sanitizeModelId(model)),
        limit: flags.limit,
        concurrency: flags.concurrency,
        constrained: flags.constrained,
        temperature: 0,
        maxTokens: 2048,
        timeoutMs: 120_000,
        maxRetries: 5,
        template,
        signal: stop.signal,
      });
      try {
        // --batch with several batch models: every model's batches go to the provider first, so
        // they run side by side (a batch may take up to 24 h); the loop below then collects each.
        if (flags.batch && models.length > 1) {
          for (const model of models) {
            if (stop.interrupted()) return interrupted();
            const provider = await createProvider(model, { baseUrls: flags.baseUrl });
            try {
              if (!provider.batch) continue;
              await runBenchmark({
                ...runOptions(model, provider),
                batch: { fallback: flags.batchFallback, pollMs: flags.batchPollMs, submitOnly: true },
                // Only the batches it submitted are news here; the run below says the rest.
                log: (line) => {
                  if (line.startsWith('batch ')) log(`${model}: ${line}`);
                },
              });
            } finally {
              await provider.close?.();
            }
          }
        }
        for (const model of models) {
          const name = sanitizeModelId(model);
          const provider = await createProvider(model, { baseUrls: flags.baseUrl });
          if (flags.batch && !provider.batch)
            log(`${model}: no batch interface (--batch is for openai: and gemini:); asked as usual`);
          // The runner's progress line, one per model, while it runs.
          progress = new ProgressReporter(process.stderr, flags.progressIntervalMs, Date.now, `${model}: `);
          const bar = progress;
          try {
            const res = await runBenchmark({
              ...runOptions(model, provider),
              batch:
                flags.batch && provider.batch
                  ? { fallback: flags.batchFallback, pollMs: flags.batchPollMs }
                  : undefined,
              onProgress: (p) => bar.update(p),
              // Several models write here one after another: each line says whose it is.
              log: (line) => {
                bar.clear();
                log(`${model}: ${line}`);
              },
            });
            bar.finish(res.progress);
            log(`${model}: ${res.status} (${res.runDir})`);
            if (res.status === 'interrupted') return interrupted();
            if (res.status !== 'complete') failed++;
            if (res.progress.done === 0) {
              log(
                `${model}: no record answered (${res.progress.failed} failed; see ${join(res.runDir, 'errors.jsonl')}); nothing to score`,
              );
              continue;
            }
            answeredModels++;
            const scored = await scoreFiles(
              [
                {
                  file: join(res.runDir, 'responses.jsonl'),
                  modelDir: name,
                  outDir: evaluation,
                  // Ground truths and schemas from the benchmark; unanswered records reported.
                  benchmark: { path: resolveBenchmark(benchmark), limit: flags.limit },
                },
              ],
              {
                outDir: evaluation,
                summary: { bootstrapSamples: flags.bootstrapSamples, seed: 42, topKErrors: 20 },
                // The user's own benchmark: the strict profile (the gold baseline scores 1.000).
                profile: { profile: 'strict', assertFormats: false },
                log,
              },
            );
            for (const r of scored) if (r.error) log(`sob: ${r.error}`);
            if (stop.interrupted()) return interrupted();
          } finally {
            bar.clear();
            await provider.close?.();
          }
        }
      } finally {
        stop.dispose();
      }
      if (answeredModels === 0)
        throw new UserError(
          `no model answered any record (${models.join(', ')}); see errors.jsonl in ${join(evalDir, 'runs')}/<model>/`,
        );

      // The benchmark's per-source totals drive the leaderboard's weights and coverage.
      const manifest = join(benchmark, '..', 'manifest.json');
      // Written by rename, so a symlink planted in the eval directory is replaced, never followed.
      const { writeFileAtomic } = await import('../core/files.ts');
      if (existsSync(manifest)) writeFileAtomic(join(evaluation, 'manifest.json'), readFileSync(manifest));
      const { hasSobResults } = await import('../report/compliance.ts');
      if (hasSobResults(evaluation)) {
        const { buildLeaderboard, loadEvaluation } = await import('../report/evaluation.ts');
        const tables = await import('../report/tables.ts');
        const rows = buildLeaderboard(await loadEvaluation(evaluation), {});
        writeFileAtomic(join(evalDir, 'leaderboard.md'), `${tables.leaderboardMarkdown(rows)}\n`);
        writeFileAtomic(join(evalDir, 'leaderboard.csv'), tables.leaderboardCsv(rows));
        writeFileAtomic(join(evalDir, 'leaderboard.json'), `${tables.leaderboardJson(rows)}\n`);
        process.stdout.write(`${tables.leaderboardTable(rows)}\n`);
      }
      // Schema records: the compliance track's table (leaderboard-compliance.{md,csv,json}).
      const { writeComplianceLeaderboards } = await import('./leaderboard-compliance.ts');
      const compliance = writeComplianceLeaderboards(evaluation, evalDir);

      if (flags.report) {
        const { writeReport } = await import('../report/html.ts');
        log(`report: ${await writeReport({ dir: evalDir, out: join(evalDir, 'report.html') })}`);
      }
      if (hasSobResults(evaluation)) log(`leaderboard: ${join(evalDir, 'leaderboard.md')}`);
      if (compliance) log(`compliance leaderboard: ${compliance}`);
      if (failed > 0) {
        process.exitCode = 1;
        log(`sob: ${failed} run(s) incomplete; re-run the same command to retry the failed records`);
      }
    });
}
