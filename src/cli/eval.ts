/**
 * `sob eval`: build (when needed) -> run each model -> score -> leaderboard -> report, in one
 * eval directory, resumable as a whole (each step skips what is already done). With no
 * arguments: the bundled example corpus and the two built-in baselines, offline.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { intOption, log } from './common.ts';

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
}

const DEFAULT_MODELS = ['baseline:gold', 'baseline:skeleton'];
const EXAMPLES = resolve(import.meta.dirname, '../../sources/examples');

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
  program
    .command('eval')
    .description(
      'run, score and report in one go: every model over a benchmark, one leaderboard and one HTML report',
    )
    .option(
      '--model <provider:model>',
      'a model to evaluate; repeat for several (default: baseline:gold and baseline:skeleton)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
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
    )
    .option('--no-report', 'skip the HTML report')
    .addHelpText(
      'after',
      `
Examples:
  sob eval                                   # offline: the bundled corpus, gold vs skeleton baselines
  sob eval --model openai:gpt-4.1-mini --model gemini:gemini-2.5-flash --benchmark bench/records.jsonl

Layout: <eval-dir>/benchmark (when built), <eval-dir>/runs/<model>/ (one run directory each),
<eval-dir>/evaluation/<source>/<model>/ (scores), leaderboard.{md,csv,json}, report.html.`,
    )
    .action(async (flags: EvalFlags) => {
      const evalDir = resolve(flags.evalDir);
      mkdirSync(evalDir, { recursive: true });
      const models = flags.model.length > 0 ? flags.model : DEFAULT_MODELS;
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
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      const evaluation = join(evalDir, 'evaluation');
      const template = loadTemplate();
      let failed = 0;
      try {
        for (const model of models) {
          const name = sanitizeModelId(model);
          const provider = await createProvider(model, { baseUrls: flags.baseUrl });
          try {
            const res = await runBenchmark({
              provider,
              benchmark,
              runDir: join(evalDir, 'runs', name),
              limit: flags.limit,
              concurrency: flags.concurrency,
              constrained: flags.constrained,
              temperature: 0,
              maxTokens: 2048,
              timeoutMs: 120_000,
              maxRetries: 5,
              template,
              signal: controller.signal,
              log,
            });
            log(`${model}: ${res.status} (${res.runDir})`);
            if (res.status === 'interrupted')
              throw new UserError('interrupted: re-run the same command to resume');
            if (res.status !== 'complete') failed++;
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
          } finally {
            await provider.close?.();
          }
        }
      } finally {
        process.off('SIGINT', onSigint);
      }

      // The benchmark's per-source totals drive the leaderboard's weights and coverage.
      const manifest = join(benchmark, '..', 'manifest.json');
      if (existsSync(manifest)) copyFileSync(manifest, join(evaluation, 'manifest.json'));
      const { buildLeaderboard, loadEvaluation } = await import('../report/evaluation.ts');
      const tables = await import('../report/tables.ts');
      const rows = buildLeaderboard(await loadEvaluation(evaluation), {});
      writeFileSync(join(evalDir, 'leaderboard.md'), `${tables.leaderboardMarkdown(rows)}\n`);
      writeFileSync(join(evalDir, 'leaderboard.csv'), tables.leaderboardCsv(rows));
      writeFileSync(join(evalDir, 'leaderboard.json'), `${tables.leaderboardJson(rows)}\n`);
      process.stdout.write(`${tables.leaderboardTable(rows)}\n`);

      if (flags.report) {
        const { writeReport } = await import('../report/html.ts');
        log(`report: ${await writeReport({ dir: evalDir, out: join(evalDir, 'report.html') })}`);
      }
      log(`leaderboard: ${join(evalDir, 'leaderboard.md')}`);
      if (failed > 0) {
        process.exitCode = 1;
        log(`sob: ${failed} run(s) incomplete; re-run the same command to retry the failed records`);
      }
    });
}
