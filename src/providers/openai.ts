/**
 * `openai:<model>`: OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama,
 * OpenRouter) through --base-url / OPENAI_BASE_URL. SDK retries are off (the runner retries).
 *
 * A 2xx reply that is not an answer (no choices, no message, `content: null` without a refusal,
 * a body that is not JSON) is an `invalid_response` error, retried, never scored. Credentials in
 * a --base-url (`user:pass@`, `?api-key=`) are sent as an Authorization header and a query,
 * and shown redacted everywhere else.
 */

import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  toFile,
} from 'openai';
import type { Batch } from 'openai/resources/batches';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import { bytesText, cappedLines, lineCapBytes } from '../core/capped-lines.ts';
import { UserError } from '../core/errors.ts';
import { EndpointPool, type PoolOptions } from './endpoints.ts';
import { guardedFetch } from './http.ts';
import { type ParsedEndpoint, parseEndpoint } from './secrets.ts';
import {
  type BatchApi,
  type BatchJob,
  type BatchLine,
  classifyStatus,
  type DocumentLimits,
  type ErrorClass,
  mentionsSchema,
  type Provider,
  type ProviderAttachment,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  parseRetryAfter,
} from './types.ts';

export interface OpenAIOptions {
  baseUrls?: string[];
  /** Defaults to process.env.OPENAI_API_KEY; never written anywhere. */
  apiKey?: string;
  pool?: PoolOptions;
  /** Largest reply accepted (bytes); default 16 MB. */
  maxResponseBytes?: number;
  /** Stream answers (default true): records time to first token and per output token. */
  stream?: boolean;
}

/** Reasoning models take max_completion_tokens, no temperature, and the lowest effort they allow. */
function reasoningSettings(model: string): { effort?: 'minimal' | 'low'; reasoningModel: boolean } {
  const m = model.toLowerCase().split('/').pop() ?? '';
  if (/^gpt-5(?!.*chat)/.test(m)) return { effort: 'minimal', reasoningModel: true };
  if (/^o\d/.test(m)) return { effort: 'low', reasoningModel: true };
  return { reasoningModel: false };
}

/**
 * A chat completion (an HTTP reply, or a line of a batch output file) as a ProviderResponse;
 * a reply that holds no answer is an `invalid_response` error.
 */
export function completionResponse(res: unknown, endpoint?: string): ProviderResponse {
  if (res === null || typeof res !== 'object' || Array.isArray(res))
    throw new ProviderError(
      'invalid_response',
      `the reply is not a chat completion (${typeof res === 'string' ? `text: ${JSON.stringify(res.slice(0, 60))}` : typeof res})`,
    );
  const c = res as Partial<ChatCompletion>;
  if (!Array.isArray(c.choices) || c.choices.length === 0)
    throw new ProviderError('invalid_response', 'the reply has no choices');
  const choice = c.choices[0];
  const msg = choice?.message;
  if (!msg || typeof msg !== 'object')
    throw new ProviderError('invalid_response', 'the reply has no message');
  const usage = c.usage as (ChatCompletion['usage'] & { cost?: unknown }) | undefined;
  const out: ProviderResponse = {
    text: typeof msg.content === 'string' ? msg.content : '',
    inputTokens: usage?.prompt_tokens,
    outputTokens: usage?.completion_tokens,
    finishReason: choice.finish_reason ?? 'stop',
    cost: typeof usage?.cost === 'number' ? usage.cost : undefined,
    endpoint,
  };
  if (typeof msg.refusal === 'string' && msg.refusal) {
    out.text = msg.refusal;
    out.finishReason = 'refusal';
  } else if (choice.finish_reason === 'content_filter') out.finishReason = 'refusal';
  else if (typeof msg.content !== 'string' && choice.finish_reason !== 'length')
    throw new ProviderError(
      'invalid_response',
      `the reply's message has no content (content: ${msg.content === undefined ? 'missing' : JSON.stringify(msg.content)}, finish_reason: ${choice.finish_reason ?? 'none'})`,
    );
  return out;
}

/**
 * One document as a chat content part (OpenAI's documentation): an image as a data URL, a PDF as a
 * `file` part (its name and a data URL), audio as `input_audio` (base64 and its format).
 */
