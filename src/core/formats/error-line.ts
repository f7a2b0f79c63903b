/**
 * `errors.jsonl`: one line per failed attempt of a run (`retrying`, `gave_up`, `stopped`, or a
 * refused schema `recorded`), appended as it happens (docs/formats.md "errors.jsonl").
 */
import { checkVersion, type Format, stamped } from './version.ts';

export const ERROR_LINE: Format = { name: 'error-line', version: 1 };

export type ErrorOutcome = 'retrying' | 'gave_up' | 'stopped' | 'recorded';

export interface ErrorLine {
  format_version?: number;
  /** When the attempt failed (ISO 8601). */
  time: string;
  record_id: string;
  /** 1-based attempt number. */
  attempt: number;
  error_class: string;
  /** The HTTP status, when there was one. */
  status: number | null;
  /** One line, secrets redacted. */
  message: string;
  outcome: ErrorOutcome | string;
}

/** One line's text (no newline), `format_version` first. */
export function errorLineText(line: Omit<ErrorLine, 'format_version'>): string {
  return JSON.stringify(stamped(ERROR_LINE, line));
}

/** A parsed line as an `ErrorLine`, its version checked (`where`: `file:line`); undefined when it is not one. */
export function readErrorLine(value: unknown, where: string): ErrorLine | undefined {
  checkVersion(value, ERROR_LINE, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Partial<ErrorLine>;
  if (typeof v.record_id !== 'string' || typeof v.outcome !== 'string') return undefined;
  return v as ErrorLine;
}
