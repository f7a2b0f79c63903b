/**
 * JSON Schema helpers on ajv, with the reference's semantics (docs/scoring.md "Gates"):
 * - `isValidDraft7Schema`: an object that passes the draft-07 meta-schema, where `format:
 *   "regex"` is asserted with **Python's** regex grammar (jsonschema's check_schema does that);
 *   `uri`/`uri-reference` are not checked (jsonschema needs optional packages for those).
 * - `validateInstance`: draft-07 validation with `format` not asserted and `pattern` run with
 *   Python's `re.search` semantics (translated to a JS RegExp).
 * Untrusted schemas must not crash a run: every failure comes back as a reason string.
 */

import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import type { Ajv, ValidateFunction } from 'ajv';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { errorMessage } from './errors.ts';
import { pythonRegexError, translatePythonRegex } from './pyregex.ts';
import { TextMap } from './text-map.ts';

// JSON meta-schemas through require: it works the same from the TypeScript sources and from the
// scoring workers' bundle (where an import attribute would not survive).
const requireJson = createRequire(import.meta.url);

/**
 * ajv, loaded on first use: a warm scoring worker (every validator from the cache, every schema's
 * verdict known) never needs it.
 */
let ajvModule: typeof import('ajv') | undefined;
const ajvLib = (): typeof import('ajv') => {
  ajvModule ??= requireJson('ajv') as typeof import('ajv');
  return ajvModule;
};

/** A RegExp engine for ajv: Python pattern syntax and semantics, compiled once per pattern. */
export const pyRegExp = Object.assign(
  (pattern: string): RegExpLike => {
    const cached = regexCache.get(pattern);
    if (cached) return cached;
    let re: RegExpLike | undefined;
    const t = translatePythonRegex(pattern);
    if (t) {
      try {
        re = new RegExp(t.source, t.flags);
      } catch {
        re = undefined;
      }
    }
    if (!re) {
      for (const flags of ['u', '']) {
        try {
          re = new RegExp(pattern, flags);
          break;
        } catch {
          // try the next
        }
      }
    }
    // A pattern no engine here can run is not asserted (it passed Python's syntax check).
    re ??= { test: () => true };
    if (regexCache.size > 4096) regexCache.clear();
    regexCache.set(pattern, re);
    return re;
  },
  { code: 'pyRegExp' },
) satisfies RegExpEngine;
const regexCache = new Map<string, RegExpLike>();

/** A JSON value as one string: equal strings iff equal values (object keys in any order). */
function canonicalKey(v: unknown): string {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'string') return JSON.stringify(v);
    if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '0' : String(v);
    return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalKey).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalKey(o[k])}`)
    .join(',')}}`;
}

/**
 * The first repeated item as ajv reports it, `[i, j]` (the last item with an equal one before
 * it, and the nearest such one), or null: in linear time, each item keyed by its canonical text
 * (values; key order ignored; `1` and `1.0` equal, `true` and `1` not).
 */
export function firstDuplicate(data: unknown[]): [number, number] | null {
  if (data.length < 2) return null;
  let keys: string[];
  try {
    keys = data.map(canonicalKey);
  } catch {
    return null; // nested too deep to key: not asserted (the instance is still validated otherwise)
  }
  const last = new Map<string, number>();
  let pair: [number, number] | null = null;
  keys.forEach((k, i) => {
    const j = last.get(k);
    if (j !== undefined) pair = [i, j];
    last.set(k, i);
  });
  return pair;
}

/**
 * `uniqueItems` in linear time (`firstDuplicate`): ajv compares every pair of items that are not
 * all scalars, and the meta-schemas' `enum` has `items: true`, so a 200,000-value `enum` cost
 * 2e10 comparisons in the schema check. Generated code calls `sobFirstDuplicate` by name, so a
 * validator's standalone code (shared between workers) carries it too.
 */
function linearUniqueItems(ajv: Ajv): Ajv {
  const { _, str } = ajvLib();
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    error: {
      message: ({ params }) =>
        str`must NOT have duplicate items (items ## ${params.j} and ${params.i} are identical)`,
      params: ({ params }) => _`{i: ${params.i}, j: ${params.j}}`,
    },
    code(cxt) {
      const { gen, data, schema } = cxt;
      if (!schema) return;
      const fn = gen.scopeValue('func', { ref: firstDuplicate, code: _`sobFirstDuplicate` });
      const dup = gen.const('dup', _`${fn}(${data})`);
      const i = gen.const('i', _`${dup} === null ? 0 : ${dup}[0]`);
      const j = gen.const('j', _`${dup} === null ? 0 : ${dup}[1]`);
      cxt.setParams({ i, j });
      cxt.fail(_`${dup} !== null`);
    },
  });
  return ajv;
}

let metaAjv: Ajv | undefined;
let metaValidate: ValidateFunction | undefined;

