/** Spawning `sob` as a user runs it, and the small benchmark files the runner tests share (test/kit/). */
import type { ChildProcess } from 'node:child_process';
import { type Exit, sobIn, sobSpawn } from '../kit/cli.ts';

export { type Exit, ROOT } from '../kit/cli.ts';
export { exampleRecords, readLines, rows, until, wait, writeBenchmark } from '../kit/fixtures.ts';

export function sob(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): { child: ChildProcess; done: Promise<Exit> } {
  return sobSpawn(args, { cwd: opts.cwd, env: { OPENAI_BASE_URL: '', ...opts.env } });
}

/**
 * `sob <args>` in this process (`sobIn`), in the same shape as `sob`: for the tests that read what
 * a command prints, writes and exits with, where a child process shows nothing more.
 */
export function sobHere(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): { done: Promise<Exit> } {
  return {
    done: sobIn(args, { cwd: opts.cwd, env: { OPENAI_BASE_URL: '', ...opts.env } }).then((r) => ({
      ...r,
      signal: null,
    })),
  };
}

/**
 * `sob run` of `model` over `bench` into `dir`, against a local protocol server (its OpenAI or
 * Gemini base URL, by the model's provider, unless `baseUrl` is given), retries 5 ms apart.
 */
export function sobRun(
  server: { openaiBaseUrl: string; geminiBaseUrl: string },
  model: string,
  bench: string,
  dir: string,
  opts: { cwd: string; env?: Record<string, string | undefined>; extra?: string[]; baseUrl?: string },
) {
  const url = opts.baseUrl ?? (model.startsWith('gemini:') ? server.geminiBaseUrl : server.openaiBaseUrl);
  return sob(
    [
      'run',
      '--model',
      model,
      '--base-url',
      url,
      '--benchmark',
      bench,
      '--run-dir',
      dir,
      '--retry-base-ms',
      '5',
      ...(opts.extra ?? []),
    ],
    opts,
  );
}
