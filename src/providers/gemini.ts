/**
 * `gemini:<model>` through @google/genai (the Gemini API). SDK retries are off; `baseUrl` points
 * it at another server (tests). With --constrained the schema goes to `responseJsonSchema`
 * (JSON Schema as is; the older `responseSchema` takes only an OpenAPI subset).
 */
import { ApiError, type GenerateContentConfig, GoogleGenAI, type ThinkingConfig } from '@google/genai';
import { UserError } from '../core/errors.ts';
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
  private readonly baseUrl?: string;

  constructor(
    readonly model: string,
    opts: GeminiOptions = {},
  ) {
    this.id = `gemini:${model}`;
    if (!model) throw new UserError('gemini: give a model, e.g. --model gemini:gemini-2.5-flash');
    const apiKey = opts.apiKey ?? process.env.GEMINI_API_KEY ?? (opts.baseUrl ? 'not-needed' : undefined);
    if (!apiKey) throw new UserError('GEMINI_API_KEY is not set');
    this.baseUrl = opts.baseUrl;
    this.ai = new GoogleGenAI({ apiKey, httpOptions: opts.baseUrl ? { baseUrl: opts.baseUrl } : undefined });
    this.thinking = lowestThinking(model);
  }

  describe(): Record<string, unknown> {
    return {
      endpoint: this.baseUrl ?? 'https://generativelanguage.googleapis.com',
      thinking: this.thinking ?? null,
    };
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    // The SDK's ApiError drops response headers: keep Retry-After from this request's response.
    let retryAfterMs: number | undefined;
    const fetchKeepingRetryAfter: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
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
      const cand = res.candidates?.[0];
      const parts = cand?.content?.parts ?? [];
      const text = parts
        .filter((p) => typeof p.text === 'string' && !p.thought)
        .map((p) => p.text)
        .join('');
      const u = res.usageMetadata;
      const raw = cand?.finishReason ?? (res.promptFeedback?.blockReason ? 'SAFETY' : 'STOP');
      const finishReason =
        raw === 'MAX_TOKENS'
          ? 'length'
          : BLOCKED.has(String(raw)) || !cand
            ? 'refusal'
            : raw === 'STOP'
              ? 'stop'
              : String(raw).toLowerCase();
      return {
        text,
        inputTokens: u?.promptTokenCount,
        outputTokens: u ? (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) : undefined,
        finishReason,
      };
    } catch (e) {
      if (e instanceof ApiError) {
        let cls = classifyStatus(e.status);
        // The Gemini API answers a bad key with 400 INVALID_ARGUMENT.
        if (/API[_ ]KEY[_ ]INVALID|API key not valid/i.test(e.message)) cls = 'auth';
        else if (cls === 'bad_request' && req.constrained && mentionsSchema(e.message))
          cls = 'schema_rejected';
        throw new ProviderError(cls, `HTTP ${e.status}: ${e.message}`, {
          status: e.status,
          retryAfterMs,
          cause: e,
        });
      }
      if (req.signal.aborted) throw e;
      if (
        e instanceof TypeError ||
        (e instanceof Error && /fetch failed|ECONN|socket|terminated/i.test(e.message))
      ) {
        throw new ProviderError('network', e.message, { cause: e });
      }
      throw e;
    }
  }
}
