/**
 * `anthropic:<model>`: the Messages API through @anthropic-ai/sdk (docs/providers.md "Anthropic").
 * SDK retries are off (the runner owns the one retry layer); the key comes from ANTHROPIC_API_KEY
 * only and `--base-url` (or ANTHROPIC_BASE_URL) points it at another server.
 *
 * - A record's documents go as content blocks before the prompt: images as `image` blocks, PDFs as
 *   `document` blocks (base64 both); audio is not something the Messages API takes (`documentLimits`
 *   leaves it out, and a request carrying it fails with one line).
 * - `--constrained` hands the schema to `output_config.format` (JSON-schema structured output);
 *   the tool-use mode (a forced `answer` tool whose input is the answer) is there for servers
 *   that speak the protocol without structured output (`structured: 'tool'`).
 * - `stop_reason` becomes the runner's finish reason: `end_turn`/`stop_sequence` stop,
 *   `max_tokens`/`model_context_window_exceeded` length (truncated), `refusal` refusal,
 *   `tool_use` with our tool an answer; `pause_turn`, an unknown tool or a reply without text is
 *   `invalid_response` (retried).
 * - The API reports no price: cost is computed from its usage (cache reads and writes at their
 *   own rates) and the price table below, halved in a batch; a model not in it has no cost.
 */

import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { MessageBatch } from '@anthropic-ai/sdk/resources/messages/batches';
import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { z } from 'zod';
import { bytesText, cappedLines, lineCapBytes } from '../core/capped-lines.ts';
import { UserError } from '../core/errors.ts';
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
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  parseRetryAfter,
} from './types.ts';

export interface AnthropicOptions {
  baseUrl?: string;
  /** Defaults to process.env.ANTHROPIC_API_KEY; never written anywhere. */
  apiKey?: string;
  /** Largest reply accepted (bytes); default 16 MB. */
  maxResponseBytes?: number;
  /** Stream answers (default true): records time to first token and per output token. */
  stream?: boolean;
  /** How `--constrained` hands the schema over: `output_config.format` (default) or a forced tool. */
  structured?: 'json_schema' | 'tool';
}

const DEFAULT_ENDPOINT = 'https://api.anthropic.com';
/** The forced tool of the tool-use mode. */
const TOOL = 'answer';

/**
 * What the Messages API takes per request (Anthropic's vision and PDF support pages): images up to
 * 8,000 px a side and 5 MB each once base64-encoded (3.75 MB of bytes), PDFs up to 100 pages, the
 * whole request up to 32 MB (so a PDF's bytes at most 24 MB). No audio.
 */
export const ANTHROPIC_LIMITS: DocumentLimits = {
  kinds: ['image', 'pdf'],
  maxImageEdge: 8000,
  maxImageBytes: (5 * 1024 * 1024 * 3) / 4,
  maxPdfPages: 100,
  maxPdfBytes: (32 * 1024 * 1024 * 3) / 4,
  maxRequestBytes: 32 * 1024 * 1024,
  source: 'Anthropic docs: Vision (image limits), PDF support (32 MB request, 100 pages)',
};

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

// ------------------------------------------------------------------------------------ prices

