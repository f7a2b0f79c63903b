/**
 * A scoring worker: streams one response file from a given line, scores each record and posts
 * the rows back in batches; asked to, runs a bootstrap (the intervals of many files at once).
 * Before each record it bumps a shared heartbeat so the parent can tell a record that runs over
 * its time budget (a catastrophic regex, say) and replace the worker.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { JudgeVerdict, UnsettledPair } from '../../metrics/match/judge.ts';
import type { BootstrapMethod } from '../../metrics/poisson-bootstrap.ts';
import {
  type BootstrapInput,
  bootstrapIntervals,
  type Intervals,
  withCategories,
} from '../../metrics/summary.ts';
import { type ParsedLine, parseLine, primeLineParser, readLinesSync } from '../core/jsonl.ts';
import { type Modality, SCORING_SKIP_KEYS, SCORING_SPAN_KEYS } from '../core/record.ts';
import { prepareStrict, SchemaDeferred, setKnownValidSchema, setValidatorSource } from '../core/schema.ts';
import { setCompileBudget } from '../core/validator-hyperjump.ts';
import { type BenchmarkRef, loadBenchmark } from './benchmark.ts';
import type { CompiledSchema } from './claims.ts';
import { type LoadedScorer, loadScorers } from './custom-scorers.ts';
import { LenientScorer, type MatchJob, VerdictChannel } from './lenient.ts';
import {
  failedLine,
  type LineContext,
  type LineOutcome,
  type ProfileOptions,
  primeScoring,
  schemaTextHash,
  scoreParsedLine,
} from './score-line.ts';
import { SharedValidators } from './validators.ts';
import { saveBundleCodeCache } from './worker-bundle.ts';

export interface WorkerJob {
  /** The file's index in the run (written to the heartbeat while its records are scored). */
  id: number;
  file: string;
  startLine: number;
  pathModality: Modality;
  pathDefaulted: boolean;
  forced?: Modality;
  /** Lines that already ran out of time or memory: reported as failed, not scored again. */
  skip: Record<number, string>;
  profile: ProfileOptions;
  /** The benchmark the answers belong to, when known. */
  benchmark?: BenchmarkRef;
  /** `--match`: lenient scoring beside the exact metrics. */
  match?: MatchJob;
}

export type WorkerRequest =
  | { type: 'score'; job: WorkerJob }
  /** `categories`: the inputs are SOB summaries' metric columns (their categories are added here). */
  | {
      type: 'bootstrap';
      inputs: BootstrapInput[];
      seed: number;
      samples: number;
      categories: boolean;
      method: BootstrapMethod;
    }
  | { type: 'verdicts'; id: number; verdicts: [string, JudgeVerdict][] };

export type WorkerMessage =
  | { type: 'batch'; items: LineOutcome[] }
  /**
   * The same as `batch`, as one JSON text (see `batchMessage`); with `rows`, the row outcomes'
   * `json` are left empty there and are its lines, in order.
   */
  | {
      type: 'rows';
      json: string;
      rows?: string;
      /** The rows' fields.jsonl lines as UTF-8, each record's ending in a newline (transferred). */
      fieldBytes?: Uint8Array;
      /** Where each row's bytes end in `fieldBytes` (-1: the row has none). */
      fieldEnds?: number[];
    }
  /** `--match` with a judge: verdicts wanted for these pairs (answered with `verdicts`). */
  | { type: 'judge'; id: number; pairs: UnsettledPair[] }
  | { type: 'done' }
  | { type: 'intervals'; intervals: Intervals[] }
  | { type: 'compiled'; compiled: CompiledSchema }
  | { type: 'fatal'; error: string };

const { heartbeat, timedOut, claims, codePort, owner, validatorCache, compileBudgetMs } = workerData as {
  heartbeat: SharedArrayBuffer;
  timedOut: SharedArrayBuffer;
  claims?: SharedArrayBuffer;
  codePort?: MessagePort;
  owner: number;
  validatorCache?: string;
  /** hyperjump's compile budget: half the record's (a compile over it is reported for its record). */
  compileBudgetMs?: number;
};
if (compileBudgetMs !== undefined) setCompileBudget(compileBudgetMs);
/** [line being scored, records started, 1 while schema work runs, the job's id]. */
const beat = new Int32Array(heartbeat);

