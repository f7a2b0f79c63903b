/**
 * The compliance track's validator (issue 11, JSONSchemaBench and SchemaBench): ajv configured
 * per JSON Schema draft, chosen by the schema's `$schema` (draft-07 when it names none we know).
 *
 * - Drafts: 4 (`ajv-draft-04`), 6 and 7 (`ajv`, with the draft-06 meta-schema added), 2019-09
 *   (`ajv/dist/2019`), 2020-12 (`ajv/dist/2020`). A draft-03 schema is read as draft 4.
 * - `pattern` and `patternProperties` are ECMA-262 regular expressions with the `u` flag, as
 *   JSON Schema specifies; a pattern that only compiles without `u` (common in hand-written
 *   schemas: `\-`, `\_` outside a class) is run without it rather than refusing the schema.
 * - `format` is asserted by default with `ajv-formats` (full mode), as JSONSchemaBench's
 *   validator does; unknown formats are ignored. `assertFormats: false` gives the annotation-only
 *   behaviour the 2019-09 / 2020-12 specifications default to.
 * - In drafts 4 to 7 a `$ref` makes its sibling keywords ignored (the specification's rule; ajv
 *   applies them): see `refSiblingsIgnored`.
 * - Remote `$ref`s are never fetched: each is resolved by a `RemoteResolver` (a local folder, see
 *   `localRemotes`) or by the meta-schemas ajv ships; anything else makes the schema
 *   uncompilable, with the URI named.
 * - Every compiled schema gets an ajv instance of its own: untrusted schemas that reuse an `$id`
 *   cannot collide, and nothing accumulates across records (an instance costs ~0.3 ms).
 *
 * Validation runs synchronously; its time budget comes from where it runs (a scoring worker, or
 * `ValidatorPool` in `validator-pool.ts`), as a catastrophic `pattern` cannot be interrupted.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve, sep } from 'node:path';
import type {
  Ajv,
  CodeKeywordDefinition,
  ErrorObject,
  FuncKeywordDefinition,
  Options,
  ValidateFunction,
} from 'ajv';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { errorMessage } from './errors.ts';
import { jsonschemabenchFormat, metaSchemaFormat } from './py-formats.ts';
import { translatePythonRegex } from './pyregex.ts';
import { pyRegExp } from './schema.ts';
import {
  compileHyperjump,
  type HyperjumpChecks,
  hyperjumpValidator,
  routedFeatures,
} from './validator-hyperjump.ts';
import type { Protocol } from './validator-protocols.ts';

// Loaded through require: the same from the TypeScript sources and from a worker's bundle.
// Loaded on first use, not with this module: a scoring worker whose validators all come from the
// cache never compiles a schema, and loading ajv and its formats cost each worker ~20 ms at start.
const requireCjs = createRequire(import.meta.url);
type AjvModule = typeof import('ajv');
let ajvModule: AjvModule | undefined;
const ajvLib = (): AjvModule => {
  ajvModule ??= requireCjs('ajv') as AjvModule;
  return ajvModule;
};
type AjvClass = new (opts: Options) => Ajv;
const classes: Record<string, () => AjvClass> = {
  ajv: () => ajvLib().Ajv as unknown as AjvClass,
  draft04: () => requireCjs('ajv-draft-04').default as AjvClass,
  ajv2019: () => requireCjs('ajv/dist/2019.js').default as AjvClass,
  ajv2020: () => requireCjs('ajv/dist/2020.js').default as AjvClass,
};
const addFormats = (ajv: Ajv): Ajv => (requireCjs('ajv-formats').default as (ajv: Ajv) => Ajv)(ajv);

export const DIALECTS = ['draft-04', 'draft-06', 'draft-07', '2019-09', '2020-12'] as const;

/**
 * How a schema is read (docs/compliance-protocols.md):
 * - `jsonschemabench`: the JSONSchemaBench paper's validation, whatever the schema's `$schema`:
 *   Draft 2020-12 meta-validation first (a schema that fails it admits no answer), then Draft
 *   2020-12 validation with Python `re` patterns and `multipleOf`, Python `jsonschema`'s format
 *   checks (src/core/py-formats.ts) and `$ref`s resolved only when an answer reaches them;
 * - `dialect`: the draft the schema's `$schema` names (draft-07 when none), ECMA-262 patterns,
 *   ajv-formats, every `$ref` resolved when the schema compiles.
 */
export { PROTOCOLS, type Protocol } from './validator-protocols.ts';
export type Dialect = (typeof DIALECTS)[number];

/** The draft of a schema that names none (or one we do not know). */
export const DEFAULT_DIALECT: Dialect = 'draft-07';

/**
 * The draft a schema declares with `$schema`, or `fallback`. Matching is on the draft's name
 * (`draft-04`, `draft/2020-12`, ...) so `http`/`https`, a trailing `#` and a missing one all work.
 */