/** US dollars per million tokens (docs/providers.md "Anthropic" holds the same table). */
export interface AnthropicPrice {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

const p = (input: number, cacheWrite5m: number, cacheWrite1h: number, cacheRead: number, output: number) => ({
  input,
  cacheWrite5m,
  cacheWrite1h,
  cacheRead,
  output,
});

/** Anthropic's pricing page, 2026-12; model ids without their snapshot date. */
export const ANTHROPIC_PRICES: Record<string, AnthropicPrice> = {
  'claude-fable-5-1': p(10, 12.5, 20, 0.25, 50),
  'claude-mythos-5-1': p(10, 12.5, 20, 0.25, 50),
  'claude-fable-5': p(10, 12.5, 20, 1, 50),
  'claude-mythos-5': p(10, 12.5, 20, 1, 50),
  'claude-opus-5-5': p(4, 5, 8, 0.2, 20),
  'claude-opus-5': p(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-8': p(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-7': p(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-6': p(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-5': p(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-1': p(15, 18.75, 30, 1.5, 75),
  'claude-opus-4': p(15, 18.75, 30, 1.5, 75),
  'claude-sonnet-5-5': p(2, 2.5, 4, 0.1, 10),
  'claude-sonnet-5': p(2, 2.5, 4, 0.2, 10),
  'claude-sonnet-4-6': p(3, 3.75, 6, 0.3, 15),
  'claude-sonnet-4-5': p(3, 3.75, 6, 0.3, 15),
  'claude-sonnet-4': p(3, 3.75, 6, 0.3, 15),
  'claude-haiku-5-5': p(0.1, 0.125, 0.2, 0.01, 0.5),
  'claude-haiku-4-5': p(1, 1.25, 2, 0.1, 5),
};
/** Haiku 5.5 above 100,000 prompt tokens (input, cache reads and writes): every token of the request. */
const HAIKU_5_5_LONG = p(0.5, 0.625, 1, 0.05, 2.5);

/** The price of a model id (`claude-opus-4-6`, `claude-haiku-4-5-20251001`, `claude-sonnet-4-6[1m]`). */
export function anthropicPrice(model: string): AnthropicPrice | undefined {
  const base = model
    .toLowerCase()
    .replace(/\[[^\]]*\]$/, '')
    .replace(/-(?:\d{8}|latest)$/, '')
    .replace(/^claude-opus-4-0$/, 'claude-opus-4')
    .replace(/^claude-sonnet-4-0$/, 'claude-sonnet-4');
  return ANTHROPIC_PRICES[base];
}

/** What a reply's `usage` says, as far as it is priced. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
}

/** US dollars for one reply, or undefined for a model without a price. A batch pays half of everything. */
export function anthropicCost(model: string, u: AnthropicUsage, batch = false): number | undefined {
  let price = anthropicPrice(model);
  if (!price) return undefined;
  const input = u.input_tokens ?? 0;
  const read = u.cache_read_input_tokens ?? 0;
  const w1h = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  // Writes not split by lifetime are the default 5-minute ones.
  const w5m =
    u.cache_creation?.ephemeral_5m_input_tokens ?? Math.max(0, (u.cache_creation_input_tokens ?? 0) - w1h);
  if (price === ANTHROPIC_PRICES['claude-haiku-5-5'] && input + read + w5m + w1h > 100_000)
    price = HAIKU_5_5_LONG;
  const usd =
    (input * price.input +
      w5m * price.cacheWrite5m +
      w1h * price.cacheWrite1h +
      read * price.cacheRead +
      (u.output_tokens ?? 0) * price.output) /
    1e6;
  return batch ? usd / 2 : usd;
}

// ------------------------------------------------------------------------------------ replies

/** Models that take `output_config.effort` (the lowest is asked: the paper's "reasoning at its lowest"). */
export function lowestEffort(model: string): 'low' | undefined {
  const m = model.toLowerCase();
  if (!m.startsWith('claude-')) return undefined;
  // Haiku 4.5 and the models before Opus 4.5 have no effort setting.
  if (/^claude-(?:haiku-4|sonnet-4(?:-5|-0)?(?:$|-\d{8})|opus-4(?:-0|-1)?(?:$|-\d{8})|\d)/.test(m))
    return undefined;
  return 'low';
}

interface Block {
  type: string;
  text?: string;
  name?: string;
  input?: unknown;
}

interface Reply {
  content?: Block[];
  stop_reason?: string | null;
  stop_details?: { category?: string | null; explanation?: string | null } | null;
  usage?: AnthropicUsage & { output_tokens_details?: { thinking_tokens?: number } | null };
}

/**
 * A Message (an HTTP reply, a batch result, or a stream put together) as a ProviderResponse. Text
 * blocks are the answer (thinking blocks are not); in tool-use mode the `answer` tool's input is.
 */
export function messageResponse(res: unknown, model: string, batch = false): ProviderResponse {
  if (res === null || typeof res !== 'object' || Array.isArray(res))
    throw new ProviderError('invalid_response', `the reply is not a Message (${typeof res})`);
  const m = res as Reply;
  if (!Array.isArray(m.content)) throw new ProviderError('invalid_response', 'the reply has no content');
  const u = m.usage ?? {};
  const out: ProviderResponse = {
    text: m.content
      .filter((b) => b?.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text)
      .join(''),
    inputTokens:
      u.input_tokens === undefined || u.input_tokens === null
        ? undefined
        : u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
    outputTokens: u.output_tokens ?? undefined,
    finishReason: 'stop',
    cost: m.usage ? anthropicCost(model, u, batch) : undefined,
  };
  if (u.cache_read_input_tokens) out.cacheReadTokens = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens) out.cacheWriteTokens = u.cache_creation_input_tokens;
  const stop = m.stop_reason ?? null;
  const tool = m.content.find((b) => b?.type === 'tool_use');
  if (tool) {
    if (tool.name !== TOOL)
      throw new ProviderError(
        'invalid_response',
        `the model called a tool it was not given ("${tool.name}")`,
      );
    out.text = JSON.stringify(tool.input ?? null);
    return out;
  }
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
      break;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      out.finishReason = 'length';
      return out;
    case 'refusal': {
      out.finishReason = 'refusal';
      const d = m.stop_details;
      if (!out.text && d)
        out.text = [d.category ? `refusal (${d.category})` : 'refusal', d.explanation]
          .filter(Boolean)
          .join(': ');
      return out;
    }
    case 'tool_use':
      throw new ProviderError('invalid_response', 'stop_reason tool_use without a tool_use block');
    case 'pause_turn':
      throw new ProviderError('invalid_response', 'the model paused its turn (pause_turn) without an answer');
    case null:
      throw new ProviderError('invalid_response', 'the reply has no stop_reason');
    default:
      out.finishReason = stop;
  }
  if (!m.content.some((b) => b?.type === 'text'))
    throw new ProviderError('invalid_response', `the reply has no text (stop_reason ${stop})`);
  return out;
}

/** An error `type` (an SSE `error` event, a batch result) as an error class. */
const ERROR_TYPES: Record<string, ErrorClass> = {
  invalid_request_error: 'bad_request',
  authentication_error: 'auth',
  permission_error: 'auth',
  billing_error: 'auth',
  not_found_error: 'not_found',
  request_too_large: 'bad_request',
  rate_limit_error: 'rate_limit',
  api_error: 'server',
  overloaded_error: 'server',
  timeout_error: 'timeout',
};

/** A 400 about the structured-output schema or the tool's input schema. */
function aboutSchema(message: string): boolean {
  return mentionsSchema(message) || /output_config|output_format|input_schema/i.test(message);
}

export class AnthropicProvider implements Provider {
  readonly kind = 'anthropic';
  readonly id: string;
  readonly endpoint: ParsedEndpoint;
  readonly client: Anthropic;
  readonly batch: BatchApi;
  readonly stream: boolean;
  readonly structured: 'json_schema' | 'tool';
  readonly documentLimits = ANTHROPIC_LIMITS;
  private readonly effort: 'low' | undefined;
  private reached = false;

