/**
 * What the compliance-track tests share: response lines written as `sob run` writes them, the
 * planted invalid answer with every violation it must produce, and reading rows back.
 */
import { readFileSync } from 'node:fs';

export interface Line {
  id: string;
  source?: string;
  category?: string;
  track?: string;
  schema: unknown;
  /** The raw text (output.raw_response); null for a refused schema. */
  raw: string | null;
  groundTruth?: unknown;
  evalInfo?: Record<string, unknown>;
  model?: string;
}

/** One responses.jsonl line: the candidate is the parsed answer, or the raw text when it did not parse. */
export function responseLine(l: Line): string {
  let candidate: unknown = null;
  if (l.raw !== null) {
    try {
      candidate = JSON.parse(l.raw);
    } catch {
      candidate = l.raw;
    }
  }
  const metadata: Record<string, unknown> = {
    record_id: l.id,
    source: l.source ?? 'schema',
    model_id: l.model ?? 'm',
    schema_complexity: 'easy',
  };
  if (l.category !== undefined) metadata.source_category = l.category;
  if (l.track !== undefined) metadata.track = l.track;
  return JSON.stringify({
    metadata,
    input: {
      context: '',
      question: 'You need to generate a JSON object that matches the schema below.',
      json_schema: l.schema,
    },
    output: { ground_truth: l.groundTruth ?? null, candidate_response: candidate, raw_response: l.raw },
    eval_info: l.evalInfo ?? {},
  });
}

/** A schema whose planted answer breaks seven constraints, each at its own path. */
export const PLANTED_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    age: { type: 'integer', minimum: 0 },
    email: { type: 'string', format: 'email' },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
    id: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
  required: ['name', 'age', 'id'],
  additionalProperties: false,
};
export const PLANTED_ANSWER =
  '{"name": "A", "age": -3, "email": "not an email", "tags": ["x", 1, "z"], "extra": true}';
/** Every violation of the planted answer: [instance path, schema path, keyword], sorted. */
export const PLANTED_VIOLATIONS = [
  ['/age', '#/properties/age/minimum', 'minimum'],
  ['/email', '#/properties/email/format', 'format'],
  ['/extra', '#/additionalProperties', 'additionalProperties'],
  ['/id', '#/required', 'required'],
  ['/name', '#/properties/name/minLength', 'minLength'],
  ['/tags', '#/properties/tags/maxItems', 'maxItems'],
  ['/tags/1', '#/properties/tags/items/type', 'type'],
];

/** The violations of a row's compliance block as sorted [instance path, schema path, keyword]. */
export function violationTriples(block: {
  violations: { instance_path: string; schema_path: string; keyword: string }[];
}) {
  return block.violations.map((v) => [v.instance_path, v.schema_path, v.keyword]).sort();
}

// biome-ignore lint/suspicious/noExplicitAny: rows are JSON read back from files, checked field by field
export function jsonl(file: string): any[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

// biome-ignore lint/suspicious/noExplicitAny: a summary read back from its file
export function json(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** numpy's default quantile (linear between order statistics), computed by hand for the tests. */
export function q(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  return s[Math.floor(h)] + (s[Math.ceil(h)] - s[Math.floor(h)]) * (h - Math.floor(h));
}