function metaValidator(): ValidateFunction {
  if (metaValidate) return metaValidate;
  // Formats must be known when ajv compiles its meta-schema, i.e. at construction.
  metaAjv = linearUniqueItems(
    new (ajvLib().Ajv)({
      strict: false,
      validateFormats: true,
      allErrors: false,
      // Our copy of the draft-07 meta-schema is known good: checking it against itself first
      // would compile the meta-schema twice per worker.
      validateSchema: false,
      code: { regExp: pyRegExp },
      formats: {
        regex: { type: 'string', validate: (s: string) => pythonRegexError(s) === null },
        uri: true,
        'uri-reference': true,
      },
    }),
  );
  // ajv's built-in copy of the meta-schema is compiled before any format is known, so its
  // `format: "regex"` would never be asserted: compile our own copy under another id.
  const draft07Meta = requireJson('ajv/dist/refs/json-schema-draft-07.json') as Record<string, unknown>;
  const meta = { ...draft07Meta, $id: 'urn:sob-eval:draft-07-meta#' };
  metaValidate = metaAjv.compile(meta);
  return metaValidate;
}

export type SchemaCheck = { valid: true } | { valid: false; reason: string };

/** SPEC `schema_valid_input`: an object, valid under the draft-07 meta-schema (Python regexes). */
export function checkDraft7Schema(schema: unknown): SchemaCheck {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return { valid: false, reason: 'the schema is not a JSON object' };
  }
  try {
    const v = metaValidator();
    if (v(schema)) return { valid: true };
    const e = v.errors?.[0];
    return { valid: false, reason: e ? `schema${e.instancePath} ${e.message}` : 'invalid schema' };
  } catch (e) {
    return { valid: false, reason: `schema could not be checked: ${errorMessage(e)}` };
  }
}

export function isValidDraft7Schema(schema: unknown): boolean {
  return checkDraft7Schema(schema).valid;
}

let instanceAjv: Ajv | undefined;
const validatorCache = new Map<string, ValidateFunction | string>();
const VALIDATOR_CACHE_MAX = 2048;

function ajvForInstances(): Ajv {
  instanceAjv ??= linearUniqueItems(
    new (ajvLib().Ajv)({
      strict: false,
      allErrors: false,
      validateFormats: false,
      validateSchema: false,
      addUsedSchema: false,
      inlineRefs: true,
      // Unoptimized code generation compiles ~4x faster; each schema is compiled once and
      // validated only a few times, so compile time is what counts. The source is kept: a
      // validator compiled on one worker is handed to the others as code (`validatorCode`).
      code: { regExp: pyRegExp, optimize: false, source: true },
    }),
  );
  return instanceAjv;
}

/**
 * A compiled draft-07 validator, or the reason it cannot be compiled. Cached by schema text
 * (`key`); `schema` may be a thunk so a cache hit needs no plain copy of the schema.
 */
export function compileSchema(schema: object | (() => object), key?: string): ValidateFunction | string {
  const plain = () => (typeof schema === 'function' ? (schema as () => object)() : schema);
  const k = key ?? JSON.stringify(plain());
  const hit = validatorCache.get(k);
  if (hit !== undefined) return hit;
  let out: ValidateFunction | string;
  try {
    out = ajvForInstances().compile(plain());
  } catch (e) {
    out = `schema cannot be compiled: ${errorMessage(e)}`;
  }
  if (validatorCache.size >= VALIDATOR_CACHE_MAX) validatorCache.clear();
  validatorCache.set(k, out);
  return out;
}

export type InstanceCheck = { valid: true } | { valid: false; reason: string };

/** What is known of one schema text: its validity and, once needed, its compiled validator. */
export interface SchemaEntry {
  /** The schema text it is cached under ('' when none). */
  key?: string;
  valid: boolean;
  reason?: string;
  validate?: ValidateFunction | string;
  /** The schema as a plain JS value (parsed once, reused by every record that shares it). */
  schema?: unknown;
}

/** By schema text: looked up for every record (see TextMap). */
const entries = new TextMap<SchemaEntry>();
const VALID: SchemaCheck = { valid: true };

/**
 * Whether a schema text is known to pass `checkDraft7Schema` without running it (a worker whose
 * validator cache holds that text's validator: only valid schemas get one).
 */
let knownValidSchema: ((key: string) => boolean) | undefined;

export function setKnownValidSchema(f: ((key: string) => boolean) | undefined): void {
  knownValidSchema = f;
}

/**
 * The schema facts for a schema text, from one cache lookup (a schema recurs in every model's
 * file). `plain` builds the plain schema only on a miss.
 */