/**
 * Batches of rows (32 each) this worker posts ahead of the main thread's taking them (the
 * heartbeat's slots 4 and 5): past this it waits, so the rows queued for the main thread do not
 * grow with the file when the worker scores faster than the main thread writes.
 */
const BATCHES_AHEAD = 64;
const port = parentPort!;
const verdicts = new VerdictChannel((msg) => port.postMessage(msg satisfies WorkerMessage));
/** Shared by every worker: [count, then a 64-bit hash per schema text that ran over time]. */
const timedOutTable = new Int32Array(timedOut);

/** Schemas compiled once across workers (src/scoring/validators.ts). */
const validators =
  claims && codePort
    ? new SharedValidators(
        claims,
        codePort,
        owner,
        (c) => port.postMessage({ type: 'compiled', compiled: c } satisfies WorkerMessage),
        validatorCache,
      )
    : undefined;
if (validators) {
  setValidatorSource(validators.source);
  setKnownValidSchema(validators.cached);
}

// The parser, the scorer and the rows' writers on made-up lines first (see primeLineParser).
primeLineParser(SCORING_SPAN_KEYS, SCORING_SKIP_KEYS);
batchMessage(primeScoring());

/** Hashes of the schema texts seen while the timed-out table is not empty. */
const hashes = new Map<string, [number, number]>();

/** `--scorer` modules, loaded once per worker (by URL). */
const scorerModules = new Map<string, Promise<LoadedScorer[]>>();
/** The reader keeps the context's and the question's text for the scorers of your own. */
const SCORER_SPAN_KEYS: ReadonlySet<string> = new Set([
  ...SCORING_SPAN_KEYS,
  'input.context',
  'input.question',
]);
/** Set while a scorer of your own runs (2 + its index): a record over time then is its fault. */
const scorerPhase = (i: number) => {
  Atomics.store(beat, 2, i < 0 ? 0 : 2 + i);
};

/** Raised while schema work runs: a record over time then is its schema's fault. */
const schemaPhase = (on: boolean) => {
  Atomics.store(beat, 2, on ? 1 : 0);
};

/** Whether a schema text ran over time on any worker (one load while none has). */
const isTimedOut = (keyOf: () => string): boolean => {
  const n = Atomics.load(timedOutTable, 0);
  if (n === 0) return false;
  const key = keyOf();
  let h = hashes.get(key);
  if (!h) {
    h = schemaTextHash(key);
    if (hashes.size >= 4096) hashes.clear();
    hashes.set(key, h);
  }
  for (let i = 0; i < n; i++)
    if (timedOutTable[1 + 2 * i] === h[0] && timedOutTable[2 + 2 * i] === h[1]) return true;
  return false;
};

/** A line whose record waits for a schema another worker is compiling (or its outcome). */
interface Queued {
  line: number;
  outcome?: LineOutcome;
  parsed?: ParsedLine;
  slot?: number;
}

/** Each bootstrap input's category columns, by its place in the task (see the 'bootstrap' request). */
const categoryMemory: Float64Array[][] = [];

/** A record's scoring starts (the watchdog times it from here) and ends. */
const begin = (line: number) => {
  Atomics.store(beat, 0, line);
  Atomics.add(beat, 1, 1);
};
const end = () => {
  Atomics.store(beat, 0, 0);
  Atomics.store(beat, 2, 0);
};

