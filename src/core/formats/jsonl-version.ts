/**
 * The version of a JSONL file, read from its first line (docs/formats.md): a reader that streams
 * the file elsewhere (the scorer's workers) checks this once before it starts, so a file from a
 * newer sob-eval stops the command in one line, not at one bad row per line.
 */
import { readLinesSync } from '../jsonl.ts';
import { parsePyJson } from '../pyjson.ts';
import { checkVersion, type Format } from './version.ts';

/**
 * Checks the first non-blank line of `file` against `format` (see `checkVersion`); a line that is
 * not JSON passes here (the reader names it in its own words). Returns the version (1 when none).
 */
export function checkFirstLine(file: string, format: Format): number {
  for (const l of readLinesSync(file)) {
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch {
      try {
        value = parsePyJson(l.text);
      } catch {
        return 1;
      }
    }
    return checkVersion(value, format, `${file}:${l.line}`);
  }
  return 1;
}
