/**
 * A local server that speaks the OpenAI chat-completions protocol (`POST /v1/chat/completions`)
 * and the Gemini API (`POST /v1beta/models/{model}:generateContent`), scripted per request, so
 * the real SDKs can be driven through every fault a provider shows: 429 with Retry-After, 500,
 * 503, slow answers, dropped connections, token-limit cuts, non-JSON and code-fenced answers,
 * a refused schema, a bad key.
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
      usage?: { input: number; output: number };
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

export interface ServerOptions {
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
  /** Requests seen per key. */
  counts: Map<string, number>;
  total: number;
  close(): Promise<void>;
}

const RID = /\[rid:([^\]\s]+)\]/;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function textOfOpenAI(body: Record<string, unknown>, role: string): string {
  const msgs = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  return msgs
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function textOfGemini(body: Record<string, unknown>): { user: string; system: string } {
  const contents = (body.contents as { parts?: { text?: string }[] }[] | undefined) ?? [];
  const user = contents.flatMap((c) => (c.parts ?? []).map((p) => p.text ?? '')).join('\n');
  const sys = body.systemInstruction as { parts?: { text?: string }[] } | undefined;
  return { user, system: (sys?.parts ?? []).map((p) => p.text ?? '').join('\n') };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startProtocolServer(opts: ServerOptions = {}): Promise<ProtocolServer> {
  const started = Date.now();
  const keyOf = opts.keyOf ?? ((t: string) => RID.exec(t)?.[1]);
  const answer = opts.answer ?? ((r: SeenRequest) => JSON.stringify({ id: r.key ?? null }));
  const script = opts.script ?? ((r: SeenRequest): Outcome => ({ kind: 'answer', text: answer(r) }));
  const keepLog = opts.keepLog ?? true;
  const sockets = new Set<Socket>();
  const state: ProtocolServer = {
    url: '',
    openaiBaseUrl: '',
    geminiBaseUrl: '',
    requests: [],
    counts: new Map(),
    total: 0,
    close: async () => {},
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
    const gem = /^\/v1beta\/models\/([^:]+):generateContent$/.exec(path);
    const protocol: Protocol | undefined =
      path === '/v1/chat/completions' ? 'openai' : gem ? 'gemini' : undefined;
    const raw = await readBody(req);
    if (!protocol || req.method !== 'POST')
      return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    const body = JSON.parse(raw) as Record<string, unknown>;
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
      model: protocol === 'openai' ? String(body.model) : (gem?.[1] ?? ''),
      key,
      n,
      at: Date.now() - started,
      time: Date.now(),
      body,
      userText: texts.user,
      systemText: texts.system,
      authorization:
        (req.headers.authorization as string | undefined) ??
        (req.headers['x-goog-api-key'] as string | undefined),
      query: (req.url ?? '').split('?')[1] ?? '',
      headers: req.headers,
    };
    if (keepLog) state.requests.push(seen);
    const out = script(seen);
    const delay = (opts.latencyMs ?? 0) + ('delayMs' in out && out.delayMs ? out.delayMs : 0);
    if (delay > 0) await wait(delay);
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
    const text = out.text;
    const finish = out.kind === 'answer' ? (out.finish ?? 'stop') : 'stop';
    const usage =
      out.kind === 'answer' && out.usage
        ? out.usage
        : { input: Math.ceil(texts.user.length / 4), output: Math.ceil(text.length / 4) };
    if (protocol === 'openai') {
      const refusal = out.kind === 'refusal';
      return send(res, 200, {
        id: `chatcmpl-${state.total}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: seen.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: refusal ? null : text, refusal: refusal ? text : null },
            finish_reason: finish,
          },
        ],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      });
    }
    const refusal = out.kind === 'refusal';
    return send(res, 200, {
      candidates: [
        {
          content: { role: 'model', parts: refusal ? [] : [{ text }] },
          finishReason: refusal ? 'SAFETY' : finish === 'length' ? 'MAX_TOKENS' : 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: seen.model,
    });
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