  constructor(
    readonly model: string,
    opts: AnthropicOptions = {},
  ) {
    this.id = `anthropic:${model}`;
    if (!model) throw new UserError('anthropic: give a model, e.g. --model anthropic:claude-haiku-4-5', 2);
    const url = opts.baseUrl ?? process.env.ANTHROPIC_BASE_URL ?? undefined;
    const apiKey = opts.apiKey ?? process.env.ANTHROPIC_API_KEY ?? (url ? 'not-needed' : undefined);
    if (!apiKey)
      throw new UserError('ANTHROPIC_API_KEY is not set (or give --base-url for a server that needs no key)');
    this.endpoint = parseEndpoint(url || DEFAULT_ENDPOINT);
    const e = this.endpoint;
    const client = (maxBytes: number | undefined, streamBody?: (u: string) => boolean) =>
      new Anthropic({
        apiKey,
        baseURL: e.url,
        defaultQuery: Object.keys(e.query).length > 0 ? e.query : undefined,
        // A `user:pass@` in --base-url is the proxy's; the key then goes as x-api-key.
        defaultHeaders: e.authorization ? { Authorization: e.authorization, 'x-api-key': apiKey } : undefined,
        maxRetries: 0,
        timeout: 24 * 3600 * 1000,
        openTelemetry: false,
        fetch: guardedFetch({ maxBytes, display: e.display, streamBody }),
      });
    this.client = client(opts.maxResponseBytes);
    this.stream = opts.stream !== false;
    this.structured = opts.structured ?? 'json_schema';
    this.effort = lowestEffort(model);
    // A batch's results file is larger than any one reply: read line by line, 2 GB at most.
    this.batch = new AnthropicBatch(
      this,
      client(2 * 1024 ** 3, (u) => /\/v1\/messages\/batches\/[^/?]+\/results(?:\?|$)/.test(u)),
    );
  }

