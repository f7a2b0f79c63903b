/**
 * `openai:<model>`: OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama,
 * OpenRouter) through --base-url / OPENAI_BASE_URL. SDK retries are off (the runner retries).
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { UserError } from '../core/errors.ts';
import { EndpointPool, type PoolOptions } from './endpoints.ts';
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
}

/** Reasoning models take max_completion_tokens, no temperature, and the lowest effort they allow. */
function reasoningSettings(model: string): { effort?: 'minimal' | 'low'; reasoningModel: boolean } {
  const m = model.toLowerCase().split('/').pop() ?? '';
  if (/^gpt-5(?!.*chat)/.test(m)) return { effort: 'minimal', reasoningModel: true };
  if (/^o\d/.test(m)) return { effort: 'low', reasoningModel: true };
  return { reasoningModel: false };
}

export class OpenAIProvider implements Provider {
  readonly kind = 'openai';
  readonly id: string;
  readonly pool: EndpointPool<OpenAI>;
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
    this.pool = new EndpointPool(
      custom ? urls : ['https://api.openai.com/v1'],
      (url) => new OpenAI({ apiKey, baseURL: url, maxRetries: 0, timeout: 24 * 3600 * 1000 }),
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
      const choice = res.choices?.[0];
      if (!choice) throw new ProviderError('server', 'the response has no choices');
      const msg = choice.message;
      const usage = res.usage as (typeof res.usage & { cost?: unknown }) | undefined;
      const out: ProviderResponse = {
        text: msg?.content ?? '',
        inputTokens: usage?.prompt_tokens,
        outputTokens: usage?.completion_tokens,
        finishReason: choice.finish_reason ?? 'stop',
        cost: typeof usage?.cost === 'number' ? usage.cost : undefined,
        endpoint: ep.url,
      };
      if (msg?.refusal) {
        out.text = msg.refusal;
        out.finishReason = 'refusal';
      } else if (choice.finish_reason === 'content_filter') out.finishReason = 'refusal';
      return out;
    } catch (e) {
      const pe = toProviderError(e, req.constrained);
      failure = pe?.errorClass;
      retryAfterMs = pe?.retryAfterMs;
      throw pe ?? e;
    } finally {
      this.pool.release(ep, failure, retryAfterMs);
    }
  }
}

/** An SDK error as a ProviderError; undefined for our own abort (the runner knows why it aborted). */
function toProviderError(e: unknown, constrained: boolean): ProviderError | undefined {
  if (e instanceof ProviderError) return e;
  if (e instanceof APIUserAbortError) return undefined;
  if (e instanceof APIConnectionTimeoutError) return new ProviderError('timeout', e.message, { cause: e });
  if (e instanceof APIConnectionError) return new ProviderError('network', e.message, { cause: e });
  if (e instanceof APIError && typeof e.status === 'number') {
    let cls = classifyStatus(e.status);
    if (cls === 'bad_request' && constrained && mentionsSchema(e.message)) cls = 'schema_rejected';
    const retryAfterMs = parseRetryAfter(e.headers?.get('retry-after'), e.headers?.get('retry-after-ms'));
    return new ProviderError(cls, `HTTP ${e.status}: ${e.message}`, {
      status: e.status,
      retryAfterMs,
      cause: e,
    });
  }
  return undefined;
}
