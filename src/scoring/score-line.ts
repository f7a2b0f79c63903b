/**
 * Scores one JSONL line of a response file: parse losslessly, read the record's parts, score.
 * Shared by the worker and the in-process path so both give the same rows.
 */

import {
  failedRecordScore,
  parseSchemaText,
  type RecordScore,
  scoreRecord,
  toReferenceRow,
} from '../../metrics/record.ts';
import { scoreRecordStrict } from '../../metrics/strict.ts';
import type { ParsedLine } from '../core/jsonl.ts';
import { recordModality } from '../core/modality.ts';
import { dumpsPy, type PyValue, parsePyJson } from '../core/pyjson.ts';
import { type Modality, type ScoringView, scoringView } from '../core/record.ts';
import { isKnownSchemaText } from '../core/schema.ts';
import type { LenientRowPart } from './lenient.ts';

export type LineOutcome =
  | {
      kind: 'row';
      line: number;
      modality: Modality;
      score: RecordScore;
      json: string;
      /** With `--match`: the lenient scores (the row already has their fields). */
      lenient?: LenientRowPart;
    }
  | { kind: 'malformed'; line: number; error: string };

/** Ground truths by their source text (the same record recurs in every model's file). */
const groundTruths = new Map<string, PyValue>();

export type Profile = 'sob' | 'strict';

export interface ProfileOptions {
  profile: Profile;
  /** strict profile: assert `format`. */
  assertFormats: boolean;
}

/**
 * Scoring beside the profile's (`--match`: lenient matching): given the record (null when it
 * could not be scored), its exact scores and the reference row about to be written, it may add
 * fields to the row and returns what the parent collects.
 */
export type RowHook = (
  view: ScoringView | null,
  score: RecordScore,
  modality: Modality,
  row: Record<string, unknown>,
  line: number,
) => LenientRowPart;

/** The outcome of a scored record: its row, with whatever the hook adds. */
function rowOutcome(
  line: number,
  modality: Modality,
  score: RecordScore,
  view: ScoringView | null,
  hook?: RowHook,
): LineOutcome {
  const row = toReferenceRow(score, modality);
  const lenient = hook?.(view, score, modality, row, line);
  return { kind: 'row', line, modality, score, json: dumpsPy(row), ...(lenient ? { lenient } : {}) };
}

export function scoreParsedLine(
  parsed: ParsedLine,
  pathModality: Modality,
  forced?: Modality,
  profile: ProfileOptions = { profile: 'sob', assertFormats: false },
  hook?: RowHook,
): LineOutcome {
  if (!parsed.ok) return { kind: 'malformed', line: parsed.line, error: `not JSON: ${parsed.error}` };
  const v = scoringView(parsed.value, parsed.spans);
  if (!v.ok) return { kind: 'malformed', line: parsed.line, error: v.error };
  // A schema the reader skipped is checked here: parsed the first time its text is seen.
  const text = v.view.schemaText;
  if (text !== undefined && (text.startsWith('{') || text.startsWith('[')) && !isKnownSchemaText(text)) {
    try {
      v.view.schemaPlain = parseSchemaText(text);
    } catch (e) {
      return {
        kind: 'malformed',
        line: parsed.line,
        error: `not JSON: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }
  // A ground truth the reader skipped is built from its text, once per distinct text.
  const gtText = v.view.groundTruthText;
  if (gtText !== undefined) {
    let gt = groundTruths.get(gtText);
    if (gt === undefined) {
      try {
        gt = parsePyJson(gtText);
      } catch (e) {
        return {
          kind: 'malformed',
          line: parsed.line,
          error: `not JSON: ${e instanceof Error ? e.message : String(e)}`,
        };
      }
      if (groundTruths.size >= 20_000) groundTruths.clear();
      groundTruths.set(gtText, gt);
    }
    v.view.groundTruth = gt;
  }
  const modality = recordModality(v.view.metadata, pathModality, forced);
  const score =
    profile.profile === 'strict'
      ? scoreRecordStrict(v.view, { modality, assertFormats: profile.assertFormats })
      : scoreRecord(v.view, { modality });
  return rowOutcome(parsed.line, modality, score, v.view, hook);
}

/** The row for a record that could not be scored (time or memory budget): all scores 0. */
export function failedLine(
  parsed: ParsedLine,
  reason: string,
  job: { pathModality: Modality; forced?: Modality },
  hook?: RowHook,
): LineOutcome {
  if (!parsed.ok) return { kind: 'malformed', line: parsed.line, error: `not JSON: ${parsed.error}` };
  const v = scoringView(parsed.value);
  if (!v.ok) return { kind: 'malformed', line: parsed.line, error: v.error };
  const modality = recordModality(v.view.metadata, job.pathModality, job.forced);
  const score = failedRecordScore(v.view.metadata, reason);
  return rowOutcome(parsed.line, modality, score, null, hook);
}
