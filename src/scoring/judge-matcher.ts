/**
 * The I/O side of the `judge` matcher: asks a model "same meaning?" for each leaf pair the
 * deterministic matchers left unsettled, through the provider interface, and caches every answer
 * on disk by the pair's hash, so a pair is asked once across records and reruns.
 *
 * Cache: `<cacheDir>/<judge model>-<endpoint hash>/<hash[0..2]>/<hash>.json` (written
 * atomically, its folders made without following symbolic links), holding the verdict and the
 * judge's raw answer. The endpoint is part of the key: two servers with one model name never
 * share verdicts. An answer that cannot be read is `unscored`: not accepted in any lenient
 * metric, and never cached (asked again next run). A transport failure is not cached either:
 * the pair stays pending and the next run asks again.
 *
 * Flow: `scoreLenient` -> `unsettled` pairs -> `judgePairs` -> verdicts -> `scoreLenient` again
 * with `verdicts` (alignment does not depend on verdicts, so one round settles every pair).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { JudgeVerdict, UnsettledPair } from '../../metrics/match/judge.ts';
import { mapConcurrent } from '../core/concurrency.ts';
import { folderName, plainDirs, writeJsonAtomic } from '../core/files.ts';
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, sleep } from '../core/retry.ts';
import { askStructured, jsonText } from '../providers/ask.ts';
import type { Provider } from '../providers/types.ts';

export const JUDGE_SYSTEM = [
  'You check values extracted from documents.',
  'Given a field, its ground-truth value and a predicted value, decide whether the prediction means',
  'the same as the ground truth for that field (same entity, quantity, date or statement, whatever',
  'the wording, format or language). Minor spelling or formatting differences do not matter;',
  'a different or incomplete value does.',
  'Answer with JSON only: {"same_meaning": true} or {"same_meaning": false}.',
].join('\n');

const ANSWER_SCHEMA = {
  type: 'object',
  properties: { same_meaning: { type: 'boolean' } },
  required: ['same_meaning'],
  additionalProperties: false,
};

/** The question for one pair; `[rid:...]` names the pair in the request (logs, test servers). */
export function judgePrompt(p: UnsettledPair): string {
  return [
    `Pair [rid:${p.hash.slice(0, 16)}]`,
    `Field: ${p.field}`,
    ...(p.description ? [`Field description: ${p.description}`] : []),
    `Ground truth: ${p.gold}`,
    `Prediction: ${p.pred}`,
    '',
    'Does the prediction mean the same as the ground truth?',
  ].join('\n');
}

/** A judge's answer as a verdict: `{"same_meaning": bool}` (also fenced), or a bare yes/no/true/false. */
export function readJudgeAnswer(text: string): JudgeVerdict {
  const bare = text.trim().toLowerCase().replace(/[.!]$/, '');
  if (bare === 'yes' || bare === 'true') return 'match';
  if (bare === 'no' || bare === 'false') return 'no_match';
  try {
    const v = JSON.parse(jsonText(text)) as unknown;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const same = (v as Record<string, unknown>).same_meaning;
      if (typeof same === 'boolean') return same ? 'match' : 'no_match';
    }
  } catch {
    // not JSON
  }
  return 'unscored';
}

const CacheEntry = z.object({
  hash: z.string(),
  verdict: z.enum(['match', 'no_match', 'unscored']),
});

export interface JudgeOptions {
  provider: Provider;
  cacheDir: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Transport retries per pair (default 3). */
  maxRetries?: number;
  timeoutMs?: number;
  backoff?: BackoffOptions;
  signal?: AbortSignal;
  /** Called after each pair (asked or from the cache). */
  onProgress?: (done: number, total: number) => void;
  /**
   * The circuit breaker: after this many pairs in a row got no answer (every retry failed), the
   * judge is taken for down and nothing more is asked; `tripped` says why (default 3).
   */
  breakAfter?: number;
}

export interface JudgeResult {
  verdicts: Map<string, JudgeVerdict>;
  /** Pairs sent to the model this run, found in the cache, and whose request failed (pending). */
  asked: number;
  cached: number;
  failed: number;
  /** One line per failed pair: `<field>: <error>`. */
  errors: string[];
  /** Set when the circuit breaker stopped the asking (the pairs not asked stay pending). */
  tripped?: string;
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) || 'judge';
}

