/**
 * `sob eval`: build (when needed) -> run each model -> score -> leaderboard -> report, in one
 * eval directory, resumable as a whole (each step skips what is already done). With no
 * arguments: the bundled example corpus and the two built-in baselines, offline.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { plainDirs } from '../core/files.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import {
  type AskFlags,
  askOptions,
  askSettings,
  batchOptions,
  interruptible,
  intOption,
  log,
  type ScoreOptionFlags,
  scoreOptions,
} from './common.ts';

import { applyGates, type GateFlags, gateOptions, parseGates, rowSubjects } from './gates.ts';

interface EvalFlags extends AskFlags, ScoreOptionFlags, GateFlags {
  model: string[];
  benchmark?: string;
  evalDir: string;
  constrained: boolean;
  report: boolean;
  progressIntervalMs: number;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  epochs: number;
  batchDeadline?: number;
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
    .argument('[benchmark]', 'the benchmark, as --benchmark (either spelling)')
    .option(
      '--benchmark <path>',
      'benchmark records (JSONL, with manifest.json beside it), or your own rows (JSONL, JSON or CSV with id, context, question, schema, ground_truth: read as `sob build records` reads them, into <eval-dir>/benchmark); default: the bundled example corpus',
    )
    .option('--eval-dir <dir>', 'where everything goes; re-running the same command resumes', 'runs/eval')
    .option('--constrained', "also hand the schema to the provider's structured-output mode", false);
  // The same controls as sob run and sob score, from the same definitions.
  askOptions(cmd, { concurrency: 'requests in flight per model' });
  scoreOptions(
    cmd,
    "sob (parity with the published leaderboard) | strict (the reference's defects fixed; the default here: your own benchmark)",
  );
  cmd.option(
    '--epochs <n>',
    'ask each record N times (each answer kept with its epoch); epochs.{md,json}: mean over epochs, between-epoch SD, records that change',
    intOption('--epochs', 1),
    1,
  );
  gateOptions(cmd);
  batchOptions(cmd, "ask through each provider's batch interface (openai:, gemini:); see sob run --help")
    .option('--no-report', 'skip the HTML report')
    .addHelpText(
      'after',
      `
Examples:
  sob eval                                   # offline: the bundled corpus, gold vs skeleton baselines
  sob eval --model openai:gpt-4.1-mini --model gemini:gemini-2.5-flash --benchmark bench/records.jsonl
  sob eval my-rows.jsonl --model openai:gpt-4.1-mini   # flat rows you wrote (docs/records.md)

Layout: <eval-dir>/benchmark (when built), <eval-dir>/runs/<model>/ (one run directory each),
<eval-dir>/evaluation/<source>/<model>/ (scores), leaderboard.{md,csv,json}, report.html.
A benchmark of schema records (sob build jsonschemabench / schemas / probes) is scored on the
compliance track (evaluation/schema/<model>/) and gets leaderboard-compliance.{md,csv,json}:
declared and empirical coverage and compliance per dataset (add --constrained to hand the schema
to the provider's structured-output mode, where declared coverage means something).`,
    )
    .action(async (positional: string | undefined, flags: EvalFlags) => {
      if (
        positional !== undefined &&
        flags.benchmark !== undefined &&
        resolve(positional) !== resolve(flags.benchmark)
      )
        throw new UserError(
          `two benchmarks given: ${positional} and --benchmark ${flags.benchmark}; give one`,
          2,
        );
      flags.benchmark ??= positional;
      const evalDir = resolve(flags.evalDir);
      const gates = parseGates(flags);
      mkdirSync(evalDir, { recursive: true });
      // One `sob eval` per eval directory: a second one is refused before it builds or asks anything.
      const { acquireLock } = await import('../core/files.ts');
      acquireLock(evalDir, 'eval directory');
      const models = flags.model?.length ? flags.model : DEFAULT_MODELS;
      if (flags.benchmark && !existsSync(flags.benchmark))
        throw new UserError(`no such benchmark: ${resolve(flags.benchmark)}`);
      // Flat rows a user wrote (id, context, question, schema, ground_truth) become records first.
      const benchmark = flags.benchmark
        ? (
            await (
              await import('../../sources/user-benchmark.ts')
            ).userBenchmark(resolve(flags.benchmark), join(evalDir, 'benchmark'), {
              log,
              skipInvalid: flags.skipInvalid,
            })
          ).path
        : await buildExampleBenchmark(join(evalDir, 'benchmark'));
      log(`sob eval: ${models.length} model(s) over ${benchmark} -> ${evalDir}`);
      // Every record checked once, before any model is asked: a rejected one stops here (exit 2)
      // or, with --skip-invalid, is left out for every model.
      const { checkBenchmark, enforceCheck } = await import('../core/benchmark-records.ts');
      const { resolveBenchmark: benchmarkFile } = await import('../runner/run.ts');
      const check = await checkBenchmark(resolve(benchmarkFile(benchmark)), {
        source: flags.source,
        limit: flags.limit,
        allowInvalidGroundTruth: flags.allowInvalidGroundTruth,
      });
      enforceCheck(check, { skipInvalid: flags.skipInvalid, log });
      const profile = flags.profile ?? 'strict';
      const profileReason = flags.profile
        ? 'as asked'
        : "the default for sob eval: your own benchmark, the reference's defects fixed; --profile sob for parity";
      log(`profile: ${profile} (${profileReason})`);

      const { createProvider } = await import('../providers/index.ts');
      const { runBenchmark, resolveBenchmark } = await import('../runner/run.ts');
      const { loadTemplate } = await import('../runner/prompt.ts');
      const { sanitizeModelId } = await import('../runner/run-dir.ts');
      const { scoreFiles } = await import('../scoring/score-files.ts');
      const { ProgressReporter } = await import('../runner/progress.ts');
      const { epochEvaluationDir, epochRunsDir } = await import('../report/epochs.ts');
      const evaluation = join(evalDir, 'evaluation');
      const template = loadTemplate(flags.promptTemplate);
      // Lenient matching (--match): prepared once, used for every model's answers.
      const match = flags.match
        ? await (await import('../scoring/lenient-run.ts')).prepareLenientRun({
            policy: flags.match,
            cacheDir: join('runs', '.judge-cache'),
            baseUrls: [],
            log,
          })
        : undefined;
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
        // Made without following links: a symlinked runs/ or runs/<model> is refused.
        runDir: plainDirs(evalDir, ['runs', sanitizeModelId(model)], 'run directory'),
        ...askSettings(flags),
        constrained: flags.constrained,
        template,
        check,
        signal: stop.signal,
        // With --epochs, every answer says which sample it is (epoch 1 here; the others below).
        epoch: flags.epochs > 1 ? 1 : undefined,
      });
      let scoringFailed = 0;
      /** Scores a run directory's answers into an evaluation folder (the benchmark's truths, strict). */
      const scoreRun = async (runDir: string, name: string, outDir: string) => {
        const scored = await scoreFiles(
          [
            {
              file: join(runDir, 'responses.jsonl'),
              modelDir: name,
              outDir,
              // Ground truths and schemas from the benchmark; unanswered records reported.
              benchmark: {
                path: resolveBenchmark(benchmark),
                source: flags.source,
                limit: flags.limit,
                exclude: check.rejected.map((r) => r.line),
              },
            },
          ],
          {
            outDir,
            summary: { bootstrapSamples: flags.bootstrapSamples, seed: flags.seed, topKErrors: 20 },
            // The user's own benchmark: the strict profile unless asked (the gold baseline scores 1.000).
            profile: { profile, assertFormats: false, reason: profileReason },
            match,
            log,
          },
        );
        for (const r of scored)
          if (r.error) {
            log(`sob: ${r.error}`);
            scoringFailed++;
          }
      };
      try {
        // --batch with several batch models: every model's batches go to the provider first, so
        // they run side by side (a batch may take up to 24 h); the loop below then collects each.
        if (flags.batch && models.length > 1) {
          for (const model of models) {
            if (stop.interrupted()) return interrupted();
            const provider = await createProvider(model, { baseUrls: flags.baseUrl, stream: flags.stream });
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
          const provider = await createProvider(model, { baseUrls: flags.baseUrl, stream: flags.stream });
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
                  ? {
                      fallback: flags.batchFallback,
                      pollMs: flags.batchPollMs,
                      deadlineMs: flags.batchDeadline === undefined ? undefined : flags.batchDeadline * 1000,
                    }
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
            await scoreRun(res.runDir, name, evaluation);
            if (stop.interrupted()) return interrupted();
            // --epochs N: the same records asked again, epoch by epoch, each scored on its own.
            for (let epoch = 2; epoch <= flags.epochs; epoch++) {
              const prefix = `${model} epoch ${epoch}/${flags.epochs}: `;
              const bar = new ProgressReporter(process.stderr, flags.progressIntervalMs, Date.now, prefix);
              progress = bar;
              const er = await runBenchmark({
                ...runOptions(model, provider),
                runDir: join(epochRunsDir(evalDir, epoch), name),
                epoch,
                batch:
                  flags.batch && provider.batch
                    ? { fallback: flags.batchFallback, pollMs: flags.batchPollMs }
                    : undefined,
                onProgress: (p) => bar.update(p),
                log: (line) => {
                  bar.clear();
                  log(`${prefix}${line}`);
                },
              });
              bar.finish(er.progress);
              log(`${prefix}${er.status} (${er.runDir})`);
              if (er.status === 'interrupted') return interrupted();
              if (er.status !== 'complete') failed++;
              if (er.progress.done > 0) await scoreRun(er.runDir, name, epochEvaluationDir(evalDir, epoch));
              if (stop.interrupted()) return interrupted();
            }
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
      const manifest = join(resolveBenchmark(benchmark), '..', 'manifest.json');
      // Written by rename, so a symlink planted in the eval directory is replaced, never followed.
      const { writeFileAtomic, writeJsonAtomic } = await import('../core/files.ts');
      if (existsSync(manifest)) writeFileAtomic(join(evaluation, 'manifest.json'), readFileSync(manifest));
      else {
        // Records written by hand (no sob build, no manifest): the loader's totals stand in, and
        // say how many complexities it derived.
        const { makeManifest } = await import('../../sources/manifest.ts');
        const m = makeManifest(check.totals, basename(check.file));
        if (check.derived.size > 0) m.schema_complexity_derived = check.derived.size;
        writeJsonAtomic(join(evaluation, 'manifest.json'), m);
      }
      const { hasSobResults } = await import('../report/compliance.ts');
      let rows: import('../../metrics/leaderboard.ts').LeaderboardRow[] = [];
      if (hasSobResults(evaluation)) {
        const { buildLeaderboard, loadEvaluation } = await import('../report/evaluation.ts');
        const tables = await import('../report/tables.ts');
        const ev = await loadEvaluation(evaluation);
        rows = buildLeaderboard(ev, {});
        await (await import('../report/usage.ts')).attachUsage(rows, ev);
        writeFileAtomic(join(evalDir, 'leaderboard.md'), `${tables.leaderboardMarkdown(rows)}\n`);
        writeFileAtomic(join(evalDir, 'leaderboard.csv'), tables.leaderboardCsv(rows));
        writeFileAtomic(join(evalDir, 'leaderboard.json'), `${tables.leaderboardJson(rows)}\n`);
        process.stdout.write(`${tables.leaderboardTable(rows)}\n`);
      }
      // Schema records: the compliance track's table (leaderboard-compliance.{md,csv,json}).
      if (flags.epochs > 1) {
        const epochs = await import('../report/epochs.ts');
        const { entries, incomplete } = await epochs.readEpochs(
          evalDir,
          models.map(sanitizeModelId),
          flags.epochs,
        );
        for (const s of incomplete) log(`epochs: ${s} not scored in every epoch: left out of epochs.md`);
        const md = epochs.epochsMarkdown(entries);
        writeFileAtomic(join(evalDir, 'epochs.json'), `${epochs.epochsJson(entries)}\n`);
        writeFileAtomic(join(evalDir, 'epochs.md'), `${md}\n`);
        // On the terminal Value Accuracy only; epochs.md has all seven metrics.
        process.stdout.write(`\n${epochs.epochsMarkdown(entries, ['leaf_value_em'])}\n`);
        log(`epochs: ${join(evalDir, 'epochs.md')}`);
      }
      const { writeComplianceLeaderboards } = await import('./leaderboard-compliance.ts');
      const compliance = await writeComplianceLeaderboards(evaluation, evalDir);

      if (flags.report) {
        const { writeReport } = await import('../report/html.ts');
        const { runAccess } = await import('./report.ts');
        log(
          `report: ${await writeReport({ dir: evalDir, out: join(evalDir, 'report.html'), runs: await runAccess() })}`,
        );
      }
      if (hasSobResults(evaluation)) log(`leaderboard: ${join(evalDir, 'leaderboard.md')}`);
      if (compliance) log(`compliance leaderboard: ${compliance}`);
      if (failed > 0) {
        process.exitCode = 1;
        log(`sob: ${failed} run(s) incomplete; re-run the same command to retry the failed records`);
      }
      if (scoringFailed > 0) {
        process.exitCode = 1;
        log(`sob: ${scoringFailed} answer file(s) not scored; re-run the same command to score them again`);
      }
      const { evaluationPairs } = await import('../report/gates.ts');
      await applyGates(
        {
          ...gates,
          summary:
            gates.summary ??
            (gates.thresholds.length > 0 || gates.baseline ? join(evalDir, 'gate-summary.md') : undefined),
        },
        {
          command: `sob eval (${models.join(', ')})`,
          subjects: rowSubjects(rows),
          pairs: (baseline) => {
            const p = evaluationPairs(evaluation, baseline);
            return { pairs: p.pairs, unmatched: [...p.onlyCurrent, ...p.onlyBaseline] };
          },
        },
      );
    });
}
