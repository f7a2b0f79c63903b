/**
 * A local server that speaks the OpenAI chat-completions protocol (`POST /v1/chat/completions`,
 * streamed or not), OpenAI's Files and Batches API (`/v1/files`, `/v1/batches`), the Gemini API
 * (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`) and
 * Gemini's batch mode (`:batchGenerateContent`, `GET /v1beta/batches/{id}`), scripted per
 * request, so the real SDKs can be driven through every fault a provider shows: 429 with
 * Retry-After, 500, 503, slow answers, dropped connections, token-limit cuts, non-JSON and
 * code-fenced answers, a refused schema, a bad key, tokens streamed with scripted delays, and
 * batches that go through scripted states (validating, in_progress, completed with some failed
 * lines, expired).
 *
 * Requests are keyed by a record id found in the prompt (default: `[rid:<id>]`), and `n` counts
 * how many times that key has been asked, so a script can say "fail the first two, then answer".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Protocol = 'openai' | 'gemini';

export type Outcome =
  | {
      kind: 'answer';
      text: string;
      finish?: 'stop' | 'length';
      delayMs?: number;
      /** `byModality`: Gemini's `promptTokensDetails` (TEXT, IMAGE, DOCUMENT, AUDIO: token counts). */
      usage?: { input: number; output: number; cost?: number; byModality?: Record<string, number> };
      /**
       * When the client streams: the text in these pieces (default: one piece), the first after
       * `firstMs`, each next one `gapMs` later.
       */
      stream?: { pieces?: string[]; firstMs?: number; gapMs?: number; cut?: boolean };
    }
  | { kind: 'refusal'; text: string }
  | { kind: 'status'; status: number; message?: string; retryAfter?: string; delayMs?: number }
  | { kind: 'drop'; delayMs?: number }
  | { kind: 'slow'; delayMs: number; text: string }
  /** A reply of our own making: a 200 with `content: null`, no choices, a body that is not JSON. */
  | { kind: 'raw'; status?: number; contentType?: string; body: string; delayMs?: number }
  /** A 200 JSON reply of `bytes` bytes, sent in chunks without Content-Length (or declaring it). */
  | { kind: 'huge'; bytes: number; declareLength?: boolean };

export interface SeenRequest {
  protocol: Protocol;
  path: string;
  model: string;
  key: string | undefined;
  /** 1-based: how many requests with this key the server has seen, this one included. */
  n: number;
  /** Milliseconds since the server started. */
  at: number;
  /** Date.now() when it arrived. */
  time: number;
  body: Record<string, unknown>;
  userText: string;
  systemText: string;
  authorization: string | undefined;
  /** The query string as sent (without `?`). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Where a batch ends: its answers written (some lines may fail), expired half way, or failed whole. */
export type BatchEnd = 'completed' | 'expired' | 'failed';

export interface BatchOptions {
  /**
   * The states the n-th batch created (0-based) goes through, one per status check after its
   * creation; the last is where it ends. Default: validating, in_progress, completed.
   */
  states?: (index: number) => string[];
  /**
   * The lines of a batch's output (`out`) or error (`err`) file as sent: `lines` as the server
   * made them, to change (a `null` line, another custom id, filler lines: any iterable, written
   * as it is produced, without Content-Length), or null to answer 404 for that file. A string is
   * a line (a newline added); bytes (a Buffer) are sent as they are, so a line longer than any
   * string can be sent in pieces.
   */
  fileLines?: (b: ServerBatch, kind: 'out' | 'err', lines: string[]) => Iterable<string | Uint8Array> | null;
  /** A Gemini job's inlined responses as sent: `entries` as made, to change (a `null` entry). */
  inlined?: (b: ServerBatch, entries: unknown[]) => unknown[];
  /** An HTTP status for the n-th (1-based) request listing batches, instead of the list. */
  listStatus?: (n: number) => number | undefined;
}

export interface ServerBatch {
  id: string;
  protocol: Protocol;
  index: number;
  /** Status checks so far. */
  polls: number;
  requests: { customId: string; body: Record<string, unknown> }[];
  displayName?: string;
  metadata?: Record<string, string>;
}

export interface ServerOptions {
  batch?: BatchOptions;
  /** What to do with a request; the default answers `answer(req)` at once. */
  script?: (req: SeenRequest) => Outcome;
  /** The answer text for a normal answer (default `{"id": "<key>"}`). */
  answer?: (req: SeenRequest) => string;
  /** Finds the record key in the prompt (default: `[rid:<id>]`). */
  keyOf?: (userText: string) => string | undefined;
  /** Added to every answer (ms). */
  latencyMs?: number;
  /** Keep the request log (default true; off for long benchmarks). */
  keepLog?: boolean;
}

export interface ProtocolServer {
  url: string;
  openaiBaseUrl: string;
  geminiBaseUrl: string;
  requests: SeenRequest[];
  /** Requests seen per key (a request inside a batch counts when the batch answers it). */
  counts: Map<string, number>;
  total: number;
  /** Batches created (OpenAI and Gemini), and status checks seen. */
  batches: ServerBatch[];
  batchPolls: number;
  /** Files uploaded through the Gemini Files API, by name (`files/<name>`), with their bytes. */
  uploads: Map<string, { mime: string; data: Buffer }>;
  /** Bytes of every request body received (documents travel inside them). */
  bytesIn: number;
  close(): Promise<void>;
}

const RID = /\[rid:([^\]\s]+)\]/;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A document a request carried, decoded from the wire: its kind as the protocol put it, type and bytes. */
export interface SeenDocument {
  part: 'image_url' | 'file' | 'input_audio' | 'inlineData' | 'fileData';
  mime: string;
  data: Buffer;
}

