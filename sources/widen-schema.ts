/**
 * A schema widened exactly where a given instance (a benchmark's own gold) violates it, so the
 * schema admits what the gold holds (`sob build extractbench`, `--gold-invalid widen`):
 * - `type` lacking the value's JSON type gains it (`null`, `number`, `string`...);
 * - a `required` property the value lacks is dropped from `required`;
 * - `enum` lacking the value admits it; `const` becomes an `enum` of it and the value;
 * - `additionalProperties: false` admits the extra key (as `properties[key]: {}`);
 * - `anyOf`/`oneOf` no branch of which admits the value: the branch with fewest violations is
 *   widened; a `oneOf` several branches admit becomes an `anyOf`;
 * - any other keyword the value violates (`minimum`, `pattern`, `minItems`...) is removed at
 *   that subschema.
 * Ajv reports the violations (allErrors, verbose: each error's own subschema object, so a
 * violation through a `$ref` widens the `$defs`/`definitions` entry it names: its `schema_path`
 * says so). Rounds repeat until the value validates, at most `maxRounds`. The input is never
 * changed: the widened schema is a copy.
 */
import type { ErrorObject } from 'ajv';
import { Ajv } from 'ajv';
import { pyRegExp } from '../src/core/schema.ts';

/** One place the schema was widened. */
export interface Widening {
  /** JSON pointer of the keyword in the widened schema (`/$defs/unit/type`). */
  schema_path: string;
  keyword: string;
  /** What it now admits: the type, the property name, the value (a keyword removed: the value there). */
  admitted: unknown;
}