  describe(): Record<string, unknown> {
    return {
      endpoint: this.endpoint.display,
      effort: this.effort ?? null,
      // The Messages API of SDK 1.15 has no sampling parameters (newer models refuse them).
      temperature_sent: false,
      structured_output: this.structured === 'tool' ? 'tool_use' : 'output_config.format',
      stream: this.stream,
    };
  }

  /** The documents first (Anthropic's advice: documents before the question), then the prompt. */
  private content(req: ProviderRequest): string | ContentBlockParam[] {
    if (!req.attachments?.length) return req.user;
    const blocks = req.attachments.map((a): ContentBlockParam => {
      const what = a.name ?? a.sha256.slice(0, 12);
      if (a.kind === 'image') {
        if (!IMAGE_TYPES.has(a.mime))
          throw new ProviderError(
            'bad_request',
            `${this.id}: image ${what} is ${a.mime}; the Messages API takes image/jpeg, image/png, image/gif or image/webp`,
          );
        const media = a.mime as 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
        return {
          type: 'image',
          source: { type: 'base64', media_type: media, data: a.data.toString('base64') },
        };
      }
      if (a.kind === 'pdf')
        return {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: a.data.toString('base64') },
          ...(a.name ? { title: a.name } : {}),
        };
      throw new ProviderError(
        'bad_request',
        `${this.id}: ${a.kind} attachment ${what} cannot be sent: the Messages API takes images and PDFs, not ${a.kind}`,
      );
    });
    return [...blocks, { type: 'text', text: req.user }];
  }

  /** The request body (online and in a batch alike). */
  body(req: ProviderRequest): MessageCreateParamsNonStreaming {
    const body: MessageCreateParamsNonStreaming = {
      model: this.model,
      max_tokens: req.maxTokens,
      messages: [{ role: 'user', content: this.content(req) }],
    };
    if (req.system) body.system = req.system;
    if (this.effort) body.output_config = { effort: this.effort };
    if (req.constrained) {
      if (this.structured === 'json_schema')
        body.output_config = { ...body.output_config, format: { type: 'json_schema', schema: req.schema } };
      else {
        body.tools = [
          {
            name: TOOL,
            description: 'Record the answer: the values extracted from the document, in the given schema.',
            input_schema: req.schema as Tool['input_schema'],
          },
        ];
        body.tool_choice = { type: 'tool', name: TOOL };
      }
    }
    return body;
  }

