/** `sob author`: an LLM drafts question, schema and ground truth per source item, for a person to edit. */
import type { Command } from 'commander';
import { LOADERS } from '../../sources/registry.ts';
import { UserError } from '../core/errors.ts';
import { choiceOption, intOption, log } from './common.ts';

/** The kinds whose items take annotations (what author drafts), and the plain items format. */
const INPUT_KINDS: readonly string[] = [...LOADERS.filter((l) => l.annotations).map((l) => l.kind), 'items'];

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

export function registerAuthor(program: Command): void {
  program
    .command('author')
    .description(
      'draft a question, a JSON schema and a ground truth for each source item (annotations for sob build)',
    )
    .argument(
      '<input>',
      'what sob build reads (a HotpotQA file, an AMI corpus folder or utterance CSV/JSONL, a PDF or a folder of PDFs), or source items: JSONL or a JSON array of {id, context, source?} or benchmark records',
    )
    .option(
      '--kind <kind>',
      `how to read <input>: ${INPUT_KINDS.join(' | ')} (default: told from its shape)`,
      choiceOption(INPUT_KINDS),
    )
    .requiredOption('--model <provider:model>', 'the drafting model')
    .requiredOption(
      '--out <drafts.jsonl>',
      'drafts in the annotations format; invalid ones go to <out>.rejected.jsonl',
    )
    .option(
      '--base-url <url>',
      'OpenAI-compatible endpoint (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--max-attempts <n>', 'attempts at a valid draft', intOption('--max-attempts', 1), 3)
    .option('--max-retries <n>', 'transport retries per attempt', intOption('--max-retries'), 3)
    .option('--timeout-ms <n>', 'time limit per request', intOption('--timeout-ms', 1), 120_000)
    .option('--retry-base-ms <n>', 'first backoff pause', intOption('--retry-base-ms', 1), 1000)
    .addHelpText(
      'after',
      `
Example (draft, edit, build, judge), with the same input file for author and build:
  sob author passages.json --model openai:gpt-4.1 --out drafts.jsonl
  (read and edit drafts.jsonl: the annotations format of sob build --help)
  sob build hotpotqa passages.json --annotations drafts.jsonl --out bench/records.jsonl
  sob judge bench/records.jsonl --judge openai:gpt-4.1 --out bench/judged
Other inputs: sob author ami_corpus/ ... (one draft per meeting), sob author pdfs/ ... (one draft
per page and per document, ids as sob build pdf gives them), sob author items.jsonl ...

Re-running skips the items already drafted.`,
    )
    .action(
      async (
        input: string,
        flags: {
          kind?: string;
          model: string;
          out: string;
          baseUrl: string[];
          maxAttempts: number;
          maxRetries: number;
          timeoutMs: number;
          retryBaseMs: number;
        },
      ) => {
        const { authorDrafts } = await import('../../judges/author.ts');
        const items = await authorItems(input, flags.kind);
        const { countProperties } = await import('../../sources/checks.ts');
        const { backoffDelay, DEFAULT_BACKOFF, sleep } = await import('../core/retry.ts');
        const { createProvider } = await import('../providers/index.ts');
        const model = await createProvider(flags.model, { baseUrls: flags.baseUrl });
        try {
          if (items.length === 0) throw new UserError(`${input}: no items to draft (an empty file?)`);
          const r = await authorDrafts({
            items,
            model,
            out: flags.out,
            countProperties: (s) => countProperties(s as never),
            backoff: {
              delay: (f, ra) => backoffDelay(f, { ...DEFAULT_BACKOFF, baseMs: flags.retryBaseMs }, ra),
              sleep,
            },
            maxAttempts: flags.maxAttempts,
            maxRetries: flags.maxRetries,
            timeoutMs: flags.timeoutMs,
            log,
          });
          process.stdout.write(
            `${r.written} drafts written, ${r.rejected} rejected, ${r.skipped} already drafted -> ${flags.out}\n`,
          );
          if (r.written === 0 && r.skipped === 0 && r.rejected > 0)
            throw new UserError(
              `every item failed: ${r.rejected} rejected (see ${flags.out.replace(/\.jsonl$/i, '')}.rejected.jsonl)`,
            );
          if (r.rejected > 0) process.exitCode = 1;
        } finally {
          await model.close?.();
        }
      },
    );
}
