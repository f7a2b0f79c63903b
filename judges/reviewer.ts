/**
 * The cross-check reviewer: an LLM lists what is wrong with a record's ground truth: missing
 * fields, type mismatches, values not grounded in the context, each with its path and a short
 * reason. Its answer follows our JSON schema and is validated with zod.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { BenchmarkRecord } from '../src/core/record-shape.ts';
import { type Parsed, parseWith } from '../src/providers/ask.ts';
import { recordText } from './record-text.ts';

export const REVIEW_SCHEMA = {
  type: 'object',
  properties: {
    issues: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          kind: { type: 'string', enum: ['missing_field', 'type_mismatch', 'ungrounded'] },
          path: { type: 'string' },
          reason: { type: 'string' },
        },
        required: ['kind', 'path', 'reason'],
        additionalProperties: false,
      },
    },
  },
  required: ['issues'],
  additionalProperties: false,
} as const;

export const ReviewAnswer = z.object({
  issues: z.array(
    z.object({
      kind: z.enum(['missing_field', 'type_mismatch', 'ungrounded']),
      path: z.string(),
      reason: z.string(),
    }),
  ),
});
export type ReviewAnswer = z.infer<typeof ReviewAnswer>;

const SYSTEM = `You cross-check one record of a structured-extraction benchmark: a context, a question, a JSON
schema and a ground-truth answer. List every problem with the ground truth:
- missing_field: the context answers a field of the schema that the ground truth leaves out or null;
- type_mismatch: a value whose type or format does not fit what the schema and question ask;
- ungrounded: a value that the context does not state or directly imply.
Give each problem's path in the ground truth (dots for keys, [i] for list items) and a short reason.
Reply with one JSON object only: {"issues": [{"kind", "path", "reason"}]} (an empty list when all is well).`;

export const REVIEW_TEMPLATE_SHA = createHash('sha256').update(SYSTEM).digest('hex');

export function reviewPrompt(r: BenchmarkRecord): { system: string; user: string; templateSha: string } {
  const user = recordText(r);
  return { system: SYSTEM, user, templateSha: REVIEW_TEMPLATE_SHA };
}

export function parseReview(text: string): Parsed<ReviewAnswer> {
  return parseWith(ReviewAnswer, text);
}