  /**
   * A streamed answer (server-sent events: message_start, content_block_start/delta/stop,
   * message_delta, message_stop): the text (or the tool's JSON) as it comes, the time to its first
   * piece (from sending the request) and per visible output token after it. A stream that ends
   * before message_stop was cut (a network error, retried).
   */
  private async streamed(req: ProviderRequest): Promise<ProviderResponse> {
    const t0 = performance.now();
    const { data: stream, response } = await this.client.messages
      .create({ ...this.body(req), stream: true }, { signal: req.signal })
      .withResponse();
    this.reached = true;
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream'))
      return messageResponse(await response.json().catch(() => undefined), this.model);
    const blocks: Block[] = [];
    const json: string[] = [];
    let message: Reply | undefined;
    let stopped = false;
    let first: number | undefined;
    let last = 0;
    let pieces = 0;
    for await (const ev of stream) {
      let piece = '';
      if (ev.type === 'message_start') message = { ...(ev.message as unknown as Reply), content: blocks };
      else if (ev.type === 'content_block_start') {
        blocks[ev.index] = { ...(ev.content_block as Block) };
        json[ev.index] = '';
      } else if (ev.type === 'content_block_delta') {
        const b = blocks[ev.index];
        if (!b) continue;
        if (ev.delta.type === 'text_delta') {
          b.text = (b.text ?? '') + ev.delta.text;
          piece = ev.delta.text;
        } else if (ev.delta.type === 'input_json_delta') {
          json[ev.index] += ev.delta.partial_json;
          piece = ev.delta.partial_json;
        }
      } else if (ev.type === 'content_block_stop') {
        const b = blocks[ev.index];
        if (b?.type === 'tool_use' && json[ev.index]) {
          try {
            b.input = JSON.parse(json[ev.index]);
          } catch {
            throw new ProviderError('invalid_response', "the tool's streamed input is not JSON");
          }
        }
      } else if (ev.type === 'message_delta' && message) {
        message.stop_reason = ev.delta.stop_reason ?? message.stop_reason;
        const details = (ev.delta as { stop_details?: Reply['stop_details'] }).stop_details;
        if (details) message.stop_details = details;
        // message_delta's usage is cumulative: it replaces what message_start said, field by field.
        const u = Object.fromEntries(Object.entries(ev.usage ?? {}).filter(([, v]) => v !== null));
        message.usage = { ...message.usage, ...u };
      } else if (ev.type === 'message_stop') stopped = true;
      if (piece) {
        const now = performance.now();
        if (first === undefined) {
          first = now;
          req.onFirstToken?.();
        }
        last = now;
        pieces++;
      }
    }
    if (!message || !stopped)
      throw new ProviderError('network', 'the stream ended before the answer finished (no message_stop)');
    const res = messageResponse({ ...message, content: blocks.filter(Boolean) }, this.model);
    const thinking = message.usage?.output_tokens_details?.thinking_tokens ?? 0;
    const tokens = res.outputTokens !== undefined ? res.outputTokens - thinking : pieces;
    res.ttftMs = first === undefined ? undefined : first - t0;
    res.tpotMs = first !== undefined && tokens > 1 ? (last - first) / (tokens - 1) : undefined;
    return res;
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    try {
      const res = this.stream
        ? await this.streamed(req)
        : messageResponse(
            await this.client.messages.create(this.body(req), { signal: req.signal }),
            this.model,
          );
      this.reached = true;
      return { ...res, endpoint: this.endpoint.display };
    } catch (e) {
      throw this.toProviderError(e, req.constrained) ?? e;
    }
  }

  /** Any SDK failure as a ProviderError; undefined for our own abort (the runner knows why). */
  toProviderError(e: unknown, constrained: boolean): ProviderError | undefined {
    if (e instanceof APIUserAbortError) return undefined;
    let pe: ProviderError | undefined;
    if (e instanceof ProviderError) pe = e;
    // A failure our guarded fetch classified (too large, not JSON, unreachable) comes wrapped.
    else if (e instanceof APIConnectionError && e.cause instanceof ProviderError) pe = e.cause;
    else if (e instanceof APIConnectionTimeoutError)
      pe = new ProviderError('timeout', e.message, { cause: e });
    else if (e instanceof APIConnectionError) pe = new ProviderError('network', e.message, { cause: e });
    else if (e instanceof APIError) {
      const apiMessage = (e as APIError & { apiMessage?: string | null }).apiMessage ?? e.message;
      let cls: ErrorClass;
      if (typeof e.status === 'number') cls = classifyStatus(e.status);
      else cls = ERROR_TYPES[(e as APIError & { type?: string | null }).type ?? ''] ?? 'server';
      if (cls === 'bad_request' && constrained && aboutSchema(apiMessage)) cls = 'schema_rejected';
      const retryAfterMs = parseRetryAfter(e.headers?.get('retry-after'), e.headers?.get('retry-after-ms'));
      const message =
        cls === 'not_found'
          ? `HTTP 404 from ${this.endpoint.display}: no model "${this.model}" there (or the --base-url path is wrong); the server says: ${apiMessage}`
          : e.status === undefined
            ? `error event in the stream (${(e as { type?: string | null }).type ?? 'error'}): ${apiMessage}`
            : `HTTP ${e.status}${e.status === 529 ? ' (overloaded)' : ''}: ${apiMessage}`;
      pe = new ProviderError(cls, message, { status: e.status, retryAfterMs, cause: e });
    } else if (e instanceof SyntaxError)
      pe = new ProviderError('invalid_response', `the reply is not JSON: ${e.message}`, { cause: e });
    if (!pe) return undefined;
    if (!pe.unreachable) this.reached = true;
    // Fail fast when the endpoint was never reached: retrying a refused connection helps nobody.
    else if (!this.reached) return new ProviderError('unreachable', pe.message, { cause: pe });
    return pe;
  }
}

