/** Shared by the scoring tests: run the real `sob` command, build response lines, read outputs. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, type SobResult, sobIn, sobSync } from '../kit/cli.ts';

export { ROOT } from '../kit/cli.ts';
export const SOB = BIN;
export type { SobResult };

/** `sob <args>` in a child process in `cwd`, without provider keys. */
export function sob(args: string[], cwd: string, timeoutMs = 120_000): SobResult {
  return sobSync(args, { cwd, timeoutMs, env: { OPENAI_API_KEY: '', GEMINI_API_KEY: '' } });
}

/** `sob <args>` in this process in `cwd`, without provider keys (test/kit/cli.ts). */
export function sobInProcess(args: string[], cwd: string): Promise<SobResult> {
  return sobIn(args, { cwd, env: { OPENAI_API_KEY: '', GEMINI_API_KEY: '' } });
}

export const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, n: { type: 'integer' } },
  required: ['name'],
};

/** One response line; `gtText`/`candText` put raw JSON text in place (lexemes such as -0.0). */
export function responseLine(
  id: string,
  candidate: unknown,
  opts: {
    schema?: unknown;
    gt?: unknown;
    metadata?: Record<string, unknown>;
    evalInfo?: Record<string, unknown>;
    gtText?: string;
    candText?: string;
  } = {},
): string {
  const line = JSON.stringify({
    metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy', ...opts.metadata },
    input: { context: 'name x, n 1', question: 'q', json_schema: opts.schema ?? SCHEMA },
    output: {
      ground_truth: opts.gtText ? '@GT@' : (opts.gt ?? { name: 'x', n: 1 }),
      candidate_response: opts.candText ? '@CAND@' : candidate,
    },
    ...(opts.evalInfo ? { eval_info: opts.evalInfo } : {}),
  });
  return line.replace('"@GT@"', opts.gtText ?? '"@GT@"').replace('"@CAND@"', opts.candText ?? '"@CAND@"');
}

export interface Summary {
  num_records: number;
  profile?: string;
  data_quality: Record<string, number>;
  benchmark?: Record<string, unknown>;
  summary: {
    overall: { n: number; metrics: Record<string, { mean: number }> };
    overall_weighted: { n: number; metrics: Record<string, { mean: number }> };
  };
}

export function readOut(out: string, modality: string, model: string) {
  const dir = join(out, modality, model);
  const text = readFileSync(join(dir, 'eval_records.jsonl'), 'utf8').trim();
  const rows = text ? text.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
  const summary = JSON.parse(readFileSync(join(dir, 'eval_summary.json'), 'utf8')) as Summary;
  return { rows, summary };
}
