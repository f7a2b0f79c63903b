/**
 * `responses.jsonl`: one line per answered record, written by `sob run` the moment the answer
 * arrives; read by `sob score`, the resume of a run, `--provider replay:` and the report's usage
 * columns. The line is the SOB response format (`metadata`, `input`, `output`, `eval_info`) with
 * `format_version` first (docs/formats.md "responses.jsonl"). Files from other tools (the SOB
 * release's response files) carry no version: they are version 1.
 */
import { dumpsPy, type PyObject, type PyValue } from '../pyjson.ts';
import { checkVersion, type Format, VERSION_KEY } from './version.ts';

export const RESPONSE_LINE: Format = { name: 'response-line', version: 1 };

/** A response line as read (after `toPlain`); fields are optional because other tools write them too. */
export interface ResponseLine {
  format_version?: number;
  metadata?: {
    record_id?: unknown;
    source?: unknown;
    schema_complexity?: unknown;
    epoch?: unknown;
    [k: string]: unknown;
  };
  input?: unknown;
  output?: { ground_truth?: unknown; candidate_response?: unknown; raw_response?: unknown };
  eval_info?: ResponseInfo;
}

/** `eval_info`: what the runner measured of the answer. */
export interface ResponseInfo {
  latency_ms?: number | null;
  ttft_ms?: number;
  tpot_ms?: number;
  input_tokens?: number | null;
  output_tokens?: number | null;
  /** Of input_tokens: read from and written to the provider's prompt cache (Anthropic). */
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  attempts?: number;
  finish_reason?: string | null;
  cost?: number;
  batch?: string;
  error_class?: string;
  schema_rejected?: boolean;
  coverage_timeout?: string;
  error?: string;
  endpoint?: string;
  cached?: boolean;
  /** Of input_tokens, per modality, where the provider splits them (Gemini). */
  input_tokens_by_modality?: Record<string, number>;
  /** `--input` (absent: text). */
  input_mode?: string;
  /** `--input document|both`: each document as sent, their bytes, what the document policy changed. */
  documents?: { kind: string; mime: string; sha256: string; bytes: number }[];
  document_bytes?: number;
  document_policy?: { path: string; sha256: string; action: string; detail: string }[];
}

/** The parts of a line as the runner builds them (lossless values: ints as bigint). */
export interface ResponseParts {
  metadata: PyObject;
  input: PyObject;
  output: PyObject;
  eval_info: PyObject;
}

/** One line's text (no newline), `format_version` first, in Python's JSON as the reference reads it. */
export function responseLineText(parts: ResponseParts): string {
  return dumpsPy(
    new Map<string, PyValue>([
      [VERSION_KEY, BigInt(RESPONSE_LINE.version)],
      ['metadata', parts.metadata],
      ['input', parts.input],
      ['output', parts.output],
      ['eval_info', parts.eval_info],
    ]),
  );
}

/** Checks a parsed line's version (`where`: `file:line`); throws `FormatVersionError`. */
export function checkResponseLine(value: unknown, where: string): number {
  return checkVersion(value, RESPONSE_LINE, where);
}

/** The record id a parsed line names (plain or lossless), when it is a string. */
export function responseRecordId(value: unknown): string | undefined {
  let meta: unknown;
  if (value instanceof Map) meta = value.get('metadata');
  else if (typeof value === 'object' && value !== null) meta = (value as ResponseLine).metadata;
  const id = meta instanceof Map ? meta.get('record_id') : (meta as ResponseLine['metadata'])?.record_id;
  return typeof id === 'string' ? id : undefined;
}
