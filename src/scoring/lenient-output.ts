/**
 * `sob score --match`, the parent's side: per evaluation folder, the lenient numbers for the
 * summary and the side file `lenient_records.jsonl` (streamed into the folder being built, which
 * is swapped in whole). The run's preparation (policy, judge service) is in lenient-run.ts, so
 * the main thread loads the matchers only with --match.
 */
import { LENIENT_SIDE_FILE, LenientAccumulator, type LenientData } from '../../metrics/lenient-summary.ts';
import type { JudgeService } from './judge-service.ts';
import type { LenientRowPart, MatchJob } from './line-types.ts';
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
