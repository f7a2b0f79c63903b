/**
 * `leaderboard.json` (`sob eval`'s file, and `sob leaderboard --format json`): a JSON array with
 * one row per model, best first; each row carries `format_version` first (the array itself stays
 * an array, so readers that index it keep working). docs/formats.md "leaderboard.json". The row's
 * fields are the leaderboard's (`metrics/leaderboard.ts` `LeaderboardRow`); this module owns the
 * file, not the math.
 */
import { UserError } from '../errors.ts';
import { checkVersion, type Format, stamped } from './version.ts';

export const LEADERBOARD: Format = { name: 'leaderboard', version: 1 };

/** A row as read: the model and its numbers (see `LeaderboardRow` for the full set). */
export interface LeaderboardEntry {
  format_version?: number;
  model: string;
  /** With per-source ranks (`sob leaderboard --ranks`): the overall rank, 1-based. */
  rank?: number;
  [field: string]: unknown;
}

/** The file's text (no final newline), each row stamped, indented 2 as before. */
export function leaderboardJsonText(rows: readonly object[]): string {
  return JSON.stringify(
    rows.map((r) => {
      const { format_version: _, ...rest } = r as { format_version?: number };
      return stamped(LEADERBOARD, rest);
    }),
    null,
    2,
  );
}

/** A parsed leaderboard file's rows, each version checked (`file` names it in messages). */
export function readLeaderboardJson(value: unknown, file: string): LeaderboardEntry[] {
  if (!Array.isArray(value)) throw new UserError(`${file}: not a leaderboard (not a JSON array)`);
  return value.map((row, i) => {
    checkVersion(row, LEADERBOARD, `${file} (row ${i + 1})`);
    if (typeof row !== 'object' || row === null || typeof (row as LeaderboardEntry).model !== 'string')
      throw new UserError(`${file} (row ${i + 1}): not a leaderboard row (no "model")`);
    return row as LeaderboardEntry;
  });
}
