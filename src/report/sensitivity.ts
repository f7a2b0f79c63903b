/**
 * `sob leaderboard --sensitivity`: the leaderboard's rows re-ranked under exact, lenient and
 * lenient-without-judge scores (the summaries' `lenient` blocks, from `sob score --match`).
 */
import { type RankBy, type Sensitivity, sensitivity } from '../../metrics/lenient-leaderboard.ts';
import { UserError } from '../core/errors.ts';
import type { Modality } from '../core/record.ts';
import { buildLeaderboard, type EvaluationFolder } from './evaluation.ts';

/**
 * The sensitivity of the unified ranking (by Overall unless told), or with `source` of that
 * source's ranking (by its Value Accuracy unless told).
 */
export function sensitivityOf(
  ev: EvaluationFolder,
  names: ReadonlyMap<string, string>,
  source?: Modality,
  rankBy?: RankBy,
): Sensitivity {
  const folder: EvaluationFolder = source
    ? {
        ...ev,
        models: new Map(
          [...ev.models].filter(([, s]) => s[source]).map(([m, s]) => [m, { [source]: s[source] }]),
        ),
      }
    : ev;
  const s = sensitivity(buildLeaderboard(folder, names), rankBy ?? (source ? 'value_accuracy' : 'overall'));
  if (s.models.length === 0)
    throw new UserError(
      `no lenient scores under ${ev.dir}${source ? ` (${source})` : ''}: score the responses with sob score --match default (or a policy file) first`,
    );
  return s;
}
