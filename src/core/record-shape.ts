/**
 * The strict shapes of the records this project writes (benchmarks, responses), checked by zod
 * at the edge. Apart from record.ts so that the scorer, which reads records leniently, never
 * loads zod.
 */
import { z } from 'zod';
import { Attachments } from './attachments.ts';
import { type PyValue, toPlain } from './pyjson.ts';
import { COMPLEXITIES, SOURCES } from './record.ts';

const Metadata = z
  .object({
    record_id: z.string().min(1),
    model_id: z.string().optional(),
    schema_complexity: z.enum(COMPLEXITIES).optional(),
    difficulty: z.string().optional(),
    source: z.enum(SOURCES).optional(),
  })
  .passthrough();

export const BenchmarkRecord = z.object({
  metadata: Metadata,
  input: z.object({
    context: z.string(),
    question: z.string(),
    json_schema: z.record(z.unknown()),
    /** The record's documents (docs/records.md "Attachments"). */
    attachments: Attachments.optional(),
  }),
  output: z.object({ ground_truth: z.unknown() }).passthrough(),
});
export type BenchmarkRecord = z.infer<typeof BenchmarkRecord>;

export const ResponseRecord = BenchmarkRecord.extend({
  output: z
    .object({
      ground_truth: z.unknown(),
      candidate_response: z.unknown(),
      raw_response: z.string().optional(),
    })
    .passthrough(),
  eval_info: z.record(z.unknown()).optional(),
});
export type ResponseRecord = z.infer<typeof ResponseRecord>;

/** Validates a lossless line against a strict shape; the message names the first bad field. */
export function parseStrict<T>(
  schema: z.ZodType<T>,
  line: PyValue,
): { ok: true; value: T } | { ok: false; error: string } {
  const r = schema.safeParse(toPlain(line));
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  return { ok: false, error: `${issue.path.join('.') || 'record'}: ${issue.message}` };
}
