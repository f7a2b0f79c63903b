/**
 * `gemini:<model>` through @google/genai (the Gemini API). SDK retries are off; `baseUrl` points
 * it at another server (tests). With --constrained the schema goes to `responseJsonSchema`
 * (JSON Schema as is; the older `responseSchema` takes only an OpenAPI subset).
 */
import {
  ApiError,
  type BatchJob as GenaiBatchJob,
  type GenerateContentConfig,
  GoogleGenAI,
  type InlinedRequest,
  type InlinedResponse,
  type ThinkingConfig,
} from '@google/genai';
import { z } from 'zod';
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

export interface GeminiOptions {
  baseUrl?: string;
  /** Defaults to process.env.GEMINI_API_KEY; never written anywhere. */
  apiKey?: string;
  /** Largest reply accepted (bytes); default 16 MB. */
  maxResponseBytes?: number;
  /** Stream answers (default true): records time to first token and per output token. */
  stream?: boolean;
}

/**
 * A server that does not stream answers a streaming request with one JSON body: hand it to the
 * SDK as a one-event stream, so it is read (and checked) as a whole reply.
 */
function asEventStream(f: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await f(input, init);
    const type = res.headers.get('content-type') ?? '';
    if (!res.ok || type.includes('text/event-stream') || !type.includes('json')) return res;
    const body = (await res.text()).replace(/\s*\n\s*/g, ' ');
    const headers = new Headers(res.headers);
    headers.set('content-type', 'text/event-stream');
    headers.delete('content-length');
    return new Response(`data: ${body}\n\n`, { status: res.status, statusText: res.statusText, headers });
  };
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
    usageMetadata?: {
      promptTokenCount?: number;
      candidatesTokenCount?: number;
      thoughtsTokenCount?: number;
      promptTokensDetails?: { modality?: string; tokenCount?: number }[];
    };
  };
  const u = r.usageMetadata;
  // The prompt's tokens per modality (TEXT, IMAGE, DOCUMENT, AUDIO, VIDEO), as Gemini counts them.
  const byModality: Record<string, number> = {};
  for (const d of Array.isArray(u?.promptTokensDetails) ? u.promptTokensDetails : [])
    if (typeof d?.modality === 'string' && typeof d.tokenCount === 'number' && Number.isFinite(d.tokenCount))
      byModality[d.modality.toLowerCase()] = (byModality[d.modality.toLowerCase()] ?? 0) + d.tokenCount;
  const usage = {
    inputTokens: u?.promptTokenCount,
    outputTokens: u ? (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) : undefined,
    ...(Object.keys(byModality).length > 0 ? { inputTokensByModality: byModality } : {}),
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
  readonly documentLimits = GEMINI_DOCUMENT_LIMITS;
  /** Documents sent through the Files API, by sha256: uploaded once per run, then referred to by uri. */
  private readonly uploaded = new Map<string, string>();
  readonly id: string;
  private readonly ai: GoogleGenAI;
  private readonly thinking: ThinkingConfig | undefined;
  readonly endpoint: ParsedEndpoint;
  readonly batch: BatchApi;
  readonly fetch: typeof fetch;
  readonly stream: boolean;
  private reached = false;

  constructor(
    readonly model: string,
    opts: GeminiOptions = {},
  ) {
    this.id = `gemini:${model}`;
    if (!model) throw new UserError('gemini: give a model, e.g. --model gemini:gemini-2.5-flash', 2);
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
    this.stream = opts.stream !== false;
    this.batch = new GeminiBatch(
      this,
      this.ai,
      guardedFetch({ maxBytes: 2 * 1024 ** 3, display: e.display, base: withQuery }),
    );
  }

  describe(): Record<string, unknown> {
    return {
      endpoint: this.endpoint.display,
      thinking: this.thinking ?? null,
      stream: this.stream,
    };
  }

  /**
   * A streamed answer (`:streamGenerateContent?alt=sse`): the text parts as they come, the time
   * to the first one (from sending the request) and per output token after it
   * ((last - first) / (candidatesTokenCount - 1)). A stream without a finish reason was cut.
   */
  private async streamed(
    req: ProviderRequest,
    config: GenerateContentConfig,
    parts: Part[],
  ): Promise<ProviderResponse> {
    const t0 = performance.now();
    const stream = await this.ai.models.generateContentStream({
      model: this.model,
      contents: [{ role: 'user', parts }],
      config,
    });
    this.reached = true;
    let text = '';
    let sawText = false;
    let sawCandidate = false;
    let finishReason: string | undefined;
    let usage: Record<string, number | undefined> | undefined;
    let blocked: string | undefined;
    let first: number | undefined;
    let last = 0;
    let pieces = 0;
    for await (const chunk of stream) {
      if (chunk.usageMetadata) usage = chunk.usageMetadata as Record<string, number | undefined>;
      if (chunk.promptFeedback?.blockReason) blocked = String(chunk.promptFeedback.blockReason);
      const cand = chunk.candidates?.[0];
      if (!cand) continue;
      sawCandidate = true;
      const piece = (cand.content?.parts ?? [])
        .filter((p) => typeof p.text === 'string' && !p.thought)
        .map((p) => p.text as string)
        .join('');
      if ((cand.content?.parts ?? []).some((p) => typeof p.text === 'string' && !p.thought)) sawText = true;
      if (piece) {
        const now = performance.now();
        if (first === undefined) {
          first = now;
          req.onFirstToken?.();
        }
        last = now;
        pieces++;
        text += piece;
      }
      if (cand.finishReason) finishReason = String(cand.finishReason);
    }
    const whole = {
      candidates:
        finishReason || sawText
          ? [{ content: { parts: sawText ? [{ text }] : [] }, finishReason: finishReason ?? 'STOP' }]
          : [],
      promptFeedback: blocked ? { blockReason: blocked } : undefined,
      usageMetadata: usage,
    };
    if (sawCandidate && !finishReason && !blocked)
      throw new ProviderError('network', 'the stream ended before the answer finished (no finishReason)');
    const res = geminiResponse(whole);
    const tokens = usage?.candidatesTokenCount ?? pieces;
    res.ttftMs = first === undefined ? undefined : first - t0;
    res.tpotMs = first !== undefined && tokens > 1 ? (last - first) / (tokens - 1) : undefined;
    return res;
  }

  /** The generation settings of a request (online and in a batch alike). */
  config(req: ProviderRequest): GenerateContentConfig {
    const config: GenerateContentConfig = { temperature: req.temperature, maxOutputTokens: req.maxTokens };
    if (req.system) config.systemInstruction = req.system;
    if (this.thinking) config.thinkingConfig = this.thinking;
    if (req.constrained) {
      config.responseMimeType = 'application/json';
      config.responseJsonSchema = req.schema;
    }
    return config;
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
      ...this.config(req),
      abortSignal: req.signal,
      httpOptions: { fetch: this.stream ? asEventStream(fetchKeepingRetryAfter) : fetchKeepingRetryAfter },
    };
    try {
      const parts = userParts(req, await this.uploadLarge(req));
      if (this.stream) return await this.streamed(req, config, parts);
      const res = await this.ai.models.generateContent({
        model: this.model,
        contents: [{ role: 'user', parts }],
        config,
      });
      this.reached = true;
      return geminiResponse(res);
    } catch (e) {
      throw this.toProviderError(e, req, retryAfterMs);
    }
  }

  /**
   * Documents over the inline limit (20 MB of base64 per request) through the Files API, largest
   * first until the rest fits inline; each uploaded once per run (by its hash).
   */
  async uploadLarge(req: ProviderRequest): Promise<Map<string, string>> {
    const list = req.attachments ?? [];
    const b64 = (n: number) => Math.ceil(n / 3) * 4;
    let inline = list.reduce((n, a) => n + b64(a.data.length), 0) + Buffer.byteLength(req.user);
    const out = new Map<string, string>();
    for (const a of [...list].sort((x, y) => y.data.length - x.data.length)) {
      if (inline <= GEMINI_DOCUMENT_LIMITS.maxRequestBytes) break;
      let uri = this.uploaded.get(a.sha256);
      if (!uri) {
        const file = await this.ai.files.upload({
          file: new Blob([new Uint8Array(a.data)], { type: a.mime }),
          config: { mimeType: a.mime, displayName: a.name ?? a.sha256.slice(0, 16) },
        });
        if (!file.uri) throw new ProviderError('invalid_response', 'the Files API gave the upload no uri');
        uri = file.uri;
        this.uploaded.set(a.sha256, uri);
      }
      out.set(a.sha256, uri);
      inline -= b64(a.data.length);
    }
    return out;
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

/** google.rpc.Code (a batch's per-request error) as an error class. */
const GRPC: Record<number, ErrorClass> = {
  3: 'bad_request',
  4: 'timeout',
  5: 'not_found',
  7: 'auth',
  8: 'rate_limit',
  9: 'bad_request',
  11: 'bad_request',
  16: 'auth',
};

const GEMINI_DONE = new Set([
  'JOB_STATE_SUCCEEDED',
  'JOB_STATE_FAILED',
  'JOB_STATE_CANCELLED',
  'JOB_STATE_EXPIRED',
]);

/**
 * Gemini's batch mode (`models/{model}:batchGenerateContent`) with inlined requests, each keyed
 * by `metadata.key`; the answers come back inline in the finished job. Limit: 20 MB of
 * requests per batch for inlined requests (Gemini API documentation; input files may reach
 * 2 GB, not used here); larger runs are split. The request count per batch is not documented
 * for inlined requests: 50,000 as OpenAI's.
 */
/** One inlined response of a finished batch job, as far as it is read here. */
const InlinedEntry = z.object({
  metadata: z.object({ key: z.string() }).passthrough(),
  error: z
    .object({ code: z.number().nullable().optional(), message: z.string().nullable().optional() })
    .passthrough()
    .nullable()
    .optional(),
});

class GeminiBatch implements BatchApi {
  // The documented limit is 20 MB per batch creation request; 1 MB is kept for its envelope.
  readonly limits = {
    maxRequests: 50_000,
    maxBytes: 19 * 1024 * 1024,
    source: 'Gemini Batch API (inlined requests, 20 MB per request)',
  };
  /** Request counts per job, from the raw reply (the SDK does not map batchStats). */
  private stats = new Map<string, BatchJob['counts']>();
  constructor(
    private readonly p: GeminiProvider,
    private readonly ai: GoogleGenAI,
    private readonly guarded: typeof fetch,
  ) {}

  private request(customId: string, req: ProviderRequest): InlinedRequest {
    return {
      contents: [{ role: 'user', parts: userParts(req) }],
      config: this.p.config(req),
      metadata: { key: customId },
    };
  }

  line(customId: string, req: ProviderRequest): string {
    return JSON.stringify(this.request(customId, req));
  }

  /** The SDK's calls go through the guarded fetch, and batchStats are kept from the raw reply. */
  private http(signal: AbortSignal) {
    const f: typeof fetch = async (input, init) => {
      const res = await this.guarded(input, init);
      if (res.ok) {
        try {
          const body = (await res.clone().json()) as {
            name?: string;
            operations?: unknown[];
            metadata?: { batchStats?: Record<string, string | number> };
          };
          for (const op of [body, ...((body.operations as (typeof body)[]) ?? [])]) {
            const st = op?.metadata?.batchStats;
            if (op?.name && st)
              this.stats.set(op.name, {
                total: st.requestCount === undefined ? undefined : Number(st.requestCount),
                completed:
                  st.successfulRequestCount === undefined ? undefined : Number(st.successfulRequestCount),
                failed: st.failedRequestCount === undefined ? undefined : Number(st.failedRequestCount),
              });
          }
        } catch {
          // not JSON: the SDK reports it
        }
      }
      return res;
    };
    return { abortSignal: signal, httpOptions: { fetch: f } };
  }

  private jobOf(j: GenaiBatchJob): BatchJob {
    const name = j.name ?? '';
    const state = String(j.state ?? 'JOB_STATE_UNSPECIFIED');
    return {
      id: name,
      state,
      done: GEMINI_DONE.has(state),
      counts: this.stats.get(name) ?? {},
      error: j.error?.message,
    };
  }

  private async call<T>(signal: AbortSignal, what: () => Promise<T>): Promise<T> {
    try {
      return await what();
    } catch (e) {
      throw this.p.toProviderError(e, { constrained: false, signal });
    }
  }

  async submit(lines: string[], key: string, signal: AbortSignal): Promise<BatchJob> {
    const src = lines.map((l) => JSON.parse(l) as InlinedRequest);
    return this.call(signal, async () =>
      this.jobOf(
        await this.ai.batches.create({
          model: this.p.model,
          src,
          config: { displayName: key, ...this.http(signal) },
        }),
      ),
    );
  }

  async find(key: string, signal: AbortSignal): Promise<BatchJob | undefined> {
    return this.call(signal, async () => {
      let seen = 0;
      const pager = await this.ai.batches.list({ config: { pageSize: 100, ...this.http(signal) } });
      for await (const j of pager) {
        if (j.displayName === key) return this.jobOf(j);
        if (++seen >= 1000) break;
      }
      return undefined;
    });
  }

  async poll(id: string, signal: AbortSignal): Promise<BatchJob> {
    return this.call(signal, async () =>
      this.jobOf(await this.ai.batches.get({ name: id, config: this.http(signal) })),
    );
  }

  async *results(job: BatchJob, constrained: boolean, signal: AbortSignal): AsyncIterable<BatchLine> {
    const j = await this.call(signal, () => this.ai.batches.get({ name: job.id, config: this.http(signal) }));
    const list: unknown[] = j.dest?.inlinedResponses ?? [];
    for (const [i, r] of list.entries()) {
      // Each entry checked by its typed format: a null or shapeless one is named, never read.
      const entry = InlinedEntry.safeParse(r);
      if (!entry.success) {
        const issue = entry.error.issues[0];
        yield {
          bad: `inlined response ${i + 1}: not a batch result (${issue ? `${issue.path.join('.') || 'the entry'}: ${issue.message}` : 'unknown shape'})`,
        };
        continue;
      }
      const customId = entry.data.metadata.key;
      const err = entry.data.error;
      if (err) {
        const code = typeof err.code === 'number' ? err.code : 13;
        let cls = code >= 100 ? classifyStatus(code) : (GRPC[code] ?? 'server');
        const message = err.message ?? `error ${code}`;
        if (cls === 'bad_request' && constrained && mentionsSchema(message)) cls = 'schema_rejected';
        yield { customId, error: new ProviderError(cls, `error ${code}: ${message}`) };
        continue;
      }
      try {
        yield {
          customId,
          response: { ...geminiResponse((r as InlinedResponse).response), endpoint: undefined },
        };
      } catch (e) {
        yield { customId, error: e as ProviderError };
      }
    }
  }
}

type Part = {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string; mimeType: string };
};

