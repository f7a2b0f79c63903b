/**
 * Pages asked through the provider's batch interface (`sob ocr --engine openai:<model> --batch`,
 * and `sob build pdf`): every page's picture goes to the provider in batches before any page is
 * transcribed, with `sob run --batch`'s own hand-off, polling, collection, follow-up rounds,
 * deadline and resume (src/runner/batch.ts, `runBatches`); the pipeline then reads each page from
 * the batch's answer (`VlmPageReader.useBatchAnswers`) and asks nothing online.
 *
 * A page is one request per picture, its id the request's key (the model, its endpoints, the
 * prompt and the picture's hash: the response cache's key), so the pipeline finds the answer by
 * drawing the same picture. A page whose answer says it is turned is drawn turned and sent in a
 * second round, as olmOCR asks again. The folder `dir` holds `batches.json` (the batches, as
 * `sob run --batch` keeps them) and `answers.jsonl` (one answer a line, written whole as it is
 * collected): a run killed while its batches are at the provider is re-run and collects them,
 * submitting nothing again. Pages whose batch request failed for good, or that are still at the
 * provider when `--batch-deadline` ends the wait, are read by the local pipeline, each saying why.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../core/errors.ts';
import type { ProviderError, ProviderRequest, ProviderResponse } from '../providers/types.ts';
import { type BatchSettings, heldByBatches, runBatches } from './batch.ts';
import { AppendLog, repairTail } from './run-dir.ts';
import { type PageAnswerSource, parseOlmocrAnswer, type VlmPageReader } from './vlm-pages.ts';

export const PAGE_ANSWERS = 'answers.jsonl';

/** A page's picture as the pipeline draws it for the model (`sources/pdf/model-pages.ts`). */
export interface PagePicture {
  pdf: string;
  page: number;
  /** Quarter turn beyond the page's own /Rotate. */
  turn: number;
  png: Buffer;
}

export interface PageBatchOptions {
  /** Holds batches.json and answers.jsonl; a re-run with the same folder resumes. */
  dir: string;
  settings: BatchSettings;
  /** More rounds for a request whose batch failed it transiently (default 3). */
  maxRetries?: number;
  /**
   * The pages' pictures, each page at turn 0 and then, when `then` names one, at that turn (a
   * model's answer said the page is turned).
   */
  pictures(then: (p: PagePicture) => number | undefined): AsyncIterable<PagePicture>;
  /** How a page is named in messages (default `<pdf> page <n>`). */
  label?: (p: PagePicture) => string;
  log: (line: string) => void;
  signal?: AbortSignal;
}

export interface PageBatchResult {
  /** Pictures sent to the provider in this session (first rounds and follow-ups alike). */
  submitted: number;
  /** Answers collected from batches in this session. */
  collected: number;
  /** Pictures whose request failed for good in this session. */
  failed: number;
  /** Pictures still at the provider (the deadline ended the wait, or the run was stopped). */
  pending: number;
  /** An error that ended the batches for every page (a bad key, an unknown model). */
  fatal?: ProviderError;
}

interface StoredAnswer {
  id: string;
  batch: string;
  response: ProviderResponse;
}

/** answers.jsonl: the answers collected so far, by request key; a torn last line is cut off. */
class PageAnswers implements PageAnswerSource {
  readonly answers = new Map<string, { res: ProviderResponse; batch: string }>();
  /** Why a request has no answer (this session's failures). */
  readonly failures = new Map<string, string>();
  /** Set when an error ended the batches for every page (a bad key, an unknown model). */
  stopped?: string;
  private log?: AppendLog;

