/**
 * Fine-grained validation (SchemaBench): which of a schema's constraints an answer satisfies.
 *
 * A **constraint** is one assertion the schema makes about one place in the answer: a pair
 * (instance location, keyword location) reached by walking the schema over the answer the way a
 * validator evaluates it. The walk goes through the applicators that every valid answer must
 * satisfy all of — `properties`, `patternProperties`, `additionalProperties` (a schema),
 * `items`/`prefixItems`/`additionalItems` (schemas), `allOf`, `$ref`, `dependentSchemas` and
 * schema-valued `dependencies` (when their property is present), and the `then`/`else` branch
 * that `if` selects — and counts, at each place it reaches:
 * - every assertion keyword that applies to the value's type: `type`, `enum`, `const` (any
 *   value); `multipleOf`, `maximum`, `minimum`, `exclusiveMaximum`, `exclusiveMinimum`
 *   (numbers; draft 4's boolean `exclusiveMaximum` is part of `maximum`); `maxLength`,
 *   `minLength`, `pattern`, `format` (strings; `format` only when formats are asserted, and on
 *   numbers for the numeric formats); `maxItems`, `minItems`, `uniqueItems` (arrays);
 *   `maxProperties`, `minProperties` (objects);
 * - `required`, and `dependentRequired` / array-valued `dependencies` when triggered: one
 *   constraint per named property;
 * - the keywords that are one yes/no question each: `anyOf`, `oneOf`, `not`, `contains` (with
 *   `minContains`/`maxContains`), `propertyNames`, and `additionalProperties: false`,
 *   `additionalItems: false`, `items: false`; a `false` schema reached by the walk;
 * - a subschema using `unevaluatedProperties` / `unevaluatedItems` is one constraint as a whole
 *   (what it asserts depends on its siblings); a schema using `$dynamicRef` / `$recursiveRef`
 *   anywhere is one constraint as a whole (dynamic scope cannot be walked piecewise).
 *
 * Whether a constraint holds is decided by ajv, never by hand: each assertion keyword is compiled
 * alone (with the keywords it is defined together with) in the schema's dialect, and each
 * branch of `anyOf`/`oneOf`/`not`/`if`/`contains`/`propertyNames` is validated by ajv in the
 * context of the whole schema (its `$ref`s resolve as in the full validation).
 *
 * Every counted constraint is necessary for validity, and together they cover every keyword of
 * every subschema the walk reaches, so an answer satisfies all of them exactly when it is valid.
 * `checkAnswer` (metrics/compliance.ts) holds the two to that: where they ever disagree, ajv's
 * verdict wins (see there).
 */
import type { Ajv, ValidateFunction } from 'ajv';
import { ALWAYS_FAILS, JSONSCHEMABENCH_FORMATS } from './py-formats.ts';
import {
  type CompiledSchema,
  type Dialect,
  decodePointerToken,
  newAjv,
  ROOT_KEY,
  SUBSCHEMA_LIST,
  SUBSCHEMA_MAP,
  SUBSCHEMA_ONE,
  type Violation,
  validateCompiled,
} from './validator.ts';

export interface ConstraintResult {
  instance_path: string;
  schema_path: string;
  keyword: string;
}

export interface ConstraintTally {
  /** Constraints the walk reached. */
  applicable: number;
  satisfied: number;
  /** Per keyword: [applicable, satisfied]. */
  by_keyword: Record<string, [number, number]>;
  /** The violated constraints, in walk order (at most `maxListed`). */
  violated: ConstraintResult[];
  /** The walk stopped at `maxConstraints`: the counts cover the part walked. */
  truncated: boolean;
  /** The whole schema counted as one constraint ($dynamicRef / $recursiveRef). */
  atomic: boolean;
}

