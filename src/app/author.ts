/**
 * `sob author` as one use case: an LLM drafts question, schema and ground truth per source item,
 * for a person to edit. The command (`src/cli/author.ts`) reads the flags into `AuthorSettings`
 * and calls `authorAnnotations`.
 */
import { UserError } from '../core/errors.ts';
import { log } from './io.ts';

/** What `sob author` was asked: the input, its kind, the drafting model and how it is asked. */
export interface AuthorSettings {
  /** What sob build reads, or source items. */
  input: string;
  /** The input's kind; default: detected. */
  kind?: string;
  /** The drafting model, `provider:model`. */
  model: string;
  /** The drafts file. */
  out: string;
  baseUrl: string[];
  maxAttempts: number;
  maxRetries: number;
  timeoutMs: number;
  retryBaseMs: number;
}

/** The items to draft for: a raw source read as `sob build` reads it, or an items file. */
async function authorItems(
  input: string,
  kind: string | undefined,
): Promise<{ id: string; context: string; source?: string }[]> {
  const { detectItemKind } = await import('../../sources/registry.ts');
  const { loadSourceItems } = await import('../../sources/build.ts');
  const k = kind ?? detectItemKind(input) ?? 'items';
  if (k === 'items') {
    const { loadItems } = await import('../../judges/author.ts');
    return loadItems(input);
  }
  const loaded = await loadSourceItems(k, input, { log });
  for (const p of loaded.problems) log(`skipped ${p.origin}: ${p.reasons.join('; ')}`);
  if (loaded.items.length === 0) throw new UserError(`${input}: no ${k} source items to draft for`);
  // A one-page PDF's document item holds the same text as its page: drafted once, as the page.
  const items = loaded.items.filter((it) => it.metadata.pages !== 1);
  log(`${items.length} ${k} source items from ${input}`);
  return items.map((it) => ({ id: it.id, context: it.context, source: loaded.source }));
}

/**
 * Runs `sob author`: the counts on stdout, progress on stderr; a rejected draft sets exit code 1,
 * every item failing is an error.
 */
export async function authorAnnotations(settings: AuthorSettings): Promise<void> {
  const { input } = settings;
  const { authorDrafts } = await import('../../judges/author.ts');
  const items = await authorItems(input, settings.kind);
  const { countProperties } = await import('../../sources/checks.ts');
  const { backoffDelay, DEFAULT_BACKOFF, sleep } = await import('../core/retry.ts');
  const { createProvider } = await import('../providers/index.ts');
  const model = await createProvider(settings.model, { baseUrls: settings.baseUrl });
  try {
    if (items.length === 0) throw new UserError(`${input}: no items to draft (an empty file?)`);
    const r = await authorDrafts({
      items,
      model,
      out: settings.out,
      countProperties: (s) => countProperties(s as never),
      backoff: {
        delay: (f, ra) => backoffDelay(f, { ...DEFAULT_BACKOFF, baseMs: settings.retryBaseMs }, ra),
        sleep,
      },
      maxAttempts: settings.maxAttempts,
      maxRetries: settings.maxRetries,
      timeoutMs: settings.timeoutMs,
      log,
    });
    process.stdout.write(
      `${r.written} drafts written, ${r.rejected} rejected, ${r.skipped} already drafted -> ${settings.out}\n`,
    );
    if (r.written === 0 && r.skipped === 0 && r.rejected > 0)
      throw new UserError(
        `every item failed: ${r.rejected} rejected (see ${settings.out.replace(/\.jsonl$/i, '')}.rejected.jsonl)`,
      );
    if (r.rejected > 0) process.exitCode = 1;
  } finally {
    await model.close?.();
  }
}