function contentPart(a: ProviderAttachment): ChatCompletionContentPart {
  const b64 = a.data.toString('base64');
  if (a.kind === 'pdf')
    return {
      type: 'file',
      file: { filename: a.name ?? `${a.sha256.slice(0, 12)}.pdf`, file_data: `data:${a.mime};base64,${b64}` },
    };
  if (a.kind === 'audio')
    return {
      type: 'input_audio',
      input_audio: { data: b64, format: /mpeg|mp3/.test(a.mime) ? 'mp3' : 'wav' },
    };
  return { type: 'image_url', image_url: { url: `data:${a.mime};base64,${b64}` } };
}

/**
 * What OpenAI's chat completions take per request (docs/providers.md "Documents"): images up to
 * 20 MB, read at most 2,048 px on the long side (high detail); PDFs up to 100 pages and 32 MB;
 * audio (`input_audio`: wav, mp3); 50 MB of payload per request.
 */
export const OPENAI_DOCUMENT_LIMITS: DocumentLimits = {
  kinds: ['image', 'pdf', 'audio'],
  maxImageEdge: 2048,
  maxImageBytes: 20 * 1024 * 1024,
  maxPdfPages: 100,
  maxPdfBytes: 32 * 1024 * 1024,
  maxRequestBytes: 50 * 1024 * 1024,
  source:
    'https://platform.openai.com/docs/guides/images-vision, https://platform.openai.com/docs/guides/pdf-files, https://platform.openai.com/docs/guides/audio',
};

export class OpenAIProvider implements Provider {
  readonly documentLimits = OPENAI_DOCUMENT_LIMITS;
  readonly kind = 'openai';
  readonly id: string;
  readonly pool: EndpointPool<OpenAI>;
  readonly endpoints: ParsedEndpoint[];
  readonly batch: BatchApi;
  readonly stream: boolean;
  private readonly reasoning: ReturnType<typeof reasoningSettings>;

  constructor(
    readonly model: string,
    opts: OpenAIOptions = {},
  ) {
    this.id = `openai:${model}`;
    if (!model) throw new UserError('openai: give a model, e.g. --model openai:gpt-4.1-mini', 2);
    const urls = opts.baseUrls?.length
      ? opts.baseUrls
      : process.env.OPENAI_BASE_URL
        ? [process.env.OPENAI_BASE_URL]
        : [];
    const custom = urls.length > 0;
    const apiKey = opts.apiKey ?? process.env.OPENAI_API_KEY ?? (custom ? 'not-needed' : undefined);
    if (!apiKey)
      throw new UserError('OPENAI_API_KEY is not set (or give --base-url for a server that needs no key)');
    this.endpoints = (custom ? urls : ['https://api.openai.com/v1']).map(parseEndpoint);
    this.pool = new EndpointPool(
      this.endpoints.map((e) => e.display),
      (_display, i) => {
        const e = this.endpoints[i];
        return new OpenAI({
          apiKey,
          baseURL: e.url,
          defaultQuery: Object.keys(e.query).length > 0 ? e.query : undefined,
          defaultHeaders: e.authorization ? { Authorization: e.authorization } : undefined,
          maxRetries: 0,
          timeout: 24 * 3600 * 1000,
          fetch: guardedFetch({ maxBytes: opts.maxResponseBytes, display: e.display }),
        });
      },
      opts.pool,
    );
    this.reasoning = reasoningSettings(model);
    this.stream = opts.stream !== false;
    // Batch files are larger than any one reply: their own client, with a 2 GB cap.
    const e = this.endpoints[0];
    const batchClient = new OpenAI({
      apiKey,
      baseURL: e.url,
      defaultQuery: Object.keys(e.query).length > 0 ? e.query : undefined,
      defaultHeaders: e.authorization ? { Authorization: e.authorization } : undefined,
      maxRetries: 0,
      timeout: 3600 * 1000,
      fetch: guardedFetch({
        maxBytes: 2 * 1024 ** 3,
        display: e.display,
        // A results file is read line by line as it arrives, never whole.
        streamBody: (url) => /\/files\/[^/?]+\/content(?:\?|$)/.test(url),
      }),
    });
    this.batch = new OpenAIBatch(this, batchClient, e.display);
  }

  describe(): Record<string, unknown> {
    return {
      endpoints: this.pool.endpoints.map((e) => e.url),
      reasoning_effort: this.reasoning.effort ?? null,
      token_limit_parameter: this.reasoning.reasoningModel ? 'max_completion_tokens' : 'max_tokens',
      temperature_sent: !this.reasoning.reasoningModel,
      stream: this.stream,
    };
  }

