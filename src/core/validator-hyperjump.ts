/**
 * The second validator (docs/compliance-protocols.md, "Which validator reads which schema"):
 * `@hyperjump/json-schema` for the Draft 2020-12 schemas whose keywords ajv evaluates wrongly.
 * ajv stays the validator of every other schema (it is compiled to code and fast); a static scan
 * of the schema (`routedFeatures`) decides, when the schema is compiled.
 *
 * - hyperjump compiles asynchronously (it loads schema documents through promises) and validates
 *   synchronously. Compiling runs on a helper thread of this process while the caller waits on a
 *   shared flag (bounded: `COMPILE_BUDGET_MS`); the compiled schema comes back serialised, and is
 *   restored and run on the caller's thread, so a scoring worker's per-record budget covers
 *   validation as it covers ajv's.
 * - No network, no files: the helper's `http`/`https`/`file` retrieval is replaced by a refusal
 *   that names the URI; the caller resolves it (a local folder, ajv's meta-schemas) and compiles
 *   again with the document registered.
 * - The protocol's own readings are kept: `format` and `multipleOf` are checked by the caller's
 *   functions (Python's checks under `jsonschemabench`, ajv's otherwise), and patterns are the
 *   caller's translation (Python `re` rewritten as ECMA-262 under `jsonschemabench`).
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

const requireCjs = createRequire(import.meta.url);

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** The URI a schema is compiled under (its own `$id` wins): its locations read as `#/...`. */
const SCHEMA_URI = 'https://sob-eval.invalid/schema.json';

/** How long compiling one schema may take on the helper thread (by default). */
export const COMPILE_BUDGET_MS = 10_000;

let compileBudgetMs = COMPILE_BUDGET_MS;
/**
 * The compile budget of this thread's schemas: a scoring worker sets half its per-record budget
 * (`--record-timeout-ms`), so a compile over it is reported for its record before the record's
 * own budget runs out.
 */
export function setCompileBudget(ms: number): void {
  compileBudgetMs = Math.max(1, Math.floor(ms));
}

/** The reason a compile over its budget gets (a routed schema over it is not scored). */
export const OVER_BUDGET = 'hyperjump did not compile the schema within';

// -- Which schemas go to hyperjump ---------------------------------------------------------------

/**
 * The features of a Draft 2020-12 schema that ajv evaluates wrongly, found by a walk over the
 * schema document (every object in it, keyword values included: a `$defs` entry is walked like a
 * property's schema). Empty: ajv reads the schema.
 *
 * - `$dynamicRef` / `$dynamicAnchor`: ajv resolves a dynamic reference statically in most cases;
 * - `unevaluatedProperties` / `unevaluatedItems`: ajv misses the annotations of `contains`, of an
 *   `if` without `then`/`else`, of nested `items` and of a `$dynamicRef`;
 * - `$id beside $ref`: ajv resolves that `$ref` against the outer base and recurses until its
 *   stack runs out.
 */
export function routedFeatures(schema: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object' || depth > 512) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.$dynamicRef === 'string') found.add('$dynamicRef');
    if (typeof o.$dynamicAnchor === 'string') found.add('$dynamicAnchor');
    if (Object.hasOwn(o, 'unevaluatedProperties')) found.add('unevaluatedProperties');
    if (Object.hasOwn(o, 'unevaluatedItems')) found.add('unevaluatedItems');
    if (typeof o.$ref === 'string' && typeof o.$id === 'string') found.add('$id beside $ref');
    for (const x of Object.values(o)) visit(x, depth + 1);
  };
  visit(schema, 0);
  return [...found].sort();
}

// -- Compiling, on the helper thread -------------------------------------------------------------

/** What the helper answers: the compiled schema serialised, or why not (and a URI it lacked). */
type CompileReply =
  | { ok: true; json: string }
  | { ok: false; reason: string; missing?: string; timedOut?: boolean };

interface CompileRequest {
  schema: unknown;
  /** The URI the schema is registered under (its own `$id` still wins). */
  uri: string;
  /** Remote documents by URI. */
  docs: [string, unknown][];
  dialect: string;
}

