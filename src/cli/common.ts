/** Shared CLI plumbing: option parsers that fail as usage errors, and stderr logging. */
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { evaluationDirOf } from '../app/evaluation-dir.ts';
import { interruptible, log } from '../app/io.ts';
import { INPUT_MODES, type InputMode } from '../core/attachments.ts';
import { RECORD_BUDGET_MS } from '../core/budget.ts';
import { UserError } from '../core/errors.ts';
import { MODALITIES, type Modality, SOURCES, type Source } from '../core/record.ts';

export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

/** A benchmark source: a modality, or `schema` (the compliance track's schema-only records). */
export function sourceOption(v: string): Source {
  if (!(SOURCES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`expected one of ${SOURCES.join(', ')}`);
  }
  return v as Source;
}

export function modalityOption(v: string): Modality {
  if (!(MODALITIES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`expected one of ${MODALITIES.join(', ')}`);
  }
  return v as Modality;
}

export function choiceOption<T extends string>(choices: readonly T[]): (v: string) => T {
  return (v: string) => {
    if (!(choices as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return v as T;
  };
}

// The progress log, the Ctrl-C handling and the evaluation folder a path stands for live with
// the application functions that use them.
export { evaluationDirOf, interruptible, log };

/**
 * --batch, --batch-fallback, --batch-poll-ms, --batch-deadline (sob run and sob eval). A `--batch-*` option given
 * without `--batch` is a usage error (exit 2), not silently ignored while the run goes online.
 */
export function batchOptions(cmd: Command, batchHelp: string): Command {
  return cmd
    .hook('preAction', (c) => {
      if (c.opts().batch) return;
      const given = c.options
        .filter((o) => o.long?.startsWith('--batch-') && c.getOptionValueSource(o.attributeName()) === 'cli')
        .map((o) => o.long);
      if (given.length > 0)
        throw new UserError(
          `${given.join(', ')} only appl${given.length === 1 ? 'ies' : 'y'} with --batch`,
          2,
        );
    })
    .option('--batch', batchHelp)
    .option(
      '--batch-fallback <where>',
      'failed requests of a batch go to a follow-up batch, or are asked one by one (online)',
      choiceOption(['batch', 'online'] as const),
      'batch',
    )
    .option(
      '--batch-poll-ms <n>',
      'time between batch status checks',
      intOption('--batch-poll-ms', 1),
      30_000,
    )
    .option(
      '--batch-deadline <seconds>',
      'stop waiting for the batches after this long: their records stay pending at the provider, and a re-run collects them (default: no deadline)',
      intOption('--batch-deadline', 1),
    );
}

export function numberOption(name: string, min: number, max: number): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a number from ${min} to ${max}`);
    }
    return n;
  };
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** The flags `askOptions` defines, as commander hands them over. */
export interface AskFlags {
  source?: Source;
  limit?: number;
  contextWarnChars: number;
  concurrency: number;
  baseUrl: string[];
  temperature: number;
  maxTokens: number;
  timeoutMs: number;
  compileTimeoutMs: number;
  generationTimeoutMs: number;
  maxRetries: number;
  stream: boolean;
  promptTemplate?: string;
  cache?: string | boolean;
  skipInvalid?: boolean;
  /** `--map` as given (parsed by `fieldMapOf`). */
  map?: string;
  allowInvalidGroundTruth?: boolean;
  recordTimeoutMs: number;
  pdfOverLimit: 'images' | 'refuse';
  maxImageEdge?: number;
  maxPdfPages?: number;
}

/** `--input text|document|both`, each given value checked (a comma list allowed where `many`). */
export function inputModesOption(many: boolean): (v: string, prev?: InputMode[]) => InputMode[] {
  return (v, prev) => {
    const list = v
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
    for (const m of list)
      if (!(INPUT_MODES as readonly string[]).includes(m))
        throw new InvalidArgumentError(
          `expected ${INPUT_MODES.join(', ')}${many ? ' (repeat it, or a comma list)' : ''}; got ${JSON.stringify(m)}`,
        );
    if (!many && (list.length !== 1 || prev))
      throw new InvalidArgumentError('give one of text, document, both');
    return [...new Set([...(prev ?? []), ...(list as InputMode[])])];
  };
}

/**
 * How a model is asked, one definition for `sob run` and `sob eval` (so the two never drift):
 * the selection (--source, --limit, --skip-invalid), the endpoint and concurrency, the paper's
 * generation settings and their limits, the prompt and the response cache (and, hidden, the
 * progress line's period when stderr is not a terminal).
 */
export function askOptions(cmd: Command, what: { concurrency: string }): Command {
  cmd
    .option(
      '--source <s>',
      'only records of this source: text | image | audio | schema (a record without one takes it)',
      sourceOption,
    )
    .option('--limit <n>', 'only the first N records', intOption('--limit', 1))
    .option(
      '--context-warn-chars <n>',
      'say, per record, before asking, when a context is longer than N characters (with its estimated tokens); 0: never',
      intOption('--context-warn-chars', 0),
      200_000,
    );
  return recordCheckOptions(cmd)
    .option('--concurrency <n>', what.concurrency, intOption('--concurrency', 1), 8)
    .addOption(
      new Option('--base-url <url>', 'OpenAI-compatible endpoint; repeat to spread requests over several')
        .argParser(collect)
        .default([], 'OPENAI_BASE_URL'),
    )
    .option('--temperature <t>', 'sampling temperature', numberOption('--temperature', 0, 2), 0)
    .option('--max-tokens <n>', 'most output tokens per answer', intOption('--max-tokens', 1), 2048)
    .option('--timeout-ms <n>', 'time limit per request', intOption('--timeout-ms', 1), 120_000)
    .option(
      '--compile-timeout-ms <n>',
      "schema records: JSONSchemaBench's grammar-compilation limit, the time to the first streamed token; over it the schema counts as not processed (0: off)",
      intOption('--compile-timeout-ms', 0),
      40_000,
    )
    .option(
      '--generation-timeout-ms <n>',
      "schema records: JSONSchemaBench's generation limit, from the first token to the end; over it the answer counts as invalid (0: off)",
      intOption('--generation-timeout-ms', 0),
      40_000,
    )
    .option(
      '--max-retries <n>',
      'retries per record after a rate limit, server error, timeout or network error (0: none)',
      intOption('--max-retries', 0),
      5,
    )
    .option(
      '--no-stream',
      'ask for whole answers instead of streamed ones (then no ttft_ms/tpot_ms; for servers that cannot stream)',
    )
    .option(
      '--prompt-template <file>',
      'prompt template with {{context}} {{question}} {{schema}} ([system] / [user] sections optional)',
    )
    .option(
      '--cache [dir]',
      'reuse answers to identical requests from a response cache (default dir runs/.cache)',
    )
    .option(
      '--pdf-over-limit <what>',
      '--input document|both: a PDF over the provider\'s page or byte limit is sent as its page images, or the record refused (docs/providers.md "Documents")',
      choiceOption(['images', 'refuse'] as const),
      'images',
    )
    .option(
      '--max-image-edge <px>',
      "--input document|both: longest image edge sent, instead of the provider's (a self-hosted server's own limit); larger images are downscaled",
      intOption('--max-image-edge', 16),
    )
    .option(
      '--max-pdf-pages <n>',
      "--input document|both: most pages of a PDF sent as a PDF, instead of the provider's; longer ones follow --pdf-over-limit",
      intOption('--max-pdf-pages', 1),
    )
    .addOption(
      new Option('--progress-interval-ms <n>', 'progress line period when stderr is not a terminal')
        .argParser(intOption('--progress-interval-ms', 1))
        .default(10_000)
        .hideHelp(),
    );
}

/**
 * What to do with benchmark records the check rejects (src/core/benchmark-records.ts), one
 * definition for `run`, `eval` and `score --benchmark`.
 */
export function recordCheckOptions(cmd: Command): Command {
  return recordTimeoutOption(cmd)
    .option(
      '--skip-invalid',
      'go on with the benchmark records that pass the checks, leaving out the rejected ones (default: a rejected record stops the command, exit 2, before anything is asked or scored)',
    )
    .option(
      '--map <field=column,...>',
      'your own rows: which of your columns holds each field (id, context, question, schema, ground_truth, source, schema_complexity, difficulty, attachments: file paths relative to the rows file), as sob build records --map, e.g. --map id=doc_id,context=passage',
    )
    .option(
      '--allow-invalid-ground-truth',
      'keep records whose ground truth fails its own schema (warned, not rejected): the SOB image set has one, and the reference scores it',
    );
}

/**
 * `--record-timeout-ms`: the one budget per record of untrusted work, the record check's (a
 * ground truth a catastrophic `pattern` backtracks on) and the scorer's (`sob build`, `run`,
 * `eval`, `score`).
 */
export function recordTimeoutOption(cmd: Command): Command {
  return cmd.option(
    '--record-timeout-ms <n>',
    'time budget per record, for the record check and for scoring: a record over it is rejected (checked) or reported (scored), never hung on',
    intOption('--record-timeout-ms', 1),
    RECORD_BUDGET_MS,
  );
}

/** `--map context=passage,...` as {our field: their column} (a usage error when malformed). */
export async function fieldMapOf(spec: string | undefined): Promise<Record<string, string> | undefined> {
  if (spec === undefined) return undefined;
  return (await import('../../sources/records.ts')).parseFieldMap(spec);
}

/** The response cache folder `--cache [dir]` names, if any. */
export function cacheDirOf(cache: string | boolean | undefined): string | undefined {
  return cache === true ? join('runs', '.cache') : cache || undefined;
}

/**
 * What `askOptions`' flags set in a run (`sob run` and each model of `sob eval`): the selection,
 * the paper's generation settings and limits, the cache and the record checks.
 */
export function askSettings(flags: AskFlags) {
  return {
    source: flags.source,
    limit: flags.limit,
    concurrency: flags.concurrency,
    temperature: flags.temperature,
    maxTokens: flags.maxTokens,
    timeoutMs: flags.timeoutMs,
    maxRetries: flags.maxRetries,
    coverageLimits: coverageLimits(flags.compileTimeoutMs, flags.generationTimeoutMs),
    cacheDir: cacheDirOf(flags.cache),
    skipInvalid: flags.skipInvalid,
    allowInvalidGroundTruth: flags.allowInvalidGroundTruth,
    recordTimeoutMs: flags.recordTimeoutMs,
    contextWarnChars: flags.contextWarnChars,
    pdfOverLimit: flags.pdfOverLimit,
    documentLimits: { maxImageEdge: flags.maxImageEdge, maxPdfPages: flags.maxPdfPages },
  };
}

/** The flags `scoreOptions` defines. */
export interface ScoreOptionFlags {
  profile?: 'sob' | 'strict';
  bootstrapSamples: number;
  bootstrapMethod: 'auto' | 'cpython' | 'poisson';
  seed: number;
  match?: string;
  scorer?: string[];
  /** `--no-fields`: false. */
  fields: boolean;
}

/**
 * How answers are scored, one definition for `sob score` and `sob eval`: the profile, the
 * bootstrap intervals, lenient matching and whether `fields.jsonl` is written.
 */
export function scoreOptions(cmd: Command, profileHelp: string): Command {
  return cmd
    .option('--profile <p>', profileHelp, choiceOption(['sob', 'strict'] as const))
    .option(
      '--bootstrap-samples <n>',
      'bootstrap resamples for the 95% intervals',
      intOption('--bootstrap-samples'),
      1000,
    )
    .option(
      '--bootstrap-method <m>',
      "how resamples are drawn: cpython (the reference's draws), poisson (the Poisson bootstrap: strict only, reproducible, far faster), auto (poisson for strict summaries over 50,000 records)",
      choiceOption(['auto', 'cpython', 'poisson'] as const),
      'auto',
    )
    .option('--seed <n>', 'bootstrap seed (the weighted summary uses seed + 1)', intOption('--seed'), 42)
    .option(
      '--match <policy>',
      'lenient matching beside the seven metrics: "default" or a policy file (JSON or YAML)',
    )
    .option(
      '--scorer <file>',
      'a scorer of your own: a module whose default export (record, answer) returns named numbers in [0, 1], each a column with its 95% interval; repeat for several (docs/metrics.md)',
      (v: string, p: string[] | undefined) => [...(p ?? []), v],
    )
    .option(
      '--no-fields',
      'skip fields.jsonl (one row per record and gold leaf; large at a million records): the rows and summary are the same, the field table, field flips and field gates need it',
    );
}

/** The sob profile reproduces the reference's draws: the Poisson bootstrap is refused with it. */
export function refuseSobPoisson(flags: Pick<ScoreOptionFlags, 'profile' | 'bootstrapMethod'>): void {
  if (flags.profile === 'sob' && flags.bootstrapMethod === 'poisson')
    throw new UserError(
      '--bootstrap-method poisson needs --profile strict (the sob profile draws as the reference does, for parity)',
      2,
    );
}

/** The coverage limits from the two flags (both 0: none). */
export function coverageLimits(compileMs: number, generationMs: number) {
  if (compileMs === 0 && generationMs === 0) return undefined;
  const off = 365 * 24 * 3600 * 1000;
  return { compileMs: compileMs || off, generationMs: generationMs || off };
}

/** `--engine` of `sob ocr` and `sob build pdf`: a local OCR engine, or a vision-language model. */
export type OcrEngineFlag = 'both' | 'tesseract' | 'paddle' | `${'openai' | 'gemini'}:${string}`;

/** `--engine`: both | tesseract | paddle, or `openai:<model>` / `gemini:<model>` (a vision-language model). */
export function engineOption(v: string): OcrEngineFlag {
  if (v === 'both' || v === 'tesseract' || v === 'paddle') return v;
  if (/^(openai|gemini):.+$/.test(v)) return v as OcrEngineFlag;
  throw new InvalidArgumentError('use both, tesseract, paddle, openai:<model> or gemini:<model>');
}