  body(req: ProviderRequest): ChatCompletionCreateParamsNonStreaming {
    const messages: ChatCompletionCreateParamsNonStreaming['messages'] = [];
    if (req.system) messages.push({ role: 'system', content: req.system });
    messages.push({
      role: 'user',
      // olmOCR's order: the instruction, then the documents, each as the API takes it.
      content: req.attachments?.length
        ? [{ type: 'text', text: req.user }, ...req.attachments.map(contentPart)]
        : req.user,
    });
    const body: ChatCompletionCreateParamsNonStreaming = { model: this.model, messages };
    if (this.reasoning.reasoningModel) {
      body.max_completion_tokens = req.maxTokens;
      if (this.reasoning.effort) body.reasoning_effort = this.reasoning.effort;
    } else {
      body.max_tokens = req.maxTokens;
      body.temperature = req.temperature;
    }
    if (req.constrained) {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: req.schema, strict: true },
      };
    }
    return body;
  }

  /**
   * A streamed answer: the text as it comes, the time to its first token (from sending the
   * request) and the time per output token after the first ((last - first) / (tokens - 1),
   * visible tokens: reasoning tokens are not streamed). A stream that ends without a finish
   * reason was cut (a network error, retried); one that never carried content is not an answer.
   */
  private async streamed(
    client: OpenAI,
    req: ProviderRequest,
    endpoint: string,
    reached: () => void,
  ): Promise<ProviderResponse> {
    const t0 = performance.now();
    const { data: stream, response } = await client.chat.completions
      .create(
        { ...this.body(req), stream: true, stream_options: { include_usage: true } },
        { signal: req.signal },
      )
      .withResponse();
    reached();
    // A server that does not stream answers with one JSON body: read it as a plain reply.
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream'))
      return completionResponse(await response.json().catch(() => undefined), endpoint);
    let text = '';
    let refusal = '';
    let sawContent = false;
    let finish: string | null = null;
    let first: number | undefined;
    let last = 0;
    let pieces = 0;
    let usage: (ChatCompletion['usage'] & { cost?: unknown }) | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta as { content?: string | null; refusal?: string | null } | undefined;
      const piece = (delta?.content ?? '') + (delta?.refusal ?? '');
      if (typeof delta?.content === 'string') sawContent = true;
      if (piece) {
        const now = performance.now();
        if (first === undefined) {
          first = now;
          req.onFirstToken?.();
        }
        last = now;
        pieces++;
      }
      if (delta?.content) text += delta.content;
      if (delta?.refusal) refusal += delta.refusal;
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (!finish)
      throw new ProviderError('network', 'the stream ended before the answer finished (no finish_reason)');
    const tokens =
      usage?.completion_tokens !== undefined
        ? usage.completion_tokens - (usage.completion_tokens_details?.reasoning_tokens ?? 0)
        : pieces;
    const out: ProviderResponse = {
      text,
      inputTokens: usage?.prompt_tokens,
      outputTokens: usage?.completion_tokens,
      finishReason: finish,
      cost: typeof usage?.cost === 'number' ? usage.cost : undefined,
      endpoint,
      ttftMs: first === undefined ? undefined : first - t0,
      tpotMs: first !== undefined && tokens > 1 ? (last - first) / (tokens - 1) : undefined,
    };
    if (refusal) {
      out.text = refusal;
      out.finishReason = 'refusal';
    } else if (finish === 'content_filter') out.finishReason = 'refusal';
    else if (!sawContent && finish !== 'length')
      throw new ProviderError(
        'invalid_response',
        `the streamed reply carried no content (finish_reason: ${finish})`,
      );
    return out;
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    const ep = this.pool.acquire();
    let failure: ErrorClass | undefined;
    let retryAfterMs: number | undefined;
    try {
      if (this.stream) return await this.streamed(ep.client, req, ep.url, () => (ep.reach = 'answered'));
      const res = await ep.client.chat.completions.create(this.body(req), { signal: req.signal });
      ep.reach = 'answered';
      return completionResponse(res, ep.url);
    } catch (e) {
      const pe = toProviderError(e, req.constrained, this.model, ep.url);
      if (pe && !pe.unreachable) ep.reach = 'answered';
      failure = pe?.errorClass;
      retryAfterMs = pe?.retryAfterMs;
      if (pe?.unreachable) {
        if (ep.reach !== 'answered') ep.reach = 'refused';
        // Fail fast when no endpoint has ever been reached: retrying a refused connection for
        // minutes helps nobody. (One of several down is taken out of the pool and retried.)
        if (this.pool.endpoints.every((x) => x.reach === 'refused'))
          throw new ProviderError('unreachable', pe.message, { cause: pe });
      }
      throw pe ?? e;
    } finally {
      this.pool.release(ep, failure, retryAfterMs);
    }
  }
}