// The helper's code, run with `eval` so it needs no file of its own (the scoring workers run from
// a bundle). Each request registers its documents, compiles, and unregisters everything it added.
const HELPER = `
const { workerData } = require('node:worker_threads');
const { port, flag, paths } = workerData;
const signal = new Int32Array(flag);
let hj, loadError, missing;
try {
  hj = require(paths.schema);
  const browser = require(paths.browser);
  const refuse = { retrieve: async (uri) => { missing = String(uri); throw new Error('not available offline: ' + uri); } };
  for (const scheme of ['http', 'https', 'file']) {
    try { browser.removeUriSchemePlugin(scheme); } catch {}
    browser.addUriSchemePlugin(scheme, refuse);
  }
  globalThis.fetch = async (uri) => { missing = String(uri); throw new Error('not available offline: ' + uri); };
} catch (e) {
  loadError = 'hyperjump could not be loaded: ' + (e instanceof Error ? e.message : String(e));
}
port.on('message', async (req) => {
  if (loadError) {
    port.postMessage({ ok: false, reason: loadError });
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    return;
  }
  const before = new Set(hj.getAllRegisteredSchemaUris());
  let reply;
  missing = undefined;
  try {
    for (const [uri, doc] of req.docs) hj.registerSchema(doc, uri, req.dialect);
    hj.registerSchema(req.schema, req.uri, req.dialect);
    const v = await hj.validate(req.uri);
    reply = { ok: true, json: v.serialize() };
  } catch (e) {
    reply = { ok: false, reason: e instanceof Error ? e.message : String(e), missing };
  }
  for (const uri of hj.getAllRegisteredSchemaUris()) {
    if (!before.has(uri)) { try { hj.unregisterSchema(uri); } catch {} }
  }
  port.postMessage(reply);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
`;

interface Helper {
  worker: Worker;
  port: import('node:worker_threads').MessagePort;
  flag: Int32Array;
}

let helper: Helper | undefined;

function startHelper(): Helper {
  const { port1, port2 } = new MessageChannel();
  const flag = new SharedArrayBuffer(4);
  // Resolved here (a missing package throws here, not on the helper thread).
  const paths = {
    schema: requireCjs.resolve('@hyperjump/json-schema/draft-2020-12'),
    browser: requireCjs.resolve('@hyperjump/browser'),
  };
  const worker = new Worker(HELPER, {
    eval: true,
    workerData: { port: port2, flag, paths },
    transferList: [port2],
    stdout: true,
    stderr: true,
  });
  worker.unref();
  port1.unref();
  worker.on('error', () => {
    helper = undefined;
  });
  return { worker, port: port1, flag: new Int32Array(flag) };
}

