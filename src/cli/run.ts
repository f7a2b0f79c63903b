/** `sob run`: ask one model every record of a benchmark into a resumable run directory. */
import { type Command, Option } from 'commander';
import { runModel } from '../app/run.ts';
import type { InputMode } from '../core/attachments.ts';
import {
  type AskFlags,
  askOptions,
  askSettings,
  batchOptions,
  fieldMapOf,
  inputModesOption,
  intOption,
  numberOption,
} from './common.ts';

interface RunFlags extends AskFlags {
  model: string;
  benchmark: string;
  runDir?: string;
  constrained: boolean;
  retryBaseMs: number;
  progressIntervalMs: number;
  maxResponseMb: number;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  batchDeadline?: number;
  batchMaxRequests?: number;
  batchMaxMb?: number;
  input?: InputMode[];
}

export function registerRun(program: Command): void {
  const run = program
    .command('run')
    .description('ask a model every record of a benchmark; writes a resumable run directory')
    .requiredOption(
      '--model <provider:model>',
      'openai:<model> | gemini:<model> | anthropic:<model> | local:<onnx-dir> | replay:<responses.jsonl> | baseline:gold | baseline:skeleton | baseline:instance',
    )
    .requiredOption(
      '--benchmark <path>',
      'benchmark records (JSONL), or a folder holding records.jsonl, or your own rows (JSONL, JSON or CSV with id, context, question, schema, ground_truth: read as `sob build records` reads them, into runs/benchmarks/)',
    )
    .option(
      '--run-dir <dir>',
      'run directory (default runs/<run-id>, fixed by model, benchmark, prompt and settings)',
    )
    .option('--constrained', "also hand the schema to the provider's structured-output mode", false)
    .option(
      '--input <mode>',
      "text (the record's transcript, the default) | document (its attachments instead: page images, PDFs, audio) | both",
      inputModesOption(false),
    );
  askOptions(run, { concurrency: 'requests in flight at once' }).option(
    '--max-response-mb <n>',
    'a reply larger than this is an error (too_large), not read into memory',
    numberOption('--max-response-mb', 0.001, 4096),
    16,
  );
  batchOptions(
    run,
    "ask through the provider's batch interface (openai:, gemini:, anthropic:): half the price, answers within 24 h; a killed run resumes polling the same batch",
  )
    .option(
      '--batch-max-requests <n>',
      'split into batches of at most N requests (default: the provider limit, 50,000)',
      intOption('--batch-max-requests', 1),
    )
    .option(
      '--batch-max-mb <n>',
      'split into batches of at most N MB of input (default: the provider limit: OpenAI 200, Gemini 20)',
      numberOption('--batch-max-mb', 0.001, 4096),
    )
    .addOption(
      new Option('--retry-base-ms <n>', 'first backoff pause')
        .argParser(intOption('--retry-base-ms', 0))
        .default(1000)
        .hideHelp(),
    )
    .addHelpText(
      'after',
      `
Keys come from the environment only (OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY). Re-running the same
command (same --run-dir, or none) resumes: answered records are skipped, failed ones retried.
Then score it with: sob score <run-dir>

Examples:
  sob run --model openai:gpt-4.1-mini --benchmark records.jsonl
  sob run --model openai:Qwen/Qwen3-8B --base-url http://gpu1:8000/v1 --base-url http://gpu2:8000/v1 \\
      --benchmark records.jsonl --concurrency 64
  sob run --model gemini:gemini-2.5-flash --benchmark records.jsonl --source image --constrained
  sob run --model anthropic:claude-haiku-4-5 --benchmark records.jsonl --constrained --batch
  sob run --model baseline:skeleton --benchmark records.jsonl --run-dir runs/skeleton
  sob run --model openai:gpt-4.1-mini --benchmark records.jsonl --batch --batch-fallback online

With --batch the batch ids and states are kept in <run-dir>/batches.json: Ctrl-C (or a crash)
leaves the batch running at the provider, and the same command later polls it and collects its
answers (it never submits the same records twice).`,
    )
    .action(async (flags: RunFlags) => {
      await runModel({
        ...flags,
        input: flags.input?.[0],
        map: await fieldMapOf(flags.map),
        ask: askSettings(flags),
      });
    });
}
