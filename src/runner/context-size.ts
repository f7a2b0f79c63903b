/**
 * A context above a stated size is said before anything is asked (`--context-warn-chars`, default
 * 200,000 characters): per record, its characters and an estimate of its tokens (4 characters a
 * token), so a 5 MB context is never sent without a word. Only said: the record is still asked.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Source } from '../core/record.ts';

export const DEFAULT_CONTEXT_WARN_CHARS = 200_000;
/** Records named one by one; past these, one line counts the rest. */
const NAMED = 20;

const int = (n: number) => n.toLocaleString('en-US');

/** One warning line per record of the selection whose context is over `limit` characters. */
export async function warnLargeContexts(
  file: string,
  sel: { source?: Source; limit?: number; contextWarnChars?: number },
  log: (line: string) => void,
): Promise<number> {
  const limit = sel.contextWarnChars ?? DEFAULT_CONTEXT_WARN_CHARS;
  if (limit <= 0) return 0;
  let line = 0;
  let seen = 0;
  let over = 0;
  const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const text of rl) {
    line++;
    if (text.trim() === '') continue;
    // Cheap first: a line shorter than the limit cannot hold a longer context.
    let rec: { metadata?: { record_id?: unknown; source?: unknown }; input?: { context?: unknown } };
    try {
      rec = JSON.parse(text);
    } catch {
      continue; // the record check names bad lines
    }
    const source = rec.metadata?.source;
    if (sel.source && source !== undefined && source !== sel.source) continue;
    if (sel.limit !== undefined && seen >= sel.limit) break;
    seen++;
    if (text.length <= limit) continue;
    const ctx = rec.input?.context;
    if (typeof ctx !== 'string' || ctx.length <= limit) continue;
    over++;
    if (over <= NAMED)
      log(
        `${file}:${line}: record ${JSON.stringify(rec.metadata?.record_id ?? null)}: context of ${int(ctx.length)} characters (about ${int(Math.ceil(ctx.length / 4))} tokens), above --context-warn-chars ${int(limit)}: sent whole; check the model's context window and cost (--context-warn-chars 0: no warning)`,
      );
  }
  if (over > NAMED)
    log(`${file}: ${over - NAMED} more records with a context above ${int(limit)} characters`);
  return over;
}
