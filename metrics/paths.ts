/**
 * Leaf paths (docs/scoring.md "Leaves"): object keys join with `.`, array elements append `[i]`.
 * Only scalars are leaves; a later path overwrites an earlier equal one but keeps its place
 * (Python dict semantics). Iterative: depth does not matter.
 */
import type { PyValue } from '../src/core/pyjson.ts';
import { noStrings } from './values.ts';

export type Leaves = Map<string, PyValue>;

function isContainer(v: PyValue): v is Map<string, PyValue> | PyValue[] {
  return v instanceof Map || Array.isArray(v);
}

/** Children of a container with their paths, in document order. */
function childPaths(value: Map<string, PyValue> | PyValue[], prefix: string): [string, PyValue][] {
  const out: [string, PyValue][] = [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) out.push([`${prefix}[${i}]`, value[i]]);
  } else {
    // The reference: `f"{prefix}.{key}" if prefix else key` (an empty prefix is falsy).
    for (const [k, v] of value) out.push([prefix ? `${prefix}.${k}` : k, v]);
  }
  return out;
}

/** Depth at which the walks leave the (fast, allocation-free) recursion for explicit stacks. */
const RECURSION_LIMIT = 2000;
class TooDeep extends Error {}

/** Leaves written by the last `flattenLeaves` (more than its size: dotted paths collided). */
let writes = 0;

function flattenInto(v: PyValue, prefix: string, leaves: Leaves, depth: number): void {
  if (depth > RECURSION_LIMIT) throw new TooDeep();
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) flattenInto(v[i], `${prefix}[${i}]`, leaves, depth + 1);
  } else if (v instanceof Map) {
    for (const [k, c] of v) flattenInto(c, prefix ? `${prefix}.${k}` : k, leaves, depth + 1);
  } else if (prefix) {
    leaves.set(prefix, v);
    writes++;
  }
}

/** `flatten_leaf_paths`: scalar leaves by path. A scalar root (empty prefix) gives none. */
export function flattenLeaves(root: PyValue | undefined): Leaves {
  const leaves: Leaves = new Map();
  writes = 0;
  if (root === undefined || !isContainer(root)) return leaves;
  try {
    flattenInto(root, '', leaves, 0);
    return leaves;
  } catch (e) {
    if (!(e instanceof TooDeep)) throw e;
  }
  // A very deep value: the same walk with an explicit stack.
  leaves.clear();
  writes = 0;
  const stack: [string, PyValue][] = childPaths(root, '').reverse();
  while (stack.length > 0) {
    const [path, v] = stack.pop()!;
    if (isContainer(v)) {
      const kids = childPaths(v, path);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    } else if (path) {
      leaves.set(path, v);
      writes++;
    }
  }
  return leaves;
}

/**
 * The paths the last `flattenLeaves(root)` wrote more than once (a key holding `.` or `[i]`
 * spelled the same path as a nested one: the reference keeps the later value). Empty, at no
 * cost, when nothing collided.
 */
export function collidedPaths(root: PyValue | undefined, leaves: Leaves): string[] {
  if (writes === leaves.size) return noStrings();
  const seen = new Set<string>();
  const out = new Set<string>();
  const stack: [string, PyValue][] = root !== undefined && isContainer(root) ? childPaths(root, '') : [];
  while (stack.length > 0) {
    const [path, v] = stack.pop()!;
    if (isContainer(v)) stack.push(...childPaths(v, path));
    else if (path) {
      if (seen.has(path)) out.add(path);
      seen.add(path);
    }
  }
  return [...out];
}

/**
 * The paths a required-key check can match: each required path (indices as `[]`) and its
 * prefixes that end where a key or an index starts.
 */
export function requiredPrefixes(required: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const r of required) {
    if (out.has(r)) continue;
    out.add(r);
    for (let i = r.length - 1; i > 0; i--) {
      const c = r.charCodeAt(i);
      if (c !== 0x2e && c !== 0x5b) continue; // '.' or '['
      const p = r.slice(0, i);
      if (out.has(p)) break; // its own prefixes are in already
      out.add(p);
    }
  }
  return out;
}

/**
 * The required paths some node of `root` spells: the reference's `flatten_present_paths` (every
 * node's path, containers included) with `[n]` read as `[]`, intersected with `required`, but
 * without building the paths no required path starts with (a node whose path is not in
 * `prefixes` has no descendant worth a look). Iterative.
 */
export function foundRequiredPaths(
  root: PyValue | undefined,
  required: ReadonlySet<string>,
  prefixes: ReadonlySet<string>,
): Set<string> {
  const found = new Set<string>();
  if (root === undefined || !isContainer(root)) return found;
  const stack: [string, Map<string, PyValue> | PyValue[]][] = [['', root]];
  while (stack.length > 0) {
    const [prefix, v] = stack.pop()!;
    if (Array.isArray(v)) {
      // Every element has the same wildcarded path.
      const p = `${prefix}[]`;
      if (required.has(p)) found.add(p);
      if (prefixes.has(p)) for (const c of v) if (isContainer(c)) stack.push([p, c]);
    } else {
      for (const [k, c] of v) {
        // A key's own "[3]" is wildcarded too (no "[n]" can span the "." between key and prefix).
        const key = k.includes('[') ? wildcardPath(k) : k;
        const p = prefix ? `${prefix}.${key}` : key;
        if (required.has(p)) found.add(p);
        if (isContainer(c) && prefixes.has(p)) stack.push([p, c]);
      }
    }
  }
  return found;
}

/** `[3]` -> `[]` (Python's `\d` is any Unicode decimal digit). */
const INDEX_RE = /\[\p{Nd}+\]/gu;
function wildcardPath(path: string): string {
  return path.includes('[') ? path.replace(INDEX_RE, '[]') : path;
}

/** One step of a path: a key, or an array index (`null` value when not an integer: no type). */
export type PathStep = { key: string } | { index: number };

/**
 * `split_path`: splits on `.` and `[n]`. Where the reference would crash (`[` without `]`, or
 * `[x]` that is not an int), returns null: the caller counts it as a type mismatch.
 */
export function splitPath(path: string): PathStep[] | null {
  const parts: PathStep[] = [];
  let token = '';
  let i = 0;
  while (i < path.length) {
    const ch = path[i];
    if (ch === '.') {
      if (token) parts.push({ key: token });
      token = '';
      i++;
    } else if (ch === '[') {
      if (token) parts.push({ key: token });
      token = '';
      const end = path.indexOf(']', i);
      if (end < 0) return null;
      const digits = path.slice(i + 1, end);
      if (!isPythonInt(digits)) return null;
      parts.push({ index: Number.parseInt(digits.replaceAll('_', '').trim(), 10) });
      i = end + 1;
    } else {
      token += ch;
      i++;
    }
  }
  if (token) parts.push({ key: token });
  return parts;
}

/** Whether Python's `int(s)` accepts s (surrounding whitespace, a sign, digits with `_`). */
const PY_INT = /^[\s\x1c-\x1f\x85]*[+-]?\p{Nd}+(?:_\p{Nd}+)*[\s\x1c-\x1f\x85]*$/u;
function isPythonInt(s: string): boolean {
  return PY_INT.test(s);
}
