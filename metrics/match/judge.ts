/**
 * The pure side of the `judge` matcher: a leaf pair the deterministic matchers did not settle
 * is handed out with a stable hash; verdicts come back keyed by that hash
 * (`src/scoring/judge-matcher.ts` asks a model and caches the answers on disk).
 *
 * The hash covers what changes the question: the resolved matcher (spec and leaf kind), the
 * field (its path with indices wildcarded, and its schema description), and both values with
 * their JSON types (`1` and `1.0` differ). It does not cover the record, the model that
 * answered, or the position in an array, so the same pair is asked once across records and runs.
 */
import { createHash } from 'node:crypto';
import { dumpsPy, type PyValue } from '../../src/core/pyjson.ts';

/** A judge's word on a pair: `unscored` when its answer could not be read (not a mismatch). */
export type JudgeVerdict = 'match' | 'no_match' | 'unscored';

const JUDGE_HASH_VERSION = 'sob-judge/1';

export interface UnsettledPair {
  hash: string;
  /** Ground-truth and predicted leaf paths. */
  path: string;
  pred_path: string;
  /** The field's path with indices wildcarded, and its schema description when it has one. */
  field: string;
  description?: string;
  /** Both values as JSON text. */
  gold: string;
  pred: string;
}

/** JSON text of a scalar, keeping int/float apart and non-ASCII as is. */
export function valueText(v: PyValue): string {
  return dumpsPy(v, { ensureAscii: false });
}

export function judgePairHash(
  matcherKey: string,
  field: string,
  description: string | undefined,
  gold: PyValue,
  pred: PyValue,
): string {
  const text = JSON.stringify([
    JUDGE_HASH_VERSION,
    matcherKey,
    field,
    description ?? null,
    valueText(gold),
    valueText(pred),
  ]);
  return createHash('sha256').update(text).digest('hex');
}
