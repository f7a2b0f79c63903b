/**
 * The schema walk of the `strict` profile's Type Safety (docs/scoring.md strict fix 1): `$ref`,
 * `allOf`/`anyOf`/`oneOf`, type lists, nullable types, `additionalProperties`/
 * `patternProperties`, tuple `items`/`prefixItems`; an integral float is an integer. Also used by
 * the `sob` profile to say where its literal walk (a quirk) decided a leaf. Pure.
 */
import { isStructured, type PyValue } from '../src/core/pyjson.ts';

export function isEmptyContainer(v: PyValue): boolean {
  return (Array.isArray(v) && v.length === 0) || (v instanceof Map && v.size === 0);
}

export type Schema = unknown;
/** A conjunction of schemas that all apply at a node. */
type Conj = Schema[];
const MAX_ALTERNATIVES = 64;
const MAX_REF_DEPTH = 32;

export function obj(s: Schema): Record<string, unknown> | null {
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : null;
}

function resolveRef(root: Schema, ref: string): Schema {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return true; // remote or anchor refs: unconstrained here
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let tok: string;
    try {
      tok = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return true; // a malformed %-escape: no such place
    }
    const o = obj(cur);
    if (Array.isArray(cur)) cur = cur[Number(tok)];
    else if (o) cur = Object.hasOwn(o, tok) ? o[tok] : undefined;
    else return true;
    if (cur === undefined) return true;
  }
  return cur;
}

/** Expands `$ref`, `allOf`, `anyOf`/`oneOf` into alternatives (each a conjunction). */
function expand(root: Schema, conj: Conj): Conj[] {
  let alts: Conj[] = [[]];
  const addAll = (items: Schema[], depth: number): void => {
    for (const s of items) add(s, depth);
  };
  const add = (s: Schema, depth: number): void => {
    if (depth > MAX_REF_DEPTH) return;
    const o = obj(s);
    if (!o) {
      for (const a of alts) a.push(s); // boolean schema
      return;
    }
    for (const a of alts) a.push(o);
    if (typeof o.$ref === 'string') add(resolveRef(root, o.$ref), depth + 1);
    if (Array.isArray(o.allOf)) addAll(o.allOf, depth + 1);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = o[key];
      if (!Array.isArray(branches) || branches.length === 0) continue;
      const next: Conj[] = [];
      for (const a of alts) {
        for (const b of branches) {
          if (next.length >= MAX_ALTERNATIVES) break;
          const saved = alts;
          alts = [[...a]];
          add(b, depth + 1);
          next.push(...alts);
          alts = saved;
        }
      }
      alts = next;
    }
  };
  addAll(conj, 0);
  return alts;
}

function typeAccepts(t: unknown, v: PyValue): boolean {
  const types = Array.isArray(t) ? t : [t];
  for (const x of types) {
    if (x === 'null' && v === null) return true;
    if (x === 'boolean' && typeof v === 'boolean') return true;
    if (x === 'string' && typeof v === 'string') return true;
    if (x === 'number' && (typeof v === 'number' || typeof v === 'bigint')) return true;
    if (x === 'integer' && (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))))
      return true;
    if (x === 'array' && Array.isArray(v)) return true;
    if (x === 'object' && v instanceof Map) return true;
  }
  return false;
}

function conjAccepts(conj: Conj, v: PyValue): boolean {
  for (const s of conj) {
    if (s === false) return false;
    const o = obj(s);
    if (o && o.type !== undefined && !typeAccepts(o.type, v)) return false;
  }
  return true;
}

/** The schemas that apply to child `step` (a key or an index) of a node. Null: none may exist. */
function childConj(conj: Conj, step: string | number): Conj | null {
  const out: Conj = [];
  for (const s of conj) {
    if (s === false) return null;
    const o = obj(s);
    if (!o) continue;
    if (typeof step === 'string') {
      const props = obj(o.properties);
      let matched = false;
      if (props && Object.hasOwn(props, step)) {
        out.push(props[step]);
        matched = true;
      }
      const pats = obj(o.patternProperties);
      if (pats) {
        for (const [p, ps] of Object.entries(pats)) {
          try {
            if (new RegExp(p, 'u').test(step)) {
              out.push(ps);
              matched = true;
            }
          } catch {
            // an invalid pattern does not apply
          }
        }
      }
      if (!matched && o.additionalProperties !== undefined) {
        if (o.additionalProperties === false) return null;
        out.push(o.additionalProperties);
      }
    } else {
      const prefix = Array.isArray(o.prefixItems) ? o.prefixItems : Array.isArray(o.items) ? o.items : null;
      if (prefix) {
        if (step < prefix.length) out.push(prefix[step]);
        else {
          const rest = Array.isArray(o.prefixItems) ? o.items : o.additionalItems;
          if (rest === false) return null;
          if (rest !== undefined) out.push(rest);
        }
      } else if (o.items !== undefined) out.push(o.items);
    }
  }
  return out;
}

/** Strict Type Safety: share of the candidate's leaves whose value the schema's type allows. */
export function strictTypeSafety(candidate: PyValue, schema: Schema): number {
  let total = 0;
  let ok = 0;
  const stack: [PyValue, Conj[]][] = [[candidate, expand(schema, [schema])]];
  while (stack.length > 0) {
    const [v, alts] = stack.pop()!;
    const isLeaf = !isStructured(v) || isEmptyContainer(v);
    if (isLeaf) {
      total++;
      if (alts.some((a) => conjAccepts(a, v))) ok++;
      continue;
    }
    const live = alts.filter((a) => conjAccepts(a, v));
    const steps: [string | number, PyValue][] = Array.isArray(v)
      ? v.map((c, i) => [i, c])
      : [...(v as Map<string, PyValue>)];
    for (const [step, c] of steps) {
      const next: Conj[] = [];
      for (const a of live) {
        const cc = childConj(a, step);
        if (cc === null) continue;
        for (const e of expand(schema, cc)) if (next.length < MAX_ALTERNATIVES) next.push(e);
      }
      stack.push([c, next]);
    }
  }
  return total === 0 ? 0 : ok / total;
}

/**
 * Whether the strict walk accepts a leaf `value` at `steps` (keys and indices from the root),
 * without the containers on the way (every alternative stays live): for the `sob` profile's notes.
 */
export function strictLeafTypeOk(schema: Schema, steps: (string | number)[], value: PyValue): boolean {
  let alts = expand(schema, [schema]);
  for (const step of steps) {
    const next: Conj[] = [];
    for (const a of alts) {
      const cc = childConj(a, step);
      if (cc === null) continue;
      for (const e of expand(schema, cc)) if (next.length < MAX_ALTERNATIVES) next.push(e);
    }
    alts = next;
    if (alts.length === 0) return false;
  }
  return alts.some((a) => conjAccepts(a, value));
}
