/**
 * The one provider interface (docs/design.md "Providers"): a request goes in, text, token usage,
 * latency and a finish reason come out. A provider never retries; the runner owns the single
 * retry layer, so a provider only has to say *what kind* of failure happened (ProviderError).
 */
import type { AttachmentKind } from '../core/attachments.ts';
import type { PyValue } from '../core/pyjson.ts';

/** Failure classes the runner acts on (retry, stop, record). */
export const ERROR_CLASSES = [
  'rate_limit',
  'server',
  'timeout',
  'network',
  'auth',
  'bad_request',
  'schema_rejected',
  'truncated',
  'refusal',
  /** A 2xx reply that is not an answer: no choices, no message, content null, no candidates, not JSON. */
  'invalid_response',
  /** A reply over the size cap (--max-response-mb). */
  'too_large',
  /** No endpoint could be reached at all (connection refused, unknown host): the run stops. */
  'unreachable',
  /** HTTP 404: the model (or the endpoint path) does not exist there: the run stops. */
  'not_found',
  /** The whole batch expired before this request was answered (batch mode). */
  'batch_expired',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** Transient classes: worth another attempt after a pause. */
export const RETRYABLE: ReadonlySet<ErrorClass> = new Set([
  'rate_limit',
  'server',
  'timeout',
  'network',
  'invalid_response',
  'batch_expired',
]);

/** Classes that end the whole run at once: no other record would fare better. */
export const FATAL: ReadonlySet<ErrorClass> = new Set(['auth', 'unreachable', 'not_found']);

export interface ProviderRequest {
  recordId: string;
  /** System text ('' for none). */
  system: string;
  user: string;
  /** The record's JSON schema (plain JS). */
  schema: Record<string, unknown>;
  /** Hand the schema to the provider's structured-output mode too. */
  constrained: boolean;
  temperature: number;
  maxTokens: number;
  signal: AbortSignal;
  /** Told once when a streamed answer's first token arrives (the coverage time limits). */
  onFirstToken?: () => void;
  /** The record's ground truth (lossless); only the gold baseline reads it. */
  groundTruth: PyValue;
  /**
   * Documents sent after the user text, each as the provider's API takes it natively: a page for a
   * vision model to read (`sob ocr --engine`), a record's attachments (`--input document|both`).
   */
  attachments?: ProviderAttachment[];
}

/** The kinds of document a record may carry (docs/records.md "Attachments"): one list, in src/core. */
export { ATTACHMENT_KINDS, type AttachmentKind } from '../core/attachments.ts';

/**
 * One document as a provider sends it: its bytes, read for this request only (the runner reads the
 * file when it asks, so a benchmark's documents are never all held at once).
 */
export interface ProviderAttachment {
  kind: AttachmentKind;
  /** `image/png`, `image/jpeg`, `image/webp`, `image/gif`, `application/pdf`, `audio/wav`, `audio/mpeg`, ... */
  mime: string;
  data: Buffer;
  /** sha256 of `data`, lower-case hex (cache keys, logs). */
  sha256: string;
  /** A file name for APIs that want one (OpenAI's `file` part); the record's file name. */
  name?: string;
  /** For a PDF: its page count (the page-limit policy). */
  pages?: number;
}

/**
 * What a provider accepts natively per request (docs/providers.md "Documents"): the runner holds a
 * request's attachments to these by one stated policy (an image downscaled to the edge, a PDF over
 * the page or byte limit sent as page images or refused), recorded per record, never cut silently.
 */
export interface DocumentLimits {
  /** Kinds the API takes at all. */
  kinds: readonly AttachmentKind[];
  /** Longest image edge in pixels. */
  maxImageEdge: number;
  /** Largest image, bytes. */
  maxImageBytes: number;
  /** Most pages of one PDF. */
  maxPdfPages: number;
  /** Largest PDF, bytes. */
  maxPdfBytes: number;
  /** Largest request body once encoded, bytes (inline data counted as base64). */
  maxRequestBytes: number;
  /** Documents over `maxRequestBytes` inline go through the provider's file upload instead (Gemini's Files API). */
  uploadsOverLimit?: boolean;
  /** Where these numbers come from (the provider's documentation page). */
  source: string;
}

export interface ProviderResponse {
  text: string;
  inputTokens?: number;
  outputTokens?: number;
  /** The provider's own word: stop, length, refusal, ... */
  finishReason: string;
  /**
   * Of inputTokens, per modality as the provider reports them (Gemini's `promptTokensDetails`:
   * `text`, `image`, `document`, `audio`, `video`); OpenAI and Anthropic report no such split.
   */
  inputTokensByModality?: Record<string, number>;
  /** Of inputTokens: read from the provider's prompt cache, and written to it (Anthropic). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** In US dollars, when the provider reports it (or its published prices give it). */
  cost?: number;
  /** Which endpoint answered (several --base-url values). */
  endpoint?: string;
  /** Streamed answers: time to the first token (ms) and per output token after it (ms). */
  ttftMs?: number;
  tpotMs?: number;
}

/** A provider's batch job as last seen. */
export interface BatchJob {
  /** The provider's id for it (`batch_...`, `batches/...`). */
  id: string;
  /** The provider's own word: validating, in_progress, completed, expired, JOB_STATE_RUNNING, ... */
  state: string;
  /** True once the provider will change nothing more (completed, failed, expired, cancelled). */
  done: boolean;
  /** Requests in the batch, answered and failed so far (when the provider says). */
  counts: { total?: number; completed?: number; failed?: number };
  /** Why the whole batch failed, when it did. */
  error?: string;
}

/** One request's outcome in a finished batch, by the custom id it was sent with. */
export interface BatchResult {
  customId: string;
  response?: ProviderResponse;
  error?: ProviderError;
}

/** A line of a batch's results: a request's outcome, or a line that is not one (`bad`: where and why). */
export type BatchLine = BatchResult | { bad: string };

/**
 * A provider's batch interface (OpenAI's Files + Batches API, Gemini's batch mode, Anthropic's
 * Message Batches API): requests go
 * in as lines, one job answers them all later at the batch price.
 */
export interface BatchApi {
  /** Per batch: most requests and bytes of input (the provider's documented limits). */
  readonly limits: { maxRequests: number; maxBytes: number; source: string };
  /** The input line for one request (its byte length counts against maxBytes). */
  line(customId: string, req: ProviderRequest): string;
  /** Uploads and creates one batch; `key` marks it so a lost id can be found again. */
  submit(lines: string[], key: string, signal: AbortSignal): Promise<BatchJob>;
  /**
   * A batch created earlier with this key (after a crash between create and saving its id);
   * `hint`: what the run saved before creating it, for an API whose batches carry no key.
   */
  find(
    key: string,
    signal: AbortSignal,
    hint?: { requests: number; submittedAt: string },
  ): Promise<BatchJob | undefined>;
  poll(id: string, signal: AbortSignal): Promise<BatchJob>;
  /**
   * Every request's outcome once the job is done, read line by line as it arrives (a results
   * file may be larger than one string can hold); a line that is not a typed result is given as
   * `bad`, never thrown. Requests without an outcome are left out.
   */
  results(job: BatchJob, constrained: boolean, signal: AbortSignal): AsyncIterable<BatchLine>;
}

export interface Provider {
  /** `<kind>:<model>` as given on the command line. */
  readonly id: string;
  readonly kind: string;
  readonly model: string;
  /** Settings worth recording in the manifest (never a key). */
  describe(): Record<string, unknown>;
  complete(req: ProviderRequest): Promise<ProviderResponse>;
  close?(): Promise<void>;
  /** The provider's batch interface, where it has one (`sob run --batch`). */
  readonly batch?: BatchApi;
  /** What it accepts natively (`--input document|both`); absent: text only. */
  readonly documentLimits?: DocumentLimits;
}

/** A classified failure. `text` keeps what the model said when there was an answer (truncated, refusal). */
export class ProviderError extends Error {
  readonly errorClass: ErrorClass;
  readonly status?: number;
  /** Server-requested pause (Retry-After), in ms. */
  readonly retryAfterMs?: number;
  readonly response?: ProviderResponse;
  /** The request never reached a server (connection refused, unknown host). */
  readonly unreachable: boolean;
  constructor(
    errorClass: ErrorClass,
    message: string,
    extra: {
      status?: number;
      retryAfterMs?: number;
      response?: ProviderResponse;
      cause?: unknown;
      unreachable?: boolean;
    } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ProviderError';
    this.errorClass = errorClass;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
    this.response = extra.response;
    this.unreachable = extra.unreachable === true;
  }
}

/** The class of an HTTP status: 401/403 auth, 404 not_found, 408 timeout, 429 rate_limit, 5xx server, other 4xx bad_request. */
export function classifyStatus(status: number): ErrorClass {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limit';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** A 400 that is about the response schema (structured-output mode refused it). */
export function mentionsSchema(message: string): boolean {
  return /schema|response_format|json_schema|responseSchema/i.test(message);
}

/** `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, as ms; undefined when absent or bad. */
export function parseRetryAfter(
  value: string | null | undefined,
  valueMs?: string | null,
): number | undefined {
  if (valueMs) {
    const ms = Number(valueMs);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  if (!value) return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const at = Date.parse(value);
  if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  return undefined;
}

/** Splits `openai:gpt-4.1-mini` into kind and model (the model may itself contain ':'). */
export function splitModelId(id: string): { kind: string; model: string } {
  const i = id.indexOf(':');
  if (i <= 0) return { kind: id, model: '' };
  return { kind: id.slice(0, i), model: id.slice(i + 1) };
}
