/**
 * Pages read by a vision-language model (`sob ocr --engine openai:<model>|gemini:<model>`), as
 * olmOCR's own pipeline asks its model: the page rendered with its longest side 1,288 px, the
 * olmOCR v4 prompt, the answer's front matter read (`primary_language`, `is_rotation_valid`,
 * `rotation_correction`, `is_table`, `is_diagram`) and, when the model says the page is turned,
 * the page turned by its correction and asked once more.
 *
 * Through the provider layer: one provider (the SDK's retries off), the project's one retry
 * owner (src/core/retry.ts: transient failures with backoff, Retry-After honoured), the response cache (answers
 * only, keyed by the model, its endpoints, the prompt and the picture's hash: a re-run after a
 * crash asks no answered page again), a progress line and the cost the provider reports. A page
 * whose answers fail (refused, unreadable, a server that keeps failing) is reported as failed,
 * with why: the PDF pipeline then reads it locally and says so in `ocr_pages.jsonl`.
 */

import { errorMessage } from '../core/errors.ts';
import type { PageModel, PageModelResult } from '../core/page-model.ts';
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, retrying } from '../core/retry.ts';
import { createProvider, type ProviderOptions } from '../providers/index.ts';
import {
  FATAL,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  RETRYABLE,
} from '../providers/types.ts';
import { cacheKey, ResponseCache } from './cache.ts';
import { sha256 } from './prompt.ts';

/** olmOCR's render size: the longest side of the page image, in pixels. */
export const OLMOCR_LONGEST_SIDE = 1288;

/** olmOCR's v4 prompt (`build_no_anchoring_v4_yaml_prompt`), word for word: its model is trained on it. */
export const OLMOCR_PROMPT =
  'Attached is one page of a document that you must process. ' +
  'Just return the plain text representation of this document as if you were reading it naturally. Convert equations to LateX and tables to HTML.\n' +
  'If there are any figures or charts, label them with the following markdown syntax ![Alt text describing the contents of the figure](page_startx_starty_width_height.png)\n' +
  'Return your output as markdown, with a front matter section on top specifying values for the primary_language, is_rotation_valid, rotation_correction, is_table, and is_diagram parameters.';

export interface FrontMatter {
  primary_language: string | null;
  is_rotation_valid: boolean;
  rotation_correction: 0 | 90 | 180 | 270;
  is_table: boolean;
  is_diagram: boolean;
}

/**
 * The answer's front matter and body: `---`, `key: value` lines, `---`, then the transcript.
 * Values as olmOCR writes them (YAML scalars: True/false, integers, null, strings, quoted or
 * not). Undefined when there is no front matter or a key is missing or out of range: the answer
 * is not one olmOCR's pipeline would take.
 */
