/**
 * `batches.json`: the batches a `sob run --batch` left at the provider, in its run directory, so
 * Ctrl-C, a crash or `--batch-deadline` loses none (docs/formats.md "batches.json"). It is
 * rewritten whole (atomically) at every change. `version: 1` is the field the first writer put
 * there and stays for readers that look for it; `format_version` (first) is the version.
 */
import { UserError } from '../errors.ts';
import { checkVersion, type Format, stamped } from './version.ts';

export const BATCHES_FORMAT: Format = { name: 'batches', version: 1 };

/** The provider's counts of a batch's requests (as far as it has told them). */
export interface BatchCounts {
  total?: number;
  completed?: number;
  failed?: number;
}

export interface BatchEntry {
  /** Our key for the batch (hash of the run, provider, round and ids): a resubmission finds it. */
  key: string;
  /** The provider's batch id; null between "about to create" and "created". */
  id: string | null;
  state: string;
  round: number;
  ids: string[];
  requests: number;
  bytes: number;
  /** Input tokens estimated as characters / 4 (the provider counts exactly). */
  est_tokens: number;
  submitted_at: string;
  /** The `sob run` session that submitted it (its start time). */
  session: string;
  counts: BatchCounts;
  collected: boolean;
  error?: string;
}

export interface BatchesFile {
  format_version?: number;
  version: 1;
  model: string;
  batches: BatchEntry[];
}

/** An empty state for `model`, `format_version` first. */
export function newBatches(model: string): BatchesFile {
  return stamped(BATCHES_FORMAT, { version: 1 as const, model, batches: [] as BatchEntry[] });
}

/** The state as written: `format_version` first (an old file read as version 1 is written as this build's). */
export function batchesDoc(state: BatchesFile): BatchesFile {
  const { format_version: _, ...rest } = state;
  return stamped(BATCHES_FORMAT, rest);
}

/**
 * A parsed batches file, its version checked: a `FormatVersionError` (exit 2) for a newer one, a
 * `UserError` naming the file when it has no `batches` list.
 */
export function readBatches(value: unknown, file: string): BatchesFile {
  checkVersion(value, BATCHES_FORMAT, file);
  const v = value as Partial<BatchesFile> | null;
  if (!v || typeof v !== 'object' || !Array.isArray(v.batches))
    throw new UserError(`${file}: not a batch state file (no "batches")`);
  return v as BatchesFile;
}