// ------------------------------------------------------------------------------------ batches

/** One line of a batch's results file (Anthropic's documented format), checked as read. */
const ResultLine = z.object({
  custom_id: z.string(),
  result: z
    .object({
      type: z.enum(['succeeded', 'errored', 'canceled', 'expired']),
      message: z.unknown().optional(),
      error: z
        .object({
          type: z.string().optional(),
          error: z
            .object({ type: z.string().optional(), message: z.string().optional() })
            .passthrough()
            .optional(),
        })
        .passthrough()
        .nullable()
        .optional(),
    })
    .passthrough(),
});

function jobOf(b: MessageBatch): BatchJob {
  const c = b.request_counts;
  const total = c ? c.processing + c.succeeded + c.errored + c.canceled + c.expired : undefined;
  return {
    id: b.id,
    state: b.processing_status,
    done: b.processing_status === 'ended',
    counts: c ? { total, completed: c.succeeded, failed: c.errored + c.canceled + c.expired } : {},
  };
}

/**
 * The Message Batches API: one batch of up to 100,000 requests or 256 MB (of which 250 MB are
 * filled: each custom id gains the batch's key), polled until it has ended, its results read back
 * line by line. A batch carries no metadata, so each request's custom id starts with the key
 * (`sob-<hash>_r<i>`): that is how a batch created by a run killed before it saved the id is told
 * from any other once it has ended (`find`), and how a result is matched to its request.
 */
class AnthropicBatch implements BatchApi {
  readonly limits = {
    maxRequests: 100_000,
    maxBytes: 250 * 1024 * 1024,
    source: 'Anthropic Message Batches API (100,000 requests or 256 MB per batch)',
  };
  constructor(
    private readonly p: AnthropicProvider,
    private readonly client: Anthropic,
  ) {}

  line(customId: string, req: ProviderRequest): string {
    return JSON.stringify({ custom_id: customId, params: this.p.body(req) });
  }

  private async call<T>(what: () => Promise<T>): Promise<T> {
    try {
      return await what();
    } catch (e) {
      // A 404 of the Batches API is a batch missing, not the model.
      if (e instanceof APIError && e.status === 404)
        throw new ProviderError(
          'not_found',
          `HTTP 404 from ${this.p.endpoint.display} (Message Batches API): ${e.message.replace(/^404\s*/, '')}`,
          { status: 404, cause: e },
        );
      throw this.p.toProviderError(e, false) ?? e;
    }
  }

  async submit(lines: string[], key: string, signal: AbortSignal): Promise<BatchJob> {
    const requests = lines.map((l) => {
      const r = JSON.parse(l) as { custom_id: string; params: MessageCreateParamsNonStreaming };
      return { custom_id: `${key}_${r.custom_id}`, params: r.params };
    });
    return this.call(async () => jobOf(await this.client.messages.batches.create({ requests }, { signal })));
  }

  /** The first custom id of an ended batch's results (its key), or undefined. */
  private async firstCustomId(b: MessageBatch, signal: AbortSignal): Promise<string | undefined> {
    for await (const line of this.lines(b, signal)) {
      if ('value' in line) return (line.value as { custom_id?: unknown })?.custom_id as string | undefined;
      return undefined;
    }
    return undefined;
  }

