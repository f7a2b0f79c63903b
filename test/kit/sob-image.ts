/**
 * The SOB image set (34 models x 209 records) read with the project's lossless reader, scored
 * exactly (SOB profile) and leniently. Shared by the lenient >= exact test and `bench/match.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Policy } from '../../metrics/match/policy.ts';
import { type LenientScore, scoreLenient } from '../../metrics/match/score.ts';
import { coverageGate, scoreRecord } from '../../metrics/record.ts';
import { parseLine, readLinesSync } from '../../src/core/jsonl.ts';
import { SCORING_SPAN_KEYS, type ScoringView, scoringView } from '../../src/core/record.ts';
import { sharedData } from './shared-data.ts';

export const SOB_DIR = sharedData('sob');
export const RESPONSES = join(SOB_DIR, 'images_responses');
export const REFERENCE = join(SOB_DIR, 'evaluation/image');

export interface ModelRecords {
  model: string;
  views: ScoringView[];
  /** The schema of each record as a plain value (one object per distinct schema text). */
  schemas: unknown[];
  /** The reference evaluator's leaf_value_em per record (hardening and coverage gate included). */
  referenceVa: number[];
}

export function modelName(file: string): string {
  return file.replace(/^response_/, '').replace(/_image\.jsonl$/, '');
}

/** Every response file, parsed once (lossless numbers), with the reference's Value Accuracy. */
export function loadSobImages(): ModelRecords[] {
  const schemaCache = new Map<string, unknown>();
  const files = readdirSync(RESPONSES)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  return files.map((f) => {
    const views: ScoringView[] = [];
    const schemas: unknown[] = [];
    for (const l of readLinesSync(join(RESPONSES, f))) {
      const parsed = parseLine(l, SCORING_SPAN_KEYS);
      if (!parsed.ok) throw new Error(`${f}:${parsed.line}: ${parsed.error}`);
      const v = scoringView(parsed.value, parsed.spans);
      if (!v.ok) throw new Error(`${f}:${parsed.line}: ${v.error}`);
      const text = v.view.schemaText ?? 'null';
      let schema = schemaCache.get(text);
      if (schema === undefined) schemaCache.set(text, (schema = JSON.parse(text)));
      v.view.schemaPlain = schema;
      views.push(v.view);
      schemas.push(schema);
    }
    const model = modelName(f);
    const referenceVa = readFileSync(join(REFERENCE, model, 'eval_records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).leaf_value_em as number);
    return { model, views, schemas, referenceVa };
  });
}

export interface RecordPair {
  exactVa: number;
  lenient: LenientScore;
}

/** SOB's exact scores of one record, and its lenient scores under the same gates. */
export function scoreBoth(view: ScoringView, schema: unknown, policy: Policy): RecordPair {
  const exact = scoreRecord(view, { modality: 'image' });
  // Structure Coverage is the raw path-set F1 whenever the hardening gate is open.
  const gate = exact.jsonPass === 1 ? coverageGate('image', exact.structureCoverage) : 0;
  const lenient = scoreLenient(view.groundTruth, view.candidate, schema, {
    policy,
    gates: { hardening: exact.jsonPass, coverage_gate: gate },
    detail: 'none',
  });
  return { exactVa: exact.valueAccuracy, lenient };
}

export interface ModelGap {
  model: string;
  exact: number;
  lenient: number;
  gap: number;
  /** Records whose lenient Value Accuracy is below the exact one (must stay 0). */
  below: number;
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Per model: mean exact (the reference's) and lenient Value Accuracy, and the gap. */
export function gapTable(data: ModelRecords[], policy: Policy): ModelGap[] {
  return data.map((d) => {
    const len: number[] = [];
    let below = 0;
    d.views.forEach((v, i) => {
      const { lenient } = scoreBoth(v, d.schemas[i], policy);
      len.push(lenient.lenient_value_accuracy);
      if (lenient.lenient_value_accuracy < d.referenceVa[i] - 1e-12) below++;
    });
    const exact = mean(d.referenceVa);
    const lenient = mean(len);
    return { model: d.model, exact, lenient, gap: lenient - exact, below };
  });
}

export function formatGapTable(rows: ModelGap[]): string {
  const w = Math.max(...rows.map((r) => r.model.length), 5);
  const lines = [`${'model'.padEnd(w)}  exact   lenient  gap`];
  for (const r of [...rows].sort((a, b) => b.lenient - a.lenient))
    lines.push(
      `${r.model.padEnd(w)}  ${r.exact.toFixed(4)}  ${r.lenient.toFixed(4)}   ${r.gap >= 0 ? '+' : ''}${r.gap.toFixed(4)}`,
    );
  return lines.join('\n');
}
