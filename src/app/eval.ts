/**
 * `sob eval` as one use case: build (when needed) -> run each model -> score -> leaderboard ->
 * report, in one eval directory, resumable as a whole (each step skips what is already done).
 * With no benchmark and no model: the bundled example corpus and the two built-in baselines,
 * offline. The command (`src/cli/eval.ts`) reads the flags into `EvalSettings` and calls
 * `evaluate`.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { type InputMode, moveAttachments } from '../core/attachments.ts';
import { UserError } from '../core/errors.ts';
import { checkPlainDirs, plainDirs } from '../core/files.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { SOURCES, type Source } from '../core/record.ts';
import type { ModelSpec, Variant } from './eval-plan.ts';
import { applyGates, type Gates, rowSubjects } from './gates.ts';
import { interruptible, log } from './io.ts';
import type { AskSettings } from './run.ts';

/** What `sob eval` was asked to do: its flags, read and checked by the command. */
export interface EvalSettings {
  /**
   * The models (`provider:model`, or a suite file's entry with its own options); none: the two
   * built-in baselines.
   */
  models?: (string | ModelSpec)[];
  /** `--input`: the modes each model is asked in, one row each (default: text). */
  input?: InputMode[];
  /** `--prompt-template`, repeated: one row per model and prompt (none: the built-in prompt). */
  prompts?: string[];
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
  /** One prompt template (the same as `prompts: [file]`). */
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
  /** `fields.jsonl` in each evaluation folder (default true; false: `--no-fields`). */
  fields?: boolean;
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
/** Pages of the bundled PDFs (sources/examples/pdf: four one-page PDFs). */
const PDF_PAGES = 4;
const EXAMPLES = resolve(PACKAGE_ROOT, 'sources/examples');

/**
 * The bundled corpus as one benchmark (text passages, four PDF pages, two meetings), built once.
 * Its PDF records carry their page (the PDF and its render at 150 dpi) in `attachments/`, so
 * `--input document` can be run on its image records.
 */
export async function buildExampleBenchmark(dir: string): Promise<string> {
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
  // Said at once, step by step and page by page: the scanned page's OCR takes a while the first time.
  log(
    `sob eval: building the bundled benchmark (the example corpus: ${steps.length} steps) -> ${dir}; the first time, its scanned PDF page is OCR'd (cached after)`,
  );
  const what = { hotpotqa: 'text passages', pdf: 'PDF pages', ami: 'meetings' } as const;
  let first = true;
  for (const [i, s] of steps.entries()) {
    log(
      `building the bundled benchmark: step ${i + 1}/${steps.length}, ${what[s.kind]} (${basename(s.input)})`,
    );
    let pages = 0;
    const pdfs = s.kind === 'pdf' ? PDF_PAGES : 0;
    await buildBenchmark({
      ...s,
      out: join(scratch, 'records.jsonl'),
      append: !first,
      // The PDF pages as they are read ("scan.pdf: page 1/1 (ocr)"); the build's other lines stay quiet.
      log: (line) => {
        const m = /^(.*): page \d+\/\d+ \((.+)\)$/.exec(line);
        if (m)
          log(
            `building the bundled benchmark: PDF page ${++pages}/${pdfs} read (${basename(m[1])}, ${m[2]})`,
          );
      },
    });
    first = false;
  }
  // The PDF records' pages (attachments/, by content hash) first, the records file last.
  moveAttachments(scratch, dir);
  for (const f of ['rejected.jsonl', 'manifest.json', 'records.jsonl']) {
    if (existsSync(join(scratch, f))) renameSync(join(scratch, f), join(dir, f));
  }
  rmSync(scratch, { recursive: true, force: true });
  return out;
}

type Provider = Awaited<ReturnType<typeof import('../providers/index.ts').createProvider>>;
type Check = import('../core/benchmark-records.ts').BenchmarkCheck;
type Progress = InstanceType<typeof import('../runner/progress.ts').ProgressReporter>;

/** What every step of one `sob eval` shares: the benchmark as checked, where things go, the counts. */
interface EvalRun {
  s: EvalSettings;
  evalDir: string;
  /** `<eval-dir>/evaluation`. */
  evaluation: string;
  /** Every folder this command writes, made (never through a link) before anything is built. */
  folders: ReturnType<typeof evalFolders>;
  /** `--scorer`: the scorers of your own, checked before anything runs. */
  scorers?: Awaited<ReturnType<typeof import('./score.ts')['checkedScorers']>>;
  benchmark: string;
  check: Check;
  profile: 'sob' | 'strict';
  profileReason: string;
  match?: Awaited<ReturnType<typeof import('../scoring/lenient-run.ts').prepareLenientRun>>;
  stop: ReturnType<typeof interruptible>;
  /** The progress line showing now (cleared on Ctrl-C). */
  progress?: Progress;
  /** Runs incomplete, answer files not scored, rows with at least one answer. */
  failed: number;
  scoringFailed: number;
  answered: number;
}

/**
 * Every folder `sob eval` writes inside its eval directory, checked to be plain folders (a
 * symbolic link at any level is refused with one line) before anything is built, asked or
 * scored, and made as plain folders when written to: `benchmark/`, `runs/<model>/`, `evaluation/`, and for `--epochs N` each
 * `epochs/<e>/runs/<model>/` and `epochs/<e>/evaluation/`. The per-source folders of each
 * evaluation (`text/`, `image/`, ...), made by the scorer, must not be links either. The files at
 * the top (leaderboard.*, epochs.*, report.html, gate-summary.md) are written by rename, which
 * replaces a link instead of following it.
 */
export function evalFolders(
  evalDir: string,
  models: string[],
  epochs: number,
): {
  benchmark: () => string;
  runs: (epoch: number, model: string) => string;
  evaluation: (epoch: number) => string;
} {
  const runsOf = (e: number) => (e === 1 ? ['runs'] : ['epochs', String(e), 'runs']);
  const evaluationOf = (e: number) => (e === 1 ? ['evaluation'] : ['epochs', String(e), 'evaluation']);
  checkPlainDirs(evalDir, ['benchmark'], 'benchmark folder');
  for (let e = 1; e <= epochs; e++) {
    for (const m of models) checkPlainDirs(evalDir, [...runsOf(e), m], 'run directory');
    for (const source of SOURCES) checkPlainDirs(evalDir, [...evaluationOf(e), source], 'evaluation folder');
  }
  return {
    benchmark: () => plainDirs(evalDir, ['benchmark'], 'benchmark folder'),
    runs: (e, m) => plainDirs(evalDir, [...runsOf(e), m], 'run directory'),
    evaluation: (e) => plainDirs(evalDir, evaluationOf(e), 'evaluation folder'),
  };
}

/**
 * Runs `sob eval`: every row (model x input mode x prompt) over the benchmark, scored, one
 * leaderboard (and the compliance track's, for schema records), the HTML report and the gates.
 * Progress goes to stderr, the tables to stdout; an incomplete run, an unscored file (exit 1), an
 * interrupt (130) or a failed gate (3) set the process's exit code.
 */
export async function evaluate(s: EvalSettings): Promise<void> {
  const { loadPrompts, planVariants } = await import('./eval-plan.ts');
  // The rows, their prompts read and their folders told apart, before anything is made.
  const variants = planVariants(
    modelSpecs(s),
    s.input ?? [],
    loadPrompts(s.prompts ?? (s.promptTemplate ? [s.promptTemplate] : [])),
  );
  // Every model named right before anything is built or asked (`--model foo:bar`: one line, exit 2).
  const { checkModelId } = await import('../providers/index.ts');
  for (const v of variants) checkModelId(v.spec.model);
  mkdirSync(s.evalDir, { recursive: true });
  // One `sob eval` per eval directory: a second one is refused before it builds or asks anything.
  const { acquireLock } = await import('../core/files.ts');
  acquireLock(s.evalDir, 'eval directory');
  const scorers = s.scorers?.length
    ? await (await import('./score.ts')).checkedScorers(s.scorers)
    : undefined;
  // Every folder this command writes, checked (and made) before anything is built or asked.
  const folders = evalFolders(
    s.evalDir,
    variants.map((v) => v.folder),
    s.epochs,
  );
  const run = await openBenchmark(s, variants, folders, scorers);
  await refuseDocumentless(run, variants);
  try {
    if (!(await askAll(run, variants))) return interrupted(s);
  } finally {
    run.stop.dispose();
  }
  if (run.answered === 0)
    throw new UserError(
      `no model answered any record (${variants.map((v) => v.display ?? v.spec.model).join(', ')}); see errors.jsonl in ${join(s.evalDir, 'runs')}/<model>/`,
    );
  const rows = await writeLeaderboards(run, variants);
  await finish(run, variants, rows);
}

/** The models as specs: the settings' (strings or specs), else the two built-in baselines. */
function modelSpecs(s: EvalSettings): ModelSpec[] {
  const given = s.models?.length ? s.models : DEFAULT_MODELS;
  return given.map((m) => (typeof m === 'string' ? { model: m } : m));
}

function interrupted(s: EvalSettings): void {
  log(
    `interrupted: re-run the same command to resume${s.batch ? ' (batches already submitted, of every model, keep running at the provider and are collected then)' : ''}`,
  );
  process.exitCode = 130;
}

/**
 * The benchmark: the user's rows built into records (or the bundled corpus), every record
 * checked once before any model is asked (a rejected one stops here, exit 2, or with
 * --skip-invalid is left out for every row), the profile said, lenient matching prepared.
 */
async function openBenchmark(
  s: EvalSettings,
  variants: Variant[],
  folders: EvalRun['folders'],
  scorers: EvalRun['scorers'],
): Promise<EvalRun> {
  const evalDir = s.evalDir;
  if (s.benchmark && !existsSync(s.benchmark))
    throw new UserError(`no such benchmark: ${resolve(s.benchmark)}`);
  // Flat rows a user wrote (id, context, question, schema, ground_truth) become records first.
  const benchmark = s.benchmark
    ? (
        await (
          await import('../../sources/user-benchmark.ts')
        ).userBenchmark(resolve(s.benchmark), folders.benchmark(), {
          log,
          skipInvalid: s.skipInvalid,
          recordTimeoutMs: s.ask.recordTimeoutMs,
          map: s.map,
        })
      ).path
    : await buildExampleBenchmark(folders.benchmark());
  const models = new Set(variants.map((v) => v.spec.model)).size;
  log(
    `sob eval: ${models} model(s)${variants.length > models ? `, ${variants.length} rows (model x input x prompt)` : ''} over ${benchmark} -> ${evalDir}`,
  );
  const { checkBenchmark, enforceCheck } = await import('../core/benchmark-records.ts');
  const { resolveBenchmark } = await import('../runner/run.ts');
  const check = await checkBenchmark(resolve(resolveBenchmark(benchmark)), {
    source: s.source,
    limit: s.limit,
    allowInvalidGroundTruth: s.allowInvalidGroundTruth,
    recordTimeoutMs: s.ask.recordTimeoutMs,
  });
  enforceCheck(check, { skipInvalid: s.skipInvalid, log });
  // Contexts above the stated size, said once for every model, before any is asked.
  const { warnLargeContexts } = await import('../runner/context-size.ts');
  await warnLargeContexts(
    resolve(resolveBenchmark(benchmark)),
    { source: s.source, limit: s.limit, contextWarnChars: s.ask.contextWarnChars },
    log,
  );
  const profile = s.profile ?? 'strict';
  const profileReason = s.profile
    ? 'as asked'
    : "the default for sob eval: your own benchmark, the reference's defects fixed; --profile sob for parity";
  log(`profile: ${profile} (${profileReason})`);
  // Lenient matching (--match): prepared once, used for every row's answers.
  const match = s.match
    ? await (await import('../scoring/lenient-run.ts')).prepareLenientRun({
        policy: s.match,
        cacheDir: join('runs', '.judge-cache'),
        baseUrls: [],
        log,
      })
    : undefined;
  const run: EvalRun = {
    s,
    evalDir,
    evaluation: folders.evaluation(1),
    folders,
    scorers,
    benchmark,
    check,
    profile,
    profileReason,
    match,
    stop: interruptible(() => run.progress?.clear()),
    failed: 0,
    scoringFailed: 0,
    answered: 0,
  };
  return run;
}

/**
 * `--input document|both` checked for every row before the first is asked: a provider that
 * reads no documents, or a record that carries none, stops the eval (exit 2), naming the records.
 */
async function refuseDocumentless(run: EvalRun, variants: Variant[]): Promise<void> {
  const { refuseDocumentless } = await import('../runner/run.ts');
  for (const v of variants) {
    if (v.input === 'text') continue;
    const provider = await providerOf(run, v);
    try {
      refuseDocumentless({ provider, input: v.input }, run.check);
    } finally {
      await provider.close?.();
    }
  }
}

async function providerOf(run: EvalRun, v: Variant): Promise<Provider> {
  const { createProvider } = await import('../providers/index.ts');
  return createProvider(v.spec.model, {
    baseUrls: v.spec.baseUrl ?? run.s.baseUrl,
    stream: v.spec.stream ?? run.s.stream,
  });
}

/**
 * Everything the settings say about asking a row, made once and handed whole to every step that
 * asks it (the batch submission, the first epoch, epochs 2 and later), so no step can miss an
 * option; a step sets only what is its own (its run directory, its epoch, its log).
 */
async function runOptions(run: EvalRun, v: Variant, provider: Provider) {
  const s = run.s;
  return {
    provider,
    benchmark: run.benchmark,
    // Made without following links: a symlinked runs/ or runs/<row> is refused.
    runDir: run.folders.runs(1, v.folder),
    ...s.ask,
    ...definedOf(v.spec.ask ?? {}),
    constrained: v.spec.constrained ?? s.constrained,
    template: v.prompt.template,
    input: v.inputGiven ? v.input : undefined,
    documentTools:
      v.input === 'text' ? undefined : (await import('../../sources/documents.ts')).documentTools,
    check: run.check,
    signal: run.stop.signal,
    batch:
      provider.batch && s.batch
        ? {
            fallback: s.batchFallback,
            pollMs: s.batchPollMs,
            deadlineMs: s.batchDeadline === undefined ? undefined : s.batchDeadline * 1000,
          }
        : undefined,
    // With --epochs, every answer says which sample it is (epoch 1 here; the others below).
    epoch: s.epochs > 1 ? 1 : undefined,
  };
}

function definedOf<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Partial<T>;
}

