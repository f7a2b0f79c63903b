/**
 * A schema's complexity (easy / medium / hard, weight 1 / 2 / 3) derived from its shape, and the
 * count of properties it declares. Apart from the record checks so that the scorer, whose threads
 * never load zod, derives a missing complexity exactly as `sob build` does.
 */
import { COMPLEXITIES, type Complexity } from './record.ts';

// ---------------------------------------------------------------------------------------------
// Schema walking

type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Resolves a local `#/...` JSON pointer; anything else is left alone. */
export function resolveRef(root: Json, node: Json, seen: Set<string>): Json {
  let cur = node;
  while (typeof cur.$ref === 'string' && cur.$ref.startsWith('#') && !seen.has(cur.$ref)) {
    seen.add(cur.$ref);
    let target: unknown = root;
    for (const raw of cur.$ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObj(target) ? target[key] : undefined;
    }
    if (!isObj(target)) break;
    cur = target;
  }
  return cur;
}

function types(node: Json): string[] {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  if (isObj(node.properties)) return ['object'];
  if (node.items !== undefined) return ['array'];
  return [];
}

/** The branches a value may take at this node (anyOf / oneOf / allOf), or the node itself. */
function branches(root: Json, node: Json, seen: Set<string>, budget: { left: number }): Json[] {
  const n = resolveRef(root, node, seen);
  const out: Json[] = [];
  if (--budget.left < 0) return out;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = n[key];
    if (Array.isArray(list))
      for (const b of list) if (isObj(b)) out.push(...branches(root, b, new Set(seen), budget));
  }
  if (out.length === 0 || types(n).length > 0) out.push(n);
  return out;
}

interface Shape {
  /** Object nesting depth: an object of scalars is 1; an array of scalars inside adds one. */
  depth: number;
  arrayOfObjects: boolean;
}

/** What a schema too large to walk counts as: hard (the walk is per path, so it is bounded). */
const TOO_LARGE: Shape = { depth: 3, arrayOfObjects: true };

function shapeOf(root: Json, node: Json, seen: Set<string>, guard: number, budget: { left: number }): Shape {
  const acc: Shape = { depth: 0, arrayOfObjects: false };
  if (guard > 64) return acc;
  // The walk follows every path through $refs, which grows exponentially on schemas whose
  // definitions reference each other many times over: a budget of visits keeps it bounded.
  if (--budget.left < 0) return TOO_LARGE;
  for (const b of branches(root, node, seen, budget)) {
    const ts = types(b);
    if (ts.includes('object')) {
      let inner = 0;
      const props = isObj(b.properties) ? Object.values(b.properties) : [];
      if (isObj(b.additionalProperties)) props.push(b.additionalProperties);
      for (const p of props) {
        if (!isObj(p)) continue;
        const s = shapeOf(root, p, new Set(seen), guard + 1, budget);
        inner = Math.max(inner, s.depth);
        acc.arrayOfObjects ||= s.arrayOfObjects;
      }
      acc.depth = Math.max(acc.depth, 1 + inner);
    }
    if (ts.includes('array')) {
      const items = Array.isArray(b.items) ? b.items : [b.items];
      let inner = 0;
      for (const it of items) {
        if (!isObj(it)) continue;
        const s = shapeOf(root, it, new Set(seen), guard + 1, budget);
        if (s.depth > 0) acc.arrayOfObjects = true;
        acc.arrayOfObjects ||= s.arrayOfObjects;
        inner = Math.max(inner, s.depth);
      }
      // An array is one level, like a nested object: an array of scalars is depth 1 here.
      acc.depth = Math.max(acc.depth, 1 + inner);
    }
  }
  return acc;
}

/** Schema nodes the complexity walk visits at most (a normal schema needs a few hundred). */
export const SHAPE_BUDGET = 20_000;

/**
 * The rule of docs/records.md (and docs/design.md "Records and benchmarks"): easy = an object of
 * scalars; medium = nested objects or arrays of scalars (depth 2); hard = arrays of objects or
 * depth >= 3.
 */
export function deriveComplexity(schema: Json): Complexity {
  const budget = { left: SHAPE_BUDGET };
  const s = shapeOf(schema, schema, new Set(), 0, budget);
  if (budget.left < 0) return 'hard';
  if (s.arrayOfObjects || s.depth >= 3) return 'hard';
  if (s.depth === 2) return 'medium';
  return 'easy';
}

/** Every property declared anywhere in the schema (nested objects and array items included). */
export function countProperties(schema: Json): number {
  let n = 0;
  const seenNodes = new Set<unknown>();
  const visit = (node: unknown, depth: number): void => {
    if (depth > 64 || !isObj(node) || seenNodes.has(node)) return;
    seenNodes.add(node);
    const r = resolveRef(schema, node, new Set());
    if (r !== node) visit(r, depth + 1);
    if (isObj(node.properties)) {
      for (const p of Object.values(node.properties)) {
        n++;
        visit(p, depth + 1);
      }
    }
    if (Array.isArray(node.items)) for (const it of node.items) visit(it, depth + 1);
    else visit(node.items, depth + 1);
    visit(node.additionalProperties, depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const list = node[key];
      if (Array.isArray(list)) for (const b of list) visit(b, depth + 1);
    }
  };
  visit(schema, 0);
  return n;
}

export const COMPLEXITY_WEIGHT: Record<Complexity, number> = { easy: 1, medium: 2, hard: 3 };

export function isComplexity(v: unknown): v is Complexity {
  return typeof v === 'string' && (COMPLEXITIES as readonly string[]).includes(v);
}
