/** `sob judge`: deterministic checks, then LLM quality judges, then keep what passes. */
import { type Command, Option } from 'commander';
import { type JudgeSettings, judgeBenchmark } from '../app/judge.ts';
import { UserError } from '../core/errors.ts';
import { choiceOption, intOption } from './common.ts';

/** The flags are the settings, less the records (the argument). */
type JudgeFlags = Omit<JudgeSettings, 'records'>;

export function registerJudge(program: Command): void {
  program
    .command('judge')
    .description(
      'filter benchmark records: deterministic checks, then LLM quality judges (accuracy, grounding, schema quality)',
    )
    .argument('<records.jsonl>', 'benchmark records (what sob build writes)')
    .option(
      '--judge <provider:model>',
      'a judge; repeat for several',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .requiredOption('--out <dir>', 'writes accepted.jsonl, rejected.jsonl, judgments.jsonl, summary.json')
    .option(
      '--threshold <n>',
      'a record below this on any dimension (0-100) is dropped',
      intOption('--threshold'),
      60,
    )
    .option(
      '--combine <rule>',
      'several judges: all | majority | mean',
      choiceOption(['all', 'majority', 'mean'] as const),
      'all',
    )
    .option('--concurrency <n>', 'judge requests in flight', intOption('--concurrency', 1), 4)
    .option(
      '--base-url <url>',
      'OpenAI-compatible endpoint (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option(
      '--max-attempts <n>',
      'attempts at a parseable judge answer before judge_error',
      intOption('--max-attempts', 1),
      3,
    )
    .option(
      '--max-retries <n>',
      'transport retries per attempt (rate limit, server, timeout)',
      intOption('--max-retries'),
      3,
    )
    .option('--timeout-ms <n>', 'time limit per judge request', intOption('--timeout-ms', 1), 120_000)
    .option('--retry-base-ms <n>', 'first backoff pause', intOption('--retry-base-ms', 1), 1000)
    .option(
      '--reviewer <provider:model>',
      'also run the cross-check reviewer (missing fields, type mismatches, ungrounded values)',
    )
    .addOption(
      new Option('--progress-interval-ms <n>', 'progress line period when stderr is not a terminal')
        .argParser(intOption('--progress-interval-ms', 1))
        .default(10_000)
        .hideHelp(),
    )
    .option('--reject-flagged', 'reject a record the reviewer flags (default: record the flags only)')
    .option(
      '--judge-prompt <file>',
      "the judge's instructions in place of ours (a text file; the record and the reply schema are sent as before: docs/benchmarks.md)",
    )
    .option(
      '--allow-ungrounded',
      'keep records whose ground-truth values are not found in the context (default: reject)',
    )
    .addHelpText(
      'after',
      `
Examples:
  sob judge bench/records.jsonl --judge openai:gpt-4.1 --out bench/judged
  sob judge bench/records.jsonl --judge openai:gpt-4.1 --judge gemini:gemini-2.5-pro --combine majority --out bench/judged

A record that fails a deterministic check (shape, schema, ground truth vs schema, >= 3 properties,
unique id, grounding: a ground-truth string found in the context neither as written, nor as a date
or a number read from it, nor within a few edits; --allow-ungrounded keeps those) is rejected
before any judge is asked. A judge answer that does not parse or
validate is asked again, then recorded as judge_error: the record goes to rejected.jsonl with
stage "judge_error" (not a quality verdict), and a re-run asks again. The reviewer only flags: a
record it flags, or gives no valid answer on, is kept unless --reject-flagged. Each row of rejected.jsonl
has a stage: checks, judge_error, reviewer or quality. Re-running the same command resumes: a
judgment already made (same record id, judge and prompt hash) is not asked again.`,
    )
    .action(async (records: string, flags: JudgeFlags) => {
      if (flags.judge.length === 0) throw new UserError('give at least one --judge <provider:model>', 2);
      await judgeBenchmark({ records, ...flags });
    });
}
