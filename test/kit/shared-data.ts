/**
 * The real data sets the tests read, beside the repository in `../shared/data/` (or where
 * `SOB_SHARED_DATA` points: `SOB_SHARED_DATA=/nowhere` shows what a clone without them runs).
 * A test that needs one passes `{ skip: needsData('sob') }`: on a machine without the folder it is
 * skipped, and one line names the folder.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SHARED_DATA = resolve(
  process.env.SOB_SHARED_DATA ?? join(import.meta.dirname, '../../../shared/data'),
);

/** A path under the shared data folder (whether it is there or not). */
export function sharedData(...parts: string[]): string {
  return join(SHARED_DATA, ...parts);
}

const said = new Set<string>();

/** False when `../shared/data/<folder>` is there; else the reason to skip, said once on stderr. */
export function needsData(folder: string): false | string {
  const dir = sharedData(folder);
  if (existsSync(dir)) return false;
  const reason = `needs ${dir} (absent)`;
  if (!said.has(dir)) {
    said.add(dir);
    process.stderr.write(`skipping: ${reason}\n`);
  }
  return reason;
}
