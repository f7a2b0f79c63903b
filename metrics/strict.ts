/**
 * The `strict` profile (docs/scoring.md "strict profile: what it fixes"): the same metrics, gates and
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
import { isStructured, type PyValue, parsePyJson, sortCodePoints, toPlain } from '../src/core/pyjson.ts';
import type { Modality, ScoringView } from '../src/core/record.ts';
import { strictSchemaEntry, validateWithEntry } from '../src/core/schema.ts';
import {
  coverageGate,
  type Explanation,
  failedRecordScore,
  type RecordScore,
  schemaSourceOf,
} from './record.ts';
import { isEmptyContainer, obj, type Schema, strictTypeSafety } from './schema-types.ts';
import { strictEquals, tokenF1 } from './values.ts';

export interface StrictOptions {
  modality: Modality;
  assertFormats: boolean;
  /** As `ScoreOptions.schemaPhase` (record.ts). */
  schemaPhase?: (on: boolean) => void;
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

/**
 * Leaves by JSON Pointer; an empty array or object is a leaf too, the root included (pointer
 * `""`), so an empty ground truth answered by an empty answer is a match, not "no leaves".
 * Iterative.
 */
export function pointerLeaves(root: PyValue | undefined): PointerLeaves {
  const out: PointerLeaves = new Map();
  if (root === undefined || !isStructured(root)) return out;
  const stack: [string, PyValue][] = [['', root]];
  while (stack.length > 0) {
    const [ptr, v] = stack.pop()!;
    if (Array.isArray(v)) {
      if (v.length === 0) out.set(ptr, v);
      for (let i = v.length - 1; i >= 0; i--) stack.push([`${ptr}/${i}`, v[i]]);
    } else if (v instanceof Map) {
      if (v.size === 0) out.set(ptr, v);
      const kids = [...v];
      for (let i = kids.length - 1; i >= 0; i--)
        stack.push([`${ptr}/${escapeToken(kids[i][0])}`, kids[i][1]]);
    } else out.set(ptr, v);
  }
  return out;
}

/** `/a/0/b` -> `a[0].b` (display only: a key with a dot reads ambiguously here, not inside). */
export function displayPath(ptr: string): string {
  if (ptr === '') return '(root)';
  let out = '';
  for (const raw of ptr.split('/').slice(1)) {
    const tok = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^(0|[1-9]\d*)$/.test(tok) ? `[${tok}]` : out ? `.${tok}` : tok;
  }
  return out;
}

// -- 2. Values ----------------------------------------------------------------------------------

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
  return sortCodePoints([...new Set(out)]);
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

  opts.schemaPhase?.(true);
  const src = schemaSourceOf(view);
  const plain = () => src.plain() as object;
  const entry = strictSchemaEntry(src.key, plain, opts.assertFormats);
  if (!entry.valid) explanation.schema_error = entry.reason;

  let jsonPass = 0;
  if (structured && entry.valid) {
    const v = validateWithEntry(entry, plain, toPlain(answer.value as PyValue), opts.schemaPhase);
    if (v.valid) jsonPass = 1;
    else explanation.validation_error = v.reason;
  }
  const typeSafety =
    structured && entry.valid ? strictTypeSafety(answer.value as PyValue, plain()) * jsonPass : 0;
  opts.schemaPhase?.(false);

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
    const equal = leafEquals(g, c);
    if (equal) exact++;
    // Equal values are fully faithful: `1500000.0` and `1500000` are one number here (fix 2), for
    // Faithfulness as for Value Accuracy; only unequal values are compared token by token.
    tokens += equal ? 1 : isEmptyContainer(g) || isEmptyContainer(c) ? 0 : tokenF1(g, c);
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
    typeSafety,
    requiredKeyRecall: requiredRecall,
    perfect: deepEquals(answer.value, view.groundTruth) ? 1 : 0,
    missingGtPaths: sortCodePoints(missing.map(displayPath)),
    missingRequiredPaths: missingRequired.map((p) =>
      displayPath(p.replaceAll('/*', '/[]')).replaceAll('.[]', '[]'),
    ),
    explanation: answer.lenient ? { ...explanation, lenient_parse: true } : explanation,
    lenientParse: answer.lenient ? 1 : 0,
  };
}