export function schemaEntry(key: string, plain: () => unknown): SchemaEntry {
  let e = key ? entries.get(key) : undefined;
  if (!e) {
    const schema = plain();
    // A schema text with a validator kept from an earlier run passed this check then.
    const c = key && knownValidSchema?.(key) ? VALID : checkDraft7Schema(schema);
    e = c.valid ? { key, valid: true, schema } : { key, valid: false, reason: c.reason, schema };
    if (key) {
      if (entries.size >= VALIDATOR_CACHE_MAX) entries.clear();
      entries.set(key, e);
    }
  }
  return e;
}

/** Whether a schema text has been seen (and so is known to be well-formed JSON). */
export function isKnownSchemaText(key: string): boolean {
  return entries.has(key);
}

/** Validates with an entry's validator, compiling it on first use; never throws. */
/**
 * Validates `instance` with `entry`'s validator (compiled here when it has none yet). `schemaDone`
 * is told (false) once the work that depends on the schema alone is over, before the answer is
 * validated: a time budget may remember a schema that stalls its compile, never one answer's
 * validation (a catastrophic-backtracking answer says nothing about other answers).
 */
export function validateWithEntry(
  entry: SchemaEntry,
  plain: () => object,
  instance: unknown,
  schemaDone?: (on: boolean) => void,
): InstanceCheck {
  if (entry.validate === undefined) {
    const compile = (): ValidateFunction | string => {
      try {
        return ajvForInstances().compile(plain());
      } catch (e) {
        return `schema cannot be compiled: ${errorMessage(e)}`;
      }
    };
    // May throw SchemaDeferred: another worker is compiling this schema right now.
    entry.validate = validatorSource && entry.key ? validatorSource(entry.key, compile) : compile();
  }
  const v = entry.validate;
  schemaDone?.(false);
  if (typeof v === 'string') return { valid: false, reason: v };
  try {
    if (v(instance)) return { valid: true };
    const err = v.errors?.[0];
    return {
      valid: false,
      reason: err ? `${err.instancePath || '/'} ${err.message}` : 'does not match the schema',
    };
  } catch (e) {
    return { valid: false, reason: `validation failed: ${errorMessage(e)}` };
  }
}

// -------------------------------------------------------------------------------------------
// Validators compiled once per schema text across worker threads: the one that compiles it hands
// its standalone code to the others (see src/scoring/validators.ts).

/**
 * Where a schema's validator comes from: `compile` here, or the code another thread compiled.
 * May throw `SchemaDeferred` when another thread is compiling that schema text right now.
 */
export type ValidatorSource = (
  key: string,
  compile: () => ValidateFunction | string,
) => ValidateFunction | string;

let validatorSource: ValidatorSource | undefined;

export function setValidatorSource(source: ValidatorSource | undefined): void {
  validatorSource = source;
}

/** Thrown while another thread compiles the schema a record needs: score that record later. */
export class SchemaDeferred extends Error {
  constructor(readonly slot: number) {
    super('schema being compiled elsewhere');
  }
}

/** A compiled validator as standalone code (a CommonJS module body). */
export function validatorCode(v: ValidateFunction): string {
  const standaloneCode = requireJson('ajv/dist/standalone').default as (
    ajv: Ajv,
    v: ValidateFunction,
  ) => string;
  return standaloneCode(ajvForInstances(), v);
}

/** The compiled script of a validator made by `validatorFromCode` (for its V8 code cache). */
const SCRIPT = Symbol('sob.validatorScript');

/**
 * A validator back from its standalone code (the functions it names supplied). `cachedData`: the
 * V8 code cache of the same code (`validatorCodeCache`), which spares V8 parsing and compiling
 * it again (a validator is compiled on its first call: that is most of a warm run's schema cost).
 */
export function validatorFromCode(code: string, cachedData?: Buffer): ValidateFunction {
  const module: { exports: { default?: ValidateFunction } } = { exports: {} };
  // The same function `new Function(...)` would make ("use strict" stays its first statement).
  const script = new Script(
    `(function (module, exports, require, pyRegExp, sobFirstDuplicate) {${code}\n})`,
    {
      filename: 'sob-validator.js',
      cachedData,
    },
  );
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module,
    module.exports,
    requireJson,
    pyRegExp,
    firstDuplicate,
  );
  const v = module.exports as unknown as ValidateFunction & { [SCRIPT]?: Script };
  Object.defineProperty(v, SCRIPT, { value: script });
  return v;
}

/**
 * A validator's V8 code cache (functions compiled so far included: call it after the validator
 * has run), when it came from `validatorFromCode` and was not already built from a cache V8
 * accepted. Undefined otherwise.
 */
export function validatorCodeCache(v: ValidateFunction, fromCache: boolean): Buffer | undefined {
  const script = (v as ValidateFunction & { [SCRIPT]?: Script })[SCRIPT];
  if (!script || (fromCache && !script.cachedDataRejected)) return undefined;
  return script.createCachedData();
}