/** Every row asked and scored, epoch by epoch; false when interrupted. */
async function askAll(run: EvalRun, variants: Variant[]): Promise<boolean> {
  // --batch with several rows: every row's batches go to the provider first, so they run side
  // by side (a batch may take up to 24 h); the loop below then collects each.
  if (run.s.batch && variants.length > 1 && !(await submitBatches(run, variants))) return false;
  for (const v of variants) if (!(await askVariant(run, v))) return false;
  return true;
}

async function submitBatches(run: EvalRun, variants: Variant[]): Promise<boolean> {
  const { runBenchmark } = await import('../runner/run.ts');
  for (const v of variants) {
    if (run.stop.interrupted()) return false;
    const provider = await providerOf(run, v);
    try {
      if (!provider.batch) continue;
      const o = await runOptions(run, v, provider);
      await runBenchmark({
        ...o,
        batch: o.batch && { ...o.batch, submitOnly: true },
        // Only the batches it submitted are news here; the run below says the rest.
        log: (line) => {
          if (line.startsWith('batch ')) log(`${rowName(v)}: ${line}`);
        },
      });
    } finally {
      await provider.close?.();
    }
  }
  return true;
}

/** How a row's lines start: its display name, else its model. */
function rowName(v: Variant): string {
  return v.display ?? v.spec.model;
}