async function run(job: WorkerJob): Promise<void> {
  Atomics.store(beat, 3, job.id);
  // The rows in flight are counted from this job's first batch (the last job's were all taken).
  Atomics.store(beat, 4, 0);
  Atomics.store(beat, 5, 0);
  if (job.profile.profile === 'strict') await prepareStrict(job.profile.assertFormats);
  const specs = job.profile.scorers ?? [];
  let scorers: LoadedScorer[] | undefined;
  if (specs.length > 0) {
    const key = specs.map((s) => s.url).join('\n');
    let p = scorerModules.get(key);
    if (!p) scorerModules.set(key, (p = loadScorers(specs)));
    scorers = await p;
  }
  const spanKeys = scorers ? SCORER_SPAN_KEYS : SCORING_SPAN_KEYS;
  const lenient = job.match
    ? LenientScorer.for(job.match, job.profile.profile, job.match.judge ? verdicts.ask : undefined)
    : undefined;
  const ctx: LineContext = {
    pathModality: job.pathModality,
    pathDefaulted: job.pathDefaulted,
    forced: job.forced,
    profile: job.profile,
    benchmark: job.benchmark ? loadBenchmark(job.benchmark).records : undefined,
    schemaPhase,
    timedOut: isTimedOut,
    rowHook: lenient?.hook,
    scorers,
    scorerPhase: scorers ? scorerPhase : undefined,
  };
  // Outcomes go out in line order: a deferred record holds back the ones after it.
  const queue: Queued[] = [];
  let batch: LineOutcome[] = [];
  /** Batches waiting for the judge's verdicts (settled in order, then posted). */
  let settling: Promise<void> = Promise.resolve();
  const post = () => {
    if (batch.length === 0) return;
    const items = batch;
    batch = [];
    if (!lenient?.asks) {
      // At most BATCHES_AHEAD batches the main thread has not taken yet (each wait is bounded).
      for (let waits = 0; waits < 600; waits++) {
        const taken = Atomics.load(beat, 5);
        if (Atomics.load(beat, 4) - taken < BATCHES_AHEAD) break;
        Atomics.wait(beat, 5, taken, 50);
      }
      Atomics.add(beat, 4, 1);
      const msg = batchMessage(items);
      port.postMessage(msg, transferOf(msg));
      return;
    }
    // Rows whose unsettled pairs the judge answers are scored again before they leave.
    settling = settling.then(async () => {
      await lenient.settle(items, begin, end);
      const msg = batchMessage(items);
      port.postMessage(msg, transferOf(msg));
    });
  };
  const score = (q: Queued, parsed: ParsedLine) => {
    begin(q.line);
    try {
      const skipped = job.skip[q.line];
      q.outcome = skipped === undefined ? scoreParsedLine(parsed, ctx) : failedLine(parsed, skipped, ctx);
      q.parsed = undefined;
    } catch (e) {
      if (!(e instanceof SchemaDeferred)) throw e;
      q.parsed = parsed;
      q.slot = e.slot;
    }
    end();
  };
  const retryDeferred = () => {
    for (const q of queue) if (!q.outcome && validators?.ready(q.slot!)) score(q, q.parsed!);
  };
  const flushReady = () => {
    while (queue.length > 0 && queue[0].outcome) {
      batch.push(queue.shift()!.outcome!);
      if (batch.length >= 32) post();
    }
  };
  for (const l of readLinesSync(job.file, job.startLine)) {
    const q: Queued = { line: l.line };
    queue.push(q);
    score(q, parseLine(l, spanKeys, SCORING_SKIP_KEYS));
    if (queue.length > 1) retryDeferred();
    flushReady();
    // With a judge, a batch waits for its verdicts before the file goes on (rows leave in order).
    if (lenient?.asks) await settling;
  }
  // The last deferred records: wait for their schemas (a worker that dies frees its claims).
  while (queue.length > 0) {
    const q = queue.find((x) => !x.outcome)!;
    if (!validators?.ready(q.slot!)) validators?.wait(q.slot!, 100);
    retryDeferred();
    flushReady();
  }
  post();
  await settling;
  // The validators this file used have run: their compiled code is kept for the next run.
  validators?.flushCodeCache();
  // ...and so is the worker bundle's (once: the first file done compiled its hot functions).
  saveBundleCodeCache();
  port.postMessage({ type: 'done' } satisfies WorkerMessage);
}

/**
 * A batch of outcomes for the main thread: one JSON text when every value in it survives
 * `JSON.stringify` unchanged (strings, finite numbers other than -0, booleans, arrays of strings,
 * flat objects of strings: the plain SOB row), else the items themselves (structured clone: ids
 * that are numbers or objects, the compliance track's and `--match`'s parts). Cloning thousands of
 * small objects field by field costs several times what writing and reading their JSON does.
 */
