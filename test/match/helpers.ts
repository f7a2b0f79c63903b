/** Small builders for the match tests. */
import { type LeafOutcome, matcherFor, matchLeaf } from '../../metrics/match/matchers.ts';
import { compilePolicy, PathInfo } from '../../metrics/match/policy.ts';
import { type PyValue, parsePyJson } from '../../src/core/pyjson.ts';

/** A lossless value from JSON text (`1` is an int, `1.0` a float). */
export const J = (text: string): PyValue => parsePyJson(text);

/**
 * Matches one leaf `key` of an object: `gold` and `pred` as JSON text, the field's schema, and
 * optionally a policy document.
 */
export function leaf(
  gold: string,
  pred: string,
  opts: { key?: string; prop?: Record<string, unknown>; policy?: unknown } = {},
): LeafOutcome {
  const key = opts.key ?? 'x';
  const policy = compilePolicy(opts.policy ?? {});
  const schema = { type: 'object', properties: { [key]: opts.prop ?? {} } };
  const info = PathInfo.root(policy, schema).child(key);
  const g = J(gold);
  return matchLeaf(matcherFor(info, g), g, J(pred));
}

import { type LenientOptions, type LenientScore, scoreLenient } from '../../metrics/match/score.ts';
import { flattenLeaves } from '../../metrics/paths.ts';
import { pyEquals } from '../../metrics/values.ts';

/** SOB's raw exact match (Value Accuracy before gates): positional, Python equality. */
export function exactRaw(gold: PyValue, pred: PyValue): number {
  const g = flattenLeaves(gold);
  const p = flattenLeaves(pred);
  if (g.size === 0) return 1;
  let n = 0;
  for (const [k, v] of g) {
    const x = p.get(k);
    if (x !== undefined && pyEquals(v, x)) n++;
  }
  return n / g.size;
}

/** Lenient scores of JSON texts under a policy document (default policy when omitted). */
export function lenient(
  gold: string,
  pred: string,
  opts: { policy?: unknown; schema?: unknown } & Partial<Omit<LenientOptions, 'policy'>> = {},
): LenientScore {
  const { policy, schema, ...rest } = opts;
  return scoreLenient(J(gold), J(pred), schema ?? {}, {
    policy: compilePolicy(policy ?? {}),
    modality: 'image',
    ...rest,
  });
}