export function declaredDialect(schema: unknown, fallback: Dialect = DEFAULT_DIALECT): Dialect {
  const id = isObject(schema) ? schema.$schema : undefined;
  if (typeof id !== 'string') return fallback;
  if (/draft-0[34]\b/.test(id)) return 'draft-04';
  if (/draft-06\b/.test(id)) return 'draft-06';
  if (/draft-07\b/.test(id)) return 'draft-07';
  if (/2019-09/.test(id)) return '2019-09';
  if (/2020-12/.test(id)) return '2020-12';
  return fallback;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// -- Regular expressions ------------------------------------------------------------------------

const regexCache = new Map<string, RegExpLike>();

/** ECMA-262 with `u`, else without; a pattern neither accepts makes the schema uncompilable. */
const ecmaRegExp = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const key = `${flags}/${pattern}`;
    const hit = regexCache.get(key);
    if (hit) return hit;
    let re: RegExp;
    try {
      re = new RegExp(pattern, flags);
    } catch (e) {
      if (!flags.includes('u')) throw e;
      try {
        re = new RegExp(pattern, flags.replace('u', ''));
      } catch {
        throw e;
      }
    }
    if (regexCache.size >= 4096) regexCache.clear();
    regexCache.set(key, re);
    return re;
  },
  { code: 'new RegExp' },
) satisfies RegExpEngine;

// -- Remote documents -----------------------------------------------------------------------------

/** A schema document for a URI (no fragment), or undefined when it is not known locally. */
export type RemoteResolver = (uri: string) => unknown;

/**
 * Resolves URIs under `baseUri` from files under `dir` (the test suite maps
 * `http://localhost:1234/` to its `remotes/` folder). Never leaves `dir`; never touches the
 * network. Documents are read once.
 */
