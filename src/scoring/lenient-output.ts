/**
 * `sob score --match`, the parent's side: per evaluation folder, the lenient numbers for the
 * summary and the side file `lenient_records.jsonl` (streamed into the folder being built, which
 * is swapped in whole); for the run, the judge service that answers the workers' unsettled pairs
 * (`judge-service.ts`).
 */
import { basename, resolve } from 'node:path';
import { LenientAccumulator, type LenientData } from '../../metrics/lenient-summary.ts';
import { JudgeService } from './judge-service.ts';
import {
  LENIENT_SIDE_FILE,
  type LenientRowPart,
  type MatchJob,
  matchPolicy,
  policyNamesJudge,
} from './lenient.ts';
import type { EvalFolder, FolderStream } from './output.ts';

/** What `scoreFiles` needs for `--match`. */
export interface LenientRun {
  job: MatchJob;
  /** How the summaries name the policy: `default` or the file's name. */
  policyName: string;
  /** Answers the workers' unsettled pairs (with `--match-judge`). */
  judge?: JudgeService;
}

/**
 * One folder's lenient numbers and side file: the side file is streamed into the folder being
 * built (`EvalFolder`'s temp folder), so it is swapped in whole with the rows.
 */
export class LenientOutput {
  private readonly acc = new LenientAccumulator();
  private readonly side: FolderStream;

  constructor(folder: EvalFolder) {
    this.side = folder.stream(LENIENT_SIDE_FILE);
  }

  add(part: LenientRowPart, weight: number): void {
    this.acc.add(part, weight);
    this.side.write(part.side);
  }

  /** The summary's data (the side file is synced and closed when the folder commits). */
  data(run: LenientRun): LenientData {
    return this.acc.data(run.policyName, run.judge ? run.job.judge : null);
  }
}

export interface LenientRunOptions {
  /** `default` or a policy file. */
  policy: string;
  /** The judge's provider id (`--match-judge`), if any. */
  judge?: string;
  baseUrls?: string[];
  /** Where judge answers are cached (`<dir>/<judge>/<hash[0..2]>/<hash>.json`). */
  cacheDir: string;
  concurrency?: number;
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
    log: o.log,
  });
  return run;
}
