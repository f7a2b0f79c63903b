/**
 * The LLM quality judge: scores a benchmark record 0-100 on accuracy (the ground truth answers
 * the question correctly), grounding (every value comes from the context) and schema quality
 * (the schema captures the reasoning structure), with a rationale; for meetings it also says
 * whether the question needs several turns of the conversation.
 *
 * The judge answers in our JSON schema (handed to structured output where the provider has
 * it); the answer is validated with zod and never guessed at: one that does not parse is asked
 * again, and after the last attempt it is a `judge_error`, not a score.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { BenchmarkRecord } from '../src/core/record-shape.ts';
import { type Parsed, parseWith } from '../src/providers/ask.ts';
import { recordText } from './record-text.ts';

export const QUALITY_SCHEMA = {
  type: 'object',
  properties: {
    accuracy: { type: 'integer', minimum: 0, maximum: 100 },
    grounding: { type: 'integer', minimum: 0, maximum: 100 },
    schema_quality: { type: 'integer', minimum: 0, maximum: 100 },
    needs_multiple_turns: { type: ['boolean', 'null'] },
    rationale: { type: 'string' },
  },
  // Every key required and no others: OpenAI's strict structured output refuses anything else
  // (an optional key is written as nullable instead).
  required: ['accuracy', 'grounding', 'schema_quality', 'needs_multiple_turns', 'rationale'],
  additionalProperties: false,
} as const;

const Score = z.number().int().min(0).max(100);
export const QualityAnswer = z.object({
  accuracy: Score,
  grounding: Score,
  schema_quality: Score,
  needs_multiple_turns: z.boolean().nullable().optional(),
  rationale: z.string().min(1),
});
export type QualityAnswer = z.infer<typeof QualityAnswer>;

const SYSTEM = `You review records of a structured-extraction benchmark. Each record has a context, a
question, a JSON schema the answer must follow, and a ground-truth answer. Judge the RECORD, not a
model. Score each from 0 to 100:
- accuracy: the ground truth answers the question correctly and completely from the context;
- grounding: every value in the ground truth is stated in (or directly derivable from) the context;
- schema_quality: the schema captures the question's structure (entities, relations, attributes, the
  final answer) with sensible types and required keys, no more and no less.
For a meeting transcript (source: audio), needs_multiple_turns must be true or false: true when
answering needs information from several turns of the conversation, false when one utterance is
enough. For other sources it is null.
Reply with one JSON object only: {"accuracy", "grounding", "schema_quality", "needs_multiple_turns", "rationale"}.`;

export interface JudgePrompt {
  system: string;
  user: string;
  /** sha256 of the prompt template (what the judgment depends on besides the record). */
  templateSha: string;
}

export const QUALITY_TEMPLATE_SHA = createHash('sha256').update(SYSTEM).digest('hex');

/** The judge's instructions as shipped (`sob judge --judge-prompt <file>` replaces them). */
export const QUALITY_SYSTEM = SYSTEM;

/**
 * What the judge is sent about a record: the instructions (`system`: ours, or the text of
 * `--judge-prompt`) and the record (context, question, schema, ground truth) as the user turn.
 */
export function qualityPrompt(r: BenchmarkRecord, system?: string): JudgePrompt {
  const user = recordText(r);
  if (system === undefined) return { system: SYSTEM, user, templateSha: QUALITY_TEMPLATE_SHA };
  return { system, user, templateSha: createHash('sha256').update(system).digest('hex') };
}

/**
 * The judge's text as a validated answer, or why it is not one. For a meeting (audio) record an
 * answer without a true/false `needs_multiple_turns` is incomplete, and asked again.
 */
export function parseQuality(text: string, source?: string): Parsed<QualityAnswer> {
  const p = parseWith(QualityAnswer, text);
  if (p.ok && source === 'audio' && typeof p.value.needs_multiple_turns !== 'boolean')
    return { ok: false, error: 'needs_multiple_turns: a meeting record needs true or false' };
  return p;
}
