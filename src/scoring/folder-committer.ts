/**
 * The folder committer of a scoring run: a folder whose rows and bootstrap are in is summarised,
 * written and swapped in (in the background: the disk never holds up scoring), and each file's
 * result is complete once its last folder has landed or one has failed.
 */

import { customBlock } from '../../metrics/custom.ts';
import {
  buildLenientSummary,
  type LenientData,
  type LenientIntervals,
} from '../../metrics/lenient-summary.ts';
import {
  type Intervals,
  type SummaryData,
  type SummaryOptions,
  summaryBootstrapMethod,
} from '../../metrics/summary.ts';
import { errorMessage } from '../core/errors.ts';
import { type EvalSummaryOut, evalSummaryText, type SummaryOut } from '../core/formats/eval-summary.ts';
import type { Modality, Source } from '../core/record.ts';
import { BENCHMARK_IDS } from './benchmark.ts';
import type { FileState, Output } from './file-state.ts';
import { loadSchemaFolderSummary, summarizeJob, type TrackData } from './track.ts';

export interface ScoredOutput {
  /** A modality, or `schema` (the compliance track's folder). */
  modality: Source;
  dir: string;
  records: number;
  summary: SummaryOut;
}

export interface FileResult {
  file: string;
  outputs: ScoredOutput[];
  malformed: { line: number; error: string }[];
  /** Records reported with a scoring error (over time or memory). */
  failed: number;
  error?: string;
}

/** A folder whose rows are in, waiting for its bootstrap. */
export interface Pending {
  st: FileState;
  out: Output;
  data: SummaryData;
  opts: SummaryOptions;
  /** The compliance track's data for this folder, when it has any. */
  track?: TrackData;
  /** `--match`: what the summary's `lenient` block is computed from. */
  lenient?: LenientData;
  /** `--scorer`: the scorers of your own (named in the summary's `custom_scores`). */
  scorers?: { name: string }[];
}

/** A folder's confidence intervals: the plain and the weighted bootstrap's. */
export interface FolderIntervals {
  plain: Intervals;
  weighted: Intervals;
}

export class FolderCommitter {
  /** One result per file, in input order (a hole until the file is done). */
  readonly results: FileResult[];
  /** Files whose result is complete (for the progress line). */
  filesDone = 0;
  /** Folders of each file still to be written; a file's result is complete when it is 0. */
  private readonly remaining = new Map<number, { outputs: ScoredOutput[]; left: number }>();
  private readonly commits: Promise<void>[] = [];

  constructor(
    files: number,
    /** `--modality`, as the run was asked (a benchmark's ids are listed by it). */
    private readonly modality: Modality | undefined,
  ) {
    this.results = new Array(files);
  }

  /** The file is given up: its result says why (its folders, if any, are let go). */
  fail(st: FileState, error: string): void {
    st.abort();
    this.results[st.idx] = {
      file: st.target.file,
      outputs: [],
      malformed: st.malformed,
      failed: st.failed,
      error,
    };
    this.filesDone++;
  }

  /** `st`'s rows are in: its result is complete once `folders` folders have landed. */
  expect(st: FileState, folders: number): void {
    this.remaining.set(st.idx, { outputs: [], left: folders });
  }

  /** Writes one folder (summary, side file) and swaps it in, in the background. */
  commit = (p: Pending, intervals: FolderIntervals, lenientIv: LenientIntervals | undefined): void => {
    // A schema folder's summary needs the compliance track's metrics (loaded on first use).
    if (p.track?.schema) {
      this.commits.push(
        loadSchemaFolderSummary().then(
          () => this.writeFolder(p, intervals, lenientIv),
          (e: unknown) => this.folderFailed(p.st, p.out, e),
        ),
      );
      return;
    }
    this.writeFolder(p, intervals, lenientIv);
  };

  /** Resolves once every folder's write has landed (or failed). */
  async settled(): Promise<void> {
    for (let i = 0; i < this.commits.length; i++) await this.commits[i];
  }

  private writeFolder(p: Pending, intervals: FolderIntervals, lenientIv: LenientIntervals | undefined): void {
    const { st, out, data } = p;
    let summary: SummaryOut;
    const files: Record<string, string> = {};
    try {
      // The SOB summary, with the compliance track's block when the folder has its records.
      summary = summarizeJob({ data, responseFile: st.target.file, opts: p.opts, track: p.track, intervals });
      // `--match`: the lenient block, from its own generators.
      if (p.lenient)
        summary.lenient = buildLenientSummary(
          p.lenient,
          { ...p.opts, method: summaryBootstrapMethod(p.opts, p.data.weights.length) },
          lenientIv,
        );
      // `--scorer`: the scorers of your own, bootstrapped as the summary's own metrics are.
      if (data.custom && 'summary' in summary && summary.summary)
        (summary as EvalSummaryOut).custom_scores = customBlock(
          data.custom,
          data.weights,
          (p.scorers ?? []).map((s) => s.name),
          {
            seed: p.opts.seed,
            samples: p.opts.bootstrapSamples,
            method: summaryBootstrapMethod(p.opts, data.weights.length),
          },
        );
      files['eval_summary.json'] = evalSummaryText(summary);
      const bench = st.benchmarkIds(this.modality);
      if (st.benchmark && bench)
        files[BENCHMARK_IDS] = `${JSON.stringify(
          {
            benchmark: st.benchmark.path,
            missing_ids: bench.missing.get(out.modality as Source) ?? [],
            unknown_ids: st.unknown.get(out.modality as Source) ?? [],
          },
          null,
          2,
        )}\n`;
    } catch (e) {
      this.folderFailed(st, out, e);
      return;
    }
    this.commits.push(
      out.folder.commit(files).then(
        () => {
          st.release(out);
          this.folderDone(st, { modality: out.modality, dir: out.dir, records: out.written, summary });
        },
        (e: unknown) => this.folderFailed(st, out, e),
      ),
    );
  }

  private folderFailed(st: FileState, out: Output, e: unknown): void {
    out.folder.abort();
    st.release(out);
    const r = this.remaining.get(st.idx);
    if (r) this.remaining.delete(st.idx);
    if (this.results[st.idx]) return;
    this.results[st.idx] = {
      file: st.target.file,
      outputs: r?.outputs ?? [],
      malformed: st.malformed,
      failed: st.failed,
      error: `${st.target.file}: could not write ${out.dir}: ${errorMessage(e)}`,
    };
    this.filesDone++;
  }

  private folderDone(st: FileState, o: ScoredOutput): void {
    const r = this.remaining.get(st.idx);
    if (!r) return; // another folder of this file failed: the file is reported failed
    r.outputs.push(o);
    if (--r.left > 0) return;
    this.remaining.delete(st.idx);
    // In modality order of first appearance, as the rows came.
    const order = [...st.outputs.keys()];
    r.outputs.sort((a, b) => order.indexOf(a.modality) - order.indexOf(b.modality));
    this.results[st.idx] = {
      file: st.target.file,
      outputs: r.outputs,
      malformed: st.malformed,
      failed: st.failed,
    };
    this.filesDone++;
  }
}
