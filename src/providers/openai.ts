/**
 * `openai:<model>`: OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama,
 * OpenRouter) through --base-url / OPENAI_BASE_URL. SDK retries are off (the runner retries).
 *
 * A 2xx reply that is not an answer (no choices, no message, `content: null` without a refusal,
 * a body that is not JSON) is an `invalid_response` error, retried, never scored. Credentials in
 * a --base-url (`user:pass@`, `?api-key=`) are sent as an Authorization header and a query,
 * and shown redacted everywhere else.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import { UserError } from '../core/errors.ts';
import { EndpointPool, type PoolOptions } from './endpoints.ts';
import { guardedFetch } from './http.ts';
import { type ParsedEndpoint, parseEndpoint } from './secrets.ts';
import {
  classifyStatus,
  type ErrorClass,
  mentionsSchema,
  type Provider,
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

export class OpenAIProvider implements Provider {
  readonly kind = 'openai';
  readonly id: string;
  readonly pool: EndpointPool<OpenAI>;
  readonly endpoints: ParsedEndpoint[];
  private readonly reasoning: ReturnType<typeof reasoningSettings>;

  constructor(
    readonly model: string,
    opts: OpenAIOptions = {},
  ) {
    this.id = `openai:${model}`;
    if (!model) throw new UserError('openai: give a model, e.g. --model openai:gpt-4.1-mini');
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
  }

  describe(): Record<string, unknown> {
    return {
      endpoints: this.pool.endpoints.map((e) => e.url),
      reasoning_effort: this.reasoning.effort ?? null,
      token_limit_parameter: this.reasoning.reasoningModel ? 'max_completion_tokens' : 'max_tokens',
      temperature_sent: !this.reasoning.reasoningModel,
    };
  }

  body(req: ProviderRequest): ChatCompletionCreateParamsNonStreaming {
    const messages: ChatCompletionCreateParamsNonStreaming['messages'] = [];
    if (req.system) messages.push({ role: 'system', content: req.system });
    messages.push({ role: 'user', content: req.user });
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

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    const ep = this.pool.acquire();
    let failure: ErrorClass | undefined;
    let retryAfterMs: number | undefined;
    try {
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
