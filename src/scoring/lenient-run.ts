/**
 * `sob score --match`: the run's preparation on the main thread: the policy checked, and the
 * judge service that answers the workers' unsettled pairs (`judge-service.ts`) when one is named.
 */
import { basename, resolve } from 'node:path';
import { JudgeService } from './judge-service.ts';
import { type MatchJob, matchPolicy, policyNamesJudge } from './lenient.ts';
import type { LenientRun } from './lenient-output.ts';

export interface LenientRunOptions {
  /** `default` or a policy file. */
  policy: string;
  /** The judge's provider id (`--match-judge`), if any. */
  judge?: string;
  baseUrls?: string[];
  /** Where judge answers are cached (`<dir>/<judge>/<hash[0..2]>/<hash>.json`). */
  cacheDir: string;
  concurrency?: number;
  /** `--judge-timeout`: the judge's deadline for the whole run (ms). */
  judgeDeadlineMs?: number;
  log?: (line: string) => void;
}

/**
 * Checks the policy (one line naming the file, line and key when it is wrong), and starts the
 * judge when one is named. Says on `log` when a judge will never be asked.
 */
export async function prepareLenientRun(o: LenientRunOptions): Promise<LenientRun> {
  const isDefault = o.policy === 'default' || o.policy === '';
  const policy = matchPolicy(isDefault ? 'default' : o.policy, o.judge !== undefined);
  const job: MatchJob = {
    policy: isDefault ? 'default' : resolve(o.policy),
    judge: o.judge ?? null,
  };
  const run: LenientRun = { job, policyName: isDefault ? 'default' : basename(o.policy) };
  if (o.judge === undefined) {
    const asNamed = matchPolicy(isDefault ? 'default' : o.policy, true);
    if (!isDefault && policyNamesJudge(asNamed))
      o.log?.(`${run.policyName}: its judge matchers act as their "first" matcher (no --match-judge given)`);
    return run;
  }
  if (!policy.useJudge)
    o.log?.(`${run.policyName}: use_judge is false, so --match-judge ${o.judge} is never asked`);
  else if (!isDefault && !policyNamesJudge(policy))
    o.log?.(
      `${run.policyName}: no fields/types entry uses the judge; only schemas' x-sob-match annotations can ask ${o.judge}`,
    );
  const { createProvider } = await import('../providers/index.ts');
  const provider = await createProvider(o.judge, { baseUrls: o.baseUrls });
  run.judge = new JudgeService({
    provider,
    cacheDir: o.cacheDir,
    concurrency: o.concurrency,
    deadlineMs: o.judgeDeadlineMs,
    log: o.log,
  });
  return run;
}
