/**
 * Annotations: per source item, the question, JSON schema and ground truth of each record
 * (`sob build --help` and docs/benchmarks.md describe the format), and their join with a loader's items
 * into candidate records.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { assertReadableFile } from '../src/core/jsonl.ts';
import { type PyValue, parsePyJson } from '../src/core/pyjson.ts';
import { COMPLEXITIES, type Modality } from '../src/core/record.ts';
import type { Candidate, Problem, SourceItem } from './types.ts';

const ID_KEYS = ['source_id', 'id', '_id', 'meeting_id', 'source'] as const;

const Annotation = z
  .object({
    source_id: z.string().min(1),
    record_id: z.string().min(1).optional(),
    question: z.string().min(1),
    json_schema: z.union([z.record(z.unknown()), z.string()]),
    ground_truth: z.unknown(),
    schema_complexity: z.enum(COMPLEXITIES).optional(),
    difficulty: z.string().optional(),
    metadata: z.record(z.unknown()).optional(),
  })
  .passthrough();
export type Annotation = z.infer<typeof Annotation>;

export interface LoadedAnnotation {
  origin: string;
  annotation: Annotation;
  /** The ground truth as written (`17.0` stays a float), for writing the record. */
  groundTruth?: PyValue;
}

/** An annotation's `ground_truth`, read losslessly from its source text. */
function losslessGroundTruth(v: PyValue | undefined): PyValue | undefined {
  return v instanceof Map ? v.get('ground_truth') : undefined;
}

function withSourceId(v: unknown, key?: string): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = { ...(v as Record<string, unknown>) };
  if (o.source_id === undefined) {
    const k = ID_KEYS.find((name) => typeof o[name] === 'string');
    if (k) o.source_id = o[k];
    else if (key !== undefined) o.source_id = key;
  }
  return o;
}

/**
 * An annotations file: JSONL (one annotation a line), a JSON array of annotations, or a JSON
 * object keyed by source id whose values are an annotation or a list of them. An annotation
 * names its source with `source_id` (or `id`, `_id`, `meeting_id`).
 */
export function loadAnnotations(file: string): { annotations: LoadedAnnotation[]; problems: Problem[] } {
  assertReadableFile(file);
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const raw: { origin: string; value: unknown; error?: string; groundTruth?: PyValue }[] = [];
  if (file.toLowerCase().endsWith('.jsonl')) {
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        raw.push({
          origin: `${file}:${i + 1}`,
          value: withSourceId(JSON.parse(line)),
          groundTruth: losslessGroundTruth(parsePyJson(line)),
        });
      } catch (e) {
        raw.push({
          origin: `${file}:${i + 1}`,
          value: undefined,
          error: `not valid JSON: ${errorMessage(e)}`,
        });
      }
    });
  } else {
    let v: unknown;
    let lossless: PyValue;
    try {
      v = JSON.parse(text);
      lossless = parsePyJson(text);
    } catch (e) {
      throw new UserError(`${file}: not valid JSON: ${errorMessage(e)}`);
    }
    if (Array.isArray(v))
      for (const [i, x] of v.entries()) {
        const gt = Array.isArray(lossless) ? losslessGroundTruth(lossless[i]) : undefined;
        raw.push({ origin: `${file}: item ${i}`, value: withSourceId(x), groundTruth: gt });
      }
    else if (v !== null && typeof v === 'object' && 'question' in v)
      raw.push({ origin: file, value: withSourceId(v) });
    else if (v !== null && typeof v === 'object') {
      for (const [key, x] of Object.entries(v)) {
        const list = Array.isArray(x) ? x : [x];
        for (const [i, y] of list.entries()) {
          raw.push({
            origin: `${file}: ${key}${list.length > 1 ? `[${i}]` : ''}`,
            value: withSourceId(y, key),
          });
        }
      }
    } else throw new UserError(`${file}: expected annotations as JSON (array or object) or JSONL`);
  }
  const annotations: LoadedAnnotation[] = [];
  const problems: Problem[] = [];
  for (const r of raw) {
    if (r.error) {
      problems.push({ origin: r.origin, reasons: [r.error] });
      continue;
    }
    const parsed = Annotation.safeParse(r.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        origin: r.origin,
        reasons: [`not an annotation: ${issue.path.join('.') || 'annotation'}: ${issue.message}`],
      });
      continue;
    }
    annotations.push({ origin: r.origin, annotation: parsed.data, groundTruth: r.groundTruth });
  }
  return { annotations, problems };
}

/** Source items joined with their annotations into candidate records (not yet checked). */
export function joinAnnotations(
  kind: string,
  source: Modality,
  items: SourceItem[],
  annotations: LoadedAnnotation[],
  rejectedItems: ReadonlySet<string> = new Set(),
): { candidates: Candidate[]; problems: Problem[] } {
  const byId = new Map(items.map((it) => [it.id, it]));
  const perSource = new Map<string, number>();
  const candidates: Candidate[] = [];
  const problems: Problem[] = [];
  for (const { origin, annotation: a, groundTruth } of annotations) {
    const k = (perSource.get(a.source_id) ?? 0) + 1;
    perSource.set(a.source_id, k);
    const recordId = a.record_id ?? `${kind}-${a.source_id}-${k}`;
    const item = byId.get(a.source_id);
    if (!item) {
      problems.push({
        origin,
        record_id: recordId,
        reasons: [
          rejectedItems.has(a.source_id)
            ? `${kind} source item "${a.source_id}" was rejected (its reason is in rejected.jsonl)`
            : `no ${kind} source item with id "${a.source_id}" in the input`,
        ],
      });
      continue;
    }
    let schema: unknown = a.json_schema;
    if (typeof schema === 'string') {
      try {
        schema = JSON.parse(schema);
      } catch (e) {
        problems.push({
          origin,
          record_id: recordId,
          reasons: [`json_schema is a string that is not valid JSON: ${errorMessage(e)}`],
        });
        continue;
      }
    }
    const metadata: Record<string, unknown> = {
      record_id: recordId,
      source,
      ...(a.schema_complexity ? { schema_complexity: a.schema_complexity } : {}),
      ...(a.difficulty ? { difficulty: a.difficulty } : {}),
      ...item.metadata,
      ...(a.metadata ?? {}),
    };
    candidates.push({
      origin,
      record: {
        metadata,
        input: { context: item.context, question: a.question, json_schema: schema },
        output: { ground_truth: a.ground_truth },
      },
      lossless: groundTruth === undefined ? undefined : { ground_truth: groundTruth },
      ...(item.attach ? { attach: item.attach } : {}),
    });
  }
  return { candidates, problems };
}
