/**
 * Type Safety (SPEC.md "type precision"): the share of predicted leaves whose JSON type matches
 * the type the schema declares at that path, found by the reference's literal walk.
 */
import type { PyValue } from '../src/core/pyjson.ts';
import { type Leaves, splitPath } from './paths.ts';

const TYPE_NAMES = new Set(['string', 'integer', 'number', 'boolean', 'object', 'array', 'null']);

/** `normalize_schema_type`: a type list drops "null" and must leave exactly one type. */
function normalizeSchemaType(t: PyValue | undefined): string | null {
  let v = t;
  if (Array.isArray(v)) {
    const nonNull = v.filter((x) => x !== 'null');
    // The reference crashes on a list that does not reduce to one type; here it is "no type".
    if (nonNull.length !== 1) return null;
    v = nonNull[0];
  }
  return typeof v === 'string' && TYPE_NAMES.has(v) ? v : null;
}

/** `schema_type_for_path`: key steps need `type: "object"`, index steps `type: "array"`. */
export function schemaTypeForPath(schema: PyValue | undefined, path: string): string | null {
  if (!(schema instanceof Map)) return null;
  const steps = splitPath(path);
  if (steps === null) return null;
  let current: PyValue | undefined = schema;
  for (const step of steps) {
    if (!(current instanceof Map)) return null; // a tuple `items` or a boolean schema mid-path
    if ('key' in step) {
      if (current.get('type') !== 'object') return null;
      const props: PyValue | undefined = current.get('properties');
      if (props === undefined) return null;
      if (!(props instanceof Map)) return null;
      current = props.get(step.key);
    } else {
      if (current.get('type') !== 'array') return null;
      current = current.get('items');
    }
    if (current === undefined || current === null) return null;
  }
  return current instanceof Map ? normalizeSchemaType(current.get('type')) : null;
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

export function isTypeMatch(v: PyValue, expected: string): boolean {
  const actual = jsonTypeName(v);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

/** Raw type precision over the candidate's leaves (0 when there are none). */
export function typePrecision(predLeaves: Leaves, schema: PyValue | undefined): number {
  if (predLeaves.size === 0) return 0;
  let matches = 0;
  // Many leaves share a wildcard path; the schema walk depends only on the path string.
  for (const [path, value] of predLeaves) {
    const expected = schemaTypeForPath(schema, path);
    if (expected !== null && isTypeMatch(value, expected)) matches++;
  }
  return matches / predLeaves.size;
}
