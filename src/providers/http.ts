/**
 * The fetch both SDKs are given: what comes back over HTTP is checked before an SDK reads it.
 * - A body over the size cap (default 16 MB) is an error (`too_large`), found from
 *   Content-Length or while reading, so a runaway server cannot exhaust memory.
 * - A 2xx JSON reply whose body is not JSON is an error (`invalid_response`, retried), never
 *   an answer; a non-2xx one whose body is not JSON is handed on as text, so the SDK reports the
 *   status instead of a parse error.
 * - A connection the endpoint refuses (or a host that does not resolve) is a `network` error
 *   that names the endpoint and the cause (`unreachable`), so a provider can fail fast.
 * Streamed replies (text/event-stream) are passed through, counted against the same cap.
 */
import { ProviderError } from './types.ts';

export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  // Not an errno: fetch (undici) refuses the WHATWG "bad ports" (9, 6000, 6667, ...) before
  // connecting, with a plain `bad port` error; no retry can change that.
  BAD_PORT: "a port fetch never connects to (the Fetch standard's blocked ports)",
};

/** The errno-style code somewhere in an error's cause chain. */
export function causeCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 8 && cur; i++) {
    const c = cur as { code?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof c.code === 'string' && c.code in UNREACHABLE) return c.code;
    if ((c as { message?: unknown }).message === 'bad port') return 'BAD_PORT';
    // Node's happy-eyeballs connect gives an AggregateError of per-address failures.
    if (Array.isArray(c.errors)) for (const x of c.errors) if (causeCode(x)) return causeCode(x);
    cur = c.cause;
  }
  return undefined;
}

/** Why a request never reached a server, in words (`connection refused (ECONNREFUSED)`), or undefined. */
export function unreachableCause(e: unknown): string | undefined {
  const code = causeCode(e);
  return code ? `${UNREACHABLE[code]} (${code})` : undefined;
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 0)} MB`;
}

function tooLarge(maxBytes: number, seen: string): ProviderError {
  return new ProviderError('too_large', `the reply is larger than the ${mb(maxBytes)} cap (${seen})`);
}

async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes, `more than ${size} bytes read`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function counted(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        size += chunk.byteLength;
        if (size > maxBytes) ctl.error(tooLarge(maxBytes, `more than ${size} bytes streamed`));
        else ctl.enqueue(chunk);
      },
    }),
  );
}

export interface GuardOptions {
  maxBytes?: number;
  /** The endpoint as shown to the user (secrets redacted), for messages. */
  display?: string;
  base?: typeof fetch;
  /**
   * Whether the body of a reply to `url` is handed on as a stream (counted against maxBytes as it
   * is read) instead of read whole first: a batch results file may be larger than memory allows.
   */
  streamBody?: (url: string) => boolean;
}

/** The URL a fetch was called with, as text. */
function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** A fetch that applies the checks above. */
export function guardedFetch(opts: GuardOptions = {}): typeof fetch {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const base = opts.base ?? fetch;
  return async (input, init) => {
    let res: Response;
    try {
      res = await base(input, init);
    } catch (e) {
      const why = unreachableCause(e);
      if (why && !init?.signal?.aborted) {
        throw new ProviderError('network', `cannot reach ${opts.display ?? 'the endpoint'}: ${why}`, {
          cause: e,
          unreachable: true,
        });
      }
      throw e;
    }
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw tooLarge(maxBytes, `Content-Length ${declared}`);
    }
    if (!res.body) return res;
    const type = res.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream') || (res.ok && opts.streamBody?.(urlOf(input)))) {
      return new Response(counted(res.body, maxBytes), {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    }
    const bytes = await readCapped(res.body, maxBytes);
    const headers = new Headers(res.headers);
    if (res.ok && type.includes('text/html')) {
      throw new ProviderError(
        'invalid_response',
        `HTTP ${res.status} with an HTML page instead of an API reply (${bytes.byteLength} bytes)`,
      );
    }
    if (/^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i.test(type)) {
      let json = true;
      try {
        JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        json = false;
      }
      if (!json && res.ok) {
        const head = new TextDecoder().decode(bytes.subarray(0, 80)).replace(/\s+/g, ' ');
        throw new ProviderError(
          'invalid_response',
          `HTTP ${res.status} with a body that is not JSON (${bytes.byteLength} bytes: ${JSON.stringify(head)})`,
        );
      }
      if (!json) headers.set('content-type', 'text/plain');
    }
    headers.delete('content-encoding');
    headers.set('content-length', String(bytes.byteLength));
    return new Response(bytes.byteLength > 0 ? bytes : null, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  };
}
