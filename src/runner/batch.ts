/**
 * `sob run --batch`: the records go to the provider's batch interface (OpenAI's Files + Batches
 * API, Gemini's batch mode, Anthropic's Message Batches API) instead of one request each, at the
 * batch price.
 *
 * The batches live in the run directory (`batches.json`): each batch's key, the provider's id,
 * its last state and counts, and the record ids it holds (custom id `r<index>`). The entry is
 * written before the batch is created and again with its id right after, so a killed run
 * resumes polling the same batch instead of submitting again (a kill in between is healed by
 * finding the batch by its key). When a batch is done its answers are written to
 * responses.jsonl (with `eval_info.batch`), its failures to errors.jsonl with their class; the
 * retryable ones go into a follow-up batch (or, with `--batch-fallback online`, are asked one
 * by one), up to --max-retries more times. Input is split so that no batch exceeds the
 * provider's request and byte limits (or the smaller --batch-max-requests / --batch-max-mb).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, UserError } from '../core/errors.ts';
import { writeJsonAtomic } from '../core/files.ts';
import {
  BATCHES_FORMAT,
  type BatchEntry,
  type BatchesFile,
  batchesDoc,
  newBatches,
  readBatches,
} from '../core/formats/batches.ts';
import { checkVersion } from '../core/formats/version.ts';
import type { IdLookup } from '../core/id-hash.ts';
import { sleep } from '../core/retry.ts';
import {
  type BatchApi,
  type BatchJob,
  FATAL,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  RETRYABLE,
} from '../providers/types.ts';
import { sha256 } from './prompt.ts';

export const BATCHES = 'batches.json';

/** More asks of the provider's batch list after a failed one, before the run stops. */
const FIND_RETRIES = 3;

export interface BatchSettings {
  /** Where retryable failures go after the first batch: another batch, or one request each. */
  fallback: 'batch' | 'online';
  /** Time between polls (ms). */
  pollMs: number;
  /** Split below the provider's limits. */
  maxRequests?: number;
  maxBytes?: number;
  /**
   * Submit the first batches and return without waiting for them (`sob eval --batch` submits
   * every model's batches before it waits on any, so they run at the provider side by side). A
   * run directory with a batch already at the provider submits nothing: the next run polls it.
   */
  submitOnly?: boolean;
  /**
   * How long this session waits for its batches (ms, from its start): past it the wait ends with
   * the batches still at the provider and their records pending, collected by a re-run
   * (`--batch-deadline`). Default: no deadline.
   */
  deadlineMs?: number;
}

type Entry = BatchEntry;
type State = BatchesFile;

export interface BatchItem {
  id: string;
}

export interface BatchRun<I extends BatchItem> {
  provider: Provider;
  runDir: string;
  /** Records still to answer, in benchmark order. */
  items: I[];
  /**
   * Records held by batches an earlier session submitted that are outside `items` (a smaller
   * `--limit` now): their answers are collected and written, never submitted again.
   */
  earlier?: I[];
  request(item: I): Omit<ProviderRequest, 'signal'>;
  answered: IdLookup;
  constrained: boolean;
  maxRetries: number;
  settings: BatchSettings;
  /** This session's start (ISO): retries are counted per session, as online. */
  session: string;
  signal: AbortSignal;
  record(
    item: I,
    res: ProviderResponse | undefined,
    a: { attempts: number; batch: string; schemaRejected?: ProviderError },
  ): void;
  error(item: I, attempt: number, pe: ProviderError, outcome: 'retrying' | 'gave_up' | 'stopped'): void;
  /** Counts a record given up for good (the progress line's "failed"). */
  failed(item: I): void;
  /** The batch part of the progress line changed. */
  note(text: string): void;
  /** --batch-fallback online: these records, one request each, through the normal scheduler. */
  online(items: I[], attemptsBefore: (id: string) => number): Promise<void>;
  log(line: string): void;
}

