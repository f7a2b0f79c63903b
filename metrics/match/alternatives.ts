/**
 * Accepted alternatives (`sob review`, docs/review.md): a record's
 * `metadata.accepted_alternatives` maps a gold leaf path to values a reviewer accepted beside the
 * gold. In lenient scoring an answer whose value at that path equals one of them (Python
 * equality) is scored against that value, so it counts as right; exact scoring never reads them
 * (the gold stays what it is, so the answer is what it is: not the gold). Pure.
 */
import { isStructured, type PyValue } from '../../src/core/pyjson.ts';
import { flattenLeaves, splitPath } from '../paths.ts';
import { pyEquals } from '../values.ts';

/** A copy of `root` with the leaf at `path` replaced, or undefined when there is no such leaf. */
function replaceLeaf(root: PyValue, path: string, value: PyValue): PyValue | undefined {
  const steps = splitPath(path);
  if (!steps || steps.length === 0) return undefined;
  const set = (node: PyValue, i: number): PyValue | undefined => {
    const step = steps[i];
    const last = i === steps.length - 1;
    if ('key' in step) {
      if (!(node instanceof Map) || !node.has(step.key)) return undefined;
      const inner = last ? value : set(node.get(step.key)!, i + 1);
      if (inner === undefined) return undefined;
      return new Map(node).set(step.key, inner);
    }
    if (!Array.isArray(node) || step.index >= node.length) return undefined;
    const inner = last ? value : set(node[step.index], i + 1);
    if (inner === undefined) return undefined;
    const copy = [...node];
    copy[step.index] = inner;
    return copy;
  };
  return set(root, 0);
}

/**
 * The gold to score `candidate` against leniently: each accepted alternative the candidate gave
 * at its path (the same path, as SOB pairs leaves) takes the gold's place there.
 */
export function goldWithAlternatives(
  gold: PyValue | undefined,
  candidate: PyValue | undefined,
  alternatives: PyValue | undefined,
): PyValue | undefined {
  if (gold === undefined || !isStructured(gold) || !(alternatives instanceof Map) || !isStructured(candidate))
    return gold;
  const answer = flattenLeaves(candidate);
  let out: PyValue = gold;
  for (const [path, values] of alternatives) {
    const given = answer.get(path);
    if (given === undefined || !Array.isArray(values)) continue;
    if (!values.some((v) => !isStructured(v) && pyEquals(v, given))) continue;
    out = replaceLeaf(out, path, given) ?? out;
  }
  return out;
}