export function localRemotes(dir: string, baseUri: string): RemoteResolver {
  const root = realpathSync(dir);
  const cache = new Map<string, unknown>();
  return (uri: string) => {
    if (!uri.startsWith(baseUri)) return undefined;
    if (cache.has(uri)) return cache.get(uri);
    const rel = decodeURIComponent(uri.slice(baseUri.length).split(/[?#]/)[0]);
    const file = resolve(root, rel);
    let doc: unknown;
    if (file.startsWith(root + sep)) {
      try {
        doc = JSON.parse(readFileSync(realpathSync(file), 'utf8'));
      } catch {
        doc = undefined;
      }
    }
    cache.set(uri, doc);
    return doc;
  };
}

/** The meta-schemas ajv ships, by URI (so `"$ref": "http://json-schema.org/draft-04/schema#"` works offline). */
const META_FILES: Record<string, string> = {
  'http://json-schema.org/draft-04/schema': 'ajv-draft-04/dist/refs/json-schema-draft-04.json',
  'http://json-schema.org/draft-06/schema': 'ajv/dist/refs/json-schema-draft-06.json',
  'http://json-schema.org/draft-07/schema': 'ajv/dist/refs/json-schema-draft-07.json',
  'https://json-schema.org/draft/2019-09/schema': 'ajv/dist/refs/json-schema-2019-09/schema.json',
  'https://json-schema.org/draft/2020-12/schema': 'ajv/dist/refs/json-schema-2020-12/schema.json',
};
for (const v of ['core', 'applicator', 'validation', 'meta-data', 'format', 'content']) {
  META_FILES[`https://json-schema.org/draft/2019-09/meta/${v}`] =
    `ajv/dist/refs/json-schema-2019-09/meta/${v}.json`;
}
for (const v of [
  'core',
  'applicator',
  'unevaluated',
  'validation',
  'meta-data',
  'format-annotation',
  'content',
]) {
  META_FILES[`https://json-schema.org/draft/2020-12/meta/${v}`] =
    `ajv/dist/refs/json-schema-2020-12/meta/${v}.json`;
}

function metaSchema(uri: string): unknown {
  const file = META_FILES[uri.replace(/#$/, '')];
  return file ? requireCjs(file) : undefined;
}

// -- Ajv instances --------------------------------------------------------------------------------

export interface ValidatorOptions {
  /** Force a draft; by default the schema's `$schema` decides. */
  dialect?: Dialect;
  /** The draft of a schema without a known `$schema` (default draft-07). */
  defaultDialect?: Dialect;
  /** Assert `format` (default true, as JSONSchemaBench does). */
  assertFormats?: boolean;
  /** Where remote `$ref`s come from (never the network). */
  remotes?: RemoteResolver;
  /** How the schema is read (default `dialect`; `sob score` defaults to `jsonschemabench`). */
  protocol?: Protocol;
  /**
   * jsonschemabench protocol: formats left unchecked, as a Python without some of
   * `jsonschema[format]`'s packages leaves them (the agreement bench uses it).
   */
  uncheckedFormats?: readonly string[];
  /**
   * Resolve `$ref`s lazily (a `$ref` that resolves nowhere fails only the answers reaching it),
   * as Python's `referencing` does. Default: on under the jsonschemabench protocol only.
   */
  lazyRefs?: boolean;
  /**
   * Send the Draft 2020-12 schemas ajv evaluates wrongly (`routedFeatures`) to hyperjump
   * (default true; false keeps ajv for every schema, as the differential test compares them).
   */
  route?: boolean;
}

/** A configured ajv instance for one draft (see the module comment), or for the protocol's Draft 2020-12. */
export function newAjv(
  dialect: Dialect,
  allErrors: boolean,
  assertFormats: boolean,
  protocol: Protocol = 'dialect',
  uncheckedFormats: readonly string[] = [],
): Ajv {
  const jsb = protocol === 'jsonschemabench';
  const opts: Options = {
    strict: false,
    logger: false,
    allErrors,
    validateSchema: false,
    validateFormats: assertFormats,
    // A property is present when the answer has it, never through Object.prototype
    // (`"toString"`, `"__proto__"` as property names).
    ownProperties: true,
    code: { regExp: jsb ? pyRegExp : ecmaRegExp, optimize: false },
  };
  if (jsb) {
    const ajv = new (classes.ajv2020())(opts);
    ajv.removeKeyword('format');
    if (assertFormats) ajv.addKeyword(pythonFormat(jsonschemabenchFormat, uncheckedFormats));
    // Not Draft 2020-12 keywords: Python's Draft202012Validator ignores them (ajv refuses `id`).
    ajv.removeKeyword('dependencies');
    ajv.removeKeyword('id');
    ajv.removeKeyword('multipleOf');
    ajv.addKeyword(pythonMultipleOf);
    ajv.addKeyword(unresolvedRef);
    ajv.addKeyword(emptyEnum);
    ajv.addKeyword(protoProperty);
    return ajv;
  }
  const Cls =
    dialect === 'draft-04'
      ? classes.draft04()
      : dialect === '2019-09'
        ? classes.ajv2019()
        : dialect === '2020-12'
          ? classes.ajv2020()
          : classes.ajv();
  const ajv = new Cls(opts);
  if (dialect === 'draft-06')
    ajv.addMetaSchema(requireCjs('ajv/dist/refs/json-schema-draft-06.json') as object);
  addFormats(ajv);
  // Drafts 6 on: `id` is not a keyword (ajv refuses it outright; hand-written schemas carry it).
  if (dialect !== 'draft-04') ajv.removeKeyword('id');
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword(multipleOf);
  ajv.addKeyword(protoProperty);
  ajv.addKeyword(unresolvedRef);
  return ajv;
}

/** `format` checked by a function of (format name, value), on values of every type. */
function pythonFormat(
  check: (format: string, value: unknown) => boolean,
  unchecked: readonly string[] = [],
): FuncKeywordDefinition {
  const skip = new Set(unchecked);
  return {
    keyword: 'format',
    schemaType: 'string',
    errors: false,
    validate: (format: string, data: unknown) => skip.has(format) || check(format, data),
  };
}

/**
 * Python `jsonschema`'s `multipleOf`: with a float divisor, the quotient must be a whole number
 * exactly (`int(q) == q`: 19.99 is not a multiple of 0.01 there), falling back to exact
 * fractions when the quotient overflows; with an integer divisor, `instance % divisor == 0`.
 */
const pythonMultipleOf: FuncKeywordDefinition = {
  keyword: 'multipleOf',
  type: 'number',
  schemaType: 'number',
  errors: false,
  validate: (d: number, x: number) => pyMultipleOf(d, x),
};

function pyMultipleOf(d: number, x: number): boolean {
  if (Number.isInteger(d)) return d !== 0 && x % d === 0;
  const q = x / d;
  if (Number.isFinite(q)) return Number.isInteger(q);
  return x % d === 0;
}

/**
 * Where a `$ref` that resolves nowhere stood (the protocol resolves references lazily, as
 * Python's `referencing` does): an answer that reaches it is invalid, one that does not is not
 * affected.
 */
const unresolvedRef: FuncKeywordDefinition = {
  keyword: 'x-sob-unresolved-ref',
  schemaType: 'string',
  errors: false,
  validate: () => false,
};

/** `enum: []` (see `forJsonschemabench`): no value is allowed. */
const emptyEnum: FuncKeywordDefinition = {
  keyword: 'x-sob-empty-enum',
  errors: false,
  validate: () => false,
};

/**
 * `multipleOf` without plain ajv's traps (`quotient !== parseInt(quotient)`): 19.99 was not a
 * multiple of 0.01 (the quotient is 1998.9999999999998), 1e22 not a multiple of 1 (`parseInt`
 * reads "1e+22" as 1), 1e20 a multiple of 3. Integers are compared exactly (`%`); otherwise the
 * quotient must be within 1e-9 of an integer, and where it overflows, the remainder (exact in
 * IEEE 754) must be 0 (1e308 is a multiple of 0.5, not of 0.123456789).
 */
const multipleOf: CodeKeywordDefinition = {
  keyword: 'multipleOf',
  type: 'number',
  schemaType: 'number',
  error: {
    message: ({ schemaCode }) => ajvLib().str`must be multiple of ${schemaCode}`,
    params: ({ schemaCode }) => ajvLib()._`{multipleOf: ${schemaCode}}`,
  },
  code(cxt) {
    const { gen, data, schemaCode } = cxt;
    const q = gen.let('q');
    cxt.fail(
      ajvLib()
        ._`${schemaCode} !== 0 && (Number.isInteger(${data}) && Number.isInteger(${schemaCode}) ? ${data} % ${schemaCode} !== 0 : (${q} = ${data} / ${schemaCode}, Number.isFinite(${q}) ? Math.abs(Math.round(${q}) - ${q}) > 1e-9 : ${data} % ${schemaCode} !== 0))`,
    );
  },
};

// -- Compiling ------------------------------------------------------------------------------------

/** The key the root schema is registered under in its own ajv instance. */
export const ROOT_KEY = 'urn:sob-eval:root';

export interface CompiledSchema {
  dialect: Dialect;
  /** How the schema was read (see `PROTOCOLS`). */
  protocol: Protocol;
  assertFormats: boolean;
  /** The schema as compiled (after `refSiblingsIgnored` for drafts 4 to 7, `forJsonschemabench` under that protocol). */
  schema: unknown;
  /** The remote documents the schema needed, by URI (each from the `RemoteResolver` or ajv's meta-schemas). */
  remotes: Map<string, unknown>;
  /** This schema's own ajv instance (allErrors on). */
  ajv: Ajv;
  validate: ValidateFunction;
  /**
   * A validator for the subschema at JSON Pointer `pointer` of document `doc` (`ROOT_KEY` or a
   * remote URI), compiled on first use; undefined when ajv cannot resolve it (and always when
   * hyperjump validates).
   */
  validatorAt(doc: string, pointer: string): ValidateFunction | undefined;
  /** Which library validates: ajv, or hyperjump for the schemas `routedFeatures` sends to it. */
  validator: 'ajv' | 'hyperjump';
  /** The features that sent the schema to hyperjump (empty when ajv validates by choice). */
  routed: string[];
  /** Why hyperjump could not take a schema with such features (ajv validates it then). */
  routeFallback?: string;
}

export type CompileResult =
  | { ok: true; compiled: CompiledSchema }
  | {
      ok: false;
      dialect: Dialect;
      reason: string;
      protocol?: Protocol;
      /**
       * hyperjump ran out of its compile budget on a schema routed to it: the schema is not
       * scored (uncompilable, with the reason). ajv is not asked instead, since it reads the
       * routed features wrongly: a timer never picks the validator.
       */
      overBudget?: boolean;
    };

const MAX_REMOTE_LOADS = 64;

/**
 * Compiles `schema` for fine-grained validation (all errors). Never throws: a schema that cannot
 * compile (a bad pattern, a `$ref` that resolves nowhere, a remote `$ref` not available locally)
 * comes back with the reason. Under the `jsonschemabench` protocol a schema that fails Draft
 * 2020-12 meta-validation does not compile, and a `$ref` that resolves nowhere only fails the
 * answers that reach it.
 */
export function compileSchema(schema: unknown, opts: ValidatorOptions = {}): CompileResult {
  const protocol = opts.protocol ?? 'dialect';
  const jsb = protocol === 'jsonschemabench';
  const dialect: Dialect = jsb ? '2020-12' : (opts.dialect ?? declaredDialect(schema, opts.defaultDialect));
  const assertFormats = opts.assertFormats ?? true;
  const fail = (reason: string): CompileResult => ({ ok: false, dialect, reason, protocol });
  if (typeof schema !== 'boolean' && !isObject(schema))
    return fail('the schema is not a JSON object or boolean');
  if (jsb) {
    const meta = jsonschemabenchMetaCheck(schema, opts.uncheckedFormats);
    if (meta) return fail(meta);
  }
  const routing = dialect === '2020-12' && opts.route !== false;
  const routed = routing ? routedFeatures(schema) : [];
  let routeFallback: string | undefined;
  if (routed.length > 0) {
    const viaHyperjump = compileRouted(schema, routed, opts, protocol, assertFormats);
    if (viaHyperjump.ok || viaHyperjump.overBudget) return viaHyperjump;
    routeFallback = viaHyperjump.reason;
  }
  let prepared = protoPropertiesMoved(
    jsb
      ? forJsonschemabench(schema)
      : dialect === '2019-09' || dialect === '2020-12'
        ? schema
        : refSiblingsIgnored(schema),
  );
  const remotes = new Map<string, unknown>();
  // A fresh instance with the root and the remote documents loaded so far.
  const build = (): Ajv => {
    const a = newAjv(dialect, true, assertFormats, protocol, opts.uncheckedFormats);
    a.addSchema(prepared as object, ROOT_KEY);
    for (const [uri, doc] of remotes) a.addSchema(doc as object, uri);
    return a;
  };
  let ajv: Ajv;
  try {
    ajv = build();
  } catch (e) {
    return fail(`schema cannot be compiled: ${overflowReason(e, prepared)}`);
  }
  for (let rounds = 0; ; rounds++) {
    try {
      const validate = ajv.getSchema(ROOT_KEY);
      if (!validate) return fail('schema cannot be compiled');
      // A remote document (not a meta-schema) may hold what ajv gets wrong where the root does not.
      const remoteRouted =
        routing && routed.length === 0
          ? routedFeatures([...remotes].filter(([uri]) => metaSchema(uri) === undefined).map(([, d]) => d))
          : [];
      if (remoteRouted.length > 0) {
        const viaHyperjump = compileRouted(schema, remoteRouted, opts, protocol, assertFormats);
        if (viaHyperjump.ok || viaHyperjump.overBudget) return viaHyperjump;
        routeFallback = viaHyperjump.reason;
      }
      const subs = new Map<string, ValidateFunction | undefined>();
      const a = ajv;
      const compiled: CompiledSchema = {
        dialect,
        protocol,
        assertFormats,
        schema: prepared,
        remotes,
        ajv: a,
        validate,
        validator: 'ajv',
        routed: routed.length > 0 ? routed : remoteRouted,
        ...(routeFallback === undefined ? {} : { routeFallback }),
        validatorAt(doc: string, pointer: string) {
          const key = `${doc}#${pointerToFragment(pointer)}`;
          if (subs.has(key)) return subs.get(key);
          let v: ValidateFunction | undefined;
          try {
            v = pointer === '' ? a.getSchema(doc) : a.getSchema(key);
          } catch {
            v = undefined;
          }
          subs.set(key, v);
          return v;
        },
      };
      return { ok: true, compiled };
    } catch (e) {
      const missing = (e as { missingSchema?: unknown }).missingSchema;
      const missingRef = (e as { missingRef?: unknown }).missingRef;
      let doc: unknown;
      if (typeof missing === 'string' && missing !== '' && !remotes.has(missing) && missing !== ROOT_KEY) {
        if (remotes.size >= MAX_REMOTE_LOADS)
          return fail(`schema cannot be compiled: more than ${MAX_REMOTE_LOADS} remote documents`);
        doc = opts.remotes?.(missing) ?? metaSchema(missing);
      }
      if (doc !== undefined) {
        const d = jsb ? forJsonschemabench(doc) : doc;
        remotes.set(missing as string, d);
        try {
          ajv.addSchema(d as object, missing as string);
        } catch (x) {
          return fail(`schema cannot be compiled: ${missing}: ${errorMessage(x)}`);
        }
        continue;
      }
      // Python resolves references lazily: the `$ref` stays, failing whoever reaches it.
      if ((opts.lazyRefs ?? jsb) && typeof missingRef === 'string' && rounds < MAX_REMOTE_LOADS) {
        // Every `$ref` into a missing document at once, else the one reference ajv named.
        const docMissing =
          typeof missing === 'string' && missing !== '' && missing !== ROOT_KEY && !remotes.has(missing);
        const marked = markUnresolved(prepared, (ref) =>
          docMissing ? refIntoDocument(ref, missing) || sameRef(ref, missingRef) : sameRef(ref, missingRef),
        );
        if (marked !== undefined) {
          prepared = marked;
          try {
            ajv = build();
          } catch (x) {
            return fail(`schema cannot be compiled: ${overflowReason(x, prepared)}`);
          }
          continue;
        }
      }
      if (typeof missing === 'string' && missing !== '' && !remotes.has(missing) && missing !== ROOT_KEY)
        return fail(`schema cannot be compiled: remote $ref ${missing} is not available offline`);
      return fail(`schema cannot be compiled: ${overflowReason(e, prepared)}`);
    }
  }
}

// -- The schemas hyperjump validates ------------------------------------------------------------------

/**
 * A Draft 2020-12 schema with features ajv evaluates wrongly (`routedFeatures`), compiled with
 * hyperjump (src/core/validator-hyperjump.ts): remote documents from the same resolvers as ajv's,
 * `format` and `multipleOf` read as the protocol reads them, and under `jsonschemabench` the
 * schema prepared as for ajv (`$schema` dropped, Python patterns translated). Not ok (with the
 * reason) when hyperjump cannot compile it: ajv then validates it as before.
 */
function compileRouted(
  schema: unknown,
  routed: string[],
  opts: ValidatorOptions,
  protocol: Protocol,
  assertFormats: boolean,
): CompileResult {
  const jsb = protocol === 'jsonschemabench';
  const prepared = jsb ? forHyperjump(schema) : schema;
  const resolve = (uri: string) => {
    const doc = opts.remotes?.(uri) ?? metaSchema(uri);
    return doc !== undefined && jsb ? forHyperjump(doc) : doc;
  };
  const c = compileHyperjump(prepared, resolve, MAX_REMOTE_LOADS);
  if (!c.ok && c.timedOut)
    return {
      ok: false,
      dialect: '2020-12',
      reason: `not scored: ${c.reason} (the schema has ${routed.join(', ')}, which only hyperjump reads right; ajv is not asked instead)`,
      protocol,
      overBudget: true,
    };
  if (!c.ok) return { ok: false, dialect: '2020-12', reason: c.reason, protocol };
  const checks: HyperjumpChecks = jsb
    ? {
        format: assertFormats
          ? (() => {
              const skip = new Set(opts.uncheckedFormats ?? []);
              return (f: string, v: unknown) => skip.has(f) || jsonschemabenchFormat(f, v);
            })()
          : undefined,
        multipleOf: pyMultipleOf,
      }
    : { format: assertFormats ? ajvFormatCheck() : undefined, multipleOf: dialectMultipleOf };
  let validate: ValidateFunction;
  try {
    validate = hyperjumpValidator(c.json, checks) as unknown as ValidateFunction;
  } catch (e) {
    return { ok: false, dialect: '2020-12', reason: `hyperjump: ${errorMessage(e)}`, protocol };
  }
  const compiled: CompiledSchema = {
    dialect: '2020-12',
    protocol,
    assertFormats,
    schema: prepared,
    remotes: c.remotes,
    // Unused for validation; kept so the compiled schema has the one shape every reader knows.
    ajv: newAjv('2020-12', true, assertFormats, protocol, opts.uncheckedFormats),
    validate,
    validator: 'hyperjump',
    routed,
    validatorAt: () => undefined,
  };
  return { ok: true, compiled };
}

/**
 * A schema for hyperjump under the `jsonschemabench` protocol: `$schema` dropped (every schema is
 * Draft 2020-12 there), a boolean `exclusiveMinimum`/`exclusiveMaximum` as the number Python
 * compares it as, and each `pattern` and `patternProperties` key as the ECMA-262 translation of
 * the Python expression, where it runs in hyperjump's `u` mode.
 */
function forHyperjump(schema: unknown): unknown {
  const ecma = (p: string): string => {
    const t = translatePythonRegex(p);
    if (!t) return p;
    try {
      new RegExp(t.source, 'u');
      return t.source;
    } catch {
      return p;
    }
  };
  return mapSubschemas(schema, (s) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === '$schema') continue;
      if ((k === 'exclusiveMinimum' || k === 'exclusiveMaximum') && typeof v === 'boolean')
        out[k] = v ? 1 : 0;
      else if (k === 'pattern' && typeof v === 'string') out[k] = ecma(v);
      else if (k === 'patternProperties' && isObject(v)) {
        const m: Record<string, unknown> = {};
        for (const [p, sub] of Object.entries(v)) setOwn(m, ecma(p), sub);
        out[k] = m;
      } else setOwn(out, k, v);
    }
    return out;
  });
}

let ajvFormatTable: Record<string, unknown> | undefined;

/** ajv-formats' check of a format by name (unknown formats pass), for hyperjump's `format`. */
function ajvFormatCheck(): (format: string, value: unknown) => boolean {
  ajvFormatTable ??= addFormats(new (classes.ajv2020())({ logger: false })).formats as Record<
    string,
    unknown
  >;
  const formats = ajvFormatTable;
  return (format, value) => {
    const f = Object.hasOwn(formats, format) ? formats[format] : undefined;
    if (f === undefined || f === true) return true;
    if (f instanceof RegExp) return typeof value !== 'string' || f.test(value);
    if (typeof f === 'function') return typeof value !== 'string' || Boolean(f(value));
    const def = f as { type?: string; validate?: unknown };
    if (typeof value !== (def.type ?? 'string')) return true;
    if (def.validate instanceof RegExp) return def.validate.test(String(value));
    if (typeof def.validate === 'function') return Boolean(def.validate(value));
    return true;
  };
}

/** The dialect reading's `multipleOf` (see `multipleOf` below) as a function. */
function dialectMultipleOf(d: number, x: number): boolean {
  if (d === 0) return true;
  if (Number.isInteger(x) && Number.isInteger(d)) return x % d === 0;
  const q = x / d;
  return Number.isFinite(q) ? Math.abs(Math.round(q) - q) <= 1e-9 : x % d === 0;
}

// -- The jsonschemabench protocol -----------------------------------------------------------------

const jsbMetas = new Map<string, ValidateFunction>();

/**
 * `Draft202012Validator.check_schema(schema)`: the Draft 2020-12 meta-schema with Draft 2020-12's
 * format checks (`regex` as Python compiles it, `uri`, `uri-reference`). The reason it fails, or
 * undefined when the schema passes.
 */
export function jsonschemabenchMetaCheck(
  schema: unknown,
  uncheckedFormats: readonly string[] = [],
): string | undefined {
  const setting = uncheckedFormats.join(',');
  let jsbMeta = jsbMetas.get(setting);
  if (!jsbMeta) {
    const ajv = new (classes.ajv2020())({
      strict: false,
      logger: false,
      allErrors: false,
      validateSchema: false,
      meta: false,
      code: { regExp: pyRegExp, optimize: false },
    });
    // Formats replaced before the meta-schema is added, so its `format: "regex"` is asserted.
    ajv.removeKeyword('format');
    ajv.addKeyword(pythonFormat(metaSchemaFormat, uncheckedFormats));
    (
      requireCjs('ajv/dist/refs/json-schema-2020-12/index.js').default as (this: Ajv, $data: boolean) => Ajv
    ).call(ajv, false);
    jsbMeta = ajv.getSchema('https://json-schema.org/draft/2020-12/schema');
    if (!jsbMeta) throw new Error('the Draft 2020-12 meta-schema is missing from ajv');
    jsbMetas.set(setting, jsbMeta);
  }
  try {
    if (jsbMeta(schema)) return undefined;
  } catch (e) {
    return `schema could not be checked against Draft 2020-12: ${errorMessage(e)}`;
  }
  const e = jsbMeta.errors?.[0];
  const at = e?.instancePath ? `at ${e.instancePath}` : 'at the root';
  return `schema is not valid under the Draft 2020-12 meta-schema (${at}: ${e?.message ?? 'invalid'})`;
}

/**
 * A schema as the protocol compiles it: `$schema` dropped everywhere (Python reads every schema
 * as Draft 2020-12; ajv would look for the meta-schema it names), `enum: []` (no value allowed)
 * written as a keyword that fails every value, since ajv refuses an empty `enum`, and a boolean
 * `exclusiveMinimum`/`exclusiveMaximum` as the number Python compares it as.
 */
export function forJsonschemabench(schema: unknown): unknown {
  return mapSubschemas(schema, (s) => {
    if (
      !('$schema' in s) &&
      !(Array.isArray(s.enum) && s.enum.length === 0) &&
      typeof s.exclusiveMinimum !== 'boolean' &&
      typeof s.exclusiveMaximum !== 'boolean'
    )
      return s;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === '$schema') continue;
      if (k === 'enum' && Array.isArray(v) && v.length === 0) out['x-sob-empty-enum'] = true;
      // Draft 4's boolean form, in a remote document (a root schema with it fails the
      // meta-schema): Python compares the number with the bool, i.e. with 1 or 0.
      else if ((k === 'exclusiveMinimum' || k === 'exclusiveMaximum') && typeof v === 'boolean')
        out[k] = v ? 1 : 0;
      else setOwn(out, k, v);
    }
    return out;
  });
}

