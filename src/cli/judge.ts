/** `sob judge`: deterministic checks, then LLM quality judges, then keep what passes. */
import { type Command, Option } from 'commander';
import { UserError } from '../core/errors.ts';
import { choiceOption, interruptible, intOption, log } from './common.ts';

const DIMS = ['accuracy', 'grounding', 'schema_quality'] as const;
/** An agreement statistic; undefined ones (a judge with no spread) are NaN, shown as n/a. */
const num = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');

interface JudgeFlags {
  judge: string[];
  threshold: number;
  combine: 'all' | 'majority' | 'mean';
  out: string;
  concurrency: number;
  baseUrl: string[];
  maxAttempts: number;
  maxRetries: number;
  timeoutMs: number;
  allowUngrounded?: boolean;
  reviewer?: string;
  rejectFlagged?: boolean;
  retryBaseMs: number;
  progressIntervalMs: number;
}

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
unique id, grounding) is rejected before any judge is asked. A judge answer that does not parse or
validate is asked again, then recorded as judge_error: the record goes to rejected.jsonl with
stage "judge_error" (not a quality verdict), and a re-run asks again. Each row of rejected.jsonl
has a stage: checks, judge_error, reviewer or quality. Re-running the same command resumes: a
judgment already made (same record id, judge and prompt hash) is not asked again.`,
    )
    .action(async (records: string, flags: JudgeFlags) => {
      if (flags.judge.length === 0) throw new UserError('give at least one --judge <provider:model>', 2);
      const { judgeRecords } = await import('../../judges/judge.ts');
      const { checkRecord } = await import('../../sources/checks.ts');
      const { backoffDelay, DEFAULT_BACKOFF, sleep } = await import('../core/retry.ts');
      const { createProvider } = await import('../providers/index.ts');
      const judges = await Promise.all(
        flags.judge.map((id) => createProvider(id, { baseUrls: flags.baseUrl })),
      );
      const reviewer = flags.reviewer
        ? await createProvider(flags.reviewer, { baseUrls: flags.baseUrl })
        : undefined;
      const { ProgressReporter } = await import('../runner/progress.ts');
      const progress = new ProgressReporter(
        process.stderr,
        flags.progressIntervalMs,
        Date.now,
        'judgments: ',
      );
      const stop = interruptible(() => progress.clear());
      const asProgress = (p: { total: number; done: number; failed: number; startedAt: number }) => ({
        ...p,
        resumed: 0,
        errors: p.failed,
        inputTokens: 0,
        outputTokens: 0,
        cost: 0,
      });
      let last: ReturnType<typeof asProgress> | undefined;
      try {
        const s = await judgeRecords({
          records,
          judges,
          reviewer,
          rejectFlagged: flags.rejectFlagged === true,
          check: (r, seen) => checkRecord(r, { seenIds: seen }),
          backoff: {
            delay: (f, ra) => backoffDelay(f, { ...DEFAULT_BACKOFF, baseMs: flags.retryBaseMs }, ra),
            sleep,
          },
          outDir: flags.out,
          threshold: flags.threshold,
          combine: flags.combine,
          concurrency: flags.concurrency,
          maxAttempts: flags.maxAttempts,
          maxRetries: flags.maxRetries,
          timeoutMs: flags.timeoutMs,
          requireGrounding: !flags.allowUngrounded,
          signal: stop.signal,
          onProgress: (p) => {
            last = asProgress(p);
            progress.update(last);
          },
          log: (line) => {
            progress.clear();
            log(line);
          },
        });
        if (last) progress.finish(last);
        const per = Object.entries(s.per_source)
          .map(([k, v]) => `${k} ${v.accepted}/${v.records}`)
          .join(', ');
        process.stdout.write(
          `${s.accepted} accepted, ${s.rejected} rejected (${s.rejected_by_checks} by the checks, ${s.judge_errors} judge errors${reviewer ? `, ${s.flagged_by_reviewer} flagged by the reviewer` : ''}) -> ${flags.out}\n` +
            (per ? `accepted per source: ${per}\n` : '') +
            s.agreement
              .map(
                (a) =>
                  `agreement ${a.a} ~ ${a.b} on ${a.n} records: kappa ${num(a.kappa)}, spearman ${DIMS.map((d) => `${d} ${num(a.spearman[d])}`).join(' ')}, mean |diff| ${DIMS.map((d) => `${d} ${num(a.mean_abs_diff[d])}`).join(' ')}`,
              )
              .join('\n') +
            (s.agreement.length ? '\n' : ''),
        );
        if (s.records === 0) throw new UserError(`${records}: no records to judge (an empty file?)`);
        if (s.rejected_by_checks === s.records)
          throw new UserError(
            `every record failed the deterministic checks (${s.records}; see ${flags.out}/rejected.jsonl, stage checks); no judge was asked`,
          );
        const judged = s.records - s.rejected_by_checks;
        if (judged > 0 && s.judge_errors === judged)
          throw new UserError(
            `every record judged failed: ${s.judge_errors} judge error${s.judge_errors === 1 ? '' : 's'} (see ${flags.out}/rejected.jsonl, stage judge_error); re-run to ask again`,
          );
      } catch (e) {
        if (!stop.interrupted()) throw e;
        progress.clear();
        log('interrupted: re-run the same command to resume');
        process.exitCode = 130;
      } finally {
        progress.clear();
        stop.dispose();
        await Promise.all([...judges, ...(reviewer ? [reviewer] : [])].map((j) => j.close?.()));
      }
    });
}
