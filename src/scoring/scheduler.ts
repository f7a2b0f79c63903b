/**
 * The scheduler of a scoring run: hands the files out to the slots in input order, counts the
 * files being scored and the records seen, and parks the slots left without a file until the
 * others' last files are in (then the bootstrap), or until `EARLY_BOOTSTRAP_MS` has passed with
 * folders waiting, when one of them bootstraps those folders rather than stay idle.
 */
import type { BootstrapBatcher } from './bootstrap-batcher.ts';
import type { FileState } from './file-state.ts';

/**
 * How long a slot left without a file waits for the others' last files before it bootstraps the
 * folders already in on its own (a second group then draws its resamples again: on the 34 SOB
 * files, ~0.1 s of each worker for two folders).
 */
const EARLY_BOOTSTRAP_MS = 300;

/** Opens the file of target `idx` for scoring; `onRecord` counts each record seen. */
export type OpenFile = (idx: number, onRecord: () => void) => FileState;

export class FileScheduler {
  private nextTarget = 0;
  /** Files handed to a worker and not done yet (a slot's current and queued). */
  private scoring = 0;
  /** Records whose rows came back (for the progress line). */
  recordsSeen = 0;
  /** Slots with nothing to do, waiting for the others' files to finish (then the bootstrap). */
  private readonly idle: (() => void)[] = [];
  /** Set while a slot left without a file waits for the others before bootstrapping alone. */
  private earlyBootstrap: NodeJS.Timeout | null = null;

  constructor(
    private readonly files: number,
    private readonly open: OpenFile,
    private readonly bootstraps: BootstrapBatcher,
  ) {}

  /** A file is left to hand out. */
  get hasMore(): boolean {
    return this.nextTarget < this.files;
  }

  /** Every file handed out and done: what waits for a bootstrap may go now. */
  get drained(): boolean {
    return !this.hasMore && this.scoring === 0;
  }

  /** Other slots are still scoring files. */
  get busy(): boolean {
    return this.scoring > 0;
  }

  /** The next file, now being scored (call only while `hasMore`). */
  take(): FileState {
    const idx = this.nextTarget++;
    this.scoring++;
    return this.open(idx, () => {
      this.recordsSeen++;
    });
  }

  /** A file taken is done (its rows are in, or it stopped). */
  fileDone(): void {
    this.scoring--;
  }

  /**
   * Parks a slot left without a file while others still score. Their last files mostly end
   * within moments: waiting keeps every folder in one bootstrap group (the resamples drawn once,
   * not once per group). When they do not end within EARLY_BOOTSTRAP_MS, this slot runs the
   * bootstrap of the folders already in rather than stay idle (a folder's intervals do not depend
   * on which others share its draws: the same seed gives each the same resamples).
   */
  park(resume: () => void): void {
    this.idle.push(resume);
    if (this.bootstraps.waiting > 0 && !this.earlyBootstrap)
      this.earlyBootstrap = setTimeout(() => {
        this.earlyBootstrap = null;
        if (this.scoring > 0 && this.bootstraps.waiting > 0 && this.idle.length > 0) {
          this.bootstraps.flush(true);
          this.wakeIdle();
        }
      }, EARLY_BOOTSTRAP_MS);
  }

  /** Every parked slot looks again for work. */
  wakeIdle(): void {
    for (const w of this.idle.splice(0)) w();
  }

  /** The run is over (or failed): no timer left behind. */
  stop(): void {
    if (this.earlyBootstrap) clearTimeout(this.earlyBootstrap);
  }
}
