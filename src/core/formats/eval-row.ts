/**
 * `eval_records.jsonl`: one row per scored record in an evaluation folder, the reference
 * evaluator's row (its field names and order) with `format_version` first (docs/formats.md
 * "eval_records.jsonl"). Rows are built as text on the scorer's hot path (`referenceRowJson`):
 * the writer stamps that text (`evalRowText`), nothing validates a row there; readers check the
 * version where a folder comes in.
 */
import { checkVersion, type Format, stampPyText } from './version.ts';

export const EVAL_ROW: Format = { name: 'eval-row', version: 1 };

/** A row as read (plain JSON); rows of the reference evaluator carry no `format_version`. */
export interface EvalRow {
  format_version?: number;
  /** As the response line gave it: any JSON value (ours are strings). */
  record_id?: unknown;
  model_id?: unknown;
  schema_complexity?: unknown;
  question_difficulty?: unknown;
  difficulty?: string;
  weighting_basis?: string;
  difficulty_weight?: number;
  known_difficulty?: number;
  json_parse_success?: number;
  json_root_structured?: number;
  schema_valid_input?: number;
  schema_compliance?: number;
  leaf_value_em?: number;
  value_token_f1?: number;
  hier_path_recall?: number;
  path_set_f1?: number;
  type_precision?: number;
  required_key_recall?: number;
  strict_json_em?: number;
  /** Image rows only. */
  missing_gt_paths?: string[];
  missing_required_paths?: string[];
  lenient_parse?: number;
  /** Why the numbers are what they are (ours): the gate that fired, the first schema error, ... */
  explanation?: object;
  /** The compliance track's and other tracks' fields. */
  [field: string]: unknown;
}

/** A row's text as written: the row's JSON (Python separators) with `format_version` first. */
export function evalRowText(rowJson: string): string {
  return stampPyText(EVAL_ROW, rowJson);
}

/** A parsed row as an `EvalRow`, its version checked (`where`: `file:line`); undefined when it is no object. */
export function readEvalRow(value: unknown, where: string): EvalRow | undefined {
  checkVersion(value, EVAL_ROW, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as EvalRow;
}
