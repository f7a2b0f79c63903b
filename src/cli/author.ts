/** `sob author`: an LLM drafts question, schema and ground truth per source item, for a person to edit. */
import type { Command } from 'commander';
import { LOADERS } from '../../sources/registry.ts';
import { authorAnnotations } from '../app/author.ts';
import { choiceOption, intOption } from './common.ts';

/** The kinds whose items take annotations (what author drafts), and the plain items format. */
const INPUT_KINDS: readonly string[] = [...LOADERS.filter((l) => l.annotations).map((l) => l.kind), 'items'];

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
        await authorAnnotations({ ...flags, input });
      },
    );
}
