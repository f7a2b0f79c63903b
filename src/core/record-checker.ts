/**
 * The record check under a budget: every benchmark record a command reads (`sob build`, and the
 * benchmark loader of `run`, `eval` and `score --benchmark`) is checked on a `BudgetedWorker`
 * (src/core/budget.ts), one job per record, timed on its own with the budget the scorer uses
 * (`--record-timeout-ms`). A ground truth that meets a catastrophic `pattern` cannot be stopped
 * inside a thread; on the worker it costs one budget, the record is rejected naming the keyword,
 * and the main thread stays free to hear Ctrl-C and SIGTERM. The unique-id check needs every
 * record seen, so it stays on the caller's thread (`withSeenIds`, in file order).
 */
import { BudgetedWorker, RECORD_BUDGET_MS } from './budget.ts';
import { isObj } from './complexity.ts';
import { parsePyJson, toPlain } from './pyjson.ts';
import { type CheckOptions, type CheckResult, checkRecordContent } from './record-checks.ts';

/** A record as a value, or as its JSON line (`text`) when it is nested too deeply to be copied. */
type Job = { candidate?: unknown; text?: string; opts: Omit<CheckOptions, 'seenIds'> };

/**
 * The worker's side: one record's checks. The record itself is not sent back: its metadata is,
 * and its attachments (the caller checks each file against its hash before anything is asked).
 */
export function handle(job: Job): CheckResult {
  const candidate = job.text !== undefined ? toPlain(parsePyJson(job.text)) : job.candidate;
  const res = checkRecordContent(candidate, job.opts);
  if (!res.record) return res;
  const { metadata, input } = res.record;
  const attachments = input?.attachments;
  return {
    ...res,
    record: { metadata, input: attachments ? { attachments } : {} } as CheckResult['record'],
  };
}

/** Where a schema runs regular expressions (`pattern` at `properties.code`): what a time-out names. */
export function regexKeywords(schema: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, p: string, depth: number): void => {
    if (out.length >= 3 || depth > 200) return;
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`, depth + 1);
    else if (isObj(v)) {
      if (typeof v.pattern === 'string')
        out.push(`\`pattern\` ${JSON.stringify(v.pattern)}${p ? ` at ${p}` : ''}`);
      if (isObj(v.patternProperties)) out.push(`\`patternProperties\`${p ? ` at ${p}` : ''}`);
      for (const [k, x] of Object.entries(v)) if (k !== 'pattern') walk(x, p ? `${p}.${k}` : k, depth + 1);
    }
  };
  walk(schema, '', 0);
  return out;
}

function schemaOf(candidate: unknown): unknown {
  const input = isObj(candidate) ? candidate.input : undefined;
  return isObj(input) ? input.json_schema : undefined;
}

export interface RecordCheckerOptions {
  /** A record's budget (default `RECORD_BUDGET_MS`, the scorer's). */
  timeoutMs?: number;
  /** Aborted (Ctrl-C, SIGTERM): the check stops, and `check` throws `CheckInterrupted`. */
  signal?: AbortSignal;
}

/** The check stopped by its signal. */
export class CheckInterrupted extends Error {
  constructor() {
    super('interrupted during the record check');
    this.name = 'CheckInterrupted';
  }
}

/**
 * Checks records on a worker, each within the budget. `check` may be called for many records
 * at once (they are handed over ahead of their turn); results come in the order asked.
 */
export class RecordChecker {
  private readonly worker: BudgetedWorker<Job, CheckResult>;
  readonly timeoutMs: number;
  private readonly onAbort = () => void this.worker.close();

  constructor(private readonly opts: RecordCheckerOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? RECORD_BUDGET_MS;
    this.worker = new BudgetedWorker<Job, CheckResult>({
      module: new URL(import.meta.url),
      timeoutMs: this.timeoutMs,
      window: 64,
    });
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * One record's checks but the unique id (the caller's `withSeenIds`, taken in file order). A
   * record over the budget is rejected with what was running.
   */
  async check(
    candidate: unknown,
    opts: Omit<CheckOptions, 'seenIds'> = {},
    /** The record's JSON line, if read from a file: sent instead when the value cannot be copied. */
    text?: string,
  ): Promise<CheckResult> {
    let out = await this.worker.run({ candidate, opts });
    // Nested too deeply for the structured clone (thousands of levels): the line is parsed there.
    if (!out.ok && !out.timedOut && text !== undefined && /call stack/i.test(out.reason))
      out = await this.worker.run({ text, opts });
    if (this.opts.signal?.aborted) throw new CheckInterrupted();
    if (out.ok) return out.value;
    if (!out.timedOut) {
      // A record the worker could not be handed (nested thousands deep) cannot be written either.
      const why = /call stack/i.test(out.reason)
        ? `nested too deeply to write as JSON (${out.reason})`
        : `the record check failed: ${out.reason}`;
      return { ok: false, errors: [why], warnings: [] };
    }
    const regex = regexKeywords(schemaOf(candidate));
    const what =
      regex.length > 0
        ? `checking the ground truth against the schema's ${regex.join(', ')} (a pattern that backtracks without end on this value?)`
        : 'checking the record (its schema and ground truth)';
    return {
      ok: false,
      errors: [
        `the check did not finish within its ${this.timeoutMs} ms budget (--record-timeout-ms) while ${what}`,
      ],
      warnings: [],
    };
  }

  async close(): Promise<void> {
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    await this.worker.close();
  }
}
