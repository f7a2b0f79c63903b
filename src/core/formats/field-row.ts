/**
 * `fields.jsonl`: one row per scored record and ground-truth leaf, beside `eval_records.jsonl` in
 * every evaluation folder (docs/formats.md "fields.jsonl"). Built as text on the scorer's hot path
 * (`metrics/fields.ts`); readers check the version where a folder comes in.
 */
import { checkVersion, type Format } from './version.ts';

export const FIELD_ROW: Format = { name: 'field-row', version: 1 };

/** The file's name in an evaluation folder. */
export const FIELDS_FILE = 'fields.jsonl';

/** Why a record's exact Value Accuracy is held at 0 or scaled down (the first that applies). */
export type FieldGate = 'scoring_error' | 'not_structured' | 'schema_invalid' | 'json_pass' | 'coverage_gate';

/** A row as read (plain JSON). */
export interface FieldRow {
  format_version?: number;
  /** As the response line gave it (ours are strings). */
  record_id: unknown;
  model_id: unknown;
  /** Short hash of the schema text the record was scored with (rows of one schema share it). */
  schema: string;
  /** SOB's dotted leaf path, `line_items[0].amount`. */
  path: string;
  /** The path with array indices collapsed, `line_items[].amount`. */
  field: string;
  /** The ground-truth value as JSON text (Python's float repr: `1.0` stays `1.0`). */
  gold: string;
  /** The answer's value at the same path as JSON text; null when the answer has no such leaf. */
  answer: string | null;
  /** The profile's exact comparison at the same path (Value Accuracy's, before gates). */
  exact: boolean;
  /** With `--match`: whether lenient matching accepted the leaf (null without `--match`, or pending, unscored or needs_judge). */
  lenient: boolean | null;
  /** With `--match`: the lenient verdict (`match`, `no_match`, `missing`, `unsettled`, `unscored`, `needs_judge`: a declared LLM comparator without a judge). */
  lenient_verdict: string | null;
  /** With `--match`: the comparator that decided (the one that accepted, else the configured one). */
  comparator: string | null;
  /** With `--match`, when alignment paired the leaf with an answer leaf elsewhere: that path. */
  pred_path?: string | null;
  /** The gate that held the record's Value Accuracy down, if any. */
  gate: FieldGate | null;
}

/** A parsed row, its version checked (`where`: `file:line`); undefined when it is no object. */
export function readFieldRow(value: unknown, where: string): FieldRow | undefined {
  checkVersion(value, FIELD_ROW, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as FieldRow;
}