export function parseOlmocrAnswer(text: string): { front: FrontMatter; body: string } | undefined {
  const m = /^\s*---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!m) return undefined;
  const raw = new Map<string, string>();
  for (const line of m[1].split(/\r?\n/)) {
    const kv = /^\s*([a-z_]+)\s*:\s*(.*?)\s*$/.exec(line);
    if (kv) raw.set(kv[1], kv[2].replace(/^(['"])(.*)\1$/, '$2'));
  }
  const bool = (k: string): boolean | undefined => {
    const v = raw.get(k)?.toLowerCase();
    return v === 'true' ? true : v === 'false' ? false : undefined;
  };
  const lang = raw.get('primary_language');
  const rot = Number(raw.get('rotation_correction'));
  const valid = bool('is_rotation_valid');
  const table = bool('is_table');
  const diagram = bool('is_diagram');
  if (lang === undefined || valid === undefined || table === undefined || diagram === undefined)
    return undefined;
  if (![0, 90, 180, 270].includes(rot)) return undefined;
  return {
    front: {
      primary_language: lang === 'null' || lang === '' ? null : lang,
      is_rotation_valid: valid,
      rotation_correction: rot as FrontMatter['rotation_correction'],
      is_table: table,
      is_diagram: diagram,
    },
    body: m[2].trim(),
  };
}

export interface VlmOptions {
  providerOptions?: ProviderOptions;
  /** Response cache folder; null: none (every page asked afresh). */
  cacheDir: string | null;
  /** Retries per ask after a transient failure (default 3). */
  maxRetries?: number;
  /** Per request (default 300 s: a dense page is thousands of tokens). */
  timeoutMs?: number;
  /** olmOCR's defaults: temperature 0.1, 8,000 tokens. */
  temperature?: number;
  maxTokens?: number;
  backoff?: BackoffOptions;
  /** Progress and per-page notes (stderr). */
  log?: (line: string) => void;
}

/**
 * Answers a provider's batch gave (`--batch`, src/runner/vlm-batch.ts), by request key: a reader
 * given them answers pages from them (and its cache) and asks nothing online.
 */
export interface PageAnswerSource {
  answer(key: string): { res: ProviderResponse; batch: string } | undefined;
  /** Why a page has no answer (its batch request failed, or is still pending at the provider). */
  why(key: string): string;
}

/** Counts for the summary line and `bench/ocr.ts`. */
export interface VlmStats {
  asked: number;
  cached: number;
  /** Answers taken from a batch (`--batch`). */
  batched: number;
  reasked_rotated: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
}

/** A vision model reading pages for the PDF pipeline (`PageModel`). */
export class VlmPageReader implements PageModel {
  readonly longSide = OLMOCR_LONGEST_SIDE;
  readonly stats: VlmStats = {
    asked: 0,
    cached: 0,
    batched: 0,
    reasked_rotated: 0,
    failed: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost: 0,
  };
  private readonly cache?: ResponseCache;
  private fatal?: ProviderError;
  private batch?: PageAnswerSource;

  private constructor(
    private readonly provider: Provider,
    private readonly opts: VlmOptions,
  ) {
    if (opts.cacheDir !== null) this.cache = new ResponseCache(opts.cacheDir);
  }

  static async start(id: string, opts: VlmOptions): Promise<VlmPageReader> {
    return new VlmPageReader(await createProvider(id, { stream: false, ...opts.providerOptions }), opts);
  }

  get id(): string {
    return this.provider.id;
  }

  /** The provider (its batch interface, for `src/runner/vlm-batch.ts`). */
  get model(): Provider {
    return this.provider;
  }

  /** From now on pages are answered from these batch answers (and the cache), never online. */
  useBatchAnswers(source: PageAnswerSource): void {
    this.batch = source;
  }

  /** The request for one picture of a page: olmOCR's prompt, the picture after it. */
  request(png: Buffer, label: string): Omit<ProviderRequest, 'signal'> {
    return {
      recordId: label,
      system: '',
      user: OLMOCR_PROMPT,
      schema: {},
      constrained: false,
      temperature: this.opts.temperature ?? 0.1,
      maxTokens: this.opts.maxTokens ?? 8000,
      groundTruth: null,
      attachments: [{ kind: 'image', mime: 'image/png', data: png, sha256: sha256(png) }],
    };
  }

  /** The request's key: the model, its endpoints, the prompt and the picture's hash (the cache's key). */
  keyOf(req: Omit<ProviderRequest, 'signal'>): string {
    return cacheKey(this.provider.id, this.provider.describe(), {
      ...req,
      signal: new AbortController().signal,
    });
  }

  /** An answer the response cache holds for this key (counted as nothing). */
  cachedAnswer(key: string): ProviderResponse | undefined {
    return this.cache?.get(key);
  }

  /** Keeps an answer in the response cache (when there is one). */
  keep(key: string, res: ProviderResponse): void {
    this.cache?.set(key, res);
  }

  /** One answer: from the batch answers when given, else through the cache and the retry loop. */
  private async ask(
    png: Buffer,
    label: string,
  ): Promise<{
    res?: ProviderResponse;
    error?: ProviderError;
    cached: boolean;
    key?: string;
    batch?: string;
    why?: string;
  }> {
    const base = this.request(png, label);
    const key = this.cache || this.batch ? this.keyOf(base) : undefined;
    if (this.batch && key) {
      const got = this.batch.answer(key);
      if (got) {
        this.stats.batched++;
        return { res: got.res, cached: true, key, batch: got.batch };
      }
    }
    const hit = key ? this.cache?.get(key) : undefined;
    if (hit) {
      this.stats.cached++;
      return { res: hit, cached: true, key };
    }
    if (this.batch && key) return { cached: false, why: this.batch.why(key) };
    return this.askOnline(base, key);
  }

  /** One answer through the retry loop; the last error when every attempt failed. */
  async askOnline(
    base: Omit<ProviderRequest, 'signal'>,
    key?: string,
  ): Promise<{ res?: ProviderResponse; error?: ProviderError; cached: boolean; key?: string }> {
    let last: ProviderError | undefined;
    const r = await retrying(
      async ({ signal }) => {
        if (this.fatal) throw this.fatal; // another page met it: no more asking
        this.stats.asked++;
        const res = await this.provider.complete({ ...base, signal });
        this.stats.input_tokens += res.inputTokens ?? 0;
        this.stats.output_tokens += res.outputTokens ?? 0;
        this.stats.cost += res.cost ?? 0;
        return res;
      },
      ({ error: e, timedOut }) => {
        last =
          e instanceof ProviderError
            ? e
            : timedOut
              ? new ProviderError('timeout', 'no answer within the request timeout')
              : new ProviderError('network', errorMessage(e));
        if (FATAL.has(last.errorClass)) {
          this.fatal = last;
          return 'stop';
        }
        return RETRYABLE.has(last.errorClass) ? { retryAfterMs: last.retryAfterMs } : 'stop';
      },
      {
        maxRetries: this.opts.maxRetries ?? 3,
        delay: (failures, retryAfterMs) =>
          backoffDelay(failures, this.opts.backoff ?? DEFAULT_BACKOFF, retryAfterMs),
        timeoutMs: this.opts.timeoutMs ?? 300_000,
      },
    );
    return r.ok ? { res: r.value, cached: false, key } : { error: last, cached: false };
  }

  /**
   * The page read by the model, or why not. `render(turn)` draws the page turned clockwise by
   * `turn` degrees with its longest side `longSide` px. A page the model says is turned is
   * turned by its `rotation_correction` and asked once more (olmOCR's own rule); the second
   * answer is taken as it is.
   */
  async read(
    where: { pdf: string; page: number },
    render: (turn: number) => Promise<Buffer>,
  ): Promise<PageModelResult> {
    const label = `${where.pdf} page ${where.page}`;
    let turn = 0;
    let asks = 0;
    let batch: string | undefined;
    for (let round = 0; round < 2; round++) {
      const png = await render(turn);
      // An answer without front matter is asked once more before the page falls back.
      let parsed: ReturnType<typeof parseOlmocrAnswer>;
      let why = '';
      for (let tries = 0; tries < 2 && !parsed; tries++) {
        const got = await this.ask(png, label);
        asks++;
        if (got.batch) batch = got.batch;
        if (!got.res) {
          why =
            got.why ??
            `${got.error?.errorClass ?? 'error'}: ${got.error ? errorMessage(got.error) : 'no answer'}`;
          break;
        }
        // Kept: answers and refusals (the model's word on this page); never errors or an
        // answer without front matter (asked again, and again on a re-run).
        const keep = () => {
          if (got.key && !got.cached) this.cache?.set(got.key, got.res!);
        };
        if (got.res.finishReason === 'refusal') {
          keep();
          why = `refused: ${oneLine(got.res.text).slice(0, 120)}`;
          break;
        }
        parsed = parseOlmocrAnswer(got.res.text);
        if (parsed) keep();
        else why = `no olmOCR front matter in the answer ("${oneLine(got.res.text).slice(0, 60)}")`;
        // A batch's answer is the one there is: asking it again gives the same.
        if (got.batch) break;
      }
      const where = batch ? { batch } : {};
      if (!parsed) {
        this.stats.failed++;
        return { failed: `${this.provider.id}: ${why}`, info: { asks, turn, ...where } };
      }
      const f = parsed.front;
      if (round === 0 && !f.is_rotation_valid && f.rotation_correction !== 0) {
        turn = f.rotation_correction;
        this.stats.reasked_rotated++;
        continue;
      }
      return {
        markdown: parsed.body,
        info: { asks, turn, front_matter: f, ...where },
      };
    }
    /* c8 ignore next */
    throw new Error('unreachable');
  }

  async close(): Promise<void> {
    await this.provider.close?.();
  }
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