/** Validates an instance (plain JS value) under a schema; never throws. */
export function validateInstance(
  schema: object | (() => object),
  instance: unknown,
  key?: string,
): InstanceCheck {
  const v = compileSchema(schema, key);
  if (typeof v === 'string') return { valid: false, reason: v };
  try {
    if (v(instance)) return { valid: true };
    const e = v.errors?.[0];
    return {
      valid: false,
      reason: e ? `${e.instancePath || '/'} ${e.message}` : 'does not match the schema',
    };
  } catch (e) {
    // A recursive schema over a very deep answer can exhaust the stack.
    return { valid: false, reason: `validation failed: ${errorMessage(e)}` };
  }
}

// -------------------------------------------------------------------------------------------
// The `strict` profile: the schema's own dialect, ECMA-262 patterns (as JSON Schema specifies),
// and optionally asserted formats.

export type Dialect = 'draft-04' | 'draft-06' | 'draft-07' | '2019-09' | '2020-12';

/** The dialect a schema declares with `$schema` (draft-07 when it names none we know). */
export function schemaDialect(schema: unknown): Dialect {
  const id = schema && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof id !== 'string') return 'draft-07';
  if (id.includes('draft-04')) return 'draft-04';
  if (id.includes('draft-06')) return 'draft-06';
  if (id.includes('2019-09')) return '2019-09';
  if (id.includes('2020-12')) return '2020-12';
  return 'draft-07';
}

const dialectAjvs = new Map<string, Ajv>();

async function loadDialectClass(d: Dialect): Promise<new (opts: object) => Ajv> {
  // Through require, not import(): the scoring workers' bundle runs from a V8 code cache, where
  // Node 20 loses import()'s loader (src/scoring/worker-bundle.ts).
  type AjvClass = new (opts: object) => Ajv;
  if (d === 'draft-04') return (requireJson('ajv-draft-04') as { default: AjvClass }).default;
  if (d === '2019-09') return (requireJson('ajv/dist/2019.js') as { default: AjvClass }).default;
  if (d === '2020-12') return (requireJson('ajv/dist/2020.js') as { default: AjvClass }).default;
  return ajvLib().Ajv as unknown as new (
    opts: object,
  ) => Ajv;
}

/** Loads the validator classes the strict profile needs (call once before strict scoring). */
export async function prepareStrict(assertFormats: boolean): Promise<void> {
  const addFormats = (requireJson('ajv-formats') as { default: (a: Ajv) => Ajv }).default;
  for (const d of ['draft-04', 'draft-06', 'draft-07', '2019-09', '2020-12'] as Dialect[]) {
    const key = `${d}:${assertFormats}`;
    if (dialectAjvs.has(key)) continue;
    const Cls = await loadDialectClass(d);
    const ajv = linearUniqueItems(
      new Cls({
        strict: false,
        allErrors: false,
        validateFormats: assertFormats,
        addUsedSchema: false,
        code: { optimize: false },
      }),
    );
    if (d === 'draft-06') {
      const meta06 = requireJson('ajv/dist/refs/json-schema-draft-06.json') as object;
      ajv.addMetaSchema(meta06 as object);
    }
    // Formats are always known (the meta-schemas use `regex`, `uri`); asserted only when asked.
    addFormats(ajv);
    dialectAjvs.set(key, ajv);
  }
}

const strictEntries = new Map<string, SchemaEntry>();

/** Strict schema facts: valid under its own dialect's meta-schema, validator compiled lazily. */
export function strictSchemaEntry(key: string, plain: () => object, assertFormats: boolean): SchemaEntry {
  const k = `${assertFormats ? 'F' : 'f'}${key}`;
  let e = key ? strictEntries.get(k) : undefined;
  if (e) return e;
  const schema = plain();
  const ajv = dialectAjvs.get(`${schemaDialect(schema)}:${assertFormats}`);
  if (!ajv) throw new Error('prepareStrict() must run before strict scoring');
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    e = { valid: false, reason: 'the schema is not a JSON object' };
  } else {
    try {
      const ok = ajv.validateSchema(schema) as boolean;
      const err = ajv.errors?.[0];
      e = ok
        ? { valid: true }
        : { valid: false, reason: err ? `schema${err.instancePath} ${err.message}` : 'invalid schema' };
    } catch (x) {
      e = { valid: false, reason: `schema could not be checked: ${errorMessage(x)}` };
    }
    if (e.valid) {
      try {
        e.validate = ajv.compile(schema);
      } catch (x) {
        // An uncompilable schema (a bad ECMA-262 pattern, an unresolvable $ref) is not valid input.
        e = { valid: false, reason: `schema cannot be compiled: ${errorMessage(x)}` };
      }
    }
  }
  if (key) {
    if (strictEntries.size >= VALIDATOR_CACHE_MAX) strictEntries.clear();
    strictEntries.set(k, e);
  }
  return e;
}