/**
 * The documents a request carried (OpenAI content parts: `image_url` data URLs, `file` parts,
 * `input_audio`; Gemini parts: `inlineData`, and `fileData` naming a file uploaded through the
 * Files API, its bytes as the server received them), in order.
 */
export function documentsOf(seen: SeenRequest, server?: ProtocolServer): SeenDocument[] {
  const fromDataUrl = (url: string) => {
    const m = /^data:([^;]+);base64,(.*)$/s.exec(url);
    return m ? { mime: m[1], data: Buffer.from(m[2], 'base64') } : { mime: '', data: Buffer.alloc(0) };
  };
  const out: SeenDocument[] = [];
  if (seen.protocol === 'openai') {
    const msgs = (seen.body.messages as { role: string; content: unknown }[] | undefined) ?? [];
    for (const m of msgs) {
      if (!Array.isArray(m.content)) continue;
      for (const p of m.content as Record<string, Record<string, string>>[]) {
        if (p.type === ('image_url' as unknown))
          out.push({ part: 'image_url', ...fromDataUrl(p.image_url.url) });
        if (p.type === ('file' as unknown)) out.push({ part: 'file', ...fromDataUrl(p.file.file_data) });
        if (p.type === ('input_audio' as unknown))
          out.push({
            part: 'input_audio',
            mime: `audio/${p.input_audio.format}`,
            data: Buffer.from(p.input_audio.data, 'base64'),
          });
      }
    }
    return out;
  }
  const contents =
    (seen.body.contents as
      | {
          parts?: {
            inlineData?: { mimeType: string; data: string };
            fileData?: { mimeType: string; fileUri: string };
          }[];
        }[]
      | undefined) ?? [];
  for (const c of contents)
    for (const p of c.parts ?? []) {
      if (p.inlineData)
        out.push({
          part: 'inlineData',
          mime: p.inlineData.mimeType,
          data: Buffer.from(p.inlineData.data, 'base64'),
        });
      if (p.fileData) {
        const name = /files\/([^/?]+)/.exec(p.fileData.fileUri)?.[1] ?? '';
        out.push({
          part: 'fileData',
          mime: p.fileData.mimeType,
          data: server?.uploads.get(name)?.data ?? Buffer.alloc(0),
        });
      }
    }
  return out;
}

/** The text a request's user turn holds, documents left out (what a transcript would be in). */
export function userTextOf(seen: SeenRequest): string {
  if (seen.protocol === 'openai') {
    const msgs = (seen.body.messages as { role: string; content: unknown }[] | undefined) ?? [];
    return msgs
      .filter((m) => m.role === 'user')
      .map((m) =>
        typeof m.content === 'string'
          ? m.content
          : (m.content as { type: string; text?: string }[])
              .filter((p) => p.type === 'text')
              .map((p) => p.text ?? '')
              .join('\n'),
      )
      .join('\n');
  }
  const contents = (seen.body.contents as { parts?: { text?: string }[] }[] | undefined) ?? [];
  return contents.flatMap((c) => (c.parts ?? []).map((p) => p.text ?? '')).join('\n');
}