const DONE = new Set(['completed', 'failed', 'expired', 'cancelled']);

function jobOf(b: Batch): BatchJob {
  return {
    id: b.id,
    state: b.status,
    done: DONE.has(b.status),
    counts: {
      total: b.request_counts?.total,
      completed: b.request_counts?.completed,
      failed: b.request_counts?.failed,
    },
    error: b.errors?.data?.length
      ? b.errors.data
          .slice(0, 3)
          .map(
            (x) =>
              `${x.line !== undefined && x.line !== null ? `line ${x.line}: ` : ''}${x.message ?? x.code}`,
          )
          .join('; ')
      : undefined,
  };
}

/** One line of a batch's output or error file (OpenAI's documented format), checked as read. */
const BatchOutputLine = z.object({
  custom_id: z.string(),
  response: z
    .object({ status_code: z.number().optional(), body: z.unknown().optional() })
    .passthrough()
    .nullable()
    .optional(),
  error: z
    .object({ code: z.string().nullable().optional(), message: z.string().nullable().optional() })
    .passthrough()
    .nullable()
    .optional(),
});

/** The first problem zod found, in a few words. */
function zodWhy(e: z.ZodError): string {
  const i = e.issues[0];
  return i ? `${i.path.join('.') || 'the line'}: ${i.message}` : 'unknown shape';
}

/**
 * The Files + Batches API: the requests as a JSONL file (`purpose: batch`), one batch over
 * `/v1/chat/completions`, polled until done; then the output file (answers) and the error
 * file (failed requests) are read back line by line. Limits: 50,000 requests and 200 MB per
 * input file (OpenAI's documentation).
 */
class OpenAIBatch implements BatchApi {
  readonly limits = { maxRequests: 50_000, maxBytes: 200 * 1024 * 1024, source: 'OpenAI Batch API' };
  constructor(
    private readonly p: OpenAIProvider,
    private readonly client: OpenAI,
    private readonly endpoint: string,
  ) {}

  line(customId: string, req: ProviderRequest): string {
    return JSON.stringify({
      custom_id: customId,
      method: 'POST',
      url: '/v1/chat/completions',
      body: this.p.body(req),
    });
  }

  private async call<T>(what: () => Promise<T>): Promise<T> {
    try {
      return await what();
    } catch (e) {
      // A 404 of the Files or Batches API is a file or batch missing, not the model.
      if (e instanceof APIError && e.status === 404)
        throw new ProviderError(
          'not_found',
          `HTTP 404 from ${this.endpoint} (Files/Batches API): ${e.message.replace(/^404\s*/, '')}`,
          { status: 404, cause: e },
        );
      throw toProviderError(e, false, this.p.model, this.endpoint) ?? e;
    }
  }

  async submit(lines: string[], key: string, signal: AbortSignal): Promise<BatchJob> {
    return this.call(async () => {
      const file = await this.client.files.create(
        {
          file: await toFile(Buffer.from(`${lines.join('\n')}\n`), `sob-${key.slice(0, 16)}.jsonl`, {
            type: 'application/jsonl',
          }),
          purpose: 'batch',
        },
        { signal },
      );
      const b = await this.client.batches.create(
        {
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata: { sob_key: key },
        },
        { signal },
      );
      return jobOf(b);
    });
  }

  async find(key: string, signal: AbortSignal): Promise<BatchJob | undefined> {
    return this.call(async () => {
      let seen = 0;
      for await (const b of this.client.batches.list({ limit: 100 }, { signal })) {
        if ((b.metadata as Record<string, string> | null)?.sob_key === key) return jobOf(b);
        if (++seen >= 1000) break;
      }
      return undefined;
    });
  }

  async poll(id: string, signal: AbortSignal): Promise<BatchJob> {
    return this.call(async () => jobOf(await this.client.batches.retrieve(id, { signal })));
  }