/** Whether a `$ref` as written is the reference ajv reported missing (`missingRef`). */
function sameRef(ref: string, missingRef: string): boolean {
  const norm = (r: string) => {
    let t = r.endsWith('#') ? r.slice(0, -1) : r;
    try {
      t = decodeURI(t);
    } catch {
      // keep it as written
    }
    return t;
  };
  const a = norm(ref);
  const b = norm(missingRef);
  if (a === '' || b === '') return false;
  if (a === b) return true;
  // A fragment (`#/definitions/x`) names the same place in whatever document it is read in; a
  // relative reference (`defs.json`) must end the missing URI at a path or scheme boundary.
  return a.startsWith('#') ? b.endsWith(a) : b.endsWith(`/${a}`) || b.endsWith(`:${a}`);
}

/** Whether a `$ref` points into a document: its part before `#` names `doc` (a missing document). */
function refIntoDocument(ref: string, doc: string): boolean {
  const base = ref.split('#')[0];
  return base !== '' && sameRef(base, doc);
}

/**
 * The schema with every `$ref` for which `names` holds (it names a missing reference or points
 * into a missing document) replaced by `x-sob-unresolved-ref`, which fails whatever reaches it;
 * undefined when there is none.
 */
function markUnresolved(schema: unknown, names: (ref: string) => boolean): unknown {
  let changed = false;
  const out = mapSubschemas(schema, (s) => {
    if (typeof s.$ref !== 'string' || !names(s.$ref)) return s;
    changed = true;
    const { $ref, ...rest } = s;
    return { ...rest, 'x-sob-unresolved-ref': $ref };
  });
  return changed ? out : undefined;
}