/** One row: epoch 1 into runs/<folder>, scored; epochs 2..N each into its own; false when interrupted. */
async function askVariant(run: EvalRun, v: Variant): Promise<boolean> {
  const s = run.s;
  const provider = await providerOf(run, v);
  if (s.batch && !provider.batch)
    log(`${rowName(v)}: no batch interface (--batch is for openai: and gemini:); asked as usual`);
  try {
    const first = await askOnce(run, v, provider, `${rowName(v)}: `, {});
    if (!first) return false;
    if (first.progress.done === 0) {
      log(
        `${rowName(v)}: no record answered (${first.progress.failed} failed; see ${join(first.runDir, 'errors.jsonl')}); nothing to score`,
      );
      return true;
    }
    run.answered++;
    await scoreRun(run, first.runDir, v.folder, run.evaluation);
    if (run.stop.interrupted()) return false;
    // --epochs N: the same records asked again, epoch by epoch, each scored on its own.
    for (let epoch = 2; epoch <= s.epochs; epoch++) {
      const runDir = run.folders.runs(epoch, v.folder);
      const er = await askOnce(run, v, provider, `${rowName(v)} epoch ${epoch}/${s.epochs}: `, {
        runDir,
        epoch,
      });
      if (!er) return false;
      if (er.progress.done > 0) await scoreRun(run, er.runDir, v.folder, run.folders.evaluation(epoch));
      if (run.stop.interrupted()) return false;
    }
    return true;
  } finally {
    run.progress?.clear();
    await provider.close?.();
  }
}