function batchMessage(items: LineOutcome[]): WorkerMessage {
  for (const o of items) if (!jsonSafe(o)) return { type: 'batch', items };
  // The rows' own JSON texts go beside, one per line (a row's JSON has no newline): inside the
  // batch's JSON each would be escaped here and unescaped there, ~1.5 KB a record.
  const rows: string[] = [];
  let fieldChars = 0;
  let withFields = 0;
  for (const o of items) {
    if (o.kind !== 'row') continue;
    if (o.json.includes('\n')) return { type: 'rows', json: JSON.stringify(items) };
    rows.push(o.json);
    if (typeof o.fields === 'string') {
      fieldChars += o.fields.length;
      withFields++;
    }
  }
  // Each row's fields.jsonl lines likewise, as UTF-8 in one buffer that is transferred, not
  // copied: a record's ~15 lines (~6 KB) would otherwise be escaped twice over inside the batch's
  // JSON, or as a string be copied to the main thread, split there, joined again and encoded.
  let fieldBytes: Buffer | undefined;
  const fieldEnds: number[] = [];
  // No lines at all (`--no-fields`, or records without leaves): no buffer.
  if (withFields > 0 && fieldChars > 0) {
    let buf = Buffer.allocUnsafeSlow(fieldChars + withFields + 256);
    let at = 0;
    for (const o of items) {
      if (o.kind !== 'row') continue;
      const text = o.fields;
      if (typeof text !== 'string') {
        fieldEnds.push(-1);
        continue;
      }
      if (text.length > 0) {
        // Past plain ASCII a character takes up to 3 bytes: grow when it may not fit.
        if (buf.length - at < text.length * 3 + 1) {
          const need = at + Buffer.byteLength(text) + 1;
          if (need > buf.length) {
            const grown = Buffer.allocUnsafeSlow(Math.max(need, buf.length * 2));
            buf.copy(grown, 0, 0, at);
            buf = grown;
          }
        }
        at += buf.write(text, at);
        buf[at++] = 10;
      }
      fieldEnds.push(at);
      o.fields = '';
    }
    fieldBytes = buf.subarray(0, at);
  }
  for (const o of items) if (o.kind === 'row') o.json = '';
  return {
    type: 'rows',
    json: JSON.stringify(items),
    rows: rows.join('\n'),
    ...(fieldBytes ? { fieldBytes, fieldEnds } : {}),
  };
}

/** What a message moves rather than copies (a batch's fields.jsonl bytes). */
function transferOf(msg: WorkerMessage): ArrayBuffer[] {
  return msg.type === 'rows' && msg.fieldBytes ? [msg.fieldBytes.buffer as ArrayBuffer] : [];
}

function jsonSafeScalar(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    default:
      return false;
  }
}

/** Whether an outcome comes back from `JSON.parse(JSON.stringify(o))` the same (see `batchMessage`). */
function jsonSafe(o: LineOutcome): boolean {
  for (const k in o) {
    const v = (o as unknown as Record<string, unknown>)[k];
    if (k === 'score') {
      for (const f in v as object) {
        const x = (v as Record<string, unknown>)[f];
        if (jsonSafeScalar(x)) continue;
        if (Array.isArray(x)) {
          for (const e of x) if (typeof e !== 'string') return false;
        } else if (f === 'explanation' && x !== null && typeof x === 'object') {
          for (const e in x) if (typeof (x as Record<string, unknown>)[e] !== 'string') return false;
        } else return false;
      }
    } else if (k === 'custom' && v !== null && typeof v === 'object') {
      for (const e in v) if (!jsonSafeScalar((v as Record<string, unknown>)[e])) return false;
    } else if (!jsonSafeScalar(v)) return false;
  }
  return true;
}

let jobs: Promise<void> = Promise.resolve();

port.on('message', (req: WorkerRequest) => {
  if (req.type === 'verdicts') {
    verdicts.receive(req);
    return;
  }
  if (req.type === 'bootstrap') {
    // The bootstrap of many files at once (see bootstrapIntervals), off the main thread.
    try {
      // Input i's category columns written over the last task's (one after the other, the
      // second would otherwise add its own while the first's are uncollected: 40 MB an input
      // at a million records).
      const inputs = req.categories
        ? req.inputs.map((d, i) => withCategories(d, (categoryMemory[i] ??= [])))
        : req.inputs;
      const intervals = bootstrapIntervals(inputs, req.seed, req.samples, true, req.method);
      port.postMessage(
        { type: 'intervals', intervals } satisfies WorkerMessage,
        intervals.flatMap((iv) => [iv.low.buffer as ArrayBuffer, iv.high.buffer as ArrayBuffer]),
      );
    } catch (e) {
      port.postMessage({
        type: 'fatal',
        error: e instanceof Error ? e.message : String(e),
      } satisfies WorkerMessage);
    }
    return;
  }
  // Jobs run one after the other (the next file is handed over before this one is done).
  jobs = jobs.then(() =>
    run(req.job).catch((e: unknown) => {
      port.postMessage({
        type: 'fatal',
        error: e instanceof Error ? e.message : String(e),
      } satisfies WorkerMessage);
    }),
  );
});