/** The error's message; for a stack overflow, the `$ref` cycle that caused it when there is one. */
function overflowReason(e: unknown, schema: unknown): string {
  if (!(e instanceof RangeError)) return errorMessage(e);
  const cycle = aliasCycle(schema);
  return cycle
    ? `$ref cycle that never reaches a schema: ${[...cycle, cycle[0]].join(' -> ')}`
    : errorMessage(e);
}

// -- Walking a schema document -------------------------------------------------------------------

/** Keywords whose value is one subschema / a map of subschemas / a list of subschemas. */
export const SUBSCHEMA_ONE = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'if',
  'then',
  'else',
  'not',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'items',
] as const;
export const SUBSCHEMA_MAP = [
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependencies',
  'dependentSchemas',
] as const;
export const SUBSCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'] as const;
const ONE = new Set<string>(SUBSCHEMA_ONE);
const MAP = new Set<string>(SUBSCHEMA_MAP);
const LIST = new Set<string>(SUBSCHEMA_LIST);

/**
 * A copy of a schema document with `fn` applied to every subschema object, innermost first
 * (values of unknown keywords, `enum`, `const`, `default`, ... are left alone). `fn` returns the
 * replacement object. Nesting past `maxDepth` is copied as is.
 */
export function mapSubschemas(
  schema: unknown,
  fn: (s: Record<string, unknown>) => Record<string, unknown>,
  maxDepth = 512,
): unknown {
  const visit = (s: unknown, depth: number): unknown => {
    if (!isObject(s) || depth > maxDepth) return s;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) {
      if (MAP.has(k) && isObject(v)) {
        const m: Record<string, unknown> = {};
        // `dependencies` may hold arrays of names: visit leaves them as they are.
        for (const [name, sub] of Object.entries(v)) setOwn(m, name, visit(sub, depth + 1));
        setOwn(out, k, m);
      } else if (LIST.has(k) && Array.isArray(v)) {
        out[k] = v.map((sub) => visit(sub, depth + 1));
      } else if (ONE.has(k)) {
        out[k] = visit(v, depth + 1);
      } else setOwn(out, k, v);
    }
    return fn(out);
  };
  return visit(schema, 0);
}

