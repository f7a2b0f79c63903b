/**
/**
 * One structured question to a model: transport failures retried through the project's one
 * retry owner (src/core/retry.ts) with the backoff handed in (the runner's), an answer that does
 * not validate asked again, and after the last attempt an error, never a guess. Used by the judges
 * and by the scorer's LLM matcher, so it stands below both.
 */

import type { ZodType } from 'zod';
import { errorMessage, UserError } from '../core/errors.ts';
import { retrying } from '../core/retry.ts';
import { redactSecrets } from './secrets.ts';
import { FATAL, type Provider, ProviderError, RETRYABLE } from './types.ts';

/** The runner's backoff (src/core/retry.ts), handed in so judges and runs pause alike. */
export interface Backoff {
  delay(failures: number, retryAfterMs?: number): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface AskOptions {
  backoff: Backoff;
  /** Attempts at a valid answer. */
  maxAttempts: number;
  /** Transport retries (rate limit, server, timeout, network) per attempt. */
  maxRetries: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export async function askStructured<T>(
  provider: Provider,
  recordId: string,
  prompt: { system: string; user: string },
  schema: Record<string, unknown>,
  parse: (text: string) => Parsed<T>,
  o: AskOptions,
  /** Hand the schema to the provider's structured-output mode (an open-ended schema may be refused). */
  constrained = true,
): Promise<{ value?: T; error?: string; attempts: number; constrained: boolean }> {
  let lastError = 'no answer';
  // A provider that refuses our schema in its structured-output mode (`schema_rejected`) is
  // asked again at once with the schema in the prompt only; the answer is validated all the same.
  let useConstrained = constrained;
  for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
    if (o.signal?.aborted)
      return { error: 'interrupted', attempts: attempt - 1, constrained: useConstrained };
    const r = await retrying(
      async ({ signal }) =>
        (
          await provider.complete({
            recordId,
            system: prompt.system,
            user: prompt.user,
            schema,
            constrained: useConstrained,
            temperature: 0,
            maxTokens: 2048,
            signal,
            groundTruth: null,
          })
        ).text,
      ({ error: e, canRetry }) => {
        const cls = e instanceof ProviderError ? e.errorClass : 'network';
        // A bad key, no server, no such model: no other record would fare better.
        if (FATAL.has(cls))
          throw new UserError(
            `${provider.id}: ${redactSecrets(errorMessage(e).split('\n')[0])}${cls === 'unreachable' ? '; check --base-url' : ''}`,
          );
        if (cls === 'schema_rejected' && useConstrained) {
          useConstrained = false;
          return 'again';
        }
        if (!RETRYABLE.has(cls as never) || !canRetry || o.signal?.aborted) {
          lastError = `${cls}: ${errorMessage(e)}`;
          return 'stop';
        }
        return { retryAfterMs: e instanceof ProviderError ? e.retryAfterMs : undefined };
      },
      {
        maxRetries: o.maxRetries,
        delay: (failures, retryAfterMs) => o.backoff.delay(failures, retryAfterMs),
        sleep: (ms, signal) => o.backoff.sleep(ms, signal),
        timeoutMs: o.timeoutMs,
        signal: o.signal,
      },
    );
    if (!r.ok && r.aborted) lastError = 'interrupted';
    const text = r.ok ? r.value : undefined;
    if (text === undefined) continue;
    const parsed = parse(text);
    if (parsed.ok) return { value: parsed.value, attempts: attempt, constrained: useConstrained };
    lastError = parsed.error;
  }
  return { error: lastError, attempts: o.maxAttempts, constrained: useConstrained };
}

/** The JSON text of an answer: the inside of a code fence when there is one. */
export function jsonText(text: string): string {
  const trimmed = text.trim();
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(trimmed);
  return fenced ? fenced[1] : trimmed;
}

/** A JSON answer, also when wrapped in a code fence. */
export function parseJsonAnswer(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(jsonText(text)) };
  } catch {
    return { ok: false, error: `not JSON: ${text.trim().slice(0, 80)}` };
  }
}

/** A JSON answer validated by a zod schema; the message names the first bad field. */
export function parseWith<T>(schema: ZodType<T>, text: string): Parsed<T> {
  const j = parseJsonAnswer(text);
  if (!j.ok) return j;
  const r = schema.safeParse(j.value);
  if (r.success) return { ok: true, value: r.data };
  const i = r.error.issues[0];
  return { ok: false, error: `${i.path.join('.') || 'answer'}: ${i.message}` };
}
