/** Shared by the scoring tests: run the real `sob` command, build response lines, read outputs. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');
export const SOB = join(ROOT, 'bin/sob.js');

export interface SobResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function sob(args: string[], cwd: string, timeoutMs = 120_000): SobResult {
  const r = spawnSync(process.execPath, [SOB, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    cwd,
    env: { ...process.env, OPENAI_API_KEY: '', GEMINI_API_KEY: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
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
