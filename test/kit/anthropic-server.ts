/**
 * A local server that speaks Anthropic's Messages API (`POST /v1/messages`, whole or streamed as
 * server-sent events: message_start, content_block_start, ping, content_block_delta,
 * content_block_stop, message_delta, message_stop) and its Message Batches API
 * (`/v1/messages/batches`, one batch, its list and its `.jsonl` results), scripted per request as
 * the OpenAI/Gemini one is (test/helpers/protocol-server.ts): requests keyed by `[rid:<id>]` in the
 * prompt, `n` counting how often a key was asked, so a script can say "429, then 529, then answer".
 *
 * It takes the key as `x-api-key` or `Authorization: Bearer` (the SDK 1.15 sends the latter), and
 * keeps the bytes of every image and document block it was sent, decoded from base64.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type AnthropicOutcome =
  | {
      kind: 'answer';
      text: string;
      finish?: 'stop' | 'length';
      usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
      /** When the client streams: the text in these pieces, the first after `firstMs`, then `gapMs` apart. */
      stream?: {
        pieces?: string[];
        firstMs?: number;
        gapMs?: number;
        /** The connection ends after the pieces: no message_delta, no message_stop. */
        cut?: boolean;
        /** An `error` event after the pieces (`overloaded_error`, ...), then the end. */
        error?: string;
      };
    }
  | { kind: 'refusal'; text?: string; category?: string; explanation?: string }
  | { kind: 'status'; status: number; message?: string; retryAfter?: string }
  | { kind: 'drop' };

export interface AnthropicSeen {
  path: string;
  model: string;
  key: string | undefined;
  n: number;
  /** Date.now() when it arrived. */
  time: number;
  body: Record<string, unknown>;
  userText: string;
  systemText: string;
  /** How the key came: `x-api-key`, `bearer`, or none. */
  auth: 'x-api-key' | 'bearer' | 'none';
  /** The image and document blocks, decoded. */
  attachments: { type: string; mediaType: string; bytes: Buffer }[];
}

export interface AnthropicBatch {
  id: string;
  index: number;
  polls: number;
  requests: { customId: string; params: Record<string, unknown> }[];
  createdAt: string;
}

export interface AnthropicServerOptions {
  script?: (req: AnthropicSeen) => AnthropicOutcome;
  /** When set, a request without this key (either header) is answered 401. */
  apiKey?: string;
  /**
   * The states the n-th batch (0-based) goes through, one per status check; the last is where it
   * ends. Default: in_progress, in_progress, ended.
   */
  batchStates?: (index: number) => string[];
}

export interface AnthropicServer {
  url: string;
  requests: AnthropicSeen[];
  counts: Map<string, number>;
  total: number;
  batches: AnthropicBatch[];
  /** Requests refused for their key. */
  unauthorized: number;
  close(): Promise<void>;
}

const RID = /\[rid:([^\]\s]+)\]/;

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

type Block = { type: string; text?: string; source?: { type?: string; media_type?: string; data?: string } };

function userParts(body: Record<string, unknown>) {
  const msgs = (body.messages as { role: string; content: string | Block[] }[] | undefined) ?? [];
  const texts: string[] = [];
  const attachments: AnthropicSeen['attachments'] = [];
  for (const m of msgs.filter((x) => x.role === 'user')) {
    if (typeof m.content === 'string') texts.push(m.content);
    else
      for (const b of m.content) {
        if (b.type === 'text') texts.push(b.text ?? '');
        else if ((b.type === 'image' || b.type === 'document') && b.source?.type === 'base64')
          attachments.push({
            type: b.type,
            mediaType: b.source.media_type ?? '',
            bytes: Buffer.from(b.source.data ?? '', 'base64'),
          });
      }
  }
  const sys = body.system;
  const systemText =
    typeof sys === 'string'
      ? sys
      : Array.isArray(sys)
        ? (sys as Block[]).map((b) => b.text ?? '').join('\n')
        : '';
  return { userText: texts.join('\n'), systemText, attachments };
}

