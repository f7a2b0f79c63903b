/**
 * Lenient matching beside SOB's exact metrics (issue 10): the API the scorer, summaries,
 * leaderboard and report wire in. One call per record: `scoreLenient`.
 */
export { type DateOptions, parseDate } from '../../src/core/values/dates.ts';
export { type NumberOptions, parseNumberText } from '../../src/core/values/numbers.ts';
export { type JudgeVerdict, judgePairHash, type UnsettledPair } from './judge.ts';
export { fuzzyRatio, type LeafOutcome, matcherFor, matchLeaf } from './matchers.ts';
export {
  compilePolicy,
  DEFAULT_FLOOR,
  defaultPolicy,
  formatPolicyPath,
  type Policy,
  PolicyError,
  type PolicyProblem,
  withoutJudge,
} from './policy.ts';
export { compareRankings, kendallTau, type RankComparison, ranksOf } from './rank.ts';
export {
  type AlignmentRow,
  type LeafRow,
  type LenientOptions,
  type LenientScore,
  scoreLenient,
} from './score.ts';
export { normalizeText } from './text.ts';
