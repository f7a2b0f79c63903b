/**
 * `sob eval`: build (when needed) -> run each model -> score -> leaderboard -> report, in one
 * eval directory, resumable as a whole. The flags are read into settings here; the work is
 * `evaluate` (`src/app/eval.ts`).
 */

import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ModelSpec } from '../app/eval-plan.ts';
import type { InputMode } from '../core/attachments.ts';
import { UserError } from '../core/errors.ts';
import {
  type AskFlags,
  askOptions,
  askSettings,
  batchOptions,
  fieldMapOf,
  inputModesOption,
  intOption,
  refuseSobPoisson,
  type ScoreOptionFlags,
  scoreOptions,
} from './common.ts';

import { CONFIG_SOURCE, suiteOption } from './eval-config.ts';
import { type GateFlags, gateOptions, parseGates, refuseFieldGatesWithoutFields } from './gates.ts';

interface EvalFlags extends Omit<AskFlags, 'promptTemplate'>, ScoreOptionFlags, GateFlags {
  /** Strings from the flags; a suite file's entries may carry their own options. */
  model?: (string | ModelSpec)[];
  input?: InputMode[];
  promptTemplate?: string[];
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
    .option('--constrained', "also hand the schema to the provider's structured-output mode", false)
    .option(
      '--input <mode>',
      "text (the record's transcript, the default) | document (its attachments instead: page images, PDFs, audio) | both; repeat it or give a comma list for one row per model and mode",
      inputModesOption(true),
    );
  // The same controls as sob run and sob score, from the same definitions.
  askOptions(cmd, { concurrency: 'requests in flight per model' });
  // Several prompt templates: one row per model and prompt.
  const prompt = cmd.options.find((o) => o.long === '--prompt-template');
  if (prompt) {
    prompt.description += '; repeat for several: one row per model and prompt';
    prompt.argParser((v: string, p: string[] | undefined) => [...(p ?? []), v]);
  }
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
  batchOptions(
    cmd,
    "ask through each provider's batch interface (openai:, gemini:, anthropic:); see sob run --help",
  ).option('--no-report', 'skip the HTML report');
  suiteOption(cmd)
    .addHelpText(
      'after',
      `
Examples:
  sob eval                                   # offline: the bundled corpus, gold vs skeleton baselines
  sob eval --model openai:gpt-4.1-mini --model gemini:gemini-2.5-flash --benchmark bench/records.jsonl
  sob eval my-rows.jsonl --model openai:gpt-4.1-mini   # flat rows you wrote (docs/records.md)
  sob eval --model openai:gpt-4.1-mini --benchmark bench --input text,document   # OCR text or the page?
  sob eval --config sob.yaml                 # a suite file: models with their options, prompts, gates

Rows: one per model x --input mode x --prompt-template. With text only and one prompt a row is
its model (folder openai_gpt-4.1-mini); a non-text mode adds @<mode> (openai_gpt-4.1-mini@document),
several prompts add +<file name> (+terse), and the rows are shown as openai:gpt-4.1-mini · document.

Layout: <eval-dir>/benchmark (when built), <eval-dir>/runs/<row>/ (one run directory each),
<eval-dir>/evaluation/<source>/<model>/ (scores), leaderboard.{md,csv,json}, report.html.
A benchmark of schema records (sob build jsonschemabench / schemas / probes) is scored on the
compliance track (evaluation/schema/<model>/) and gets leaderboard-compliance.{md,csv,json}:
declared and empirical coverage and compliance per dataset (add --constrained to hand the schema
to the provider's structured-output mode, where declared coverage means something).`,
    )
    .action(async (positional: string | undefined, flags: EvalFlags, command: Command) => {
      // The command line wins over the suite file: a benchmark given as the argument too.
      if (positional !== undefined && command.getOptionValueSource('benchmark') === CONFIG_SOURCE)
        flags.benchmark = positional;
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
      refuseFieldGatesWithoutFields(gates, flags.fields);
      refuseSobPoisson(flags);
      const { evaluate } = await import('../app/eval.ts');
      await evaluate({
        models: flags.model,
        benchmark: flags.benchmark,
        evalDir,
        gates,
        input: flags.input,
        prompts: flags.promptTemplate,
        ask: askSettings({ ...flags, promptTemplate: undefined }),
        source: flags.source,
        limit: flags.limit,
        skipInvalid: flags.skipInvalid,
        map: await fieldMapOf(flags.map),
        allowInvalidGroundTruth: flags.allowInvalidGroundTruth,
        baseUrl: flags.baseUrl,
        stream: flags.stream,
        constrained: flags.constrained,
        profile: flags.profile,
        bootstrapSamples: flags.bootstrapSamples,
        bootstrapMethod: flags.bootstrapMethod,
        seed: flags.seed,
        match: flags.match,
        scorers: flags.scorer,
        fields: flags.fields,
        epochs: flags.epochs,
        batch: flags.batch,
        batchFallback: flags.batchFallback,
        batchPollMs: flags.batchPollMs,
        batchDeadline: flags.batchDeadline,
        progressIntervalMs: flags.progressIntervalMs,
        report: flags.report,
      });
    });
}