  async *results(job: BatchJob, constrained: boolean, signal: AbortSignal): AsyncIterable<BatchLine> {
    const b = await this.call(() => this.client.batches.retrieve(job.id, { signal }));
    for (const [fileId, what] of [
      [b.output_file_id, 'output file'],
      [b.error_file_id, 'error file'],
    ] as const) {
      if (!fileId) continue;
      let res: Response;
      try {
        res = await this.client.files.content(fileId, { signal });
      } catch (e) {
        // A 404 here is the file, not the model: said as such.
        if (e instanceof APIError && e.status === 404)
          throw new ProviderError(
            'server',
            `batch ${job.id}: its ${what} ${fileId} is not found at ${this.endpoint} (HTTP 404); its answers stay uncollected: re-run to try again`,
            { status: 404 },
          );
        throw toProviderError(e, false, this.p.model, this.endpoint) ?? e;
      }
      if (!res.body) continue;
      // Line by line as the file arrives: memory holds one line (at most the line cap), not the
      // file; a longer line is a bad line, never put together (src/core/capped-lines.ts).
      const input = Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>);
      try {
        for await (const l of cappedLines(input)) {
          const n = l.n;
          const bad = (why: string) => ({ bad: `${what} ${fileId} line ${n}: ${why}` });
          if ('tooLong' in l) {
            yield bad(`${bytesText(l.tooLong)} long, over the ${bytesText(lineCapBytes())} line limit`);
            continue;
          }
          const raw = l.text;
          if (!raw.trim()) continue;
          let value: unknown;
          try {
            value = JSON.parse(raw);
          } catch {
            yield bad('not JSON');
            continue;
          }
          const line = BatchOutputLine.safeParse(value);
          if (!line.success) {
            yield bad(`not a batch result line (${zodWhy(line.error)})`);
            continue;
          }
          yield { customId: line.data.custom_id, ...this.outcome(line.data, constrained) };
        }
      } catch (e) {
        throw toProviderError(e, false, this.p.model, this.endpoint) ?? e;
      } finally {
        input.destroy();
      }
    }
  }

  private outcome(
    line: {
      response?: { status_code?: number; body?: unknown } | null;
      error?: { code?: string | null; message?: string | null } | null;
    },
    constrained: boolean,
  ): { response?: ProviderResponse; error?: ProviderError } {
    if (line.error) {
      const code = line.error.code ?? 'error';
      const cls: ErrorClass = code === 'batch_expired' ? 'batch_expired' : 'server';
      return { error: new ProviderError(cls, `${code}: ${line.error.message ?? ''}`.trim()) };
    }
    const status = line.response?.status_code ?? 0;
    if (status >= 200 && status < 300) {
      try {
        return { response: completionResponse(line.response?.body, this.endpoint) };
      } catch (e) {
        return { error: e as ProviderError };
      }
    }
    const body = line.response?.body as { error?: { message?: string } } | undefined;
    const message = body?.error?.message ?? `HTTP ${status}`;
    let cls = status ? classifyStatus(status) : 'server';
    if (cls === 'bad_request' && constrained && mentionsSchema(message)) cls = 'schema_rejected';
    return { error: new ProviderError(cls, `HTTP ${status}: ${message}`, { status }) };
  }
}

/** An SDK error as a ProviderError; undefined for our own abort (the runner knows why it aborted). */
export function toProviderError(
  e: unknown,
  constrained: boolean,
  model: string,
  endpoint: string,
): ProviderError | undefined {
  if (e instanceof ProviderError) return e;
  if (e instanceof APIUserAbortError) return undefined;
  // A failure our guarded fetch classified (too large, not JSON, unreachable) comes wrapped.
  if (e instanceof APIConnectionError && e.cause instanceof ProviderError) return e.cause;
  if (e instanceof APIConnectionTimeoutError) return new ProviderError('timeout', e.message, { cause: e });
  if (e instanceof APIConnectionError) return new ProviderError('network', e.message, { cause: e });
  if (e instanceof APIError && typeof e.status === 'number') {
    let cls = classifyStatus(e.status);
    if (cls === 'bad_request' && constrained && mentionsSchema(e.message)) cls = 'schema_rejected';
    const retryAfterMs = parseRetryAfter(e.headers?.get('retry-after'), e.headers?.get('retry-after-ms'));
    const message =
      cls === 'not_found'
        ? `HTTP 404 from ${endpoint}: no model "${model}" there (or the --base-url path is wrong); the server says: ${e.message.replace(/^404\s*/, '')}`
        : `HTTP ${e.status}: ${e.message}`;
    return new ProviderError(cls, message, { status: e.status, retryAfterMs, cause: e });
  }
  if (e instanceof SyntaxError)
    return new ProviderError('invalid_response', `the reply is not JSON: ${e.message}`, { cause: e });
  return undefined;
}