/** One run of a row (one epoch), its progress line on stderr; undefined when interrupted. */
async function askOnce(
  run: EvalRun,
  v: Variant,
  provider: Provider,
  prefix: string,
  own: { runDir?: string; epoch?: number },
) {
  const { runBenchmark } = await import('../runner/run.ts');
  const { ProgressReporter } = await import('../runner/progress.ts');
  const bar = new ProgressReporter(process.stderr, run.s.progressIntervalMs, Date.now, prefix);
  run.progress = bar;
  const res = await runBenchmark({
    ...(await runOptions(run, v, provider)),
    ...definedOf(own),
    onProgress: (p) => bar.update(p),
    // Several rows write here one after another: each line says whose it is.
    log: (line) => {
      bar.clear();
      log(`${prefix}${line}`);
    },
  });
  bar.finish(res.progress);
  log(`${prefix}${res.status} (${res.runDir})`);
  if (res.status === 'interrupted') return undefined;
  if (res.status !== 'complete') run.failed++;
  return res;
}

/** Scores a run directory's answers into an evaluation folder (the benchmark's truths). */
async function scoreRun(run: EvalRun, runDir: string, name: string, outDir: string): Promise<void> {
  const s = run.s;
  log(`${name}: scoring its answers (the seven metrics and their bootstrap intervals) -> ${outDir}`);
  const { scoreFiles } = await import('../scoring/score-files.ts');
  const { resolveBenchmark } = await import('../runner/run.ts');
  const scored = await scoreFiles(
    [
      {
        file: join(runDir, 'responses.jsonl'),
        modelDir: name,
        outDir,
        // Ground truths and schemas from the benchmark; unanswered records reported.
        benchmark: {
          path: resolveBenchmark(run.benchmark),
          source: s.source,
          limit: s.limit,
          exclude: run.check.rejected.map((r) => r.line),
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
      profile: {
        profile: run.profile,
        assertFormats: false,
        reason: run.profileReason,
        ...(run.scorers ? { scorers: run.scorers } : {}),
        fields: s.fields !== false,
      },
      recordTimeoutMs: s.ask.recordTimeoutMs,
      match: run.match,
      log,
    },
  );
  for (const r of scored)
    if (r.error) {
      log(`sob: ${r.error}`);
      run.scoringFailed++;
    }
}

/**
 * The evaluation folder's manifest and display names, then leaderboard.{md,csv,json} (printed
 * too), epochs.{md,json} with --epochs, and the compliance track's for schema records.
 */
async function writeLeaderboards(run: EvalRun, variants: Variant[]): Promise<LeaderboardRow[]> {
  const { evalDir, evaluation, s } = run;
  const { resolveBenchmark } = await import('../runner/run.ts');
  // The benchmark's per-source totals drive the leaderboard's weights and coverage.
  const manifest = join(resolveBenchmark(run.benchmark), '..', 'manifest.json');
  // Written by rename, so a symlink planted in the eval directory is replaced, never followed.
  const { writeFileAtomic, writeJsonAtomic } = await import('../core/files.ts');
  if (existsSync(manifest)) writeFileAtomic(join(evaluation, 'manifest.json'), readFileSync(manifest));
  else {
    // Records written by hand (no sob build, no manifest): the loader's totals stand in, and
    // say how many complexities it derived.
    const { makeManifest } = await import('../../sources/manifest.ts');
    const m = makeManifest(run.check.totals, basename(run.check.file));
    if (run.check.derived.size > 0) m.schema_complexity_derived = run.check.derived.size;
    writeJsonAtomic(join(evaluation, 'manifest.json'), m);
  }
  writeDisplayNames(evaluation, variants, writeJsonAtomic);
  const { hasSobResults } = await import('../report/compliance.ts');
  log(
    `writing the leaderboard${s.report ? ' and the HTML report' : ''} of ${variants.length} row(s) -> ${evalDir}`,
  );
  let rows: LeaderboardRow[] = [];
  if (hasSobResults(evaluation)) {
    const { buildLeaderboard, loadEvaluation, readDisplayNames } = await import('../report/evaluation.ts');
    const tables = await import('../report/tables.ts');
    const ev = await loadEvaluation(evaluation);
    rows = buildLeaderboard(ev, readDisplayNames(undefined, evaluation));
    await (await import('../report/usage.ts')).attachUsage(rows, ev);
    (await import('../report/row-settings.ts')).attachRunSettings(rows, ev);
    await (await import('../report/fields.ts')).attachFields(rows, evaluation);
    writeFileAtomic(join(evalDir, 'leaderboard.md'), `${tables.leaderboardMarkdown(rows)}\n`);
    writeFileAtomic(join(evalDir, 'leaderboard.csv'), tables.leaderboardCsv(rows));
    writeFileAtomic(join(evalDir, 'leaderboard.json'), `${tables.leaderboardJson(rows)}\n`);
    process.stdout.write(`${tables.leaderboardTable(rows)}\n`);
  }
  if (s.epochs > 1) {
    const epochs = await import('../report/epochs.ts');
    const folders = variants.map((v) => v.folder);
    const { entries, incomplete } = await epochs.readEpochs(evalDir, folders, s.epochs);
    for (const f of incomplete) log(`epochs: ${f} not scored in every epoch: left out of epochs.md`);
    const md = epochs.epochsMarkdown(entries);
    writeFileAtomic(join(evalDir, 'epochs.json'), `${epochs.epochsJson(entries)}\n`);
    writeFileAtomic(join(evalDir, 'epochs.md'), `${md}\n`);
    // On the terminal Value Accuracy only; epochs.md has all seven metrics.
    process.stdout.write(`\n${epochs.epochsMarkdown(entries, ['leaf_value_em'])}\n`);
    log(`epochs: ${join(evalDir, 'epochs.md')}`);
  }
  return rows;
}

/**
 * `evaluation/display_names.json`: the rows' names (`openai:m · document`), so `sob leaderboard`
 * and `sob report` on the folder show them too; names of other folders already there are kept.
 * Not written when no row has one (a text-only eval with one prompt: today's folder names).
 */
function writeDisplayNames(
  evaluation: string,
  variants: Variant[],
  writeJson: (file: string, v: unknown) => void,
): void {
  const ours = variants.filter((v) => v.display !== undefined);
  if (ours.length === 0) return;
  const file = join(evaluation, 'display_names.json');
  let names: Record<string, unknown> = {};
  if (existsSync(file))
    try {
      const old = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (old && typeof old === 'object' && !Array.isArray(old)) names = old as Record<string, unknown>;
    } catch {
      // not JSON: ours replace it
    }
  for (const v of ours) names[v.folder] = v.display;
  writeJson(file, names);
}

/** The compliance leaderboard, the report, what went wrong (exit 1), and the gates (exit 3). */
async function finish(run: EvalRun, variants: Variant[], rows: LeaderboardRow[]): Promise<void> {
  const { evalDir, evaluation, s } = run;
  // Schema records: the compliance track's table (leaderboard-compliance.{md,csv,json}).
  const { writeComplianceLeaderboards } = await import('./compliance-leaderboard.ts');
  const compliance = await writeComplianceLeaderboards(evaluation, evalDir);
  if (s.report) {
    const { writeReport } = await import('../report/html.ts');
    const { runAccess } = await import('./run-access.ts');
    log(
      `report: ${await writeReport({ dir: evalDir, out: join(evalDir, 'report.html'), runs: await runAccess() })}`,
    );
  }
  const { hasSobResults } = await import('../report/compliance.ts');
  if (hasSobResults(evaluation)) log(`leaderboard: ${join(evalDir, 'leaderboard.md')}`);
  if (compliance) log(`compliance leaderboard: ${compliance}`);
  if (run.failed > 0) {
    process.exitCode = 1;
    log(`sob: ${run.failed} run(s) incomplete; re-run the same command to retry the failed records`);
  }
  if (run.scoringFailed > 0) {
    process.exitCode = 1;
    log(`sob: ${run.scoringFailed} answer file(s) not scored; re-run the same command to score them again`);
  }
  const gates = s.gates;
  const { evaluationPairs } = await import('../report/gates.ts');
  const { foldersWithoutFields: foldersWithout } = await import('../report/fields.ts');
  await applyGates(
    {
      ...gates,
      summary:
        gates.summary ??
        (gates.thresholds.length > 0 || gates.baseline ? join(evalDir, 'gate-summary.md') : undefined),
    },
    {
      command: `sob eval (${[...new Set(variants.map((v) => v.spec.model))].join(', ')})`,
      subjects: rowSubjects(rows),
      fieldTable: async () => (await import('../report/fields.ts')).fieldTable(evaluation),
      withoutFields: () => foldersWithout(evaluation),
      pairs: (baseline) => {
        const p = evaluationPairs(evaluation, baseline);
        return { pairs: p.pairs, unmatched: [...p.onlyCurrent, ...p.onlyBaseline] };
      },
    },
  );
}
