/**
 * Deterministic checks run on every record a build produces (DESIGN.md "Records and benchmarks").
 *
 * Hard failures reject the record (it goes to `rejected.jsonl` with its reasons):
 * - the record shape (zod `BenchmarkRecord`), a unique `metadata.record_id`;
 * - the schema is a valid draft-07 schema; the ground truth validates against it;
 * - the schema declares at least three properties (counted over every nesting level).
 * Warnings keep the record but are reported:
 * - a given `schema_complexity` that differs from the one derived from the schema;
 * - a string leaf of the ground truth that cannot be found in the context (grounding).
 */
import { COMPLEXITIES, type Complexity } from '../src/core/record.ts';
import { BenchmarkRecord } from '../src/core/record-shape.ts';
import { checkDraft7Schema, validateInstance } from '../src/core/schema.ts';
import type { CheckMode } from './types.ts';

export const MIN_PROPERTIES = 3;

export interface CheckResult {
  ok: boolean;
  /** Hard failures: the record is rejected when there is at least one. */
  errors: string[];
  warnings: string[];
  /** The complexity derived from the schema (undefined when the schema is unusable). */
  derivedComplexity?: Complexity;
  record?: BenchmarkRecord;
}

// ---------------------------------------------------------------------------------------------
// Schema walking

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Resolves a local `#/...` JSON pointer; anything else is left alone. */
function resolveRef(root: Json, node: Json, seen: Set<string>): Json {
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
 * DESIGN.md's rule: easy = an object of scalars; medium = nested objects or arrays of scalars
 * (depth 2); hard = arrays of objects or depth >= 3.
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

// ---------------------------------------------------------------------------------------------
// Grounding

/** Case, whitespace and punctuation folded away: what "the same text" means for grounding. */
export function normaliseForGrounding(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201c\u201d]/g, "'")
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Edits allowed when a value is looked for fuzzily: about one per ten characters, at most 3. */
export function editWindow(length: number): number {
  if (length < 5) return 0;
  return Math.min(3, Math.max(1, Math.floor(length / 10)));
}

/**
 * Smallest edit distance between `needle` and any substring of `hay` (Sellers' algorithm),
 * stopping early once it is known to be <= `limit`.
 */
export function bestSubstringDistance(needle: string, hay: string, limit: number): number {
  const m = needle.length;
  if (m === 0) return 0;
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = m;
  for (let j = 1; j <= hay.length; j++) {
    cur[0] = 0;
    const c = hay.charCodeAt(j - 1);
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (needle.charCodeAt(i - 1) === c ? 0 : 1);
      const del = prev[i] + 1;
      const ins = cur[i - 1] + 1;
      cur[i] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    if (cur[m] < best) {
      best = cur[m];
      if (best <= limit) return best;
    }
    [prev, cur] = [cur, prev];
  }
  return best;
}

/** A prepared context: normalised once, searched for many values. */
export class GroundingIndex {
  readonly text: string;
  constructor(context: string) {
    this.text = ` ${normaliseForGrounding(context)} `;
  }

  /** True when the value occurs in the context, exactly after normalisation or within the edit window. */
  has(value: string): boolean {
    const v = normaliseForGrounding(value);
    if (v.length === 0) return true;
    // Exact: whole words (the text is padded with spaces), so "x" is not found inside "next".
    if (this.text.includes(` ${v} `)) return true;
    const k = editWindow(v.length);
    if (k === 0) return false;
    return bestSubstringDistance(v, this.text, k) <= k;
  }
}

/** String leaves of a value with their paths (`items[0].name`). */
export function stringLeaves(value: unknown, path = ''): { path: string; value: string }[] {
  const out: { path: string; value: string }[] = [];
  const walk = (v: unknown, p: string): void => {
    if (typeof v === 'string') out.push({ path: p || '(root)', value: v });
    else if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`);
    else if (isObj(v)) for (const [k, x] of Object.entries(v)) walk(x, p ? `${p}.${k}` : k);
  };
  walk(value, path);
  return out;
}

/** Paths of ground-truth strings not found in the context. */
export function ungroundedPaths(groundTruth: unknown, context: string): string[] {
  const index = new GroundingIndex(context);
  return stringLeaves(groundTruth)
    .filter((l) => !index.has(l.value))
    .map((l) => l.path);
}

// ---------------------------------------------------------------------------------------------
// The record check

export interface CheckOptions {
  /** record ids already written: a repeat is a hard failure. Updated with accepted ids. */
  seenIds?: Set<string>;
  /** Skip the grounding check (a source whose values are not meant to be quoted). */
  skipGrounding?: boolean;
  /**
   * `extraction` (default): every check. `probe`: no grounding (values transformed on purpose).
   * `compliance`: a schema-only record (no ground truth; the schema need not pass draft-07's
   * meta-schema, since it is the thing under test): the shape and a unique id only.
   */
  mode?: CheckMode;
}

/** All checks on one candidate record; never throws. Adds the id to `seenIds` when accepted. */
export function checkRecord(candidate: unknown, opts: CheckOptions = {}): CheckResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const parsed = BenchmarkRecord.safeParse(candidate);
  if (!parsed.success) {
    for (const issue of parsed.error.issues.slice(0, 3)) {
      errors.push(`record shape: ${issue.path.join('.') || 'record'}: ${issue.message}`);
    }
    return { ok: false, errors, warnings };
  }
  const record = parsed.data;
  const id = record.metadata.record_id;
  if (opts.seenIds?.has(id)) errors.push(`duplicate record_id "${id}"`);

  const schema = record.input.json_schema;
  if (opts.mode === 'compliance') {
    const ok = errors.length === 0;
    if (ok) opts.seenIds?.add(id);
    return { ok, errors, warnings, derivedComplexity: deriveComplexity(schema), record };
  }
  let derived: Complexity | undefined;
  const schemaCheck = checkDraft7Schema(schema);
  if (!schemaCheck.valid) {
    errors.push(`invalid draft-07 schema: ${schemaCheck.reason}`);
  } else {
    const gt = validateInstance(schema, record.output.ground_truth);
    if (!gt.valid) errors.push(`ground truth does not validate against the schema: ${gt.reason}`);
    const nProps = countProperties(schema);
    if (nProps < MIN_PROPERTIES) {
      errors.push(
        `the schema declares ${nProps} propert${nProps === 1 ? 'y' : 'ies'}; at least ${MIN_PROPERTIES} are needed`,
      );
    }
    derived = deriveComplexity(schema);
    const given = record.metadata.schema_complexity;
    if (given !== undefined && given !== derived) {
      warnings.push(`schema_complexity is "${given}" but the schema's shape makes it "${derived}"`);
    }
  }
  if (!opts.skipGrounding && opts.mode !== 'probe') {
    for (const path of ungroundedPaths(record.output.ground_truth, record.input.context)) {
      warnings.push(`ground truth value at ${path} is not found in the context`);
    }
  }
  const ok = errors.length === 0;
  if (ok) opts.seenIds?.add(id);
  return { ok, errors, warnings, derivedComplexity: derived, record };
}

export function isComplexity(v: unknown): v is Complexity {
  return typeof v === 'string' && (COMPLEXITIES as readonly string[]).includes(v);
}
