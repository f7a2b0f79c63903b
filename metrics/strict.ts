/**
 * The `strict` profile (SPEC.md "strict profile: what it fixes"): the same metrics, gates and
 * weights as `sob`, with the reference's defects fixed:
 *  1. Type Safety walks the schema itself: `$ref`, `allOf`/`anyOf`/`oneOf`, type lists, nullable
 *     types, `additionalProperties`/`patternProperties`, tuple `items`/`prefixItems`; an integral
 *     float is an integer.
 *  2. Booleans never equal numbers; numbers equal by value.
 *  3. A missing path is not a null: Faithfulness gives it 0.
 *  4. Empty arrays and objects are leaves.
 *  5. Paths are JSON Pointers inside (a key with a dot cannot collide); dotted only for display.
 *  6. The validator follows the schema's `$schema`; `assertFormats` turns format checking on.
 *  7. The answer is parsed from the raw text: strict JSON first, then a code-fenced or prefixed
 *     answer is recovered and flagged `lenient_parse`.
 * Pure: no I/O (call `prepareStrict` from src/core/schema.ts once before scoring).
 */
import { compareCodePoints, isStructured, type PyValue, parsePyJson, toPlain } from '../src/core/pyjson.ts';
import type { Modality, ScoringView } from '../src/core/record.ts';
import { strictSchemaEntry, validateWithEntry } from '../src/core/schema.ts';
import {
  coverageGate,
  type Explanation,
  failedRecordScore,
  type RecordScore,
  schemaSourceOf,
} from './record.ts';
import { strictEquals, tokenF1 } from './values.ts';

export interface StrictOptions {
  modality: Modality;
  assertFormats: boolean;
}

export type StrictScore = RecordScore & { lenientParse: number };

// -- 7. Parsing from the raw text ------------------------------------------------------------

const FENCE = /```(?:json)?\s*([\s\S]*?)```/i;

