/**
 * A scoring worker: streams one response file from a given line, scores each record and posts
 * the rows back in batches; then, asked to, computes that file's summaries (the bootstrap). Before each record it bumps a shared heartbeat so the parent can
 * tell a record that runs over its time budget (a catastrophic regex, say) and replace the worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LenientData } from '../../metrics/lenient-summary.ts';
import type { JudgeVerdict, UnsettledPair } from '../../metrics/match/judge.ts';
import type { SummaryData, SummaryOptions } from '../../metrics/summary.ts';
import { Heartbeat } from '../core/budget.ts';
import { parseLine, readLinesSync } from '../core/jsonl.ts';
import { type Modality, SCORING_SKIP_KEYS, SCORING_SPAN_KEYS } from '../core/record.ts';
import { prepareStrict } from '../core/schema.ts';
import { LenientScorer, type MatchJob, summarizeJob, VerdictChannel } from './lenient.ts';
import { failedLine, type LineOutcome, type ProfileOptions, scoreParsedLine } from './score-line.ts';

export interface WorkerJob {
  file: string;
  startLine: number;
  pathModality: Modality;
  forced?: Modality;
  /** Lines that already ran out of time or memory: reported as failed, not scored again. */
  skip: Record<number, string>;
  profile: ProfileOptions;
  /** `--match`: lenient scoring beside the exact metrics. */
  match?: MatchJob;
}

export interface SummaryJob {
  data: SummaryData;
  responseFile: string;
  opts: SummaryOptions;
  /** `--match`: the summary's `lenient` block is computed from this. */
  lenient?: LenientData;
}

export type WorkerRequest =
  | { type: 'score'; job: WorkerJob }
  | { type: 'summarize'; items: SummaryJob[] }
  | { type: 'verdicts'; id: number; verdicts: [string, JudgeVerdict][] };

export type WorkerMessage =
  | { type: 'batch'; items: LineOutcome[] }
  /** `--match` with a judge: verdicts wanted for these pairs (answered with `verdicts`). */
  | { type: 'judge'; id: number; pairs: UnsettledPair[] }
  | { type: 'done' }
  | { type: 'summaries'; summaries: Record<string, unknown>[] }
  | { type: 'fatal'; error: string };

const { heartbeat } = workerData as { heartbeat: SharedArrayBuffer };
const hb = new Heartbeat(heartbeat);
const port = parentPort!;
const verdicts = new VerdictChannel((msg) => port.postMessage(msg satisfies WorkerMessage));

async function run(job: WorkerJob): Promise<void> {
  if (job.profile.profile === 'strict') await prepareStrict(job.profile.assertFormats);
  const lenient = job.match
    ? LenientScorer.for(job.match, job.match.judge ? verdicts.ask : undefined)
    : undefined;
  let batch: LineOutcome[] = [];
  const post = async () => {
    await lenient?.settle(
      batch,
      (line) => hb.begin(line),
      () => hb.end(),
    );
    port.postMessage({ type: 'batch', items: batch } satisfies WorkerMessage);
    batch = [];
  };
  for (const l of readLinesSync(job.file, job.startLine)) {
    hb.begin(l.line);
    const parsed = parseLine(l, SCORING_SPAN_KEYS, SCORING_SKIP_KEYS);
    const skipped = job.skip[l.line];
    batch.push(
      skipped === undefined
        ? scoreParsedLine(parsed, job.pathModality, job.forced, job.profile, lenient?.hook)
        : failedLine(parsed, skipped, job, lenient?.hook),
    );
    hb.end();
    if (batch.length >= 32) await post();
  }
  if (batch.length > 0) await post();
  port.postMessage({ type: 'done' } satisfies WorkerMessage);
}

port.on('message', (req: WorkerRequest) => {
  if (req.type === 'verdicts') {
    verdicts.receive(req);
    return;
  }
  if (req.type === 'summarize') {
    // The bootstrap runs here, so summaries of different files use both cores.
    try {
      const summaries = req.items.map(summarizeJob);
      port.postMessage({ type: 'summaries', summaries } satisfies WorkerMessage);
    } catch (e) {
      port.postMessage({
        type: 'fatal',
        error: e instanceof Error ? e.message : String(e),
      } satisfies WorkerMessage);
    }
    return;
  }
  run(req.job).catch((e: unknown) => {
    port.postMessage({
      type: 'fatal',
      error: e instanceof Error ? e.message : String(e),
    } satisfies WorkerMessage);
  });
});