/**
 * The user turn: the text, then each document (image, PDF, audio) as an `inlineData` part
 * (base64); `uploaded` gives, by sha256, the Files API uri of a document sent that way instead.
 */
function userParts(req: ProviderRequest, uploaded?: ReadonlyMap<string, string>): Part[] {
  return [
    { text: req.user },
    ...(req.attachments ?? []).map((a): Part => {
      const uri = uploaded?.get(a.sha256);
      return uri
        ? { fileData: { fileUri: uri, mimeType: a.mime } }
        : { inlineData: { mimeType: a.mime, data: a.data.toString('base64') } };
    }),
  ];
}

/**
 * What the Gemini API takes (docs/providers.md "Documents"): images, PDFs (up to 1,000 pages,
 * 50 MB) and audio; 20 MB of inline data per request, the Files API (up to 2 GB a file) above it;
 * images are read at up to 3,072 px on the long side.
 */
export const GEMINI_DOCUMENT_LIMITS: DocumentLimits = {
  kinds: ['image', 'pdf', 'audio'],
  maxImageEdge: 3072,
  maxImageBytes: 20 * 1024 * 1024,
  maxPdfPages: 1000,
  maxPdfBytes: 50 * 1024 * 1024,
  maxRequestBytes: 20 * 1024 * 1024,
  uploadsOverLimit: true,
  source:
    'https://ai.google.dev/gemini-api/docs/document-processing, https://ai.google.dev/gemini-api/docs/image-understanding, https://ai.google.dev/gemini-api/docs/files',
};