  constructor(
    private readonly dir: string,
    private readonly file = join(dir, PAGE_ANSWERS),
  ) {
    if (!existsSync(file)) return;
    repairTail(file);
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const a = JSON.parse(line) as StoredAnswer;
        if (typeof a.id === 'string' && typeof a.response?.text === 'string')
          this.answers.set(a.id, { res: a.response, batch: String(a.batch) });
      } catch {
        // A line that is not an answer: its page has none and is sent again.
      }
    }
  }

  add(id: string, res: ProviderResponse, batch: string): void {
    this.log ??= new AppendLog(this.file);
    const response: ProviderResponse = {
      text: res.text,
      finishReason: res.finishReason,
      ...(res.inputTokens !== undefined ? { inputTokens: res.inputTokens } : {}),
      ...(res.outputTokens !== undefined ? { outputTokens: res.outputTokens } : {}),
      ...(res.cost !== undefined ? { cost: res.cost } : {}),
    };
    this.log.append(JSON.stringify({ id, batch, response } satisfies StoredAnswer));
    this.answers.set(id, { res: response, batch });
    this.failures.delete(id);
  }

  answer(key: string) {
    return this.answers.get(key);
  }

  why(key: string): string {
    const failed = this.failures.get(key);
    if (failed) return failed;
    if (this.stopped) return this.stopped;
    if (heldByBatches(this.dir).has(key))
      return 'still pending in a batch at the provider: re-run the same command to collect it';
    return 'no answer from its batch';
  }

  close(): void {
    this.log?.close();
  }
}

/** The line a command prints when the page batches are done. */
export function pageBatchLine(modelId: string, b: PageBatchResult): string {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  return `${modelId}: batches done: ${n(b.submitted, 'picture')} sent, ${n(b.collected, 'answer')} collected, ${b.failed} failed${b.pending > 0 ? `, ${b.pending} still pending at the provider (re-run to collect)` : ''}${b.fatal ? `; stopped: ${errorMessage(b.fatal)}` : ''}`;
}

/**
 * Sends every page the reader has no answer for through the provider's batch interface, waits
 * for the batches (polling, follow-up rounds, the deadline: `runBatches`), and hands the reader
 * the answers: from then on it reads pages from them and asks nothing online.
 */