export async function startAnthropicServer(opts: AnthropicServerOptions = {}): Promise<AnthropicServer> {
  const script =
    opts.script ??
    ((r: AnthropicSeen): AnthropicOutcome => ({
      kind: 'answer',
      text: JSON.stringify({ id: r.key ?? null }),
    }));
  const batchStates = opts.batchStates ?? (() => ['in_progress', 'in_progress', 'ended']);
  const sockets = new Set<Socket>();
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
  const state: AnthropicServer = {
    url: '',
    requests: [],
    counts: new Map(),
    total: 0,
    batches: [],
    unauthorized: 0,
    close: async () => {},
  };
  let messages = 0;

  const see = (path: string, body: Record<string, unknown>, auth: AnthropicSeen['auth']) => {
    const parts = userParts(body);
    const key = RID.exec(parts.userText)?.[1];
    const n = (key !== undefined ? (state.counts.get(key) ?? 0) : 0) + 1;
    if (key !== undefined) state.counts.set(key, n);
    state.total++;
    const seen: AnthropicSeen = {
      path,
      model: String(body.model),
      key,
      n,
      time: Date.now(),
      body,
      auth,
      ...parts,
    };
    state.requests.push(seen);
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
      'request-id': `req_${state.total}`,
      ...headers,
    });
    res.end(data);
  };
  const error = (
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ) =>
    send(
      res,
      status,
      { type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message } },
      headers,
    );

  const usageOf = (seen: AnthropicSeen, out: AnthropicOutcome) => {
    const u =
      out.kind === 'answer' && out.usage
        ? out.usage
        : {
            input: Math.ceil(seen.userText.length / 4),
            output: out.kind === 'answer' ? Math.ceil(out.text.length / 4) : 1,
          };
    return {
      input_tokens: u.input,
      output_tokens: u.output,
      cache_creation_input_tokens: 'cacheWrite' in u ? (u.cacheWrite ?? 0) : 0,
      cache_read_input_tokens: 'cacheRead' in u ? (u.cacheRead ?? 0) : 0,
      service_tier: 'standard',
    };
  };
  const toolMode = (seen: AnthropicSeen) =>
    (seen.body.tool_choice as { type?: string; name?: string } | undefined)?.type === 'tool';

  /** The Message a whole (or batch) answer is. */
  const message = (seen: AnthropicSeen, out: AnthropicOutcome) => {
    const id = `msg_${++messages}`;
    const usage = usageOf(seen, out);
    const base = {
      id,
      type: 'message',
      role: 'assistant',
      model: seen.model,
      stop_sequence: null,
      container: null,
      usage,
    };
    if (out.kind === 'refusal')
      return {
        ...base,
        content: out.text ? [{ type: 'text', text: out.text }] : [],
        stop_reason: 'refusal',
        stop_details: {
          type: 'refusal',
          category: out.category ?? null,
          explanation: out.explanation ?? null,
        },
      };
    if (out.kind !== 'answer') throw new Error(`not an answer: ${out.kind}`);
    if (toolMode(seen)) {
      const name = (seen.body.tool_choice as { name: string }).name;
      return {
        ...base,
        content: [{ type: 'tool_use', id: `toolu_${messages}`, name, input: JSON.parse(out.text) }],
        stop_reason: 'tool_use',
        stop_details: null,
      };
    }
    return {
      ...base,
      content: [{ type: 'text', text: out.text }],
      stop_reason: out.finish === 'length' ? 'max_tokens' : 'end_turn',
      stop_details: null,
    };
  };

  const streamAnswer = async (res: ServerResponse, seen: AnthropicSeen, out: AnthropicOutcome) => {
    if (out.kind !== 'answer' && out.kind !== 'refusal') return;
    const whole = message(seen, out);
    const tool = toolMode(seen) && out.kind === 'answer';
    const text = out.kind === 'answer' ? out.text : (out.text ?? '');
    const script = out.kind === 'answer' ? out.stream : undefined;
    const pieces = script?.pieces ?? (text ? [text] : []);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        ...whole,
        content: [],
        stop_reason: null,
        stop_details: null,
        usage: { ...whole.usage, output_tokens: 1 },
      },
    });
    if (pieces.length > 0 || tool) {
      const first = whole.content[0] as { type: string; id?: string; name?: string };
      event('content_block_start', {
        index: 0,
        content_block: tool
          ? { type: 'tool_use', id: first.id, name: first.name, input: {} }
          : { type: 'text', text: '' },
      });
    }
    event('ping', {});
    const t0 = performance.now();
    for (const [i, piece] of pieces.entries()) {
      const left = t0 + (script?.firstMs ?? 0) + i * (script?.gapMs ?? 0) - performance.now();
      if (left > 0) await wait(left);
      if (closed) return;
      event('content_block_delta', {
        index: 0,
        delta: tool ? { type: 'input_json_delta', partial_json: piece } : { type: 'text_delta', text: piece },
      });
    }
    if (script?.error) event('error', { error: { type: script.error, message: `scripted ${script.error}` } });
    if (script?.cut || script?.error) {
      res.end();
      return;
    }
    if (pieces.length > 0 || tool) event('content_block_stop', { index: 0 });
    event('message_delta', {
      delta: { stop_reason: whole.stop_reason, stop_sequence: null, stop_details: whole.stop_details },
      usage: { output_tokens: whole.usage.output_tokens },
    });
    event('message_stop', {});
    res.end();
  };

  // ------------------------------------------------------------------ batches
  const outcomes = new Map<string, { customId: string; seen: AnthropicSeen; out: AnthropicOutcome }[]>();
  const stateOf = (b: AnthropicBatch) => {
    const seq = batchStates(b.index);
    return seq[Math.min(b.polls, seq.length - 1)];
  };
  /** Each request of a batch is asked once, when the batch first ends. */
  const finish = (b: AnthropicBatch) => {
    let list = outcomes.get(b.id);
    if (!list) {
      list = b.requests.map((r) => ({ customId: r.customId, ...see(`/batch/${b.id}`, r.params, 'none') }));
      outcomes.set(b.id, list);
    }
    return list;
  };
  const batchObject = (b: AnthropicBatch) => {
    const ended = stateOf(b) === 'ended';
    const done = ended ? finish(b) : undefined;
    const ok = done?.filter((x) => x.out.kind === 'answer' || x.out.kind === 'refusal').length ?? 0;
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : stateOf(b),
      request_counts: {
        processing: ended ? 0 : b.requests.length,
        succeeded: ok,
        errored: ended ? b.requests.length - ok : 0,
        canceled: 0,
        expired: 0,
      },
      created_at: b.createdAt,
      expires_at: new Date(Date.parse(b.createdAt) + 86_400_000).toISOString(),
      ended_at: ended ? new Date().toISOString() : null,
      cancel_initiated_at: null,
      archived_at: null,
      results_url: ended ? `${state.url}/v1/messages/batches/${b.id}/results` : null,
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const raw = await readBody(req);
    const apiKey = req.headers['x-api-key'];
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const auth: AnthropicSeen['auth'] = apiKey ? 'x-api-key' : bearer ? 'bearer' : 'none';
    if (opts.apiKey !== undefined && apiKey !== opts.apiKey && bearer !== opts.apiKey) {
      state.unauthorized++;
      return error(res, 401, 'invalid x-api-key');
    }
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/messages') {
      const body = JSON.parse(raw) as Record<string, unknown>;
      const { seen, out } = see(path, body, auth);
      if (closed) return;
      if (out.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      if (out.kind === 'status') {
        const headers: Record<string, string> = out.retryAfter ? { 'retry-after': out.retryAfter } : {};
        return error(res, out.status, out.message ?? `scripted ${out.status}`, headers);
      }
      if (body.stream === true) return streamAnswer(res, seen, out);
      return send(res, 200, message(seen, out));
    }
    if (method === 'POST' && path === '/v1/messages/batches') {
      const body = JSON.parse(raw) as { requests: { custom_id: string; params: Record<string, unknown> }[] };
      const b: AnthropicBatch = {
        id: `msgbatch_${String(state.batches.length + 1).padStart(4, '0')}`,
        index: state.batches.length,
        polls: 0,
        requests: body.requests.map((r) => ({ customId: r.custom_id, params: r.params })),
        createdAt: new Date().toISOString(),
      };
      state.batches.push(b);
      return send(res, 200, batchObject(b));
    }
    if (method === 'GET' && path === '/v1/messages/batches') {
      const data = [...state.batches].reverse().map(batchObject);
      return send(res, 200, {
        data,
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
    }
    const one = /^\/v1\/messages\/batches\/([^/]+)(\/results)?$/.exec(path);
    const b = one ? state.batches.find((x) => x.id === one[1]) : undefined;
    if (method === 'GET' && one && !b) return error(res, 404, `no batch ${one[1]}`);
    if (method === 'GET' && b && !one?.[2]) {
      b.polls++;
      return send(res, 200, batchObject(b));
    }
    if (method === 'GET' && b && one?.[2]) {
      if (stateOf(b) !== 'ended') return error(res, 400, `batch ${b.id} is still processing`);
      const lines = finish(b).map(({ customId, seen, out }) =>
        JSON.stringify({
          custom_id: customId,
          result:
            out.kind === 'answer' || out.kind === 'refusal'
              ? { type: 'succeeded', message: message(seen, out) }
              : {
                  type: 'errored',
                  error: {
                    type: 'error',
                    error: {
                      type: out.kind === 'status' ? (ERROR_TYPE[out.status] ?? 'api_error') : 'api_error',
                      message: out.kind === 'status' ? (out.message ?? `scripted ${out.status}`) : 'scripted',
                    },
                  },
                },
        }),
      );
      const text = lines.map((l) => `${l}\n`).join('');
      res.writeHead(200, { 'content-type': 'application/binary', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    return error(res, 404, `no route ${method} ${path}`);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) error(res, 500, String(e));
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      closed = true;
      for (const done of pending) done();
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return state;
}