function textOfOpenAI(body: Record<string, unknown>, role: string): string {
  const msgs = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  return msgs
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function textOfGemini(body: Record<string, unknown>): { user: string; system: string } {
  const contents =
    (body.contents as
      | { parts?: { text?: string; inlineData?: { mimeType?: string; data?: string } }[] }[]
      | undefined) ?? [];
  // A picture part reads as its data URL, as an OpenAI image part does (JSON of its content).
  const user = contents
    .flatMap((c) =>
      (c.parts ?? []).map((p) =>
        p.inlineData ? `data:${p.inlineData.mimeType};base64,${p.inlineData.data}` : (p.text ?? ''),
      ),
    )
    .join('\n');
  const sys = body.systemInstruction as { parts?: { text?: string }[] } | undefined;
  return { user, system: (sys?.parts ?? []).map((p) => p.text ?? '').join('\n') };
}

/** An HTTP status as the google.rpc.Code a batch reports per request. */
function grpcOf(status: number): number {
  if (status === 400) return 3;
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 5;
  if (status === 429) return 8;
  if (status === 503) return 14;
  return 13;
}

/** The `file` part (and `purpose`) of a multipart/form-data upload. */
function multipartFile(
  contentType: string,
  raw: string,
): { content: string; filename: string; purpose: string } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) return { content: raw, filename: 'upload', purpose: '' };
  const parts = raw.split(`--${boundary[1] ?? boundary[2]}`);
  let content = '';
  let filename = 'upload';
  let purpose = '';
  for (const part of parts) {
    const cut = part.indexOf('\r\n\r\n');
    if (cut < 0) continue;
    const head = part.slice(0, cut);
    const body = part.slice(cut + 4).replace(/\r\n$/, '');
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (name === 'file') {
      content = body;
      filename = /filename="([^"]+)"/.exec(head)?.[1] ?? filename;
    } else if (name === 'purpose') purpose = body;
  }
  return { content, filename, purpose };
}