function compileOnHelper(req: CompileRequest, waitMs: number, budgetMs: number): CompileReply {
  try {
    helper ??= startHelper();
  } catch (e) {
    return {
      ok: false,
      reason: `hyperjump could not be started: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  const h = helper;
  Atomics.store(h.flag, 0, 0);
  h.port.postMessage(req);
  if (Atomics.wait(h.flag, 0, 0, waitMs) === 'timed-out') {
    // A schema that keeps the helper busy: it is dropped, the next schema gets a new one.
    void h.worker.terminate();
    helper = undefined;
    return { ok: false, reason: `${OVER_BUDGET} ${budgetMs} ms`, timedOut: true };
  }
  const got = receiveMessageOnPort(h.port);
  if (!got) return { ok: false, reason: 'hyperjump gave no answer' };
  return got.message as CompileReply;
}

/**
 * Compiles `schema` with hyperjump (Draft 2020-12 unless its `$schema` names another dialect
 * hyperjump knows), asking `resolve` for every remote document it lacks (at most `maxRemotes`).
 * The serialised compiled schema, or why it could not be compiled.
 */
export function compileHyperjump(
  schema: unknown,
  resolve: (uri: string) => unknown,
  maxRemotes = 64,
  budgetMs = compileBudgetMs,
):
  | { ok: true; json: string; remotes: Map<string, unknown> }
  | { ok: false; reason: string; timedOut?: boolean } {
  const remotes = new Map<string, unknown>();
  // One budget for the whole schema, however many rounds its remote documents take.
  const deadline = performance.now() + budgetMs;
  for (;;) {
    const reply = compileOnHelper(
      { schema, uri: SCHEMA_URI, docs: [...remotes], dialect: DRAFT_2020_12 },
      Math.max(0, deadline - performance.now()),
      budgetMs,
    );
    if (reply.ok) return { ok: true, json: reply.json, remotes };
    if (reply.timedOut) return { ok: false, reason: reply.reason, timedOut: true };
    const uri = reply.missing?.split('#')[0];
    if (!uri || remotes.has(uri) || remotes.size >= maxRemotes) return { ok: false, reason: reply.reason };
    const doc = resolve(uri);
    if (doc === undefined) return { ok: false, reason: `remote $ref ${uri} is not available offline` };
    remotes.set(uri, doc);
  }
}

// -- Validating, on the caller's thread ----------------------------------------------------------

/** The caller's readings of the keywords a protocol defines its own way. */
export interface HyperjumpChecks {
  /** Whether a value passes `format` (only called when formats are asserted). */
  format?: (format: string, value: unknown) => boolean;
  multipleOf: (divisor: number, value: number) => boolean;
}

interface HyperjumpCore {
  restoreValidator: (json: string) => (
    value: unknown,
    format?: string,
  ) => {
    valid: boolean;
    errors?: { keyword: string; absoluteKeywordLocation: string; instanceLocation: string }[];
  };
}

/** The checks of the validator being run (set for the call: validation is synchronous). */
let current: HyperjumpChecks | undefined;

let core: HyperjumpCore | undefined;
function loadCore(): HyperjumpCore {
  if (core) return core;
  const hj = requireCjs('@hyperjump/json-schema/draft-2020-12') as HyperjumpCore;
  const exp = requireCjs('@hyperjump/json-schema/experimental') as {
    getKeyword: (id: string) => Record<string, unknown> & { interpret: (...a: unknown[]) => boolean };
    addKeyword: (k: unknown) => void;
  };
  const instance = requireCjs('@hyperjump/json-schema/instance/experimental') as {
    value: (node: unknown) => unknown;
    typeOf: (node: unknown) => string;
  };
  // `format` (annotation and assertion vocabularies alike) and `multipleOf` read as the
  // protocol reads them; everything else is hyperjump's own.
  for (const id of [
    'https://json-schema.org/keyword/draft-2020-12/format',
    'https://json-schema.org/keyword/draft-2020-12/format-assertion',
  ]) {
    const k = exp.getKeyword(id);
    exp.addKeyword({
      ...k,
      interpret: (format: string, node: unknown) => {
        const check = current?.format;
        return check === undefined || check(format, instance.value(node));
      },
    });
  }
  const m = exp.getKeyword('https://json-schema.org/keyword/multipleOf');
  exp.addKeyword({
    ...m,
    interpret: (divisor: number, node: unknown) =>
      instance.typeOf(node) !== 'number' ||
      (current?.multipleOf ?? ((d: number, x: number) => x % d === 0))(
        divisor,
        instance.value(node) as number,
      ),
  });
  core = hj;
  return core;
}

/** One violation as hyperjump reports it, in ajv's error shape. */
export interface HyperjumpError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, never>;
  message: string;
}

/** A JSON Pointer from hyperjump's instance location (`#/a/0`, percent-encoded). */
function pointerOf(location: string): string {
  const i = location.indexOf('#');
  const frag = i >= 0 ? location.slice(i + 1) : '';
  try {
    return decodeURIComponent(frag);
  } catch {
    return frag;
  }
}

/** Keywords whose value is one subschema: a `false` there is reported under the keyword's name. */
const ONE_SCHEMA = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'items',
  'contains',
  'propertyNames',
  'not',
  'then',
  'else',
]);

/**
 * The keyword's name from its id (`https://json-schema.org/keyword/minLength` -> `minLength`);
 * a `false` subschema (hyperjump's `validate`) is named by the keyword that holds it, when that
 * takes one subschema (`unevaluatedProperties: false`), else `false schema`.
 */
function keywordName(id: string, location: string): string {
  const hash = id.lastIndexOf('#');
  if (hash >= 0 && id.includes('/unknown#')) return id.slice(hash + 1);
  const name = id.slice(id.lastIndexOf('/') + 1);
  if (name === 'format-assertion') return 'format';
  if (name === 'validate') {
    const last = location.slice(location.lastIndexOf('/') + 1);
    return ONE_SCHEMA.has(last) ? last : 'false schema';
  }
  return name;
}

/** A schema location as ajv writes one: `#/...` in the schema itself, else the absolute URI. */
function schemaPathOf(location: string): string {
  return location.startsWith(`${SCHEMA_URI}#`) ? location.slice(SCHEMA_URI.length) : location;
}

/**
 * A validate function of ajv's shape (`(value) => boolean`, `.errors` after a failure) over a
 * compiled schema from `compileHyperjump`.
 */
export function hyperjumpValidator(
  json: string,
  checks: HyperjumpChecks,
): ((value: unknown) => boolean) & { errors: HyperjumpError[] | null } {
  const run = loadCore().restoreValidator(json);
  const validate = Object.assign(
    (value: unknown): boolean => {
      const before = current;
      current = checks;
      try {
        const out = run(value, 'BASIC');
        validate.errors = out.valid
          ? null
          : (out.errors ?? []).map((e) => {
              const keyword = keywordName(e.keyword, e.absoluteKeywordLocation);
              return {
                keyword,
                instancePath: pointerOf(e.instanceLocation),
                schemaPath: schemaPathOf(e.absoluteKeywordLocation),
                params: {},
                message: `must satisfy ${keyword}`,
              };
            });
        return out.valid;
      } finally {
        current = before;
      }
    },
    { errors: null as HyperjumpError[] | null },
  );
  return validate;
}