function tryParse(text: string): PyValue | undefined {
  try {
    const v = parsePyJson(text.trim());
    return isStructured(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The candidate from the raw answer: strict JSON, else recovered from a fence or a prefix. */
export function parseAnswer(
  raw: PyValue | undefined,
  candidate: PyValue | undefined,
): { value: PyValue | undefined; strict: boolean; lenient: boolean } {
  if (typeof raw !== 'string') {
    // No raw text kept: a structured candidate was JSON; a string candidate is the raw text.
    if (isStructured(candidate)) return { value: candidate, strict: true, lenient: false };
    if (typeof candidate !== 'string') return { value: undefined, strict: false, lenient: false };
    return parseAnswer(candidate, undefined);
  }
  const strictValue = tryParse(raw);
  if (strictValue !== undefined) return { value: strictValue, strict: true, lenient: false };
  const fenced = FENCE.exec(raw);
  if (fenced) {
    const v = tryParse(fenced[1]);
    if (v !== undefined) return { value: v, strict: false, lenient: true };
  }
  const start = raw.search(/[[{]/);
  if (start >= 0) {
    const end = Math.max(raw.lastIndexOf('}'), raw.lastIndexOf(']'));
    if (end > start) {
      const v = tryParse(raw.slice(start, end + 1));
      if (v !== undefined) return { value: v, strict: false, lenient: true };
    }
  }
  return { value: undefined, strict: false, lenient: false };
}

// -- 4, 5. Leaves by JSON Pointer --------------------------------------------------------------

export type PointerLeaves = Map<string, PyValue>;

function escapeToken(k: string): string {
  return k.includes('~') || k.includes('/') ? k.replaceAll('~', '~0').replaceAll('/', '~1') : k;
}

/** Leaves by JSON Pointer; an empty array or object is a leaf too. Iterative. */
export function pointerLeaves(root: PyValue | undefined): PointerLeaves {
  const out: PointerLeaves = new Map();
  if (root === undefined || !isStructured(root)) return out;
  const stack: [string, PyValue][] = [['', root]];
  while (stack.length > 0) {
    const [ptr, v] = stack.pop()!;
    if (Array.isArray(v)) {
      if (v.length === 0 && ptr) out.set(ptr, v);
      for (let i = v.length - 1; i >= 0; i--) stack.push([`${ptr}/${i}`, v[i]]);
    } else if (v instanceof Map) {
      if (v.size === 0 && ptr) out.set(ptr, v);
      const kids = [...v];
      for (let i = kids.length - 1; i >= 0; i--)
        stack.push([`${ptr}/${escapeToken(kids[i][0])}`, kids[i][1]]);
    } else out.set(ptr, v);
  }
  return out;
}

/** `/a/0/b` -> `a[0].b` (display only: a key with a dot reads ambiguously here, not inside). */
export function displayPath(ptr: string): string {
  let out = '';
  for (const raw of ptr.split('/').slice(1)) {
    const tok = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^(0|[1-9]\d*)$/.test(tok) ? `[${tok}]` : out ? `.${tok}` : tok;
  }
  return out;
}

// -- 2. Values ----------------------------------------------------------------------------------

function isEmptyContainer(v: PyValue): boolean {
  return (Array.isArray(v) && v.length === 0) || (v instanceof Map && v.size === 0);
}

/** Strict value equality of two leaves: booleans are not numbers; numbers by value. */
function leafEquals(a: PyValue, b: PyValue): boolean {
  if (isEmptyContainer(a) || isEmptyContainer(b))
    return isEmptyContainer(a) && isEmptyContainer(b) && Array.isArray(a) === Array.isArray(b);
  return strictEquals(a, b);
}

/** Deep equality with strict scalars and unordered keys (the strict Perfect Response). */
function deepEquals(a: PyValue | undefined, b: PyValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const work: [PyValue, PyValue][] = [[a, b]];
  while (work.length > 0) {
    const [x, y] = work.pop()!;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) work.push([x[i], y[i]]);
    } else if (x instanceof Map) {
      if (!(y instanceof Map) || x.size !== y.size) return false;
      for (const [k, v] of x) {
        if (!y.has(k)) return false;
        work.push([v, y.get(k)!]);
      }
    } else if (Array.isArray(y) || y instanceof Map || !strictEquals(x, y)) return false;
  }
  return true;
}

// -- 1. Type Safety -----------------------------------------------------------------------------

type Schema = unknown;
/** A conjunction of schemas that all apply at a node. */
type Conj = Schema[];
const MAX_ALTERNATIVES = 64;
const MAX_REF_DEPTH = 32;

function obj(s: Schema): Record<string, unknown> | null {
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : null;
}

function resolveRef(root: Schema, ref: string): Schema {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return true; // remote or anchor refs: unconstrained here
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const tok = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    const o = obj(cur);
    if (Array.isArray(cur)) cur = cur[Number(tok)];
    else if (o) cur = o[tok];
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
      if (props && step in props) {
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

// -- Required keys (pointer paths, `*` for any index) -----------------------------------------

function requiredPointers(schema: Schema): string[] {
  const out: string[] = [];
  const walk = (s: Schema, pre: string, depth: number) => {
    const o = obj(s);
    if (!o || depth > 64) return;
    const props = obj(o.properties) ?? {};
    if (Array.isArray(o.required)) {
      for (const k of o.required) {
        if (typeof k !== 'string') continue;
        const p = `${pre}/${escapeToken(k)}`;
        out.push(p);
        walk(props[k], p, depth + 1);
      }
    }
    if (o.items !== undefined && !Array.isArray(o.items)) walk(o.items, `${pre}/*`, depth + 1);
  };
  walk(schema, '', 0);
  return [...new Set(out)].sort(compareCodePoints);
}

function presentPointers(v: PyValue, maxDepth: number): Set<string> {
  const out = new Set<string>();
  const stack: [string, PyValue, number][] = [['', v, 0]];
  while (stack.length > 0) {
    const [ptr, x, d] = stack.pop()!;
    if (ptr) out.add(ptr);
    if (d >= maxDepth) continue;
    if (Array.isArray(x)) for (const c of x) stack.push([`${ptr}/*`, c, d + 1]);
    else if (x instanceof Map) for (const [k, c] of x) stack.push([`${ptr}/${escapeToken(k)}`, c, d + 1]);
  }
  return out;
}

// -- The record ---------------------------------------------------------------------------------

function f1(overlap: number, pred: number, gt: number): number {
  if (pred === 0 || gt === 0) return 0;
  const p = overlap / pred;
  const r = overlap / gt;
  return p + r === 0 ? 0 : (2 * p * r) / (p + r);
}

/** Scores one record with the strict profile. `raw` is `output.raw_response` when kept. */
export function scoreRecordStrict(view: ScoringView, opts: StrictOptions): StrictScore {
  const base = failedRecordScore(view.metadata, '');
  const explanation: Explanation = {};
  const answer = parseAnswer(view.raw, view.candidate);
  const structured = answer.value !== undefined;
  if (!structured)
    explanation.not_structured = 'the answer is not a JSON object or array, even after recovery';

  const src = schemaSourceOf(view);
  const plain = () => src.plain() as object;
  const entry = strictSchemaEntry(src.key, plain, opts.assertFormats);
  if (!entry.valid) explanation.schema_error = entry.reason;

  let jsonPass = 0;
  if (structured && entry.valid) {
    const v = validateWithEntry(entry, plain, toPlain(answer.value as PyValue));
    if (v.valid) jsonPass = 1;
    else explanation.validation_error = v.reason;
  }

  const gt = pointerLeaves(view.groundTruth);
  const pred = structured ? pointerLeaves(answer.value) : new Map<string, PyValue>();
  let overlap = 0;
  let exact = 0;
  let tokens = 0;
  const missing: string[] = [];
  for (const [p, g] of gt) {
    const c = pred.get(p);
    if (c === undefined) {
      missing.push(p);
      continue; // strict: a missing path scores 0 everywhere
    }
    overlap++;
    if (leafEquals(g, c)) exact++;
    tokens += isEmptyContainer(g) || isEmptyContainer(c) ? (leafEquals(g, c) ? 1 : 0) : tokenF1(g, c);
  }
  const structure = f1(overlap, pred.size, gt.size);
  const gate = coverageGate(opts.modality, structure);
  if (gate < 1) explanation.coverage_gate = gate;
  const h = jsonPass;
  const rawExact = gt.size === 0 ? 1 : exact / gt.size;
  const rawTokens = gt.size === 0 ? 1 : tokens / gt.size;

  let requiredRecall = 0;
  let missingRequired: string[] = [];
  const req = entry.valid ? requiredPointers(plain()) : [];
  if (structured && entry.valid) {
    if (req.length === 0) requiredRecall = 1;
    else {
      const maxDepth = Math.max(...req.map((r) => r.split('/').length)) + 1;
      const present = presentPointers(answer.value as PyValue, maxDepth);
      missingRequired = req.filter((r) => !present.has(r));
      requiredRecall = (req.length - missingRequired.length) / req.length;
    }
  } else missingRequired = req;

  return {
    ...base,
    jsonParse: answer.strict ? 1 : 0,
    rootStructured: structured ? 1 : 0,
    schemaValidInput: entry.valid ? 1 : 0,
    jsonPass,
    valueAccuracy: rawExact * h * gate,
    faithfulness: rawTokens * h * gate,
    pathRecall: (gt.size === 0 ? 0 : overlap / gt.size) * h,
    structureCoverage: structure * h,
    typeSafety: structured && entry.valid ? strictTypeSafety(answer.value as PyValue, plain()) * h : 0,
    requiredKeyRecall: requiredRecall,
    perfect: deepEquals(answer.value, view.groundTruth) ? 1 : 0,
    missingGtPaths: missing.map(displayPath).sort(compareCodePoints),
    missingRequiredPaths: missingRequired.map((p) =>
      displayPath(p.replaceAll('/*', '/[]')).replaceAll('.[]', '[]'),
    ),
    explanation: answer.lenient ? { ...explanation, lenient_parse: true } : explanation,
    lenientParse: answer.lenient ? 1 : 0,
  };
}
