/**
 * `gemini:<model>` through @google/genai (the Gemini API). SDK retries are off; `baseUrl` points
 * it at another server (tests). With --constrained the schema goes to `responseJsonSchema`
 * (JSON Schema as is; the older `responseSchema` takes only an OpenAPI subset).
 */
import { ApiError, type GenerateContentConfig, GoogleGenAI, type ThinkingConfig } from '@google/genai';
import { UserError } from '../core/errors.ts';
import { guardedFetch } from './http.ts';
import { type ParsedEndpoint, parseEndpoint } from './secrets.ts';
import {
  classifyStatus,
  mentionsSchema,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  parseRetryAfter,
} from './types.ts';

export interface GeminiOptions {
  baseUrl?: string;
  /** Defaults to process.env.GEMINI_API_KEY; never written anywhere. */
  apiKey?: string;
  /** Largest reply accepted (bytes); default 16 MB. */
  maxResponseBytes?: number;
}

const DEFAULT_ENDPOINT = 'https://generativelanguage.googleapis.com';

/**
 * A candidate-less or content-less reply is not an answer (`invalid_response`, retried); a
 * blocked prompt or candidate is a refusal; MAX_TOKENS is a cut answer (possibly empty).
 */
export function geminiResponse(res: unknown): ProviderResponse {
  if (res === null || typeof res !== 'object' || Array.isArray(res))
    throw new ProviderError('invalid_response', 'the reply is not a GenerateContentResponse');
  const r = res as {
    candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] }; finishReason?: string }[];
    promptFeedback?: { blockReason?: string };
    usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number };
  };
  const u = r.usageMetadata;
  const usage = {
    inputTokens: u?.promptTokenCount,
    outputTokens: u ? (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) : undefined,
  };
  const cand = Array.isArray(r.candidates) ? r.candidates[0] : undefined;
  if (!cand) {
    if (r.promptFeedback?.blockReason) return { text: '', ...usage, finishReason: 'refusal' };
    throw new ProviderError('invalid_response', 'the reply has no candidates');
  }
  const raw = String(cand.finishReason ?? 'STOP');
  const parts = Array.isArray(cand.content?.parts) ? cand.content.parts : [];
  const textParts = parts.filter((p) => typeof p.text === 'string' && !p.thought);
  const text = textParts.map((p) => p.text).join('');
  if (BLOCKED.has(raw)) return { text, ...usage, finishReason: 'refusal' };
  if (raw === 'MAX_TOKENS') return { text, ...usage, finishReason: 'length' };
  if (textParts.length === 0)
    throw new ProviderError('invalid_response', `the candidate has no text (finishReason ${raw})`);
  return { text, ...usage, finishReason: raw === 'STOP' ? 'stop' : raw.toLowerCase() };
}

/** The lowest reasoning setting each family allows (2.5 Pro cannot turn thinking off). */
export function lowestThinking(model: string): ThinkingConfig | undefined {
  const m = model.toLowerCase();
  if (/gemini-2\.5-pro/.test(m)) return { thinkingBudget: 128 };
  if (/gemini-2\.5/.test(m)) return { thinkingBudget: 0 };
  if (/gemini-[3-9]/.test(m)) return { thinkingLevel: 'LOW' as ThinkingConfig['thinkingLevel'] };
  return undefined;
}

