/**
 * The types a scored line travels in (worker -> parent) and what it is scored with: shared by the
 * line scorer (score-line.ts), the compliance track (compliance.ts) and the lenient matcher
 * (lenient.ts, lenient-output.ts). Types only, in a module of their own so that none of those
 * imports another to name them.
 */
import type { LenientPart } from '../../metrics/lenient-summary.ts';
import type { LenientScore } from '../../metrics/match/score.ts';
import type { SummaryRow } from '../../metrics/summary.ts';
import type { Modality, Source } from '../core/record.ts';
import type { Protocol } from '../core/validator.ts';
import type { TrackInfo } from './track.ts';

export type Profile = 'sob' | 'strict';

export interface ProfileOptions {
  profile: Profile;
  /** strict profile: assert `format`. */
  assertFormats: boolean;
  /** Why this profile scores these answers (said on stderr and in the summary's `profile_reason`). */
  reason?: string;
  /** How schema records' schemas are read (default `jsonschemabench`; docs/compliance-protocols.md). */
  protocol?: Protocol;
  /** Remote `$ref`s of schema records resolved from local folders, by URI prefix (never the network). */
  remotes?: { base: string; dir: string }[];
  /** `--scorer`: scorers of your own, run on every SOB record (src/scoring/custom-scorers.ts). */
  scorers?: { name: string; url: string }[];
  /**
   * Write `fields.jsonl` (one row per record and gold leaf); default true. `--no-fields`: the
   * workers build no lines and the folder has no such file.
   */
  fields?: boolean;
}

export type LineOutcome =
  | {
      kind: 'row';
      line: number;
      /** The output folder: a modality, or `schema` for the compliance track's records. */
      modality: Source;
      /** What the summary needs of its scores. */
      score: SummaryRow;
      json: string;
      /** The modality is the default (text): no source on the record, nothing in the file name. */
      defaulted?: true;
      /** The compliance track (src/scoring/compliance.ts); absent for a plain SOB row. */
      track?: TrackInfo;
      /** With `--match`: the lenient scores (the row already has their fields). */
      lenient?: LenientRowPart;
      /**
       * The record's `fields.jsonl` lines, joined by newlines ('' when it has none); in the main
       * thread, as the UTF-8 bytes a worker's batch brought (each record's ending in a newline).
       */
      fields?: string | Uint8Array;
      /** `--scorer`: the numbers the scorers of your own gave (absent: the record failed). */
      custom?: Record<string, number>;
    }
  | { kind: 'malformed'; line: number; error: string }
  /** An answer whose id the known benchmark does not have: reported, not scored. */
  | { kind: 'unknown'; line: number; modality: Modality; recordId: string }
  /** A record whose schema the provider refused (`eval_info.schema_rejected`): counted, not scored. */
  | { kind: 'rejected'; line: number; modality: Modality; recordId: string };

/** What a worker needs to score leniently (structured-cloneable). */
export interface MatchJob {
  /** `default` or a policy file (already checked by the parent). */
  policy: string;
  /** The judge's provider id when one answers unsettled pairs (through the parent); else null. */
  judge: string | null;
}

/** A row's lenient part as it travels to the parent: the numbers and the side file's line. */
export interface LenientRowPart extends LenientPart {
  side: string;
  /** The record's `fields.jsonl` lines (moved onto the outcome before it travels). */
  fields?: string;
}

/** The record's `fields.jsonl` lines given its lenient scores (null: without `--match`). */
export type FieldsOf = (lenient: LenientScore | null) => string;
