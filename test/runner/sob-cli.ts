/** Spawning `sob` as a user runs it, and the small benchmark files the runner tests share. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBenchmark } from '../../sources/build.ts';

export const ROOT = join(import.meta.dirname, '../..');

export interface Exit {
  code: number | null;
  signal: string | null;
  stderr: string;
  stdout: string;
}

export function sob(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): { child: ChildProcess; done: Promise<Exit> } {
  const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], {
    cwd: opts.cwd,
    env: { ...process.env, OPENAI_BASE_URL: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d) => (stderr += d));
  child.stdout?.on('data', (d) => (stdout += d));
  const done = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr, stdout })),
  );
  return { child, done };
}

export function readLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

// biome-ignore lint/suspicious/noExplicitAny: rows are JSON read back from files, checked field by field
export function rows(file: string): any[] {
  return readLines(file).map((l) => JSON.parse(l));
}

/** A benchmark of `ids`, each record's context tagged `[rid:<id>]` for the protocol server. */
export function writeBenchmark(
  file: string,
  ids: string[],
  schema: Record<string, unknown> = {
    type: 'object',
    properties: { id: { type: 'string' } },
    required: ['id'],
  },
): string {
  writeFileSync(
    file,
    ids
      .map(
        (id) =>
          `${JSON.stringify({
            metadata: { record_id: id, schema_complexity: 'easy', source: 'text' },
            input: { context: `Record [rid:${id}] holds ${id}.`, question: 'Which id?', json_schema: schema },
            output: { ground_truth: { id } },
          })}\n`,
      )
      .join(''),
  );
  return file;
}

export const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 10 ms until it holds (or `ms` pass: then throws). */
export async function until(cond: () => boolean, ms = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await wait(10);
  }
}

/** The bundled example text passages built into benchmark records (they pass every check). */
export async function exampleRecords(file: string): Promise<string[]> {
  const ex = join(ROOT, 'sources/examples/text');
  await buildBenchmark({
    kind: 'hotpotqa',
    input: join(ex, 'passages.json'),
    annotations: join(ex, 'annotations.jsonl'),
    out: file,
    log: () => {},
  });
  return readLines(file).map((l) => JSON.parse(l).metadata.record_id as string);
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