const BLOCKED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export class GeminiProvider implements Provider {
  readonly kind = 'gemini';
  readonly id: string;
  private readonly ai: GoogleGenAI;
  private readonly thinking: ThinkingConfig | undefined;
  readonly endpoint: ParsedEndpoint;
  private readonly fetch: typeof fetch;
  private reached = false;

  constructor(
    readonly model: string,
    opts: GeminiOptions = {},
  ) {
    this.id = `gemini:${model}`;
    if (!model) throw new UserError('gemini: give a model, e.g. --model gemini:gemini-2.5-flash');
    const apiKey = opts.apiKey ?? process.env.GEMINI_API_KEY ?? (opts.baseUrl ? 'not-needed' : undefined);
    if (!apiKey) throw new UserError('GEMINI_API_KEY is not set');
    this.endpoint = parseEndpoint(opts.baseUrl ?? DEFAULT_ENDPOINT);
    const e = this.endpoint;
    // The query of a --base-url (and its credentials) go with every request, never into a file.
    const withQuery: typeof fetch = (input, init) => {
      if (Object.keys(e.query).length === 0) return fetch(input, init);
      const u = new URL(input instanceof Request ? input.url : String(input));
      for (const [k, v] of Object.entries(e.query)) if (!u.searchParams.has(k)) u.searchParams.set(k, v);
      return fetch(u, init);
    };
    this.fetch = guardedFetch({ maxBytes: opts.maxResponseBytes, display: e.display, base: withQuery });
    this.ai = new GoogleGenAI({
      apiKey,
      httpOptions: {
        ...(opts.baseUrl ? { baseUrl: e.url } : {}),
        ...(e.authorization ? { headers: { Authorization: e.authorization } } : {}),
      },
    });
    this.thinking = lowestThinking(model);
  }

  describe(): Record<string, unknown> {
    return {
      endpoint: this.endpoint.display,
      thinking: this.thinking ?? null,
    };
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    // The SDK's ApiError drops response headers: keep Retry-After from this request's response.
    let retryAfterMs: number | undefined;
    const fetchKeepingRetryAfter: typeof fetch = async (input, init) => {
      const res = await this.fetch(input, init);
      if (!res.ok)
        retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), res.headers.get('retry-after-ms'));
      return res;
    };
    const config: GenerateContentConfig = {
      temperature: req.temperature,
      maxOutputTokens: req.maxTokens,
      abortSignal: req.signal,
      httpOptions: { fetch: fetchKeepingRetryAfter },
    };
    if (req.system) config.systemInstruction = req.system;
    if (this.thinking) config.thinkingConfig = this.thinking;
    if (req.constrained) {
      config.responseMimeType = 'application/json';
      config.responseJsonSchema = req.schema;
    }
    try {
      const res = await this.ai.models.generateContent({
        model: this.model,
        contents: [{ role: 'user', parts: [{ text: req.user }] }],
        config,
      });
      this.reached = true;
      return geminiResponse(res);
    } catch (e) {
      throw this.toProviderError(e, req, retryAfterMs);
    }
  }

  /** Any failure as a ProviderError (our own abort is passed on as it is). */
  toProviderError(
    e: unknown,
    req: { constrained: boolean; signal: AbortSignal },
    retryAfterMs?: number,
  ): unknown {
    if (e instanceof ProviderError) {
      if (!e.unreachable) this.reached = true;
      // Fail fast when the endpoint was never reached: retrying a refused connection helps nobody.
      else if (!this.reached) return new ProviderError('unreachable', e.message, { cause: e });
      return e;
    }
    if (e instanceof ApiError) {
      this.reached = true;
      let cls = classifyStatus(e.status);
      // The Gemini API answers a bad key with 400 INVALID_ARGUMENT.
      if (/API[_ ]KEY[_ ]INVALID|API key not valid/i.test(e.message)) cls = 'auth';
      else if (cls === 'bad_request' && req.constrained && mentionsSchema(e.message)) cls = 'schema_rejected';
      const message =
        cls === 'not_found'
          ? `HTTP 404 from ${this.endpoint.display}: no model "${this.model}" there (or the --base-url path is wrong); the server says: ${e.message}`
          : `HTTP ${e.status}: ${e.message}`;
      return new ProviderError(cls, message, { status: e.status, retryAfterMs, cause: e });
    }
    if (req.signal.aborted) return e;
    if (e instanceof SyntaxError)
      return new ProviderError('invalid_response', `the reply is not JSON: ${e.message}`, { cause: e });
    if (
      e instanceof TypeError ||
      (e instanceof Error && /fetch failed|ECONN|socket|terminated/i.test(e.message))
    )
      return new ProviderError('network', e.message, { cause: e });
    return e;
  }
}
