/** `sob author`: an LLM drafts question, schema and ground truth per source item, for a person to edit. */
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { intOption, log } from './common.ts';

export function registerAuthor(program: Command): void {
  program
    .command('author')
    .description(
      'draft a question, a JSON schema and a ground truth for each source item (annotations for sob build)',
    )
    .argument('<items>', 'source items: JSONL or a JSON array of {id, context, source?}')
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
Example (draft, edit, build, judge):
  sob author items.jsonl --model openai:gpt-4.1 --out drafts.jsonl
  (read and edit drafts.jsonl)
  sob build hotpotqa passages.json --annotations drafts.jsonl --out bench/records.jsonl
  sob judge bench/records.jsonl --judge openai:gpt-4.1 --out bench/judged

Re-running skips the items already drafted.`,
    )
    .action(
      async (
        items: string,
        flags: {
          model: string;
          out: string;
          baseUrl: string[];
          maxAttempts: number;
          maxRetries: number;
          timeoutMs: number;
          retryBaseMs: number;
        },
      ) => {
        const { authorDrafts, loadItems } = await import('../../judges/author.ts');
        const { countProperties } = await import('../../sources/checks.ts');
        const { backoffDelay, DEFAULT_BACKOFF, sleep } = await import('../runner/retry.ts');
        const { createProvider } = await import('../providers/index.ts');
        const model = await createProvider(flags.model, { baseUrls: flags.baseUrl });
        try {
          const loaded = loadItems(items);
          if (loaded.length === 0) throw new UserError(`${items}: no items to draft (an empty file?)`);
          const r = await authorDrafts({
            items: loaded,
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