export interface WidenResult {
  schema: unknown;
  widened: Widening[];
  /** Whether the instance validates under the widened schema (ajv, allErrors). */
  valid: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The value at a JSON pointer (ajv's instancePath). */
function at(instance: unknown, pointer: string): unknown {
  let v = instance;
  for (const raw of pointer.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = Array.isArray(v) ? v[Number(k)] : isObj(v) ? v[k] : undefined;
  }
  return v;
}

/** Every subschema object of a schema by its JSON pointer. */
function pointers(schema: unknown): Map<object, string> {
  const out = new Map<object, string>();
  const walk = (v: unknown, p: string) => {
    if (v === null || typeof v !== 'object' || out.has(v)) return;
    out.set(v, p);
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v[i], `${p}/${i}`);
    else
      for (const [k, x] of Object.entries(v))
        if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples')
          walk(x, `${p}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(schema, '');
  return out;
}

function validate(schema: unknown, instance: unknown): ErrorObject[] {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    validateFormats: false,
    validateSchema: false,
    inlineRefs: false,
    code: { regExp: pyRegExp },
  });
  const v = ajv.compile(schema as Obj);
  return v(instance) ? [] : [...(v.errors ?? [])];
}

/**
 * How far `value` is from `branch` (the root's definitions in reach): its violations, a type
 * the value itself is not counting as many (a branch of the value's own type is the closer).
 */
function branchErrors(root: Obj, branch: unknown, value: unknown): number {
  if (typeof branch === 'boolean') return branch ? 0 : 1;
  if (!isObj(branch)) return Number.POSITIVE_INFINITY;
  const probe: Obj = { ...branch };
  if (root.$defs !== undefined && probe.$defs === undefined) probe.$defs = root.$defs;
  if (root.definitions !== undefined && probe.definitions === undefined) probe.definitions = root.definitions;
  try {
    const errors = validate(probe, value);
    return errors.length + (errors.some((e) => e.keyword === 'type' && e.instancePath === '') ? 1000 : 0);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** `schema` widened where `instance` violates it (see the module's comment). */
export function widenSchema(schema: unknown, instance: unknown, maxRounds = 50): WidenResult {
  const root = structuredClone(schema) as Obj;
  if (!isObj(root)) return { schema: root, widened: [], valid: false };
  const widened: Widening[] = [];
  const seen = new Set<string>();
  const note = (where: object, keyword: string, admitted: unknown, ptrs: Map<object, string>) => {
    const w = { schema_path: `${ptrs.get(where) ?? ''}/${keyword}`, keyword, admitted };
    const key = JSON.stringify(w);
    if (!seen.has(key)) {
      seen.add(key);
      widened.push(w);
    }
  };
  for (let round = 0; round < maxRounds; round++) {
    let errors: ErrorObject[];
    try {
      errors = validate(root, instance);
    } catch {
      return { schema: root, widened, valid: false };
    }
    if (errors.length === 0) return { schema: root, widened, valid: true };
    const ptrs = pointers(root);
    // A failed anyOf/oneOf decides its branches' errors: those at or under its instance are
    // left to the next round.
    const choices = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
    const under = (e: ErrorObject) =>
      choices.some(
        (c) =>
          c !== e && (e.instancePath === c.instancePath || e.instancePath.startsWith(`${c.instancePath}/`)),
      );
    let changed = false;
    for (const e of errors) {
      const parent = e.parentSchema;
      if (!isObj(parent) || (e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && under(e))) continue;
      const value = at(instance, e.instancePath);
      const k = e.keyword;
      if (k === 'type') {
        const t = jsonType(value);
        const types = Array.isArray(parent.type) ? [...parent.type] : [parent.type];
        if (types.includes(t) || (t === 'integer' && types.includes('number'))) continue;
        parent.type = [...types, t];
        note(parent, k, t, ptrs);
      } else if (k === 'required') {
        const name = (e.params as { missingProperty: string }).missingProperty;
        if (!Array.isArray(parent.required) || !parent.required.includes(name)) continue;
        parent.required = parent.required.filter((n) => n !== name);
        if ((parent.required as unknown[]).length === 0) delete parent.required;
        note(parent, k, name, ptrs);
      } else if (k === 'enum') {
        if (!Array.isArray(parent.enum)) continue;
        parent.enum = [...parent.enum, value];
        note(parent, k, value, ptrs);
      } else if (k === 'const') {
        parent.enum = [parent.const, value];
        delete parent.const;
        note(parent, k, value, ptrs);
      } else if (k === 'additionalProperties') {
        const name = (e.params as { additionalProperty: string }).additionalProperty;
        const props = isObj(parent.properties) ? parent.properties : {};
        if (name in props) continue;
        parent.properties = { ...props, [name]: {} };
        note(parent, k, name, ptrs);
      } else if (k === 'anyOf' || k === 'oneOf') {
        const branches = parent[k];
        if (!Array.isArray(branches) || branches.length === 0) continue;
        const passing = (e.params as { passingSchemas?: number[] | null }).passingSchemas;
        if (k === 'oneOf' && Array.isArray(passing)) {
          parent.anyOf = branches;
          delete parent.oneOf;
          note(parent, k, `anyOf (branches ${passing.join(', ')} admit it)`, ptrs);
          changed = true;
          continue;
        }
        // The branch closest to the value is widened (the first of the fewest violations).
        const counts = branches.map((b) => branchErrors(root, b, value));
        const best = counts.indexOf(Math.min(...counts));
        const sub = branches[best];
        if (!isObj(sub) || counts[best] === Number.POSITIVE_INFINITY) continue;
        const own = { $defs: sub.$defs, definitions: sub.definitions };
        if (root.$defs !== undefined && sub.$defs === undefined) sub.$defs = root.$defs;
        if (root.definitions !== undefined && sub.definitions === undefined)
          sub.definitions = root.definitions;
        // Widened in place (its $defs the root's own objects), then its borrowed keys given back.
        const inner = widenInPlace(sub, value, maxRounds - round);
        if (own.$defs === undefined) delete sub.$defs;
        if (own.definitions === undefined) delete sub.definitions;
        const base = ptrs.get(sub) ?? '';
        for (const w of inner) {
          const path =
            w.schema_path.startsWith('/$defs/') || w.schema_path.startsWith('/definitions/')
              ? w.schema_path
              : `${base}${w.schema_path}`;
          const key = JSON.stringify({ ...w, schema_path: path });
          if (!seen.has(key)) {
            seen.add(key);
            widened.push({ ...w, schema_path: path });
          }
        }
        if (inner.length === 0) continue;
      } else {
        if (!(k in parent)) continue;
        delete parent[k];
        note(parent, k, value !== null && typeof value === 'object' ? jsonType(value) : value, ptrs);
      }
      changed = true;
    }
    if (!changed) break;
  }
  let valid = false;
  try {
    valid = validate(root, instance).length === 0;
  } catch {
    valid = false;
  }
  return { schema: root, widened, valid };
}

/** Widens `schema` itself (the objects it holds: a branch and the root's definitions). */
function widenInPlace(schema: Obj, instance: unknown, maxRounds: number): Widening[] {
  const r = widenSchema(schema, instance, maxRounds);
  // widenSchema works on a copy: its changes are carried into the objects given.
  const copy = r.schema as Obj;
  for (const key of Object.keys(schema)) if (!(key in copy)) delete schema[key];
  for (const [key, v] of Object.entries(copy)) {
    if ((key === '$defs' || key === 'definitions') && isObj(schema[key])) {
      const defs = schema[key] as Obj;
      for (const [n, d] of Object.entries(v as Obj)) {
        const target = defs[n];
        if (isObj(target) && isObj(d)) {
          for (const dk of Object.keys(target)) delete target[dk];
          Object.assign(target, d);
        } else defs[n] = d;
      }
    } else schema[key] = v;
  }
  return r.widened;
}