/** `o[k] = v` as an own property, `__proto__` included (plain assignment would set the prototype). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

// -- A property named `__proto__` -------------------------------------------------------------------

const PROTO_KEYWORD = 'x-sob-proto-property';

/**
 * ajv skips a property named `__proto__` in `properties` (it guards its own objects), so an
 * answer's own `"__proto__"` key went unchecked. The subschema moves to a keyword of ours that
 * validates that key when the answer has it as its own property (JSON.parse makes it one).
 */
export function protoPropertiesMoved(schema: unknown): unknown {
  if (!hasProtoKey(schema, 0)) return schema;
  return mapSubschemas(schema, (s) => {
    const props = s.properties;
    if (!isObject(props) || !Object.hasOwn(props, '__proto__')) return s;
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(props)) if (k !== '__proto__') rest[k] = v;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) setOwn(out, k, k === 'properties' ? rest : v);
    out[PROTO_KEYWORD] = Object.getOwnPropertyDescriptor(props, '__proto__')?.value;
    return out;
  });
}

/** Whether any object in a JSON document has an own `__proto__` key (a walk without copying). */
function hasProtoKey(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object' || depth > 512) return false;
  if (Array.isArray(v)) return v.some((x) => hasProtoKey(x, depth + 1));
  if (Object.hasOwn(v, '__proto__')) return true;
  for (const x of Object.values(v)) if (hasProtoKey(x, depth + 1)) return true;
  return false;
}