export async function askPagesByBatch(reader: VlmPageReader, o: PageBatchOptions): Promise<PageBatchResult> {
  const provider = reader.model;
  if (!provider.batch)
    throw new Error(`${provider.id} has no batch interface (--batch is for openai: and gemini:)`);
  mkdirSync(o.dir, { recursive: true });
  const store = new PageAnswers(o.dir);
  reader.useBatchAnswers(store);
  const signal = o.signal ?? new AbortController().signal;
  const label = o.label ?? ((p: PagePicture) => `${p.pdf} page ${p.page}`);
  const session = new Date().toISOString();
  const result: PageBatchResult = { submitted: 0, collected: 0, failed: 0, pending: 0 };
  const answered = new Set(store.answers.keys());
  const scratch = mkdtempSync(join(tmpdir(), 'sob-vlm-batch-'));
  /** When the first wait for batches began (--batch-deadline counts from it, across rounds). */
  let started: number | undefined;
  let note = '';
  try {
    // Rounds: all pages at turn 0 (and, for a page an earlier answer already called turned, its
    // turned picture), then the turned pictures of the pages this round's answers called turned.
    for (let round = 1; ; round++) {
      type Item = { id: string; label: string; file: string };
      const items: Item[] = [];
      const seen = new Set<string>();
      /** Turn-0 pictures whose turned picture was not drawn (their answer was not in yet). */
      const upright = new Set<string>();
      for await (const pic of o.pictures((p) => {
        const id = reader.keyOf(reader.request(p.png, label(p)));
        const turn = turnAsked(store.answer(id)?.res ?? reader.cachedAnswer(id));
        if (turn === undefined) upright.add(id);
        return turn;
      })) {
        const name = `${label(pic)}${pic.turn ? ` turned ${pic.turn}` : ''}`;
        const id = reader.keyOf(reader.request(pic.png, name));
        if (seen.has(id) || answered.has(id) || store.failures.has(id)) continue;
        seen.add(id);
        // Answered online before (the response cache): not paid for again.
        if (reader.cachedAnswer(id)) continue;
        const file = join(scratch, `${items.length}.png`);
        writeFileSync(file, pic.png);
        items.push({ id, label: name, file });
      }
      const request = (it: Item): Omit<ProviderRequest, 'signal'> =>
        reader.request(readFileSync(it.file), it.label);
      const held = heldByBatches(o.dir);
      if (items.length === 0 && held.size === 0) break;
      const toSend = items.filter((it) => !held.has(it.id)).length;
      o.log(
        `${provider.id}: ${toSend} ${round === 1 ? 'page picture' : 'picture'}${toSend === 1 ? '' : 's'}${round === 1 ? '' : ' of pages the model called turned, drawn turned,'} to send in batches${held.size > 0 ? `, ${held.size} already at the provider (collected, not sent again)` : ''}`,
      );
      const fatal = await runBatches({
        provider,
        runDir: o.dir,
        items,
        request,
        answered,
        constrained: false,
        maxRetries: o.maxRetries ?? 3,
        // --batch-deadline counts from the first round's start, across the rounds.
        settings:
          o.settings.deadlineMs === undefined
            ? o.settings
            : {
                ...o.settings,
                deadlineMs: Math.max(1, o.settings.deadlineMs - (Date.now() - (started ??= Date.now()))),
              },
        session,
        signal,
        record: (it, res, a) => {
          if (res) {
            store.add(it.id, res, a.batch);
            reader.keep(it.id, res);
            answered.add(it.id);
            result.collected++;
          } else {
            store.failures.set(it.id, `in batch ${a.batch}: ${a.schemaRejected?.message ?? 'no answer'}`);
          }
        },
        error: (it, _attempt, pe, outcome) => {
          if (outcome !== 'retrying')
            store.failures.set(it.id, `${pe.errorClass} in its batch request: ${errorMessage(pe)}`);
        },
        failed: () => {
          result.failed++;
        },
        note: (text) => {
          if (text && text !== note) o.log(`${provider.id}: ${text}`);
          note = text;
        },
        online: async (list) => {
          // --batch-fallback online: one request each, through the reader's retry loop.
          for (const it of list) {
            const got = await reader.askOnline(request(it), it.id);
            if (got.res) {
              store.add(it.id, got.res, 'online');
              reader.keep(it.id, got.res);
              answered.add(it.id);
            } else if (got.error) {
              store.failures.set(
                it.id,
                `${got.error.errorClass} (asked online after its batch): ${errorMessage(got.error)}`,
              );
              result.failed++;
            }
          }
        },
        log: (line) => o.log(`${provider.id}: ${line}`),
      });
      result.submitted = countSubmitted(o.dir, session);
      if (fatal) {
        result.fatal = fatal;
        store.stopped = `the batches stopped: ${fatal.errorClass}: ${errorMessage(fatal)}`;
        break;
      }
      if (signal.aborted || heldByBatches(o.dir).size > 0) break;
      // Another round only for pages this round's answers called turned.
      if (![...upright].some((id) => turnAsked(store.answer(id)?.res) !== undefined)) break;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    store.close();
  }
  result.pending = heldByBatches(o.dir).size;
  return result;
}

/** The turn an answer asks the page to be read at (olmOCR's rule), or undefined. */
function turnAsked(res: ProviderResponse | undefined): number | undefined {
  const front = res ? parseOlmocrAnswer(res.text)?.front : undefined;
  return front && !front.is_rotation_valid && front.rotation_correction !== 0
    ? front.rotation_correction
    : undefined;
}

/** Requests this session put into batches (batches.json, by the session's start). */
function countSubmitted(dir: string, session: string): number {
  try {
    const v = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8')) as {
      batches: { session: string; requests: number }[];
    };
    return v.batches.filter((b) => b.session === session).reduce((a, b) => a + b.requests, 0);
  } catch {
    return 0;
  }
}