export interface WalkLimits {
  /** Stop counting after this many constraints (default 1,000,000). */
  maxConstraints?: number;
  /** Keep at most this many violated constraints (default 1,000). */
  maxListed?: number;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function escapeToken(k: string): string {
  return k.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Where a subschema is: document (`ROOT_KEY` or a remote URI), JSON Pointer, base URI. */
interface Place {
  doc: string;
  ptr: string;
  base: string;
}

/** The ids, anchors and places of every subschema of the documents a schema uses. */
class SchemaIndex {
  readonly places = new WeakMap<object, Place>();
  /** Absolute URI (no fragment) -> the resource's root subschema. */
  readonly resources = new Map<string, { node: unknown; place: Place }>();
  readonly anchors = new Map<string, { node: unknown; place: Place }>();
  dynamic = false;
  private readonly indexed = new Set<string>();

  constructor(
    private readonly ajv: Ajv,
    private readonly dialect: Dialect,
  ) {}

  resolveUri(base: string, ref: string): string {
    return this.ajv.opts.uriResolver.resolve(base, ref);
  }

  /** Indexes one document (the root, or a remote one) under `doc`. */
  indexDocument(doc: string, root: unknown): void {
    if (this.indexed.has(doc)) return;
    this.indexed.add(doc);
    const idKey = this.dialect === 'draft-04' ? 'id' : '$id';
    const modern = this.dialect === '2019-09' || this.dialect === '2020-12';
    const visit = (node: unknown, ptr: string, parentBase: string, depth: number): void => {
      if (!isObj(node) || depth > 1000) return;
      if (this.places.has(node)) return;
      let base = parentBase;
      const id = node[idKey];
      if (typeof id === 'string' && id !== '') {
        if (!modern && id.startsWith('#')) {
          // Drafts 4-7: `"$id": "#name"` is a location-independent anchor.
          const place = { doc, ptr, base };
          this.anchors.set(`${stripFragment(base)}${id}`, { node, place });
        } else {
          base = stripFragment(this.resolveUri(parentBase, id));
        }
      }
      const place: Place = { doc, ptr, base };
      this.places.set(node, place);
      if (base !== parentBase || ptr === '') this.resources.set(stripFragment(base), { node, place });
      for (const a of ['$anchor', '$dynamicAnchor']) {
        const name = node[a];
        if (typeof name === 'string') this.anchors.set(`${stripFragment(base)}#${name}`, { node, place });
      }
      if ('$dynamicRef' in node || '$recursiveRef' in node) this.dynamic = true;
      for (const k of SUBSCHEMA_ONE)
        if (k in node && !Array.isArray(node[k])) visit(node[k], `${ptr}/${k}`, base, depth + 1);
      for (const k of SUBSCHEMA_MAP) {
        const m = node[k];
        if (isObj(m))
          for (const [name, sub] of Object.entries(m))
            visit(sub, `${ptr}/${k}/${escapeToken(name)}`, base, depth + 1);
      }
      for (const k of SUBSCHEMA_LIST) {
        const l = node[k];
        if (Array.isArray(l)) {
          for (let i = 0; i < l.length; i++) visit(l[i], `${ptr}/${k}/${i}`, base, depth + 1);
        }
      }
    };
    const rootBase = doc === ROOT_KEY ? ROOT_KEY : stripFragment(doc);
    visit(root, '', rootBase, 0);
    if (!isObj(root)) this.resources.set(rootBase, { node: root, place: { doc, ptr: '', base: rootBase } });
  }

  /** The subschema a `$ref` names, with its place; undefined when it resolves nowhere we know. */
  resolve(
    ref: string,
    from: Place,
    remotes: Map<string, unknown>,
  ): { node: unknown; place: Place } | undefined {
    const abs = this.resolveUri(from.base, ref);
    const hash = abs.indexOf('#');
    const res = hash >= 0 ? abs.slice(0, hash) : abs;
    const frag = hash >= 0 ? abs.slice(hash + 1) : '';
    let resource = this.resources.get(res);
    if (!resource) {
      const doc = remotes.get(res);
      if (doc === undefined) return undefined;
      this.indexDocument(res, doc);
      resource = this.resources.get(res);
      if (!resource) return undefined;
    }
    if (frag === '') return resource;
    if (!frag.startsWith('/')) return this.anchors.get(`${res}#${decodeURIComponentSafe(frag)}`);
    let node: unknown = resource.node;
    let ptr = resource.place.ptr;
    for (const raw of frag.slice(1).split('/')) {
      const tok = decodePointerToken(raw);
      if (Array.isArray(node)) node = node[Number(tok)];
      else if (isObj(node)) node = node[tok];
      else return undefined;
      ptr += `/${escapeToken(tok)}`;
    }
    if (node === undefined) return undefined;
    const known = isObj(node) ? this.places.get(node) : undefined;
    return { node, place: known ?? { doc: resource.place.doc, ptr, base: resource.place.base } };
  }
}

function stripFragment(uri: string): string {
  const i = uri.indexOf('#');
  return i >= 0 ? uri.slice(0, i) : uri;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// -- Deciding one assertion keyword with ajv ------------------------------------------------------

/** Assertion keywords compiled alone, per dialect and format setting, by their JSON text. */
const keywordAjvs = new Map<string, { ajv: Ajv; compiled: number }>();
const keywordCache = new Map<string, ValidateFunction>();
const perNode = new WeakMap<object, Map<string, ValidateFunction>>();

function keywordValidator(
  compiled: CompiledSchema,
  node: Obj,
  keyword: string,
  schema: Obj,
): ValidateFunction {
  let m = perNode.get(node);
  if (!m) {
    m = new Map();
    perNode.set(node, m);
  }
  const hit = m.get(keyword);
  if (hit) return hit;
  const text = `${compiled.protocol}:${compiled.dialect}:${compiled.assertFormats}:${JSON.stringify(schema)}`;
  let v = keywordCache.get(text);
  if (!v) {
    const k = `${compiled.protocol}:${compiled.dialect}:${compiled.assertFormats}`;
    let entry = keywordAjvs.get(k);
    // A fresh instance now and then: ajv keeps every schema it compiled.
    if (!entry || entry.compiled >= 2000) {
      entry = {
        ajv: newAjv(compiled.dialect, false, compiled.assertFormats, compiled.protocol),
        compiled: 0,
      };
      keywordAjvs.set(k, entry);
      keywordCache.clear();
    }
    entry.compiled++;
    v = entry.ajv.compile(schema);
    keywordCache.set(text, v);
  }
  m.set(keyword, v);
  return v;
}

// -- The walk ---------------------------------------------------------------------------------

class Walk {
  readonly tally: ConstraintTally = {
    applicable: 0,
    satisfied: 0,
    by_keyword: {},
    violated: [],
    truncated: false,
    atomic: false,
  };
  private readonly maxConstraints: number;
  private readonly maxListed: number;
  /** (subschema, instance location) pairs on the current path: a `$ref` loop that consumes no input. */
  private readonly active = new Set<string>();
  private readonly modern: boolean;

  constructor(
    private readonly compiled: CompiledSchema,
    private readonly index: SchemaIndex,
    limits: WalkLimits,
  ) {
    this.maxConstraints = limits.maxConstraints ?? 1_000_000;
    this.maxListed = limits.maxListed ?? 1000;
    this.modern = compiled.dialect === '2019-09' || compiled.dialect === '2020-12';
  }

  /** The type a known format applies to ('string' or 'number'); undefined for unknown formats (ajv ignores them). */
  formatType(name: string): string | undefined {
    // The jsonschemabench protocol checks formats by name (src/core/py-formats.ts): strings, and
    // for the harness's ipv4/ipv6/uuid every value.
    if (this.compiled.protocol === 'jsonschemabench')
      return ALWAYS_FAILS.has(name)
        ? 'any'
        : Object.hasOwn(JSONSCHEMABENCH_FORMATS, name)
          ? 'string'
          : undefined;
    const def = (this.compiled.ajv.formats as Record<string, unknown>)[name];
    if (def === undefined) return undefined;
    if (isObj(def) && !(def instanceof RegExp) && typeof def.type === 'string') return def.type;
    return 'string';
  }

  count(instPtr: string, place: Place, keyword: string, ok: boolean, where = keyword): void {
    const t = this.tally;
    if (t.applicable >= this.maxConstraints) {
      t.truncated = true;
      return;
    }
    t.applicable++;
    const k = (t.by_keyword[keyword] ??= [0, 0]);
    k[0]++;
    if (ok) {
      t.satisfied++;
      k[1]++;
    } else if (t.violated.length < this.maxListed) {
      const docPrefix = place.doc === ROOT_KEY ? '#' : `${place.doc}#`;
      const schemaPath = `${docPrefix}${place.ptr}${where ? `/${where}` : ''}`;
      t.violated.push({ instance_path: instPtr, schema_path: schemaPath, keyword });
    }
  }

  /** Whether `value` is valid against the subschema at `place` (ajv, in the whole schema's context). */
  valid(place: Place, value: unknown): boolean {
    const v = this.compiled.validatorAt(place.doc, place.ptr);
    if (!v) throw new UnwalkableError(`no validator for ${place.doc}#${place.ptr}`);
    return v(value) as boolean;
  }

  child(node: unknown, parent: Place, suffix: string): Place {
    const known = isObj(node) ? this.index.places.get(node) : undefined;
    return known ?? { doc: parent.doc, ptr: `${parent.ptr}/${suffix}`, base: parent.base };
  }

  /** `format`, when formats are asserted and it is a known format for this type of value. */
  format(s: Obj, place: Place, value: unknown, instPtr: string, type: 'string' | 'number'): void {
    const ft = typeof s.format === 'string' ? this.formatType(s.format) : undefined;
    if (this.compiled.assertFormats && (ft === type || ft === 'any')) {
      this.assertion(s, place, 'format', value, instPtr, { format: s.format });
    }
  }

  assertion(node: Obj, place: Place, keyword: string, value: unknown, instPtr: string, schema: Obj): void {
    const v = keywordValidator(this.compiled, node, keyword, schema);
    this.count(instPtr, place, keyword, v(value) as boolean);
  }

  walk(node: unknown, place: Place, value: unknown, instPtr: string, depth: number): void {
    if (this.tally.truncated) return;
    if (depth > 2000) throw new UnwalkableError('schema nesting too deep to walk');
    if (node === true || node === undefined) return;
    if (node === false) {
      this.count(instPtr, place, 'false', false, '');
      return;
    }
    if (!isObj(node)) return;
    const loopKey = `${place.doc}#${place.ptr}\u0000${instPtr}`;
    if (this.active.has(loopKey)) return;
    this.active.add(loopKey);
    try {
      this.walkObject(node, place, value, instPtr, depth);
    } finally {
      this.active.delete(loopKey);
    }
  }

  private walkObject(s: Obj, place: Place, value: unknown, instPtr: string, depth: number): void {
    if (this.modern && ('unevaluatedProperties' in s || 'unevaluatedItems' in s)) {
      const kw = 'unevaluatedProperties' in s ? 'unevaluatedProperties' : 'unevaluatedItems';
      this.count(instPtr, place, kw, this.valid(place, value), '');
      return;
    }
    if (typeof s.$ref === 'string') {
      const target = this.index.resolve(s.$ref, place, this.compiled.remotes);
      if (target === undefined) throw new UnwalkableError(`cannot follow $ref ${s.$ref}`);
      this.walk(target.node, target.place, value, instPtr, depth + 1);
    }
    const draft4 = this.compiled.dialect === 'draft-04';
    // Any type.
    // Any type (`nullable` is ajv's OpenAPI extension of `type`).
    if ('type' in s) this.assertion(s, place, 'type', value, instPtr, { type: s.type, nullable: s.nullable });
    for (const kw of ['enum', 'const']) {
      if (kw in s) this.assertion(s, place, kw, value, instPtr, { [kw]: s[kw] });
    }
    if (typeof value === 'number') {
      if ('multipleOf' in s)
        this.assertion(s, place, 'multipleOf', value, instPtr, { multipleOf: s.multipleOf });
      for (const [kw, ex] of [
        ['maximum', 'exclusiveMaximum'],
        ['minimum', 'exclusiveMinimum'],
      ] as const) {
        if (draft4) {
          if (kw in s) this.assertion(s, place, kw, value, instPtr, { [kw]: s[kw], [ex]: s[ex] });
        } else {
          if (kw in s) this.assertion(s, place, kw, value, instPtr, { [kw]: s[kw] });
          if (ex in s) this.assertion(s, place, ex, value, instPtr, { [ex]: s[ex] });
        }
      }
      this.format(s, place, value, instPtr, 'number');
    } else if (typeof value === 'string') {
      for (const kw of ['maxLength', 'minLength', 'pattern']) {
        if (kw in s) this.assertion(s, place, kw, value, instPtr, { [kw]: s[kw] });
      }
      this.format(s, place, value, instPtr, 'string');
    } else if (Array.isArray(value)) {
      this.walkArray(s, place, value, instPtr, depth);
    } else if (isObj(value)) {
      this.walkProperties(s, place, value, instPtr, depth);
    }
    if (Array.isArray(s.allOf)) {
      for (let i = 0; i < s.allOf.length; i++) {
        const sub = s.allOf[i];
        this.walk(sub, this.child(sub, place, `allOf/${i}`), value, instPtr, depth + 1);
      }
    }
    if (Array.isArray(s.anyOf)) {
      const ok = s.anyOf.some((sub, i) => this.valid(this.child(sub, place, `anyOf/${i}`), value));
      this.count(instPtr, place, 'anyOf', ok);
    }
    if (Array.isArray(s.oneOf)) {
      let n = 0;
      s.oneOf.forEach((sub, i) => {
        if (this.valid(this.child(sub, place, `oneOf/${i}`), value)) n++;
      });
      this.count(instPtr, place, 'oneOf', n === 1);
    }
    if ('not' in s) this.count(instPtr, place, 'not', !this.valid(this.child(s.not, place, 'not'), value));
    if ('if' in s) {
      const branch = this.valid(this.child(s.if, place, 'if'), value) ? 'then' : 'else';
      if (branch in s) this.walk(s[branch], this.child(s[branch], place, branch), value, instPtr, depth + 1);
    }
  }

  private walkArray(s: Obj, place: Place, arr: unknown[], instPtr: string, depth: number): void {
    for (const kw of ['maxItems', 'minItems', 'uniqueItems']) {
      if (kw in s) this.assertion(s, place, kw, arr, instPtr, { [kw]: s[kw] });
    }
    if ('contains' in s) {
      const sub = this.child(s.contains, place, 'contains');
      let n = 0;
      for (const item of arr) if (this.valid(sub, item)) n++;
      const min = this.modern && typeof s.minContains === 'number' ? s.minContains : 1;
      const max = this.modern && typeof s.maxContains === 'number' ? s.maxContains : Number.POSITIVE_INFINITY;
      this.count(instPtr, place, 'contains', n >= min && n <= max);
    }
    // Tuple positions, then the rest.
    let tuple: unknown[] | undefined;
    let tupleKw = '';
    let rest: unknown;
    let restKw = '';
    if (this.compiled.dialect === '2020-12') {
      if (Array.isArray(s.prefixItems)) {
        tuple = s.prefixItems;
        tupleKw = 'prefixItems';
      }
      if ('items' in s) {
        rest = s.items;
        restKw = 'items';
      }
    } else if (Array.isArray(s.items)) {
      tuple = s.items;
      tupleKw = 'items';
      if ('additionalItems' in s) {
        rest = s.additionalItems;
        restKw = 'additionalItems';
      }
    } else if ('items' in s) {
      rest = s.items;
      restKw = 'items';
    }
    const start = tuple ? Math.min(tuple.length, arr.length) : 0;
    if (tuple) {
      for (let i = 0; i < start; i++) {
        this.walk(
          tuple[i],
          this.child(tuple[i], place, `${tupleKw}/${i}`),
          arr[i],
          `${instPtr}/${i}`,
          depth + 1,
        );
      }
    }
    if (restKw) {
      if (rest === false) {
        this.count(instPtr, place, restKw, arr.length <= start);
      } else {
        const p = this.child(rest, place, restKw);
        for (let i = start; i < arr.length; i++) this.walk(rest, p, arr[i], `${instPtr}/${i}`, depth + 1);
      }
    }
  }

  private walkProperties(s: Obj, place: Place, obj: Obj, instPtr: string, depth: number): void {
    const keys = Object.keys(obj);
    for (const kw of ['maxProperties', 'minProperties']) {
      if (kw in s) this.assertion(s, place, kw, obj, instPtr, { [kw]: s[kw] });
    }
    const has = (k: string) => Object.hasOwn(obj, k);
    if (Array.isArray(s.required)) {
      for (const name of s.required) {
        if (typeof name === 'string')
          this.count(`${instPtr}/${escapeToken(name)}`, place, 'required', has(name));
      }
    }
    const deps: [string, unknown][] = [];
    if (isObj(s.dependencies))
      deps.push(
        ...Object.entries(s.dependencies).map(
          ([k, v]) => [`dependencies/${escapeToken(k)}`, v] as [string, unknown],
        ),
      );
    const depReq = this.modern && isObj(s.dependentRequired) ? s.dependentRequired : {};
    const depSch = this.modern && isObj(s.dependentSchemas) ? s.dependentSchemas : {};
    for (const [trigger, names] of Object.entries(depReq))
      deps.push([`dependentRequired/${escapeToken(trigger)}`, names]);
    for (const [trigger, sub] of Object.entries(depSch))
      deps.push([`dependentSchemas/${escapeToken(trigger)}`, sub]);
    for (const [where, dep] of deps) {
      const trigger = decodePointerToken(where.slice(where.indexOf('/') + 1));
      if (!has(trigger)) continue;
      const kw = where.slice(0, where.indexOf('/'));
      if (Array.isArray(dep)) {
        for (const name of dep) {
          if (typeof name === 'string')
            this.count(`${instPtr}/${escapeToken(name)}`, place, kw, has(name), where);
        }
      } else this.walk(dep, this.child(dep, place, where), obj, instPtr, depth + 1);
    }
    const props = isObj(s.properties) ? s.properties : {};
    const patterns = isObj(s.patternProperties)
      ? Object.keys(s.patternProperties).map((p) => [p, patternTester(p)] as const)
      : [];
    let extras = 0;
    const additional = s.additionalProperties;
    const addPlace =
      additional !== undefined && additional !== false
        ? this.child(additional, place, 'additionalProperties')
        : place;
    for (const key of keys) {
      const childPtr = `${instPtr}/${escapeToken(key)}`;
      let matched = false;
      if (Object.hasOwn(props, key)) {
        matched = true;
        const sub = props[key];
        this.walk(
          sub,
          this.child(sub, place, `properties/${escapeToken(key)}`),
          obj[key],
          childPtr,
          depth + 1,
        );
      }
      for (const [p, test] of patterns) {
        if (test(key)) {
          matched = true;
          const sub = (s.patternProperties as Obj)[p];
          this.walk(
            sub,
            this.child(sub, place, `patternProperties/${escapeToken(p)}`),
            obj[key],
            childPtr,
            depth + 1,
          );
        }
      }
      if (!matched && additional !== undefined) {
        extras++;
        if (additional !== false) this.walk(additional, addPlace, obj[key], childPtr, depth + 1);
      }
    }
    if (additional === false) this.count(instPtr, place, 'additionalProperties', extras === 0);
    if ('propertyNames' in s) {
      const sub = this.child(s.propertyNames, place, 'propertyNames');
      this.count(
        instPtr,
        place,
        'propertyNames',
        keys.every((k) => this.valid(sub, k)),
      );
    }
  }
}

/** A `patternProperties` key as ajv runs it (ECMA-262 with `u`, else without). */
function patternTester(p: string): (key: string) => boolean {
  let re: RegExp;
  try {
    re = new RegExp(p, 'u');
  } catch {
    try {
      re = new RegExp(p);
    } catch {
      return () => false;
    }
  }
  return (key) => re.test(key);
}

/** The walk met something it cannot split (an unresolvable `$ref`): the schema counts as one. */
class UnwalkableError extends Error {}

/**
 * The constraints `value` meets and breaks under `compiled` (see the module comment). A schema
 * the walk cannot split (dynamic references, a `$ref` it cannot follow) counts as one
 * constraint: the answer's validity.
 */
export function tallyConstraints(
  compiled: CompiledSchema,
  value: unknown,
  limits: WalkLimits = {},
): ConstraintTally {
  const rootPlace: Place = { doc: ROOT_KEY, ptr: '', base: ROOT_KEY };
  const whole = (index: SchemaIndex): ConstraintTally => {
    const ok = compiled.validate(value) as boolean;
    const w = new Walk(compiled, index, limits);
    w.count('', rootPlace, 'schema', ok, '');
    w.tally.atomic = true;
    return w.tally;
  };
  // A schema hyperjump validates (src/core/validator-hyperjump.ts) is not split: the walk reads ajv's.
  if (compiled.validator !== 'ajv') return whole(new SchemaIndex(compiled.ajv, compiled.dialect));
  const index = new SchemaIndex(compiled.ajv, compiled.dialect);
  index.indexDocument(ROOT_KEY, compiled.schema);
  for (const [uri, doc] of compiled.remotes) index.indexDocument(uri, doc);
  if (index.dynamic) return whole(index);
  const w = new Walk(compiled, index, limits);
  try {
    w.walk(
      compiled.schema,
      isObj(compiled.schema) ? (index.places.get(compiled.schema) ?? rootPlace) : rootPlace,
      value,
      '',
      0,
    );
  } catch (e) {
    if (e instanceof UnwalkableError || e instanceof RangeError) return whole(index);
    throw e;
  }
  return w.tally;
}

// -- One answer -------------------------------------------------------------------------------------

export interface AnswerCheck {
  /** ajv's verdict. */
  valid: boolean;
  /** Every violation ajv reports (allErrors), at most `maxViolations`. */
  violations: Violation[];
  /** How many violations ajv reported in all. */
  violation_count: number;
  /** Validation itself failed (a recursive schema over a very deep answer): counted invalid. */
  error?: string;
  /** The constraints walked; null when validation failed. */
  tally: ConstraintTally | null;
}

/** Validates one answer (all errors) and tallies its constraints. Never throws. */
export function checkAnswer(
  compiled: CompiledSchema,
  value: unknown,
  opts: { maxViolations?: number; limits?: WalkLimits } = {},
): AnswerCheck {
  const max = opts.maxViolations ?? 100;
  const r = validateCompiled(compiled, value);
  if ('error' in r) return { valid: false, violations: [], violation_count: 0, error: r.error, tally: null };
  let tally: ConstraintTally | null;
  let error: string | undefined;
  try {
    tally = tallyConstraints(compiled, value, opts.limits);
  } catch (e) {
    tally = null;
    error = `constraints could not be walked: ${e instanceof Error ? e.message : String(e)}`;
  }
  const out: AnswerCheck = {
    valid: r.valid,
    violations: r.violations.slice(0, max),
    violation_count: r.violations.length,
    tally,
  };
  if (error) out.error = error;
  return out;
}
