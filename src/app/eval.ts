/**
 * `sob eval` as one use case: build (when needed) -> run each model -> score -> leaderboard ->
 * report, in one eval directory, resumable as a whole (each step skips what is already done).
 * With no benchmark and no model: the bundled example corpus and the two built-in baselines,
 * offline. The command (`src/cli/eval.ts`) reads the flags into `EvalSettings` and calls
 * `evaluate`.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { plainDirs } from '../core/files.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import type { Source } from '../core/record.ts';
import { applyGates, type Gates, rowSubjects } from './gates.ts';
import { interruptible, log } from './io.ts';
import type { AskSettings } from './run.ts';

/** What `sob eval` was asked to do: its flags, read and checked by the command. */
export interface EvalSettings {
  /** The models (`provider:model`); none: the two built-in baselines. */
  models?: string[];
  /** Benchmark records or the user's own rows; none: the bundled example corpus. */
  benchmark?: string;
  /** Where everything goes (an absolute path). */
  evalDir: string;
  /** The gates, checked after the leaderboard (parsed before anything runs). */
  gates: Gates;
  /** How each model is asked (the options `sob run` shares). */
  ask: AskSettings;
  source?: Source;
  limit?: number;
  skipInvalid?: boolean;
  /** `--map`: our field -> the column of the user's rows that holds it. */
  map?: Record<string, string>;
  allowInvalidGroundTruth?: boolean;
  baseUrl: string[];
  stream: boolean;
  promptTemplate?: string;
  constrained: boolean;
  profile?: 'sob' | 'strict';
  bootstrapSamples: number;
  /** How resamples are drawn (`auto`: Poisson for strict summaries over 50,000 records). */
  bootstrapMethod?: 'auto' | 'cpython' | 'poisson';
  seed: number;
  match?: string;
  /** `--scorer`: scorers of your own (module paths), checked before anything runs. */
  scorers?: string[];
  epochs: number;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  /** Seconds. */
  batchDeadline?: number;
  progressIntervalMs: number;
  /** Write report.html. */
  report: boolean;
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

/**
 * Runs `sob eval`: every model over the benchmark, scored, one leaderboard (and the compliance
 * track's, for schema records), the HTML report and the gates. Progress goes to stderr, the
 * tables to stdout; an incomplete run, an unscored file (exit 1), an interrupt (130) or a failed
 * gate (3) set the process's exit code.
 */
export async function evaluate(s: EvalSettings): Promise<void> {
  const evalDir = s.evalDir;
  const gates = s.gates;
  // Every model named right before anything is built or asked (`--model foo:bar`: one line, exit 2).
  const { checkModelId } = await import('../providers/index.ts');
  for (const m of s.models ?? []) checkModelId(m);
  mkdirSync(evalDir, { recursive: true });
  // One `sob eval` per eval directory: a second one is refused before it builds or asks anything.
  const { acquireLock } = await import('../core/files.ts');
  acquireLock(evalDir, 'eval directory');
  const models = s.models?.length ? s.models : DEFAULT_MODELS;
  const scorers = s.scorers?.length
    ? await (await import('./score.ts')).checkedScorers(s.scorers)
    : undefined;
  if (s.benchmark && !existsSync(s.benchmark))
    throw new UserError(`no such benchmark: ${resolve(s.benchmark)}`);
  // Flat rows a user wrote (id, context, question, schema, ground_truth) become records first.
  const benchmark = s.benchmark
    ? (
        await (
          await import('../../sources/user-benchmark.ts')
        ).userBenchmark(resolve(s.benchmark), join(evalDir, 'benchmark'), {
          log,
          skipInvalid: s.skipInvalid,
          recordTimeoutMs: s.ask.recordTimeoutMs,
          map: s.map,
        })
      ).path
    : await buildExampleBenchmark(join(evalDir, 'benchmark'));
  log(`sob eval: ${models.length} model(s) over ${benchmark} -> ${evalDir}`);
  // Every record checked once, before any model is asked: a rejected one stops here (exit 2)
  // or, with --skip-invalid, is left out for every model.
  const { checkBenchmark, enforceCheck } = await import('../core/benchmark-records.ts');
  const { resolveBenchmark: benchmarkFile } = await import('../runner/run.ts');
  const check = await checkBenchmark(resolve(benchmarkFile(benchmark)), {
    source: s.source,
    limit: s.limit,
    allowInvalidGroundTruth: s.allowInvalidGroundTruth,
    recordTimeoutMs: s.ask.recordTimeoutMs,
  });
  enforceCheck(check, { skipInvalid: s.skipInvalid, log });
  // Contexts above the stated size, said once for every model, before any is asked.
  const { warnLargeContexts } = await import('../runner/context-size.ts');
  await warnLargeContexts(
    resolve(benchmarkFile(benchmark)),
    { source: s.source, limit: s.limit, contextWarnChars: s.ask.contextWarnChars },
    log,
  );
  const profile = s.profile ?? 'strict';
  const profileReason = s.profile
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
  const template = loadTemplate(s.promptTemplate);
  // Lenient matching (--match): prepared once, used for every model's answers.
  const match = s.match
    ? await (await import('../scoring/lenient-run.ts')).prepareLenientRun({
        policy: s.match,
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
      `interrupted: re-run the same command to resume${s.batch ? ' (batches already submitted, of every model, keep running at the provider and are collected then)' : ''}`,
    );
    process.exitCode = 130;
  };
  type Provider = Awaited<ReturnType<typeof createProvider>>;
  /** How `--batch` asks a model (`--batch-fallback`, `--batch-poll-ms`, `--batch-deadline`): the same for every pass. */
  const batchSettings = s.batch
    ? {
        fallback: s.batchFallback,
        pollMs: s.batchPollMs,
        deadlineMs: s.batchDeadline === undefined ? undefined : s.batchDeadline * 1000,
      }
    : undefined;
  /**
   * Everything the command's flags say about asking a model, made once and handed whole to every
   * step that asks it (the batch submission, the first epoch, epochs 2 and later), so no step
   * can miss an option; a step sets only what is its own (its run directory, its epoch, its log).
   */
  const runOptions = (model: string, provider: Provider) => ({
    provider,
    benchmark,
    // Made without following links: a symlinked runs/ or runs/<model> is refused.
    runDir: plainDirs(evalDir, ['runs', sanitizeModelId(model)], 'run directory'),
    ...s.ask,
    constrained: s.constrained,
    template,
    check,
    signal: stop.signal,
    batch: provider.batch ? batchSettings : undefined,
    // With --epochs, every answer says which sample it is (epoch 1 here; the others below).
    epoch: s.epochs > 1 ? 1 : undefined,
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
            source: s.source,
            limit: s.limit,
            exclude: check.rejected.map((r) => r.line),
          },
        },
      ],
      {
        outDir,
        summary: {
          bootstrapSamples: s.bootstrapSamples,
          bootstrapMethod: s.bootstrapMethod,
          seed: s.seed,
          topKErrors: 20,
        },
        // The user's own benchmark: the strict profile unless asked (the gold baseline scores 1.000).
        profile: { profile, assertFormats: false, reason: profileReason, ...(scorers ? { scorers } : {}) },
        recordTimeoutMs: s.ask.recordTimeoutMs,
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
    if (s.batch && models.length > 1) {
      for (const model of models) {
        if (stop.interrupted()) return interrupted();
        const provider = await createProvider(model, { baseUrls: s.baseUrl, stream: s.stream });
        try {
          if (!provider.batch) continue;
          const run = runOptions(model, provider);
          await runBenchmark({
            ...run,
            batch: run.batch && { ...run.batch, submitOnly: true },
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
      const provider = await createProvider(model, { baseUrls: s.baseUrl, stream: s.stream });
      if (s.batch && !provider.batch)
        log(`${model}: no batch interface (--batch is for openai: and gemini:); asked as usual`);
      // The runner's progress line, one per model, while it runs.
      progress = new ProgressReporter(process.stderr, s.progressIntervalMs, Date.now, `${model}: `);
      const bar = progress;
      try {
        const res = await runBenchmark({
          ...runOptions(model, provider),
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
        for (let epoch = 2; epoch <= s.epochs; epoch++) {
          const prefix = `${model} epoch ${epoch}/${s.epochs}: `;
          const bar = new ProgressReporter(process.stderr, s.progressIntervalMs, Date.now, prefix);
          progress = bar;
          const er = await runBenchmark({
            ...runOptions(model, provider),
            runDir: join(epochRunsDir(evalDir, epoch), name),
            epoch,
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
    await (await import('../report/fields.ts')).attachFields(rows, evaluation);
    writeFileAtomic(join(evalDir, 'leaderboard.md'), `${tables.leaderboardMarkdown(rows)}\n`);
    writeFileAtomic(join(evalDir, 'leaderboard.csv'), tables.leaderboardCsv(rows));
    writeFileAtomic(join(evalDir, 'leaderboard.json'), `${tables.leaderboardJson(rows)}\n`);
    process.stdout.write(`${tables.leaderboardTable(rows)}\n`);
  }
  // Schema records: the compliance track's table (leaderboard-compliance.{md,csv,json}).
  if (s.epochs > 1) {
    const epochs = await import('../report/epochs.ts');
    const { entries, incomplete } = await epochs.readEpochs(evalDir, models.map(sanitizeModelId), s.epochs);
    for (const s of incomplete) log(`epochs: ${s} not scored in every epoch: left out of epochs.md`);
    const md = epochs.epochsMarkdown(entries);
    writeFileAtomic(join(evalDir, 'epochs.json'), `${epochs.epochsJson(entries)}\n`);
    writeFileAtomic(join(evalDir, 'epochs.md'), `${md}\n`);
    // On the terminal Value Accuracy only; epochs.md has all seven metrics.
    process.stdout.write(`\n${epochs.epochsMarkdown(entries, ['leaf_value_em'])}\n`);
    log(`epochs: ${join(evalDir, 'epochs.md')}`);
  }
  const { writeComplianceLeaderboards } = await import('./compliance-leaderboard.ts');
  const compliance = await writeComplianceLeaderboards(evaluation, evalDir);

  if (s.report) {
    const { writeReport } = await import('../report/html.ts');
    const { runAccess } = await import('./run-access.ts');
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
      fieldTable: async () => (await import('../report/fields.ts')).fieldTable(evaluation),
      pairs: (baseline) => {
        const p = evaluationPairs(evaluation, baseline);
        return { pairs: p.pairs, unmatched: [...p.onlyCurrent, ...p.onlyBaseline] };
      },
    },
  );
}
