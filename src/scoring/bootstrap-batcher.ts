/**
 * The bootstrap batcher of a scoring run: folders whose rows are in wait (at most `FLUSH_MS`, or
 * until `FLUSH_ROWS` rows wait), then folders of one size share one bootstrap task per generator,
 * so each resample is drawn once for all of them. The tasks run on the scoring slots' workers
 * (`take`); a folder is committed when its last task is in.
 */
import {
  LENIENT_BOOTSTRAPS,
  type LenientIntervals,
  lenientBootstrapInput,
} from '../../metrics/lenient-summary.ts';
import type { BootstrapMethod } from '../../metrics/poisson-bootstrap.ts';
import {
  type BootstrapInput,
  bootstrapIntervals,
  type Intervals,
  summaryBootstrapMethod,
  withCategories,
} from '../../metrics/summary.ts';
import type { FolderIntervals, Pending } from './folder-committer.ts';

/** The longest a finished file waits for its bootstrap (others may join it) before it runs. */
const FLUSH_MS = 10_000;
/** ...or until this many rows wait (their columns are held in memory until then). */
const FLUSH_ROWS = 2_000_000;

/** One bootstrap (one generator) over summaries of equal size. */
export interface BootstrapTask {
  seed: number;
  samples: number;
  inputs: BootstrapInput[];
  /** SOB metric columns (their categories are added where the bootstrap runs). */
  categories: boolean;
  /** How its resamples are drawn (the same for every folder of the group). */
  method: BootstrapMethod;
  done: (intervals: Intervals[]) => void;
}

/** A task's inputs as the bootstrap takes them. */
export function taskInputs(t: Pick<BootstrapTask, 'inputs' | 'categories'>): BootstrapInput[] {
  return t.categories ? t.inputs.map((d) => withCategories(d)) : t.inputs;
}

/** Where a folder goes once its intervals are in. */
export type Commit = (
  p: Pending,
  intervals: FolderIntervals,
  lenientIv: LenientIntervals | undefined,
) => void;

export class BootstrapBatcher {
  private pending: Pending[] = [];
  private pendingSince = 0;
  private pendingRows = 0;
  private readonly tasks: BootstrapTask[] = [];
  /** Bootstrap tasks queued or running (for the progress line). */
  left = 0;

  constructor(
    /** The run's bootstrap samples (0: each folder is written as soon as its rows are in). */
    private readonly samples: number,
    private readonly commit: Commit,
  ) {}

  /** A file's folders, their rows in, join the wait. */
  add(folders: Pending[]): void {
    if (this.pending.length === 0) this.pendingSince = Date.now();
    for (const p of folders) {
      this.pending.push(p);
      this.pendingRows += p.data.weights.length;
    }
  }

  /** Folders waiting for their bootstrap tasks to be made. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Tasks made and not yet taken by a slot. */
  get hasTasks(): boolean {
    return this.tasks.length > 0;
  }

  /** The next task for a worker, the oldest first. */
  take(): BootstrapTask | undefined {
    return this.tasks.shift();
  }

  /**
   * Turns the waiting folders into bootstrap tasks (one plain and one weighted per size), when
   * forced (nothing else to score) or when they have waited long enough.
   */
  flush(force: boolean): void {
    if (this.pending.length === 0) return;
    // Without resamples there is nothing to share: each folder is summarised and written as soon
    // as its rows are in (behind the scoring of the others, not after it).
    if (
      !force &&
      this.samples > 0 &&
      Date.now() - this.pendingSince < FLUSH_MS &&
      this.pendingRows < FLUSH_ROWS
    )
      return;
    const batch = this.pending;
    this.pending = [];
    this.pendingRows = 0;
    const groups = new Map<string, Pending[]>();
    for (const p of batch) {
      const key = `${p.data.weights.length}:${p.opts.bootstrapSamples}:${p.opts.seed}`;
      const g = groups.get(key);
      if (g) g.push(p);
      else groups.set(key, [p]);
    }
    for (const group of groups.values()) this.queueGroup(group);
  }

  /** The tasks of one group of folders of equal size; the folders commit when all are in. */
  private queueGroup(group: Pending[]): void {
    const { seed, bootstrapSamples: samples } = group[0].opts;
    const method = summaryBootstrapMethod(group[0].opts, group[0].data.weights.length);
    const got: { plain?: Intervals[]; weighted?: Intervals[] } = {};
    // `--match`: each folder's lenient intervals, four generators of their own.
    const lenientGot = group.map((p) => (p.lenient ? ({} as Partial<LenientIntervals>) : undefined));
    // Bootstraps not yet in; the folders commit when none is left (1 until all are queued).
    let waiting = 1;
    const finish = () => {
      if (--waiting > 0) return;
      group.forEach((p, i) => {
        this.commit(
          p,
          { plain: got.plain![i], weighted: got.weighted![i] },
          lenientGot[i] as LenientIntervals,
        );
      });
    };
    /** One generator's bootstrap over the group's folders that have those columns. */
    const run = (
      taskSeed: number,
      categories: boolean,
      inputs: BootstrapInput[],
      done: (iv: Intervals[]) => void,
    ) => {
      if (inputs.length === 0) return;
      waiting++;
      const whenDone = (iv: Intervals[]) => {
        done(iv);
        finish();
      };
      // Nothing to draw: no need for a worker.
      if (samples <= 0 || group[0].data.weights.length === 0)
        whenDone(bootstrapIntervals(taskInputs({ inputs, categories }), taskSeed, samples, true, method));
      else {
        this.left++;
        this.tasks.push({
          seed: taskSeed,
          samples,
          inputs,
          categories,
          method,
          done: (iv) => {
            this.left--;
            whenDone(iv);
          },
        });
      }
    };
    // The weighted bootstrap first: it takes longest (a slot idle before the others are done
    // starts on it).
    for (const weighted of [true, false]) {
      // The metric columns only: categories are added where the bootstrap runs.
      run(
        seed + (weighted ? 1 : 0),
        true,
        group.map((p) => ({ columns: p.data.columns, weights: weighted ? p.data.weights : null })),
        (iv) => {
          got[weighted ? 'weighted' : 'plain'] = iv;
        },
      );
    }
    for (const [key, noJudge, weighted, offset] of LENIENT_BOOTSTRAPS) {
      const members: number[] = [];
      const inputs: BootstrapInput[] = [];
      group.forEach((p, i) => {
        const input = p.lenient ? lenientBootstrapInput(p.lenient, noJudge, weighted) : null;
        if (!input) return;
        members.push(i);
        inputs.push(input);
      });
      run(seed + offset, false, inputs, (iv) => {
        members.forEach((m, k) => {
          lenientGot[m]![key] = iv[k];
        });
      });
    }
    finish();
  }
}
