/**
 * The one versioning rule of every file sob-eval writes (docs/formats.md): the file's top-level
 * JSON objects (the document of a `.json` file, each line of a `.jsonl` file, each row of a JSON
 * array) carry `format_version`, a positive integer, as their first key. A reader takes a missing
 * `format_version` as version 1 (files written before versions were stamped); it stops, in one
 * line and with exit 2, at a version newer than it reads.
 */
import { UserError } from '../errors.ts';

/** The key every versioned object carries. */
export const VERSION_KEY = 'format_version';

/** A format: its name (as messages and docs say it) and the newest version this build writes and reads. */
export interface Format {
  readonly name: string;
  readonly version: number;
}

/** A file written by a newer sob-eval, or with a `format_version` that is no version: exit 2. */
export class FormatVersionError extends UserError {
  constructor(
    readonly file: string,
    readonly format: Format,
    readonly found: unknown,
  ) {
    super(
      typeof found === 'number' && Number.isInteger(found) && found > format.version
        ? `${file}: format ${format.name} version ${found} is newer than this sob-eval reads (${format.version}); upgrade sob-eval`
        : `${file}: format ${format.name}: format_version ${JSON.stringify(found) ?? String(found)} is not a version (a whole number from 1)`,
      2,
    );
    this.name = 'FormatVersionError';
  }
}

/** A version as found in a file: a number, or a Python int (`bigint`) from the lossless reader. */
function asVersion(v: unknown): unknown {
  return typeof v === 'bigint' ? Number(v) : v;
}

/**
 * The version an object says it is in (1 when it says none); throws `FormatVersionError` for a
 * version newer than `format.version` or one that is not a whole number from 1. `where` names the
 * file (and line) for the message. Works on plain objects and on the lossless reader's Maps.
 */
export function checkVersion(value: unknown, format: Format, where: string): number {
  let raw: unknown;
  if (value instanceof Map) raw = value.get(VERSION_KEY);
  else if (typeof value === 'object' && value !== null && Object.hasOwn(value, VERSION_KEY))
    raw = (value as Record<string, unknown>)[VERSION_KEY];
  if (raw === undefined) return 1;
  const v = asVersion(raw);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > format.version)
    throw new FormatVersionError(where, format, v);
  return v;
}

/** `{ format_version, ...fields }`: the version first, then the fields in their order. */
export function stamped<T extends object>(format: Format, fields: T): { format_version: number } & T {
  return { [VERSION_KEY]: format.version, ...fields } as { format_version: number } & T;
}

/**
 * A JSON object's text with `"format_version": N` put first, in Python's separators (`", "`,
 * `": "`) as the reference's writer spaces them: for rows built as text on the hot path, where
 * building an object to stamp would cost more than the row. `text` must be one JSON object.
 */
export function stampPyText(format: Format, text: string): string {
  const rest = text.slice(1);
  return rest.trimStart().startsWith('}')
    ? `{"${VERSION_KEY}": ${format.version}}`
    : `{"${VERSION_KEY}": ${format.version}, ${rest}`;
}

/** The same for compact JSON (`JSON.stringify`'s separators). */
export function stampText(format: Format, text: string): string {
  const rest = text.slice(1);
  return rest.trimStart().startsWith('}')
    ? `{"${VERSION_KEY}":${format.version}}`
    : `{"${VERSION_KEY}":${format.version},${rest}`;
}