function loadState(file: string, model: string): State {
  if (!existsSync(file)) return newBatches(model);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new UserError(
      `${file}: not a batch state file (not JSON); move it aside to start the batches afresh`,
    );
  }
  const v = batchesDoc(readBatches(raw, file));
  if (v.model !== model)
    throw new UserError(`${file} holds batches of ${v.model}, not ${model}: use another --run-dir`);
  return v;
}

/**
 * Batches an earlier `sob run --batch` left at the provider, not collected, with the records of
 * theirs not answered yet (for a re-run without `--batch`, which would ask them again online).
 */
export function uncollectedBatches(runDir: string, answered: IdLookup): { id: string; records: number }[] {
  const file = join(runDir, BATCHES);
  if (!existsSync(file)) return [];
  let v: State;
  try {
    v = JSON.parse(readFileSync(file, 'utf8')) as State;
  } catch {
    return [];
  }
  if (!v || !Array.isArray(v.batches)) return [];
  // A file a newer sob-eval wrote is not guessed at: one line, exit 2.
  checkVersion(v, BATCHES_FORMAT, file);
  return v.batches
    .filter((e) => !e.collected && e.id !== null && Array.isArray(e.ids))
    .map((e) => ({ id: e.id as string, records: e.ids.filter((id) => !answered.has(id)).length }))
    .filter((e) => e.records > 0);
}

/**
 * Before a resumed run writes anything: a `batches.json` a newer sob-eval wrote stops it in one
 * line (exit 2). One that is not JSON or has no batches is left to the readers above.
 */
export function checkBatchesFile(runDir: string): void {
  const file = join(runDir, BATCHES);
  if (!existsSync(file)) return;
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  if (v && typeof v === 'object') checkVersion(v, BATCHES_FORMAT, file);
}

/** The record ids held by batches of `runDir` not collected yet (any --limit they were sent under). */
export function heldByBatches(runDir: string): Set<string> {
  const file = join(runDir, BATCHES);
  if (!existsSync(file)) return new Set();
  let v: State;
  try {
    v = JSON.parse(readFileSync(file, 'utf8')) as State;
  } catch {
    return new Set();
  }
  if (!v || !Array.isArray(v.batches)) return new Set();
  checkVersion(v, BATCHES_FORMAT, file);
  return new Set(
    v.batches.filter((e) => e && !e.collected && Array.isArray(e.ids)).flatMap((e) => e.ids.map(String)),
  );
}

/**
 * One call to the provider's batch API under a signal of its own that follows the run's: the
 * SDKs leave a listener on the signal of every request they make, and a run polls every 30 s for
 * up to a day, so on the run's own signal they piled up (a MaxListenersExceededWarning on stderr
 * after 42 polls, and one more listener kept per poll). Ours is removed when the call ends.
 */
export async function own<T>(parent: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const child = ownSignal(parent);
  try {
    return await call(child.signal);
  } finally {
    child.done();
  }
}

/** A signal that follows `parent` until `done()` (for a call that outlives one promise: a stream). */
function ownSignal(parent: AbortSignal): { signal: AbortSignal; done(): void } {
  const ctl = new AbortController();
  const relay = () => ctl.abort(parent.reason);
  if (parent.aborted) ctl.abort(parent.reason);
  else parent.addEventListener('abort', relay, { once: true });
  return { signal: ctl.signal, done: () => parent.removeEventListener('abort', relay) };
}