  /**
   * The batch created with `key` (a run killed between creating it and saving its id). An ended
   * batch is recognised by its results' custom ids. One still processing cannot be looked into:
   * when it is the only one created around `hint.submittedAt` with `hint.requests` requests, it is
   * taken (its results are checked against the key again when collected); when several are,
   * nothing is submitted and the run stops, to be re-run once they have ended.
   */
  async find(
    key: string,
    signal: AbortSignal,
    hint?: { requests: number; submittedAt: string },
  ): Promise<BatchJob | undefined> {
    return this.call(async () => {
      const since = hint ? Date.parse(hint.submittedAt) - 10 * 60_000 : Number.NEGATIVE_INFINITY;
      const open: MessageBatch[] = [];
      let seen = 0;
      for await (const b of this.client.messages.batches.list({ limit: 100 }, { signal })) {
        if (Date.parse(b.created_at) < since || ++seen > 1000) break; // newest first
        const job = jobOf(b);
        if (hint && job.counts.total !== undefined && job.counts.total !== hint.requests) continue;
        if (!job.done) open.push(b);
        else if (b.results_url && (await this.firstCustomId(b, signal))?.startsWith(`${key}_`)) return job;
      }
      if (open.length === 1 && hint) return jobOf(open[0]);
      if (open.length > 0)
        throw new ProviderError(
          'server',
          `${open.length} batch${open.length === 1 ? '' : 'es'} still processing (${open
            .slice(0, 3)
            .map((b) => b.id)
            .join(
              ', ',
            )}) could be the one an interrupted run created; they cannot be looked into before they end`,
        );
      return undefined;
    });
  }

  async poll(id: string, signal: AbortSignal): Promise<BatchJob> {
    return this.call(async () => jobOf(await this.client.messages.batches.retrieve(id, {}, { signal })));
  }

  /** The results file of an ended batch, line by line as it arrives (one line in memory). */
  private async *lines(
    b: MessageBatch,
    signal: AbortSignal,
  ): AsyncGenerator<{ value: unknown } | { bad: string }> {
    if (!b.results_url) return;
    const url = b.results_url;
    const res = await this.call(() =>
      this.client.get(url, { signal, headers: { Accept: 'application/binary' } }).asResponse(),
    );
    if (!res.body) return;
    const input = Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>);
    try {
      // At most one line of the line cap held; a longer one is a bad line (src/core/capped-lines.ts).
      for await (const l of cappedLines(input)) {
        const n = l.n;
        if ('tooLong' in l) {
          yield {
            bad: `results of ${b.id} line ${n}: ${bytesText(l.tooLong)} long, over the ${bytesText(lineCapBytes())} line limit`,
          };
          continue;
        }
        const raw = l.text;
        if (!raw.trim()) continue;
        try {
          yield { value: JSON.parse(raw) };
        } catch {
          yield { bad: `results of ${b.id} line ${n}: not JSON` };
        }
      }
    } catch (e) {
      throw this.p.toProviderError(e, false) ?? e;
    } finally {
      // A reader that stops early (find reads one line) lets go of the connection too.
      input.destroy();
    }
  }

  async *results(job: BatchJob, constrained: boolean, signal: AbortSignal): AsyncIterable<BatchLine> {
    const b = await this.call(() => this.client.messages.batches.retrieve(job.id, {}, { signal }));
    if (!b.results_url)
      throw new ProviderError(
        'server',
        `batch ${job.id} has ended but has no results_url yet; re-run to collect it`,
      );
    let n = 0;
    for await (const line of this.lines(b, signal)) {
      n++;
      if ('bad' in line) {
        yield line;
        continue;
      }
      const parsed = ResultLine.safeParse(line.value);
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        yield {
          bad: `results of ${b.id} line ${n}: not a batch result (${i ? `${i.path.join('.') || 'the line'}: ${i.message}` : 'unknown shape'})`,
        };
        continue;
      }
      const { custom_id: customId, result } = parsed.data;
      if (result.type === 'succeeded') {
        try {
          yield { customId, response: messageResponse(result.message, this.p.model, true) };
        } catch (e) {
          yield { customId, error: e as ProviderError };
        }
      } else if (result.type === 'errored') {
        const err = result.error?.error;
        let cls = ERROR_TYPES[err?.type ?? ''] ?? 'server';
        const message = `${err?.type ?? 'error'}: ${err?.message ?? ''}`.trim();
        if (cls === 'bad_request' && constrained && aboutSchema(message)) cls = 'schema_rejected';
        yield { customId, error: new ProviderError(cls, message) };
      } else if (result.type === 'expired')
        yield {
          customId,
          error: new ProviderError(
            'batch_expired',
            `batch ${job.id} expired before this request was answered`,
          ),
        };
      else
        yield {
          customId,
          error: new ProviderError('server', `batch ${job.id} was canceled before this request was answered`),
        };
    }
  }
}