/**
 * The cache folder of one judge: its id and a hash of where it answers (its endpoints, as shown,
 * secrets redacted), so two servers serving a model of the same name never share verdicts.
 */
export function judgeCacheName(provider: Provider): string {
  const where = provider.describe().endpoints ?? provider.describe().endpoint ?? null;
  const h = createHash('sha256').update(JSON.stringify(where)).digest('hex').slice(0, 12);
  return folderName(`${safeName(provider.id)}-${h}`, provider.id);
}

function cacheFile(dir: string, hash: string): string {
  return join(dir, hash.slice(0, 2), `${hash}.json`);
}

function readCache(file: string, hash: string): JudgeVerdict | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const r = CacheEntry.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    // An `unscored` entry (cached by older versions) is asked again: only readable verdicts last.
    return r.success && r.data.hash === hash && r.data.verdict !== 'unscored' ? r.data.verdict : undefined;
  } catch {
    return undefined; // a damaged entry is asked again and rewritten
  }
}

/** Verdicts for unsettled pairs (deduplicated by hash): from the cache, else from the judge. */
export async function judgePairs(pairs: UnsettledPair[], o: JudgeOptions): Promise<JudgeResult> {
  const name = judgeCacheName(o.provider);
  const dir = join(o.cacheDir, name);
  const unique = [...new Map(pairs.map((p) => [p.hash, p])).values()];
  const res: JudgeResult = { verdicts: new Map(), asked: 0, cached: 0, failed: 0, errors: [] };
  const todo: UnsettledPair[] = [];
  for (const p of unique) {
    const hit = readCache(cacheFile(dir, p.hash), p.hash);
    if (hit !== undefined) {
      res.verdicts.set(p.hash, hit);
      res.cached++;
    } else todo.push(p);
  }
  let done = res.cached;
  o.onProgress?.(done, unique.length);
  const backoff = o.backoff ?? DEFAULT_BACKOFF;
  let failedInARow = 0;
  const breakAfter = o.breakAfter ?? 3;
  const ask = async (p: UnsettledPair) => {
    const r = await askStructured(
      o.provider,
      p.hash.slice(0, 16),
      { system: JUDGE_SYSTEM, user: judgePrompt(p) },
      ANSWER_SCHEMA,
      (text) => ({ ok: true, value: { verdict: readJudgeAnswer(text), text } }),
      {
        backoff: { delay: (f, ra) => backoffDelay(f, backoff, ra), sleep },
        maxAttempts: 1,
        maxRetries: o.maxRetries ?? 3,
        timeoutMs: o.timeoutMs ?? 60_000,
        signal: o.signal,
      },
    );
    if (r.value) {
      failedInARow = 0;
      res.asked++;
      res.verdicts.set(p.hash, r.value.verdict);
      // An unreadable answer is not a verdict: never cached, asked again next run.
      if (r.value.verdict === 'unscored') {
        o.onProgress?.(++done, unique.length);
        return;
      }
      const file = cacheFile(dir, p.hash);
      // Made without following links: a symlinked shard or judge folder is refused.
      plainDirs(o.cacheDir, [name, p.hash.slice(0, 2)], 'judge cache folder');
      writeJsonAtomic(file, {
        hash: p.hash,
        verdict: r.value.verdict,
        judge: o.provider.id,
        field: p.field,
        gold: p.gold,
        pred: p.pred,
        answer: r.value.text.slice(0, 2000),
      });
    } else {
      res.failed++;
      res.errors.push(`${p.field}: ${r.error ?? 'no answer'}`);
      if (++failedInARow >= breakAfter && !o.signal?.aborted)
        res.tripped ??= `${failedInARow} pairs in a row got no answer (last: ${r.error ?? 'no answer'})`;
    }
    o.onProgress?.(++done, unique.length);
  };
  await mapConcurrent(todo, ask, {
    concurrency: o.concurrency ?? 4,
    signal: o.signal,
    stop: () => res.tripped !== undefined,
  });
  return res;
}