/** Splits lines into batches under the request and byte limits (a line over the byte limit stands alone). */
export function splitBatches(sizes: number[], maxRequests: number, maxBytes: number): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let bytes = 0;
  sizes.forEach((size, i) => {
    const line = size + 1; // and its newline
    if (cur.length > 0 && (cur.length >= maxRequests || bytes + line > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(i);
    bytes += line;
  });
  if (cur.length > 0) out.push(cur);
  return out;
}

function describeBatches(open: Entry[]): string {
  if (open.length === 0) return '';
  const c = open.reduce(
    (a, e) => ({
      total: a.total + (e.counts.total ?? e.requests),
      completed: a.completed + (e.counts.completed ?? 0),
      failed: a.failed + (e.counts.failed ?? 0),
    }),
    { total: 0, completed: 0, failed: 0 },
  );
  const states = [...new Set(open.map((e) => e.state))].join('/');
  const which = open.length === 1 ? `batch ${open[0].id ?? '(creating)'}` : `${open.length} batches`;
  return `${which} ${states}: ${c.completed}/${c.total} done${c.failed ? `, ${c.failed} failed` : ''}`;
}

export async function runBatches<I extends BatchItem>(r: BatchRun<I>): Promise<ProviderError | undefined> {
  const api = r.provider.batch as BatchApi;
  const file = join(r.runDir, BATCHES);
  const state = loadState(file, r.provider.id);
  const save = () => writeJsonAtomic(file, state);
  const byId = new Map([...(r.earlier ?? []), ...r.items].map((it) => [it.id, it]));
  const started = Date.now();
  const pastDeadline = () =>
    r.settings.deadlineMs !== undefined && Date.now() - started >= r.settings.deadlineMs;
  let deadlineHit = false;
  // Attempts at a record: every batch that held it (eval_info.attempts); retries are counted in
  // this session only, so a re-run retries what an earlier one gave up, as online.
  const attempts = (id: string) => state.batches.filter((e) => e.ids.includes(id)).length;
  const tries = (id: string) =>
    state.batches.filter((e) => e.session === r.session && e.ids.includes(id)).length;
  const gaveUp = new Set<string>();
  let fatal: ProviderError | undefined;

  const collect = async (e: Entry, job: BatchJob) => {
    const seen = new Set<string>();
    const fail = (item: I, pe: ProviderError) => {
      if (FATAL.has(pe.errorClass)) {
        fatal ??= pe;
        r.error(item, attempts(item.id), pe, 'stopped');
        return;
      }
      const retry = RETRYABLE.has(pe.errorClass) && tries(item.id) <= r.maxRetries;
      r.error(item, attempts(item.id), pe, retry ? 'retrying' : 'gave_up');
      if (!retry) {
        gaveUp.add(item.id);
        r.failed(item);
      }
    };
    // Custom ids are matched as exact strings (`r01` is not `r1`); an API whose batches carry no
    // key (Anthropic's) sends them as `<key>_r<i>`, so another batch's results never match.
    const idOf = new Map<string, string>(
      e.ids.flatMap((id, i) => [[`r${i}`, id] as const, [`${e.key}_r${i}`, id] as const]),
    );
    const bad = { lines: 0, unknown: 0 };
    const child = ownSignal(r.signal);
    try {
      for await (const res of api.results(job, r.constrained, child.signal)) {
        if ('bad' in res) {
          // Its record (if any) gets no outcome here, so it is asked again below.
          if (++bad.lines <= 5)
            r.log(`batch ${e.id ?? job.id}: ${res.bad}; skipped (its record is asked again)`);
          continue;
        }
        const id = idOf.get(res.customId);
        if (id === undefined) {
          if (++bad.unknown <= 5)
            r.log(
              `batch ${e.id ?? job.id}: a result for custom id ${JSON.stringify(res.customId.slice(0, 40))}, which is none of its requests; skipped`,
            );
          continue;
        }
        const item = byId.get(id);
        if (!item) continue; // no longer in the benchmark
        if (seen.has(item.id)) continue;
        seen.add(item.id);
        if (r.answered.has(item.id)) continue; // written by an earlier collection of this batch
        if (res.response)
          r.record(item, res.response, { attempts: attempts(item.id), batch: e.id ?? job.id });
        else if (res.error?.errorClass === 'schema_rejected')
          r.record(item, undefined, {
            attempts: attempts(item.id),
            batch: e.id ?? job.id,
            schemaRejected: res.error,
          });
        else fail(item, res.error ?? new ProviderError('server', 'no outcome'));
      }
    } finally {
      child.done();
    }
    if (bad.lines > 5) r.log(`batch ${e.id ?? job.id}: ${bad.lines} unreadable result lines in all`);
    if (bad.unknown > 5)
      r.log(`batch ${e.id ?? job.id}: ${bad.unknown} results for unknown custom ids in all`);
    // Requests the batch never answered: it expired, failed or was cancelled first.
    for (const id of e.ids) {
      const item = byId.get(id);
      if (!item || seen.has(id) || r.answered.has(id)) continue;
      const pe =
        job.state === 'expired' || job.state === 'JOB_STATE_EXPIRED'
          ? new ProviderError('batch_expired', `batch ${job.id} expired before this request was answered`)
          : job.state === 'failed' || job.state === 'JOB_STATE_FAILED'
            ? new ProviderError('bad_request', `batch ${job.id} failed: ${job.error ?? 'no reason given'}`)
            : new ProviderError(
                'server',
                `batch ${job.id} ended ${job.state} without an answer for this request`,
              );
      fail(item, pe);
    }
    e.collected = true;
    save();
  };

  /**
   * The batch created with `key` before a kill, or undefined when the provider's list has none.
   * A failing list is not "not found" (that would submit, and bill, the batch again): it is asked
   * again, and if it still fails the run stops without submitting anything.
   */
  const findBatch = async (e: Entry): Promise<BatchJob | undefined> => {
    const { key } = e;
    const hint = { requests: e.ids.length, submittedAt: e.submitted_at };
    let last: unknown;
    for (let attempt = 0; attempt <= FIND_RETRIES; attempt++) {
      if (attempt > 0) await sleep(Math.min(r.settings.pollMs, 1000) * attempt, r.signal);
      if (r.signal.aborted) throw last ?? new ProviderError('server', 'stopped');
      try {
        return await own(r.signal, (signal) => api.find(key, signal, hint));
      } catch (e) {
        last = e;
        if (e instanceof ProviderError && FATAL.has(e.errorClass)) throw e;
      }
    }
    throw new UserError(
      `could not list the provider's batches to find one an interrupted run created (key ${key}): ${errorMessage(last)}; nothing was submitted, so it is not billed twice: re-run the same command later`,
    );
  };

  /** Polls every open batch until each is done and collected (or the run is stopped). */
  const settle = async () => {
    for (;;) {
      const open = state.batches.filter((e) => !e.collected);
      if (open.length === 0 || r.signal.aborted || fatal) return;
      if (pastDeadline()) {
        deadlineHit = true;
        return;
      }
      for (const e of open) {
        if (r.signal.aborted) return;
        if (e.id === null) {
          // Killed between "about to create" and "created": find it by its key, or create it now.
          const found = await findBatch(e);
          if (found) e.id = found.id;
          else {
            const lines = e.ids.map((id, i) =>
              api.line(`r${i}`, r.request(byId.get(id) as I) as ProviderRequest),
            );
            const job = await own(r.signal, (signal) => api.submit(lines, e.key, signal));
            e.id = job.id;
            e.state = job.state;
          }
          save();
        }
        const job = await own(r.signal, (signal) => api.poll(e.id as string, signal));
        if (job.state !== e.state || JSON.stringify(job.counts) !== JSON.stringify(e.counts)) {
          e.state = job.state;
          e.counts = job.counts;
          if (job.error) e.error = job.error;
          save();
        }
        r.note(describeBatches(state.batches.filter((x) => !x.collected)));
        if (job.done) {
          r.log(`batch ${job.id}: ${job.state}${job.error ? ` (${job.error})` : ''}; collecting its results`);
          await collect(e, job);
        }
      }
      if (state.batches.some((e) => !e.collected)) {
        const left =
          r.settings.deadlineMs === undefined
            ? r.settings.pollMs
            : Math.max(0, Math.min(r.settings.pollMs, r.settings.deadlineMs - (Date.now() - started)));
        await sleep(left, r.signal);
      }
    }
  };

  const submitRound = async (items: I[]) => {
    // Sized with the shortest custom id, plus room for the longest one (r + 5 digits).
    const sizes = items.map((it) => Buffer.byteLength(api.line('r0', r.request(it) as ProviderRequest)) + 5);
    const maxRequests = Math.min(api.limits.maxRequests, r.settings.maxRequests ?? Number.POSITIVE_INFINITY);
    const maxBytes = Math.min(api.limits.maxBytes, r.settings.maxBytes ?? Number.POSITIVE_INFINITY);
    const round = 1 + items.reduce((m, it) => Math.max(m, attempts(it.id)), 0);
    for (const group of splitBatches(sizes, maxRequests, maxBytes)) {
      if (r.signal.aborted) return;
      const members = group.map((i) => items[i]);
      const body = members.map((it, i) => api.line(`r${i}`, r.request(it) as ProviderRequest));
      const bytes = body.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
      const ids = members.map((it) => it.id);
      const key = `sob-${sha256(JSON.stringify([r.runDir, r.provider.id, round, ids])).slice(0, 24)}`;
      const e: Entry = {
        key,
        id: null,
        state: 'creating',
        round,
        ids,
        requests: ids.length,
        bytes,
        est_tokens: Math.ceil(body.reduce((a, l) => a + l.length, 0) / 4),
        submitted_at: new Date().toISOString(),
        session: r.session,
        counts: {},
        collected: false,
      };
      state.batches.push(e);
      save(); // before the create: a kill now is healed by find(key)
      const job = await own(r.signal, (signal) => api.submit(body, key, signal));
      e.id = job.id;
      e.state = job.state;
      e.counts = job.counts;
      save();
      r.log(
        `batch ${job.id}: ${ids.length} requests, ${(bytes / 1024 / 1024).toFixed(2)} MB, ~${e.est_tokens} input tokens (round ${round})`,
      );
    }
  };

  if (r.settings.submitOnly) {
    if (state.batches.some((e) => !e.collected)) return undefined;
    const pending = r.items.filter((it) => !r.answered.has(it.id));
    try {
      if (pending.length > 0) await submitRound(pending);
    } catch (e) {
      if (r.signal.aborted) return undefined;
      if (e instanceof ProviderError && FATAL.has(e.errorClass)) return e;
      throw e;
    }
    return undefined;
  }
  try {
    // 1. What an earlier session left at the provider: poll it, never submit it again.
    await settle();
    // 2. Rounds: the first batch, then follow-ups (or online) for what failed and may be retried.
    for (;;) {
      if (r.signal.aborted || fatal || deadlineHit) break;
      const pending = r.items.filter((it) => !r.answered.has(it.id) && !gaveUp.has(it.id));
      const eligible = pending.filter((it) => tries(it.id) <= r.maxRetries);
      for (const it of pending) {
        if (tries(it.id) > r.maxRetries && !gaveUp.has(it.id)) {
          gaveUp.add(it.id);
          r.failed(it);
        }
      }
      if (eligible.length === 0) break;
      if (r.settings.fallback === 'online' && eligible.some((it) => attempts(it.id) > 0)) {
        r.log(`asking ${eligible.length} record(s) one by one (--batch-fallback online)`);
        await r.online(eligible, attempts);
        break;
      }
      await submitRound(eligible);
      await settle();
    }
  } catch (e) {
    if (r.signal.aborted) return fatal;
    if (e instanceof ProviderError && FATAL.has(e.errorClass)) return e;
    throw e;
  }
  if (deadlineHit) {
    const open = state.batches.filter((e) => !e.collected);
    const pending = new Set(open.flatMap((e) => e.ids.filter((id) => !r.answered.has(id))));
    r.log(
      `--batch-deadline reached: ${pending.size} record${pending.size === 1 ? '' : 's'} still pending in ${open.map((e) => `batch ${e.id ?? '(creating)'} (${e.state})`).join(', ')}; they stay at the provider, nothing is lost: re-run the same command to collect them`,
    );
  } else if (r.signal.aborted && state.batches.some((e) => !e.collected))
    r.log(
      `the batch keeps running at the provider: re-run the same command to collect its answers (${state.batches
        .filter((e) => !e.collected)
        .map((e) => e.id)
        .join(', ')})`,
    );
  return fatal;
}
