import type { BenchmarkRecord } from '../src/core/record-shape.ts';

/** What a judge or reviewer reads of a record: the id tag, context, question, schema, ground truth. */
export function recordText(r: BenchmarkRecord): string {
  return [
    `Record [rid:${r.metadata.record_id}] (source: ${r.metadata.source ?? 'unknown'})`,
    '',
    'Context:',
    r.input.context,
    '',
    `Question: ${r.input.question}`,
    '',
    'JSON schema:',
    JSON.stringify(r.input.json_schema, null, 2),
    '',
    'Ground truth:',
    JSON.stringify(r.output.ground_truth, null, 2),
  ].join('\n');
}
