/**
 * Several endpoints of one OpenAI-compatible service (e.g. vLLM replicas behind several
 * --base-url values): each request goes to the healthy endpoint with the fewest requests in
 * flight, and an endpoint that fails (server error, network, timeout, rate limit) is taken out
 * for a while, longer each time it fails again, and back in after one success.
 */
import type { ErrorClass } from './types.ts';

export interface Endpoint<C> {
  /** The URL as shown (secrets redacted). */
  url: string;
  client: C;
  /** 'answered': some HTTP reply came back; 'refused': never reached (connection refused, no host). */
  reach: 'unknown' | 'answered' | 'refused';
  inflight: number;
  failures: number;
  downUntil: number;
  requests: number;
}

export interface PoolOptions {
  /** First time out for a failing endpoint (ms); doubles per consecutive failure. */
  cooldownMs?: number;
  maxCooldownMs?: number;
  now?: () => number;
}

const OUTAGE: ReadonlySet<ErrorClass> = new Set(['server', 'network', 'timeout', 'rate_limit']);

export class EndpointPool<C> {
  readonly endpoints: Endpoint<C>[];
  private next = 0;
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly now: () => number;

  constructor(urls: string[], makeClient: (url: string, index: number) => C, opts: PoolOptions = {}) {
    this.endpoints = urls.map((url, i) => ({
      url,
      client: makeClient(url, i),
      reach: 'unknown' as const,
      inflight: 0,
      failures: 0,
      downUntil: 0,
      requests: 0,
    }));
    this.cooldownMs = opts.cooldownMs ?? 30_000;
    this.maxCooldownMs = opts.maxCooldownMs ?? 300_000;
    this.now = opts.now ?? Date.now;
  }

  /** The endpoint for the next request (when all are out, the one back soonest). */
  acquire(): Endpoint<C> {
    const t = this.now();
    const n = this.endpoints.length;
    let best: Endpoint<C> | undefined;
    for (let k = 0; k < n; k++) {
      const e = this.endpoints[(this.next + k) % n];
      if (e.downUntil > t) continue;
      if (!best || e.inflight < best.inflight) best = e;
    }
    if (!best) best = this.endpoints.reduce((a, b) => (b.downUntil < a.downUntil ? b : a));
    this.next = (this.endpoints.indexOf(best) + 1) % n;
    best.inflight++;
    best.requests++;
    return best;
  }

  /** Reports how a request went: `undefined` for success, else the failure's class. */
  release(e: Endpoint<C>, failure?: ErrorClass, retryAfterMs?: number): void {
    e.inflight--;
    if (!failure) {
      e.failures = 0;
      e.downUntil = 0;
      return;
    }
    if (!OUTAGE.has(failure) || this.endpoints.length < 2) return;
    e.failures++;
    const pause = Math.min(this.maxCooldownMs, this.cooldownMs * 2 ** (e.failures - 1));
    e.downUntil = this.now() + Math.max(pause, retryAfterMs ?? 0);
  }
}
