/**
 * Type Safety (docs/scoring.md "type precision"): the share of predicted leaves whose JSON type matches
 * the type the schema declares at that path, found by the reference's literal walk.
 */
import type { PyValue } from '../src/core/pyjson.ts';
import { type Leaves, splitPath } from './paths.ts';

const TYPE_NAMES = new Set(['string', 'integer', 'number', 'boolean', 'object', 'array', 'null']);

/** A JSON object as JS sees it (the schema is a plain value here, as `JSON.parse` gives it). */
type Obj = Record<string, unknown>;
function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function own(o: Obj, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** `normalize_schema_type`: a type list drops "null" and must leave exactly one type. */
function normalizeSchemaType(t: unknown): string | null {
  let v = t;
  if (Array.isArray(v)) {
    const nonNull = v.filter((x) => x !== 'null');
    // The reference crashes on a list that does not reduce to one type; here it is "no type".
    if (nonNull.length !== 1) return null;
    v = nonNull[0];
  }
  return typeof v === 'string' && TYPE_NAMES.has(v) ? v : null;
}

/** The schema the reference's literal walk reaches at `path` (undefined: the walk stops). */
export function literalLeafSchema(schema: unknown, path: string): Obj | undefined {
  if (!isObj(schema)) return undefined;
  const steps = splitPath(path);
  if (steps === null) return undefined;
  let current: unknown = schema;
  for (const step of steps) {
    if (!isObj(current)) return undefined; // a tuple `items` or a boolean schema mid-path
    if ('key' in step) {
      if (own(current, 'type') !== 'object') return undefined;
      const props = own(current, 'properties');
      if (!isObj(props)) return undefined;
      current = own(props, step.key);
    } else {
      if (own(current, 'type') !== 'array') return undefined;
      current = own(current, 'items');
    }
    if (current === undefined || current === null) return undefined;
  }
  return isObj(current) ? current : undefined;
}

/** `schema_type_for_path`: key steps need `type: "object"`, index steps `type: "array"`. */
function schemaTypeForPath(schema: unknown, path: string): string | null {
  const leaf = literalLeafSchema(schema, path);
  return leaf ? normalizeSchemaType(own(leaf, 'type')) : null;
}

/** `json_type_name` for a leaf: ints are "integer", floats "number". */
export function jsonTypeName(v: PyValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return Array.isArray(v) ? 'array' : 'object';
}

function isTypeMatch(v: PyValue, expected: string): boolean {
  const actual = jsonTypeName(v);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

/** The expected type per path, per schema object (paths repeat across the models scored). */
const typeMemo = new WeakMap<object, Map<string, string | null>>();

/**
 * Raw type precision over the candidate's leaves (0 when there are none). `onMismatch` hears of
 * every leaf counted as a mismatch (the `sob` profile's notes on its quirks).
 */
export function typePrecision(
  predLeaves: Leaves,
  schema: unknown,
  onMismatch?: (path: string, value: PyValue, expected: string | null) => void,
): number {
  if (predLeaves.size === 0) return 0;
  let memo: Map<string, string | null> | undefined;
  if (isObj(schema)) {
    memo = typeMemo.get(schema);
    if (!memo) typeMemo.set(schema, (memo = new Map()));
  }
  let matches = 0;
  for (const [path, value] of predLeaves) {
    let expected = memo?.get(path);
    if (expected === undefined) {
      expected = schemaTypeForPath(schema, path);
      if (memo && memo.size < 100_000) memo.set(path, expected);
    }
    if (expected !== null && isTypeMatch(value, expected)) matches++;
    else onMismatch?.(path, value, expected);
  }
  return matches / predLeaves.size;
}
