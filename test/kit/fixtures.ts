/** Small inputs the tests share: benchmark files, JSONL read back, waiting on a condition. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBenchmark } from '../../sources/build.ts';
import { ROOT } from './cli.ts';

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