const protoProperty: CodeKeywordDefinition = {
  keyword: PROTO_KEYWORD,
  type: 'object',
  code(cxt) {
    const { gen, data, it } = cxt;
    const { _ } = ajvLib();
    const { Type } = requireCjs('ajv/dist/compile/util.js') as typeof import('ajv/dist/compile/util.js');
    const valid = gen.name('valid');
    gen.if(_`Object.prototype.hasOwnProperty.call(${data}, "__proto__")`);
    cxt.subschema({ keyword: PROTO_KEYWORD, dataProp: '__proto__', dataPropType: Type.Str }, valid);
    if (!it.allErrors) gen.else().var(valid, true);
    gen.endIf();
    cxt.ok(valid);
  },
};

// -- Drafts 4 to 7: `$ref` overrides its siblings ---------------------------------------------------

/**
 * In drafts 4 to 7 "all other properties in a `$ref` object MUST be ignored". ajv applies them,
 * so a copy of the schema is made where a `$ref` object keeps only `$ref` and the keywords some
 * `$ref` in the document points into (`definitions`, usually), which validate nothing by
 * themselves. The input is not modified; a schema without such siblings is returned as is.
 */
export function refSiblingsIgnored(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const pointed = new Set<string>();
  let found = false;
  mapSubschemas(schema, (s) => {
    if (typeof s.$ref === 'string') {
      const i = s.$ref.indexOf('#/');
      if (i >= 0) for (const tok of s.$ref.slice(i + 2).split('/')) pointed.add(decodePointerToken(tok));
      if (Object.keys(s).some((k) => k !== '$ref')) found = true;
    }
    return s;
  });
  if (!found) return schema;
  return mapSubschemas(schema, (s) => {
    if (typeof s.$ref !== 'string') return s;
    const out: Record<string, unknown> = { $ref: s.$ref };
    for (const [k, v] of Object.entries(s)) if (pointed.has(k)) out[k] = v;
    return out;
  });
}

