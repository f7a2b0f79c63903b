/**
 * `sob judge` as one use case: deterministic checks, then LLM quality judges, then keep what
 * passes. The command (`src/cli/judge.ts`) reads the flags into `JudgeSettings` and calls
 * `judgeBenchmark`.
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import { interruptible, log } from './io.ts';

const DIMS = ['accuracy', 'grounding', 'schema_quality'] as const;
/** An agreement statistic; undefined ones (a judge with no spread) are NaN, shown as n/a. */
const num = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');

/** What `sob judge` was asked: the records, the judges and how they are asked. */
export interface JudgeSettings {
  /** Benchmark records (what sob build writes). */
  records: string;
  /** Judges, `provider:model`; at least one. */
  judge: string[];
  threshold: number;
  combine: 'all' | 'majority' | 'mean';
  /** Where accepted.jsonl, rejected.jsonl, judgments.jsonl and summary.json go. */
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
  /** A file whose text replaces the judge's instructions (the reply schema stays). */
  judgePrompt?: string;
}

/** The judge's instructions from `--judge-prompt <file>`: its text, which must not be empty. */
function readJudgePrompt(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`--judge-prompt ${file}: cannot be read (${(e as Error).message})`, 2);
  }
  if (text.trim() === '') throw new UserError(`--judge-prompt ${file}: the file is empty`, 2);
  return text;
}

/** "3 by the checks (2 for ground-truth values not found in the context: --allow-ungrounded keeps them)". */
function byChecks(s: { rejected_by_checks: number; rejected_for_grounding: number }): string {
  const g = s.rejected_for_grounding;
  if (g === 0) return `${s.rejected_by_checks} by the checks`;
  const other = s.rejected_by_checks - g;
  return `${s.rejected_by_checks} by the checks: ${g} for ground-truth values not found in the context (--allow-ungrounded keeps them)${other > 0 ? `, ${other} for other checks` : ''}`;
}

/** "2 flagged by the reviewer (1 reviewer error), kept: --reject-flagged rejects them". */
function flaggedWords(
  s: { flagged_by_reviewer: number; reviewer_errors: number },
  rejecting: boolean,
): string {
  const errors =
    s.reviewer_errors > 0 ? ` (${s.reviewer_errors} where the reviewer gave no valid answer)` : '';
  const fate =
    s.flagged_by_reviewer === 0
      ? ''
      : rejecting
        ? ', rejected (--reject-flagged)'
        : ', kept (--reject-flagged rejects them)';
  return `${s.flagged_by_reviewer} flagged by the reviewer${errors}${fate}`;
}

/**
 * Runs `sob judge`: the counts and agreement on stdout, progress on stderr; an interrupt leaves
 * the judgments made for a resume (exit 130).
 */
export async function judgeBenchmark(settings: JudgeSettings): Promise<void> {
  const { records } = settings;
  const judgePrompt = settings.judgePrompt === undefined ? undefined : readJudgePrompt(settings.judgePrompt);
  const { judgeRecords } = await import('../../judges/judge.ts');
  const { checkRecord } = await import('../../sources/checks.ts');
  const { backoffDelay, DEFAULT_BACKOFF, sleep } = await import('../core/retry.ts');
  const { createProvider } = await import('../providers/index.ts');
  const judges = await Promise.all(
    settings.judge.map((id) => createProvider(id, { baseUrls: settings.baseUrl })),
  );
  const reviewer = settings.reviewer
    ? await createProvider(settings.reviewer, { baseUrls: settings.baseUrl })
    : undefined;
  const { ProgressReporter } = await import('../runner/progress.ts');
  const progress = new ProgressReporter(process.stderr, settings.progressIntervalMs, Date.now, 'judgments: ');
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
      rejectFlagged: settings.rejectFlagged === true,
      check: (r, seen) => checkRecord(r, { seenIds: seen }),
      backoff: {
        delay: (f, ra) => backoffDelay(f, { ...DEFAULT_BACKOFF, baseMs: settings.retryBaseMs }, ra),
        sleep,
      },
      outDir: settings.out,
      threshold: settings.threshold,
      combine: settings.combine,
      concurrency: settings.concurrency,
      maxAttempts: settings.maxAttempts,
      maxRetries: settings.maxRetries,
      timeoutMs: settings.timeoutMs,
      requireGrounding: !settings.allowUngrounded,
      judgePrompt,
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
      `${s.accepted} accepted, ${s.rejected} rejected (${byChecks(s)}, ${s.judge_errors} judge errors${reviewer ? `, ${flaggedWords(s, settings.rejectFlagged === true)}` : ''}) -> ${settings.out}\n` +
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
        `every record failed the deterministic checks (${s.records}; see ${settings.out}/rejected.jsonl, stage checks); no judge was asked${s.rejected_for_grounding > 0 ? `; ${s.rejected_for_grounding} only for ground-truth values not found in the context, which --allow-ungrounded keeps` : ''}`,
      );
    const judged = s.records - s.rejected_by_checks;
    if (judged > 0 && s.judge_errors === judged)
      throw new UserError(
        `every record judged failed: ${s.judge_errors} judge error${s.judge_errors === 1 ? '' : 's'} (see ${settings.out}/rejected.jsonl, stage judge_error); re-run to ask again`,
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
}
