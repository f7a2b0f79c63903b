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
import { type Modality, type Source, scoringView } from '../core/record.ts';
import { isKnownSchemaText } from '../core/schema.ts';
import {
  failedSchemaRecord,
  isSchemaRecord,
  scoreSchemaRecord,
  sobRecordTrack,
  type TrackInfo,
} from './compliance.ts';

export type LineOutcome =
  | {
      kind: 'row';
      line: number;
      /** The output folder: a modality, or `schema` for the compliance track's records. */
      modality: Source;
      score: RecordScore;
      json: string;
      /** The compliance track (src/scoring/compliance.ts); absent for a plain SOB row. */
      track?: TrackInfo;
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

export function scoreParsedLine(
  parsed: ParsedLine,
  pathModality: Modality,
  forced?: Modality,
  profile: ProfileOptions = { profile: 'sob', assertFormats: false },
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
  if (isSchemaRecord(v.view.metadata)) return scoreSchemaRecord(parsed, v.view, profile);
  const modality = recordModality(v.view.metadata, pathModality, forced);
  const score =
    profile.profile === 'strict'
      ? scoreRecordStrict(v.view, { modality, assertFormats: profile.assertFormats })
      : scoreRecord(v.view, { modality });
  const row = toReferenceRow(score, modality);
  const track = sobRecordTrack(parsed, v.view, row, profile);
  return { kind: 'row', line: parsed.line, modality, score, json: dumpsPy(row), track };
}

/** The row for a record that could not be scored (time or memory budget): all scores 0. */
export function failedLine(
  parsed: ParsedLine,
  reason: string,
  job: { pathModality: Modality; forced?: Modality },
): LineOutcome {
  if (!parsed.ok) return { kind: 'malformed', line: parsed.line, error: `not JSON: ${parsed.error}` };
  const v = scoringView(parsed.value);
  if (!v.ok) return { kind: 'malformed', line: parsed.line, error: v.error };
  if (isSchemaRecord(v.view.metadata)) return failedSchemaRecord(parsed, v.view, reason);
  const modality = recordModality(v.view.metadata, job.pathModality, job.forced);
  const score = failedRecordScore(v.view.metadata, reason);
  return { kind: 'row', line: parsed.line, modality, score, json: dumpsPy(toReferenceRow(score, modality)) };
}