/** A JSON Pointer as a URI fragment (each token percent-encoded), as ajv resolves them. */
export function pointerToFragment(pointer: string): string {
  return pointer
    .split('/')
    .map((t) => encodeURIComponent(t).replaceAll('%7E', '~'))
    .join('/');
}

export function decodePointerToken(tok: string): string {
  let t = tok;
  try {
    t = decodeURIComponent(tok);
  } catch {
    // keep it as written
  }
  return t.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Keywords that do not constrain an instance: a schema with only these and `$ref` is an alias. */
const NOT_RULES = new Set([
  '$ref',
  '$schema',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'definitions',
  '$defs',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/**
 * A chain of local `$ref`s that only ever points at other `$ref`s and comes back to itself
 * (`#/definitions/a` -> `#/definitions/b` -> `#/definitions/a`): the schema never says what an
 * instance must be, and ajv recurses on it until its stack runs out. The cycle's pointers, first
 * repeated at the end; undefined when there is none (or a `$id` changes the base on the way).
 */
export function aliasCycle(schema: unknown): string[] | undefined {
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#')) return undefined;
    let node: unknown = schema;
    const frag = ref.slice(1);
    if (frag === '') return node;
    if (!frag.startsWith('/')) return undefined;
    for (const tok of frag.slice(1).split('/').map(decodePointerToken)) {
      if (Array.isArray(node)) node = node[Number(tok)];
      else if (isObject(node)) node = node[tok];
      else return undefined;
    }
    return node;
  };
  const isAlias = (n: unknown): n is { $ref: string } =>
    isObject(n) && typeof n.$ref === 'string' && Object.keys(n).every((k) => NOT_RULES.has(k));
  const seen = new Set<unknown>();
  const visit = (n: unknown, depth: number): string[] | undefined => {
    if (depth > 200 || !n || typeof n !== 'object' || seen.has(n)) return undefined;
    seen.add(n);
    if (isAlias(n)) {
      // nodes[k] is reached by refs[k - 1]; a ref landing back on nodes[j] closes the cycle.
      const nodes: unknown[] = [n];
      const refs: string[] = [];
      let cur: unknown = n;
      while (isAlias(cur) && nodes.length < 1000) {
        const ref = cur.$ref;
        refs.push(ref);
        const next = resolve(ref);
        const j = nodes.indexOf(next);
        if (j >= 0) return nodes.slice(j).map((_, k) => (j + k > 0 ? refs[j + k - 1] : ref));
        if (next === undefined || (isObject(next) && '$id' in next)) break;
        nodes.push(next);
        cur = next;
      }
    }
    for (const v of Array.isArray(n) ? n : Object.values(n)) {
      const c = visit(v, depth + 1);
      if (c) return c;
    }
    return undefined;
  };
  return visit(schema, 0);
}

// -- Validating -----------------------------------------------------------------------------------

/** One violation, as the answer's reader needs it. */
export interface Violation {
  /** JSON Pointer into the answer ('' = the root). */
  instance_path: string;
  /** Where the keyword is in the schema (`#/properties/a/type`). */
  schema_path: string;
  keyword: string;
  message: string;
}

export function toViolation(e: ErrorObject): Violation {
  let instancePath = e.instancePath;
  // Report a missing or unexpected property at the property's own path.
  const p = e.params as Record<string, unknown>;
  const prop =
    e.keyword === 'required' || e.keyword === 'dependentRequired' || e.keyword === 'dependencies'
      ? p.missingProperty
      : e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties'
        ? (p.additionalProperty ?? p.unevaluatedProperty)
        : undefined;
  if (typeof prop === 'string') instancePath += `/${prop.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return {
    instance_path: instancePath,
    schema_path: e.schemaPath,
    keyword: e.keyword,
    message: e.message ?? 'is invalid',
  };
}

export type ValidationOutcome =
  | { valid: true; violations: [] }
  | { valid: false; violations: Violation[] }
  | { valid: false; violations: []; error: string };

/** Validates `instance`; every violation ajv finds (allErrors). Never throws. */
export function validateCompiled(compiled: CompiledSchema, instance: unknown): ValidationOutcome {
  try {
    if (compiled.validate(instance)) return { valid: true, violations: [] };
    return { valid: false, violations: (compiled.validate.errors ?? []).map(toViolation) };
  } catch (e) {
    // A recursive schema over a very deep answer can exhaust the stack.
    return { valid: false, violations: [], error: `validation failed: ${errorMessage(e)}` };
  }
}
