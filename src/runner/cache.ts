/**
 * The optional response cache (--cache): one file per answer, keyed by everything that changes
 * what the model is asked or who answers it (model, the provider's settings and endpoints,
 * messages, schema when constrained, temperature, token limit) and nothing that does not
 * (concurrency, timeouts, retries). Two servers serving a model of the same name never share
 * answers. Only answers are stored, never errors. The key is versioned, so a change of its
 * recipe starts afresh.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainDirs, writeFileAtomic } from '../core/files.ts';
import type { ProviderRequest, ProviderResponse } from '../providers/types.ts';
import { sha256 } from './prompt.ts';

const VERSION = 2;

/**
 * `settings` is the provider's describe(): its endpoints (as shown, secrets redacted) and
 * generation settings.
 */
export function cacheKey(model: string, settings: Record<string, unknown>, req: ProviderRequest): string {
  return sha256(
    JSON.stringify({
      v: VERSION,
      model,
      settings,
      system: req.system,
      user: req.user,
      constrained: req.constrained,
      schema: req.constrained ? req.schema : null,
      temperature: req.temperature,
      max_tokens: req.maxTokens,
      // Documents by their hash (absent for text-only requests, so their keys stay as they were).
      ...(req.attachments?.length ? { images: req.attachments.map((i) => i.sha256) } : {}),
    }),
  );
}

export class ResponseCache {
  hits = 0;
  misses = 0;
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  get(key: string): ProviderResponse | undefined {
    const f = this.file(key);
    if (!existsSync(f)) {
      this.misses++;
      return undefined;
    }
    try {
      const v = JSON.parse(readFileSync(f, 'utf8')) as ProviderResponse;
      if (typeof v.text !== 'string' || typeof v.finishReason !== 'string') throw new Error('bad entry');
      this.hits++;
      return v;
    } catch {
      this.misses++;
      return undefined;
    }
  }

  set(key: string, res: ProviderResponse): void {
    const f = this.file(key);
    // Made without following links: a symlinked shard is refused, not written through.
    plainDirs(this.dir, [key.slice(0, 2)], 'response cache folder');
    const { endpoint: _endpoint, ttftMs: _ttft, tpotMs: _tpot, ...stored } = res;
    writeFileAtomic(f, JSON.stringify(stored));
  }
}