export async function startProtocolServer(opts: ServerOptions = {}): Promise<ProtocolServer> {
  const started = Date.now();
  const keyOf = opts.keyOf ?? ((t: string) => RID.exec(t)?.[1]);
  const answer = opts.answer ?? ((r: SeenRequest) => JSON.stringify({ id: r.key ?? null }));
  const script = opts.script ?? ((r: SeenRequest): Outcome => ({ kind: 'answer', text: answer(r) }));
  const keepLog = opts.keepLog ?? true;
  const sockets = new Set<Socket>();
  // Scripted delays still pending: close() ends them, so a slow answer whose client is gone (a
  // killed `sob`) does not keep the test's process alive for the rest of its delay.
  const pending = new Set<() => void>();
  let closed = false;
  const wait = (ms: number) =>
    new Promise<void>((r) => {
      const done = () => {
        clearTimeout(timer);
        pending.delete(done);
        r();
      };
      const timer = setTimeout(done, ms);
      pending.add(done);
    });
  const state: ProtocolServer = {
    url: '',
    openaiBaseUrl: '',
    geminiBaseUrl: '',
    requests: [],
    counts: new Map(),
    total: 0,
    batches: [],
    batchPolls: 0,
    uploads: new Map(),
    bytesIn: 0,
    close: async () => {},
  };
  /** Gemini resumable uploads begun and not finished: id -> the file's type. */
  const uploadsStarted = new Map<string, string>();
  const partial = new Map<string, Buffer>();
  const files = new Map<string, string>();
  let listRequests = 0;
  const batchStates = opts.batch?.states ?? (() => ['validating', 'in_progress', 'completed']);

  /** Logs and counts one request (online or inside a batch) and asks the script what to do. */
  const seeRequest = (
    protocol: Protocol,
    path: string,
    model: string,
    body: Record<string, unknown>,
    req?: IncomingMessage,
  ): { seen: SeenRequest; out: Outcome } => {
    const texts =
      protocol === 'openai'
        ? { user: textOfOpenAI(body, 'user'), system: textOfOpenAI(body, 'system') }
        : textOfGemini(body);
    const key = keyOf(texts.user);
    const n = (key !== undefined ? (state.counts.get(key) ?? 0) : 0) + 1;
    if (key !== undefined) state.counts.set(key, n);
    state.total++;
    const seen: SeenRequest = {
      protocol,
      path,
      model,
      key,
      n,
      at: Date.now() - started,
      time: Date.now(),
      body,
      userText: texts.user,
      systemText: texts.system,
      authorization:
        (req?.headers.authorization as string | undefined) ??
        (req?.headers['x-goog-api-key'] as string | undefined),
      query: (req?.url ?? '').split('?')[1] ?? '',
      headers: req?.headers ?? {},
    };
    if (keepLog) state.requests.push(seen);
    return { seen, out: script(seen) };
  };

  const send = (
    res: ServerResponse,
    status: number,
    payload: unknown,
    headers: Record<string, string> = {},
  ) => {
    const data = JSON.stringify(payload);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(data),
      ...headers,
    });
    res.end(data);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const bytes = await readBody(req);
    state.bytesIn += bytes.length;
    // The Gemini Files API (resumable upload: a start, then the bytes with "upload, finalize").
    if (req.method === 'POST' && path === '/upload/v1beta/files') {
      const id = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('upload_id');
      if (!id) {
        const n = String(uploadsStarted.size + state.uploads.size + 1);
        uploadsStarted.set(n, String(req.headers['x-goog-upload-header-content-type'] ?? ''));
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-goog-upload-url': `${state.url}/upload/v1beta/files?upload_id=${n}`,
          'x-goog-upload-status': 'active',
        });
        res.end('{}');
        return;
      }
      // The SDK sends the bytes in chunks ("upload" at an offset), the last with "finalize".
      const mime = uploadsStarted.get(id) ?? 'application/octet-stream';
      const name = `upload-${id}`;
      const sofar = partial.get(id) ?? Buffer.alloc(0);
      const offset = Number(req.headers['x-goog-upload-offset'] ?? 0);
      const data = Buffer.concat([sofar.subarray(0, offset), bytes]);
      if (!String(req.headers['x-goog-upload-command'] ?? '').includes('finalize')) {
        partial.set(id, data);
        res.writeHead(200, { 'content-type': 'application/json', 'x-goog-upload-status': 'active' });
        res.end('{}');
        return;
      }
      partial.delete(id);
      uploadsStarted.delete(id);
      state.uploads.set(name, { mime, data });
      const file = {
        name: `files/${name}`,
        uri: `${state.url}/v1beta/files/${name}`,
        mimeType: mime,
        sizeBytes: String(data.length),
        state: 'ACTIVE',
      };
      const body = JSON.stringify({ file });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-goog-upload-status': 'final',
      });
      res.end(body);
      return;
    }
    const raw = bytes.toString('utf8');
    if (await batchRoute(req, res, path, raw)) return;
    const gem = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)$/.exec(path);
    const protocol: Protocol | undefined =
      path === '/v1/chat/completions' ? 'openai' : gem ? 'gemini' : undefined;
    if (!protocol || req.method !== 'POST')
      return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    const body = JSON.parse(raw) as Record<string, unknown>;
    const model = protocol === 'openai' ? String(body.model) : (gem?.[1] ?? '');
    const { seen, out } = seeRequest(protocol, path, model, body, req);
    const streamed = protocol === 'openai' ? body.stream === true : gem?.[2] === 'streamGenerateContent';
    const delay = (opts.latencyMs ?? 0) + ('delayMs' in out && out.delayMs ? out.delayMs : 0);
    if (delay > 0) await wait(delay);
    if (closed) return;
    if (out.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (out.kind === 'raw') {
      res.writeHead(out.status ?? 200, {
        'content-type': out.contentType ?? 'application/json',
        'content-length': Buffer.byteLength(out.body),
      });
      res.end(out.body);
      return;
    }
    if (out.kind === 'huge') {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(out.declareLength ? { 'content-length': String(out.bytes) } : {}),
      });
      const head = '{"choices": [{"index": 0, "message": {"role": "assistant", "content": "';
      res.write(head);
      const chunk = 'x'.repeat(64 * 1024);
      let sent = head.length;
      while (sent < out.bytes - 8 && !res.destroyed) {
        const n = Math.min(chunk.length, out.bytes - 8 - sent);
        if (!res.write(chunk.slice(0, n))) await new Promise((r) => res.once('drain', r).once('close', r));
        sent += n;
      }
      res.end('"}}]}');
      return;
    }
    if (out.kind === 'status') {
      const message = out.message ?? `scripted ${out.status}`;
      const headers: Record<string, string> = out.retryAfter ? { 'retry-after': out.retryAfter } : {};
      if (protocol === 'openai') {
        return send(
          res,
          out.status,
          { error: { message, type: 'scripted', param: null, code: null } },
          headers,
        );
      }
      return send(res, out.status, { error: { code: out.status, message, status: 'SCRIPTED' } }, headers);
    }
    if (streamed) return streamAnswer(res, protocol, seen, out);
    return send(res, 200, protocol === 'openai' ? openaiCompletion(seen, out) : geminiReply(seen, out));
  };

  /** The normal reply to an answer or a refusal (the body of a chat completion / GenerateContentResponse). */
  const usageOf = (seen: SeenRequest, out: Outcome & { kind: 'answer' | 'refusal' | 'slow' }) =>
    out.kind === 'answer' && out.usage
      ? out.usage
      : { input: Math.ceil(seen.userText.length / 4), output: Math.ceil(out.text.length / 4) };
  const openaiCompletion = (seen: SeenRequest, out: Outcome) => {
    if (out.kind !== 'answer' && out.kind !== 'refusal' && out.kind !== 'slow')
      throw new Error(`not an answer: ${out.kind}`);
    const refusal = out.kind === 'refusal';
    const usage = usageOf(seen, out);
    return {
      id: `chatcmpl-${state.total}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: seen.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: refusal ? null : out.text,
            refusal: refusal ? out.text : null,
          },
          finish_reason: out.kind === 'answer' ? (out.finish ?? 'stop') : 'stop',
        },
      ],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        ...('cost' in usage && usage.cost !== undefined ? { cost: usage.cost } : {}),
      },
    };
  };
  const geminiReply = (seen: SeenRequest, out: Outcome) => {
    if (out.kind !== 'answer' && out.kind !== 'refusal' && out.kind !== 'slow')
      throw new Error(`not an answer: ${out.kind}`);
    const refusal = out.kind === 'refusal';
    const usage = usageOf(seen, out);
    const finish = out.kind === 'answer' ? (out.finish ?? 'stop') : 'stop';
    return {
      candidates: [
        {
          content: { role: 'model', parts: refusal ? [] : [{ text: out.text }] },
          finishReason: refusal ? 'SAFETY' : finish === 'length' ? 'MAX_TOKENS' : 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: usage.input,
        ...('byModality' in usage && usage.byModality
          ? {
              promptTokensDetails: Object.entries(usage.byModality).map(([modality, tokenCount]) => ({
                modality,
                tokenCount,
              })),
            }
          : {}),
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: seen.model,
    };
  };

  /**
   * A streamed answer: server-sent events, one piece of text each, after the scripted delays.
   * OpenAI: chat.completion.chunk events, the finish reason, a usage chunk when asked
   * (`stream_options.include_usage`), then `[DONE]`. Gemini: GenerateContentResponse events.
   */
  const streamAnswer = async (res: ServerResponse, protocol: Protocol, seen: SeenRequest, out: Outcome) => {
    if (out.kind !== 'answer' && out.kind !== 'refusal' && out.kind !== 'slow') return;
    const script = out.kind === 'answer' ? out.stream : undefined;
    const pieces = script?.pieces ?? [out.text];
    const usage = usageOf(seen, out);
    const finish = out.kind === 'answer' ? (out.finish ?? 'stop') : 'stop';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const id = `chatcmpl-${state.total}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: seen.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    if (protocol === 'openai') event(chunk({ role: 'assistant', content: '' }, null));
    // Each piece at its scheduled time from the request's arrival, so timer lateness does not add up.
    const t0 = performance.now();
    for (const [i, piece] of pieces.entries()) {
      const due = t0 + (script?.firstMs ?? 0) + i * (script?.gapMs ?? 0);
      const left = due - performance.now();
      if (left > 0) await wait(left);
      if (closed) return;
      if (protocol === 'openai')
        event(chunk(out.kind === 'refusal' ? { refusal: piece } : { content: piece }, null));
      else
        event({
          candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }],
          modelVersion: seen.model,
        });
    }
    if (script?.cut) {
      // The connection ends mid-answer: no finish reason, no usage, no [DONE].
      res.end();
      return;
    }
    if (protocol === 'openai') {
      event(chunk({}, finish));
      const so = seen.body.stream_options as { include_usage?: boolean } | undefined;
      if (so?.include_usage)
        event({
          id,
          object: 'chat.completion.chunk',
          created,
          model: seen.model,
          choices: [],
          usage: {
            prompt_tokens: usage.input,
            completion_tokens: usage.output,
            total_tokens: usage.input + usage.output,
            // As OpenRouter does: the answer's price in the usage chunk.
            ...('cost' in usage && usage.cost !== undefined ? { cost: usage.cost } : {}),
          },
        });
      res.write('data: [DONE]\n\n');
    } else {
      event({
        candidates: [
          {
            content: { role: 'model', parts: [{ text: '' }] },
            finishReason: out.kind === 'refusal' ? 'SAFETY' : finish === 'length' ? 'MAX_TOKENS' : 'STOP',
            index: 0,
          },
        ],
        usageMetadata: {
          promptTokenCount: usage.input,
          ...('byModality' in usage && usage.byModality
            ? {
                promptTokensDetails: Object.entries(usage.byModality).map(([modality, tokenCount]) => ({
                  modality,
                  tokenCount,
                })),
              }
            : {}),
          candidatesTokenCount: usage.output,
          totalTokenCount: usage.input + usage.output,
        },
        modelVersion: seen.model,
      });
    }
    res.end();
  };

  // ------------------------------------------------------------------- batches

  const GEMINI_STATE: Record<string, string> = {
    validating: 'BATCH_STATE_PENDING',
    in_progress: 'BATCH_STATE_RUNNING',
    finalizing: 'BATCH_STATE_RUNNING',
    completed: 'BATCH_STATE_SUCCEEDED',
    expired: 'BATCH_STATE_EXPIRED',
    failed: 'BATCH_STATE_FAILED',
    cancelled: 'BATCH_STATE_CANCELLED',
  };
  const TERMINAL = new Set(['completed', 'expired', 'failed', 'cancelled']);

  /** Where a batch is now: its scripted state after `polls` status checks. */
  const stateOf = (b: ServerBatch) => {
    const seq = batchStates(b.index);
    return seq[Math.min(b.polls, seq.length - 1)];
  };

  /** The batch's answers, computed once when it first reaches its end. */
  const outcomes = new Map<
    string,
    { customId: string; kind: 'ok' | 'error' | 'expired'; seen?: SeenRequest; out?: Outcome }[]
  >();
  const finish = (b: ServerBatch) => {
    if (outcomes.has(b.id)) return outcomes.get(b.id)!;
    const end = stateOf(b);
    const list = b.requests.map((r, i) => {
      if (end === 'failed') return { customId: r.customId, kind: 'expired' as const };
      if (end === 'expired' && (b.protocol === 'gemini' || i % 2 === 1))
        return { customId: r.customId, kind: 'expired' as const };
      const model = b.protocol === 'openai' ? String(r.body.model) : '';
      const { seen, out } = seeRequest(b.protocol, `/batch/${b.id}`, model, r.body);
      const ok = out.kind === 'answer' || out.kind === 'refusal' || out.kind === 'slow';
      return { customId: r.customId, kind: ok ? ('ok' as const) : ('error' as const), seen, out };
    });
    outcomes.set(b.id, list);
    return list;
  };

  const openaiBatch = (b: ServerBatch) => {
    const status = stateOf(b);
    const done = TERMINAL.has(status) ? finish(b) : undefined;
    const okCount = done?.filter((x) => x.kind === 'ok').length ?? 0;
    return {
      id: b.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors:
        status === 'failed'
          ? {
              object: 'list',
              data: [{ code: 'invalid_request', message: 'scripted validation failure', line: 1 }],
            }
          : null,
      input_file_id: `file-in-${b.id}`,
      completion_window: '24h',
      status,
      output_file_id: done && okCount > 0 ? `file-out-${b.id}` : null,
      error_file_id: done && okCount < b.requests.length && status !== 'failed' ? `file-err-${b.id}` : null,
      created_at: Math.floor(started / 1000),
      request_counts: {
        total: b.requests.length,
        completed: okCount,
        failed: done ? b.requests.length - okCount : 0,
      },
      metadata: b.metadata ?? null,
    };
  };

  const geminiOperation = (b: ServerBatch) => {
    const status = stateOf(b);
    const done = TERMINAL.has(status) ? finish(b) : undefined;
    const okCount = done?.filter((x) => x.kind === 'ok').length ?? 0;
    const metadata: Record<string, unknown> = {
      '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch',
      model: `models/${b.requests[0]?.body.model ?? 'model'}`,
      displayName: b.displayName,
      state: GEMINI_STATE[status] ?? status,
      batchStats: {
        requestCount: String(b.requests.length),
        successfulRequestCount: String(okCount),
        failedRequestCount: String(done ? b.requests.length - okCount : 0),
        pendingRequestCount: String(done ? 0 : b.requests.length),
      },
    };
    if (done && status === 'completed')
      metadata.output = {
        inlinedResponses: {
          inlinedResponses: (opts.batch?.inlined ?? ((_b: ServerBatch, l: unknown[]) => l))(
            b,
            done.map((x) =>
              x.kind === 'ok'
                ? { response: geminiReply(x.seen!, x.out!), metadata: { key: x.customId } }
                : {
                    error: {
                      code: x.out?.kind === 'status' ? grpcOf(x.out.status) : 13,
                      message:
                        x.out?.kind === 'status' ? (x.out.message ?? `scripted ${x.out.status}`) : 'scripted',
                    },
                    metadata: { key: x.customId },
                  },
            ),
          ),
        },
      };
    return { name: b.id, metadata, done: done !== undefined };
  };

  /** Files, batches (OpenAI) and batch jobs (Gemini); false when the route is not one of them. */
  const batchRoute = async (req: IncomingMessage, res: ServerResponse, path: string, raw: string) => {
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/files') {
      const file = multipartFile(String(req.headers['content-type'] ?? ''), raw);
      const id = `file-${files.size + 1}`;
      files.set(id, file.content);
      send(res, 200, {
        id,
        object: 'file',
        bytes: Buffer.byteLength(file.content),
        created_at: Math.floor(Date.now() / 1000),
        filename: file.filename,
        purpose: file.purpose,
        status: 'processed',
      });
      return true;
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && content) {
      const fid = content[1];
      const m = /^file-(out|err)-(.+)$/.exec(fid);
      const b = m ? state.batches.find((x) => x.id === m[2]) : undefined;
      if (!b) {
        send(res, 404, { error: { message: `no file ${fid}` } });
        return true;
      }
      const lines = finish(b)
        .filter((x) => (m![1] === 'out' ? x.kind === 'ok' : x.kind !== 'ok'))
        .map((x, i) =>
          JSON.stringify(
            x.kind === 'ok'
              ? {
                  id: `batch_req_${i}`,
                  custom_id: x.customId,
                  response: {
                    status_code: 200,
                    request_id: `req_${i}`,
                    body: openaiCompletion(x.seen!, x.out!),
                  },
                  error: null,
                }
              : x.kind === 'expired'
                ? {
                    id: `batch_req_${i}`,
                    custom_id: x.customId,
                    response: null,
                    error: {
                      code: 'batch_expired',
                      message: 'This request could not be executed before the completion window expired.',
                    },
                  }
                : {
                    id: `batch_req_${i}`,
                    custom_id: x.customId,
                    response: {
                      status_code: x.out?.kind === 'status' ? x.out.status : 500,
                      request_id: `req_${i}`,
                      body: {
                        error: {
                          message:
                            x.out?.kind === 'status'
                              ? (x.out.message ?? `scripted ${x.out.status}`)
                              : 'scripted',
                          type: 'scripted',
                        },
                      },
                    },
                    error: null,
                  },
          ),
        );
      const kind = m![1] as 'out' | 'err';
      const sent = opts.batch?.fileLines ? opts.batch.fileLines(b, kind, lines) : lines;
      if (sent === null) {
        send(res, 404, { error: { message: `No such File object: ${fid}`, type: 'invalid_request_error' } });
        return true;
      }
      if (sent === lines) {
        const text = lines.map((l) => `${l}\n`).join('');
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
        return true;
      }
      // Written as produced, waiting for the client to read (a file larger than memory holds).
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (const l of sent) {
        if (!res.write(typeof l === 'string' ? `${l}\n` : l)) await new Promise((r) => res.once('drain', r));
        if (res.destroyed) return true;
      }
      res.end();
      return true;
    }
    if (method === 'POST' && path === '/v1/batches') {
      const body = JSON.parse(raw) as { input_file_id: string; metadata?: Record<string, string> };
      const input = files.get(body.input_file_id) ?? '';
      const requests = input
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as { custom_id: string; body: Record<string, unknown> })
        .map((l) => ({ customId: l.custom_id, body: l.body }));
      const b: ServerBatch = {
        id: `batch_${state.batches.length + 1}`,
        protocol: 'openai',
        index: state.batches.length,
        polls: 0,
        requests,
        metadata: body.metadata,
      };
      state.batches.push(b);
      send(res, 200, openaiBatch(b));
      return true;
    }
    if (method === 'GET' && path === '/v1/batches') {
      listRequests++;
      const failWith = opts.batch?.listStatus?.(listRequests);
      if (failWith !== undefined) {
        send(res, failWith, { error: { message: `scripted ${failWith}`, type: 'scripted' } });
        return true;
      }
      const data = state.batches
        .filter((b) => b.protocol === 'openai')
        .reverse()
        .map(openaiBatch);
      send(res, 200, {
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: false,
      });
      return true;
    }
    const oneOpenai = /^\/v1\/batches\/([^/]+)$/.exec(path);
    if (method === 'GET' && oneOpenai) {
      const b = state.batches.find((x) => x.id === oneOpenai[1]);
      if (!b) {
        send(res, 404, { error: { message: `no batch ${oneOpenai[1]}` } });
        return true;
      }
      state.batchPolls++;
      b.polls++;
      send(res, 200, openaiBatch(b));
      return true;
    }
    const gemCreate = /^\/v1beta\/models\/([^:]+):batchGenerateContent$/.exec(path);
    if (method === 'POST' && gemCreate) {
      const body = JSON.parse(raw) as {
        batch: {
          displayName?: string;
          inputConfig: {
            requests: { requests: { request: Record<string, unknown>; metadata?: { key?: string } }[] };
          };
        };
      };
      const requests = body.batch.inputConfig.requests.requests.map((r, i) => ({
        customId: r.metadata?.key ?? String(i),
        body: { ...r.request, model: gemCreate[1] },
      }));
      const b: ServerBatch = {
        id: `batches/${state.batches.length + 1}`,
        protocol: 'gemini',
        index: state.batches.length,
        polls: 0,
        requests,
        displayName: body.batch.displayName,
      };
      state.batches.push(b);
      send(res, 200, geminiOperation(b));
      return true;
    }
    if (method === 'GET' && path === '/v1beta/batches') {
      send(res, 200, {
        operations: state.batches.filter((b) => b.protocol === 'gemini').map(geminiOperation),
      });
      return true;
    }
    const oneGemini = /^\/v1beta\/(batches\/[^/:]+)$/.exec(path);
    if (method === 'GET' && oneGemini) {
      const b = state.batches.find((x) => x.id === oneGemini[1]);
      if (!b) {
        send(res, 404, { error: { code: 404, message: `no batch ${oneGemini[1]}`, status: 'NOT_FOUND' } });
        return true;
      }
      state.batchPolls++;
      b.polls++;
      send(res, 200, geminiOperation(b));
      return true;
    }
    return false;
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(res, 500, { error: { message: String(e) } });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}`;
  state.openaiBaseUrl = `${state.url}/v1`;
  state.geminiBaseUrl = state.url;
  state.close = () =>
    new Promise<void>((r) => {
      closed = true;
      for (const done of pending) done();
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return state;
}

/**
 * What OpenAI's strict structured output (`response_format: json_schema, strict: true`) would
 * refuse in a schema, as a list of problems (empty: accepted): the root must be an object, and
 * every object must list all its properties in `required` and set `additionalProperties: false`
 * (an optional key is written as nullable instead). A script can answer 400 with these, as the
 * real service does, so a test sees a schema that only our permissive server would take.
 */
export function openaiStrictProblems(schema: unknown): string[] {
  const problems: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  const walk = (node: unknown, path: string): void => {
    if (!isObj(node)) return;
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('object') || isObj(node.properties)) {
      const keys = isObj(node.properties) ? Object.keys(node.properties) : [];
      const required = Array.isArray(node.required) ? node.required : [];
      for (const k of keys)
        if (!required.includes(k)) problems.push(`${path || '(root)'}: "${k}" is not in required`);
      if (node.additionalProperties !== false)
        problems.push(`${path || '(root)'}: additionalProperties must be false`);
      for (const k of keys) walk((node.properties as Record<string, unknown>)[k], `${path}.${k}`);
    }
    if (node.items !== undefined) walk(node.items, `${path}[]`);
    for (const key of ['anyOf', '$defs', 'definitions'] as const) {
      const sub = node[key];
      if (Array.isArray(sub)) for (const [i, s] of sub.entries()) walk(s, `${path}.${key}[${i}]`);
      else if (isObj(sub)) for (const [k, s] of Object.entries(sub)) walk(s, `${path}.${key}.${k}`);
    }
  };
  if (!isObj(schema) || schema.type !== 'object') problems.push('(root): must be an object schema');
  walk(schema, '');
  return problems;
}
