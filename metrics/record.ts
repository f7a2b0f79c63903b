/**
 * Per-record scoring, `sob` profile (docs/scoring.md "Per-record scoring"). A pure function of
 * (record, modality, options): no I/O.
 */

import type { ValidateFunction } from 'ajv';
import type { EvalRow } from '../src/core/formats/eval-row.ts';
import {
  dumpsPy,
  floatJson,
  isStructured,
  type PyObject,
  type PyValue,
  parsePyJson,
  pyJsonString,
  sortCodePoints,
  toPlain,
} from '../src/core/pyjson.ts';
import { floatSum } from '../src/core/pysum.ts';
import { type Modality, type ScoringView, scoringView } from '../src/core/record.ts';
import { type SchemaEntry, schemaEntry, validateWithEntry } from '../src/core/schema.ts';
import { collidedPaths, flattenLeaves, foundRequiredPaths, type Leaves, requiredPrefixes } from './paths.ts';
import {
  boolNumberQuirk,
  collisionQuirk,
  missingQuirk,
  perfectQuirk,
  QuirkNotes,
  type SobQuirk,
  typeQuirk,
} from './quirks.ts';
import { typePrecision } from './types.ts';
import { canonicalEqual, normalizeTokens, noStrings, pyEquals, tokenF1Known } from './values.ts';

import { DIFFICULTY_WEIGHTS, WEIGHT_FIELD_PRIORITY } from './weights.ts';

export { DIFFICULTY_WEIGHTS, WEIGHT_FIELD_PRIORITY } from './weights.ts';

/** One record's scores, in the paper's words; `toReferenceRow` names them as the reference does. */
export interface RecordScore {
  recordId: PyValue;
  modelId: PyValue;
  schemaComplexity: PyValue;
  questionDifficulty: PyValue;
  difficulty: string;
  weightingBasis: string;
  weight: number;
  knownDifficulty: boolean;
  jsonParse: number;
  rootStructured: number;
  schemaValidInput: number;
  jsonPass: number;
  valueAccuracy: number;
  faithfulness: number;
  pathRecall: number;
  structureCoverage: number;
  typeSafety: number;
  requiredKeyRecall: number;
  perfect: number;
  missingGtPaths: string[];
  missingRequiredPaths: string[];
  /** Why the numbers are what they are: the gate that fired, the first schema error. */
  explanation: Explanation;
  /** strict profile only: 1 when the answer parsed only after recovery. */
  lenientParse?: number;
}

export interface Explanation {
  schema_error?: string;
  validation_error?: string;
  not_structured?: string;
  coverage_gate?: number;
  scoring_error?: string;
  /** strict profile: the answer parsed only after recovery (a code fence, a prefix). */
  lenient_parse?: boolean;
  /** sob profile: the leaves whose score one of the reference's quirks decided. */
  sob_quirks?: SobQuirk[];
}

/** Python truthiness of a JSON value. */
function truthy(v: PyValue | undefined): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0 || v === 0n) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  return true;
}

function weightOf(metadata: PyObject): { difficulty: string; basis: string; weight: number } {
  for (const field of WEIGHT_FIELD_PRIORITY) {
    const v = metadata.get(field);
    if (typeof v === 'string' && v in DIFFICULTY_WEIGHTS) {
      return { difficulty: v, basis: field, weight: DIFFICULTY_WEIGHTS[v] };
    }
  }
  return { difficulty: 'unknown', basis: 'unknown', weight: 0 };
}

type Identity = Pick<
  RecordScore,
  | 'recordId'
  | 'modelId'
  | 'schemaComplexity'
  | 'questionDifficulty'
  | 'difficulty'
  | 'weightingBasis'
  | 'weight'
  | 'knownDifficulty'
>;

/** SPEC step 1: what a row echoes of the record's metadata, and its weight. */
function identity(metadata: PyObject): Identity {
  const w = weightOf(metadata);
  return {
    recordId: metadata.has('record_id') ? (metadata.get('record_id') as PyValue) : '',
    modelId: metadata.has('model_id') ? (metadata.get('model_id') as PyValue) : 'unknown',
    schemaComplexity: truthy(metadata.get('schema_complexity'))
      ? (metadata.get('schema_complexity') as PyValue)
      : 'unknown',
    questionDifficulty: truthy(metadata.get('difficulty'))
      ? (metadata.get('difficulty') as PyValue)
      : 'unknown',
    difficulty: w.difficulty,
    weightingBasis: w.basis,
    weight: w.weight,
    knownDifficulty: w.weight > 0,
  };
}

/** SPEC step 5: text needs path-set F1 >= 0.95; image and audio get a soft quadratic gate. */
export function coverageGate(modality: Modality, structureF1: number): number {
  if (modality === 'text') return structureF1 >= 0.95 ? 1 : 0;
  return structureF1 > 0 ? Math.min(1, (structureF1 / 0.9) ** 2) : 0;
}

function f1FromCounts(overlap: number, predTotal: number, gtTotal: number): number {
  if (predTotal === 0 || gtTotal === 0) return 0;
  const precision = overlap / predTotal;
  const recall = overlap / gtTotal;
  if (precision + recall === 0) return 0;
  return (2 * precision * recall) / (precision + recall);
}

/** Value Accuracy before gates: share of ground-truth leaves present with an equal value. */
function exactMatch(gt: Leaves, pred: Leaves, notes: QuirkNotes): number {
  if (gt.size === 0) return 1;
  let matches = 0;
  for (const [path, g] of gt) {
    const p = pred.get(path);
    if (p !== undefined && pyEquals(g, p)) {
      matches++;
      if (typeof g !== typeof p && (typeof g === 'boolean' || typeof p === 'boolean'))
        boolNumberQuirk(notes, path, g, p);
    }
  }
  return matches / gt.size;
}

/** Faithfulness before gates: mean token F1, a missing leaf read as null. */
function meanTokenF1(gt: GroundTruthFacts, pred: Leaves, notes: QuirkNotes): number {
  const { leaves } = gt;
  if (leaves.size === 0) return 1;
  const tokens = gtTokens(gt);
  if (f1Scratch.length < leaves.size)
    f1Scratch = new Float64Array(Math.max(leaves.size, 2 * f1Scratch.length));
  const f1s = f1Scratch;
  let i = 0;
  for (const [path, g] of leaves) {
    const p = pred.get(path);
    if (p !== undefined) f1s[i] = tokenF1Known(g, tokens[i], p);
    else {
      const f = tokenF1Known(g, tokens[i], null);
      if (f > 0) missingQuirk(notes, path, g, f);
      f1s[i] = f;
    }
    i++;
  }
  // `sum(token_f1(...) for ...) / len(gt_leafs)`: Python 3.12's compensated sum.
  return floatSum(f1s, 0, i) / leaves.size;
}
/** The leaves' token F1s of the record being scored (reused: scoring is synchronous). */
let f1Scratch = new Float64Array(64);

/** `required_paths`: required keys of object schemas, recursively; arrays recurse with `[]`. */
export function requiredPaths(schema: unknown, prefix = ''): string[] {
  const out: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  const walk = (s: unknown, pre: string, depth: number) => {
    if (!isObj(s) || depth > 10_000) return;
    const t = Object.hasOwn(s, 'type') ? s.type : undefined;
    if (t === 'object') {
      const props = Object.hasOwn(s, 'properties') ? s.properties : undefined;
      const required = Object.hasOwn(s, 'required') ? s.required : undefined;
      if (!Array.isArray(required)) return;
      for (const key of required) {
        if (typeof key !== 'string') continue;
        const child = isObj(props) && Object.hasOwn(props, key) ? props[key] : undefined;
        const p = pre ? `${pre}.${key}` : key;
        out.push(p);
        walk(child, p, depth + 1);
      }
    } else if (t === 'array') {
      walk(Object.hasOwn(s, 'items') ? s.items : undefined, pre ? `${pre}[]` : '[]', depth + 1);
    }
  };
  walk(schema, prefix, 0);
  return out;
}

/** What every record with this ground truth shares, computed once per ground-truth object. */
interface GroundTruthFacts {
  leaves: Leaves;
  /** Dotted paths that collided (a key holding "." or "[i]"). */
  collided: string[];
  /** The leaf paths, sorted by code point (missing paths are a filter of them, already sorted). */
  sorted: string[];
  /** Each leaf's tokens, in `leaves` order (built on first use). */
  tokens?: string[][];
}

/** The answer the last record scored flattened, and its leaves (read again for fields.jsonl). */
let lastAnswer: { root: PyValue; leaves: Leaves } | undefined;

/** An answer's leaves: the scorer's own when it has just flattened this object, else flattened now. */
export function answerLeaves(root: PyValue): Leaves {
  return lastAnswer !== undefined && lastAnswer.root === root ? lastAnswer.leaves : flattenLeaves(root);
}

/** Readers share one ground-truth object per distinct text, so the facts are kept per object. */
const gtMemo = new WeakMap<object, GroundTruthFacts>();
function groundTruthFacts(gt: PyValue | undefined): GroundTruthFacts {
  const structured = gt instanceof Map || Array.isArray(gt);
  let memo = structured ? gtMemo.get(gt) : undefined;
  if (!memo) {
    const leaves = flattenLeaves(gt);
    memo = {
      leaves,
      collided: collidedPaths(gt, leaves),
      sorted: sortCodePoints([...leaves.keys()]),
      // Declared from the start (one hidden class for every ground truth's facts).
      tokens: undefined,
    };
    if (structured) gtMemo.set(gt, memo);
  }
  return memo;
}

function gtTokens(facts: GroundTruthFacts): string[][] {
  facts.tokens ??= [...facts.leaves.values()].map((v) => normalizeTokens(v));
  return facts.tokens;
}

function sortedUnique(xs: Iterable<string>): string[] {
  return sortCodePoints([...new Set(xs)]);
}

/** The sorted, unique required paths of a valid schema, computed once per schema. */
interface Required {
  req: string[];
  set: Set<string>;
  prefixes: Set<string>;
}
const requiredMemo = new WeakMap<SchemaEntry, Required>();
function requiredPathsOf(facts: SchemaFacts): Required {
  let r = requiredMemo.get(facts.entry);
  if (!r) {
    const req = sortedUnique(requiredPaths(facts.schema()));
    r = { req, set: new Set(req), prefixes: requiredPrefixes(req) };
    requiredMemo.set(facts.entry, r);
  }
  return r;
}

/** `required_key_recall`: required paths found among the answer's paths (indices as `[]`). */
function requiredKeyRecall(candidate: PyValue, required: Required): { recall: number; missing: string[] } {
  const { req } = required;
  if (req.length === 0) return { recall: 1, missing: noStrings() };
  const found = foundRequiredPaths(candidate, required.set, required.prefixes);
  const missing = found.size === req.length ? noStrings() : req.filter((p) => !found.has(p));
  return { recall: (req.length - missing.length) / req.length, missing };
}

/** Native JSON.parse of a raw span when it can (no NaN/Infinity), else the lossless value. */
function plainOf(value: PyValue, text: string | undefined): unknown {
  if (text !== undefined) {
    try {
      return JSON.parse(text);
    } catch {
      // NaN / Infinity: Python accepts them, JSON.parse does not.
    }
  }
  return toPlain(value);
}

/** Parses a schema's raw text: native JSON.parse, or the lossless parser for NaN/Infinity. */
export function parseSchemaText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return toPlain(parsePyJson(text));
  }
}

/** Where the schema comes from: its raw text (the cache key) or the parsed value. */
export interface SchemaSource {
  key: string;
  /** The schema as a plain JS value (built once, only when needed). */
  plain: () => unknown;
}

export function schemaSourceOf(view: ScoringView): SchemaSource {
  let have = false;
  let value: unknown;
  const plain = () => {
    if (!have) {
      value =
        view.schemaPlain !== undefined
          ? view.schemaPlain
          : view.schemaText !== undefined
            ? parseSchemaText(view.schemaText)
            : toPlain(view.schema ?? null);
      have = true;
    }
    return value;
  };
  let key = view.schemaText;
  if (key === undefined) {
    try {
      key = JSON.stringify(plain()) ?? '';
    } catch {
      key = '';
    }
  }
  return { key, plain };
}

interface SchemaFacts {
  entry: SchemaEntry;
  /** The schema as a plain JS value (the cached copy when the schema was seen before). */
  schema: () => unknown;
}

/** Schema validity, validator and plain value, cached by the schema's text across records and files. */
function checkSchema(view: ScoringView): SchemaFacts {
  const src = schemaSourceOf(view);
  const entry = schemaEntry(src.key, src.plain);
  return { entry, schema: () => (entry.schema !== undefined ? entry.schema : src.plain()) };
}

export interface ScoreOptions {
  modality: Modality;
  /**
   * Told when the work that depends on the schema alone (its check, its validator's compile)
   * starts (true) and ends (false), before the answer is validated: a caller with a time budget
   * can then tell a schema that stalls from an answer that does.
   */
  schemaPhase?: (on: boolean) => void;
}

/** Scores one response record exactly as the SOB reference does (`sob` profile). */
export function scoreRecord(view: ScoringView, opts: ScoreOptions): RecordScore {
  return scoreRecordWith(view, opts, checkSchema);
}

/** `scoreRecord` with the schema's facts from `facts` (the schema cache, or `primeScorer`'s own). */
function scoreRecordWith(
  view: ScoringView,
  opts: ScoreOptions,
  facts: (view: ScoringView) => SchemaFacts,
): RecordScore {
  const { metadata, groundTruth } = view;
  // Its fields in their order, the object built once at the end (see `explanationOf`).
  const why: [keyof Explanation, Explanation[keyof Explanation]][] = [];

  opts.schemaPhase?.(true);
  const schemaCheck = facts(view);
  const schemaValid = schemaCheck.entry.valid;
  if (!schemaValid) why.push(['schema_error', schemaCheck.entry.reason]);

  // The candidate is already parsed: only an object or array counts (a string is a failure).
  const structured = isStructured(view.candidate);
  const candidate: PyValue = structured ? (view.candidate as PyValue) : null;
  if (!structured) why.push(['not_structured', `candidate_response is ${describe(view.candidate)}`]);

  let jsonPass = 0;
  if (structured && schemaValid) {
    const v = validateWithEntry(
      schemaCheck.entry,
      () => schemaCheck.schema() as object,
      plainOf(candidate, view.candidateText),
      opts.schemaPhase,
    );
    if (v.valid) jsonPass = 1;
    else why.push(['validation_error', v.reason]);
  }
  opts.schemaPhase?.(false);

  const notes = new QuirkNotes();
  const gtFlat = groundTruthFacts(groundTruth);
  const gtLeaves = gtFlat.leaves;
  for (const p of gtFlat.collided) collisionQuirk(notes, p, 'ground truth');
  const predLeaves = structured ? flattenLeaves(candidate) : new Map<string, PyValue>();
  if (structured) lastAnswer = { root: candidate, leaves: predLeaves };
  if (structured) for (const p of collidedPaths(candidate, predLeaves)) collisionQuirk(notes, p, 'answer');
  let overlap = 0;
  for (const p of gtLeaves.keys()) if (predLeaves.has(p)) overlap++;

  const rawPathRecall = gtLeaves.size === 0 ? 0 : overlap / gtLeaves.size;
  const rawStructure = f1FromCounts(overlap, predLeaves.size, gtLeaves.size);
  const rawExact = exactMatch(gtLeaves, predLeaves, notes);
  const rawTokenF1 = meanTokenF1(gtFlat, predLeaves, notes);
  let rawTypes = 0;
  if (structured && schemaValid) {
    const schema = schemaCheck.schema();
    rawTypes = typePrecision(predLeaves, schema, (path, value, expected) =>
      typeQuirk(notes, schema, path, value, expected),
    );
  }

  let required: { recall: number; missing: string[] };
  if (structured && schemaValid) required = requiredKeyRecall(candidate, requiredPathsOf(schemaCheck));
  else required = { recall: 0, missing: requiredPaths(schemaCheck.schema()) };

  const hardening = jsonPass;
  const gate = coverageGate(opts.modality, rawStructure);
  if (gate < 1) why.push(['coverage_gate', gate]);

  const missingGt = overlap === gtLeaves.size ? noStrings() : gtFlat.sorted.filter((p) => !predLeaves.has(p));

  const perfect = canonicalEqual(candidate, groundTruth ?? null);
  if (!perfect && structured) perfectQuirk(notes, candidate, groundTruth ?? null);
  const quirks = notes.done();
  if (quirks) why.push(['sob_quirks', quirks]);

  return withIdentity(metadata, {
    jsonParse: structured ? 1 : 0,
    rootStructured: structured ? 1 : 0,
    schemaValidInput: schemaValid ? 1 : 0,
    jsonPass,
    valueAccuracy: rawExact * hardening * gate,
    faithfulness: rawTokenF1 * hardening * gate,
    pathRecall: rawPathRecall * hardening,
    structureCoverage: rawStructure * hardening,
    typeSafety: rawTypes * hardening,
    requiredKeyRecall: required.recall,
    perfect: perfect ? 1 : 0,
    missingGtPaths: missingGt,
    missingRequiredPaths: required.missing,
    explanation: explanationOf(why),
  });
}

/**
 * A record's explanation from its fields in order. Built by `Object.fromEntries` rather than
 * one field at a time: the fields a record has vary (any of five), and each mix is an object
 * shape of its own, which made the scorer's compiled code start again (deoptimize) each time a
 * new mix came by.
 */
function explanationOf(why: [keyof Explanation, Explanation[keyof Explanation]][]): Explanation {
  return why.length === 0 ? {} : (Object.fromEntries(why) as Explanation);
}

/** What a record's scores are without its identity (a function of the schema, truth and answer). */
type Scores = Omit<RecordScore, keyof Identity>;

/**
 * A record's scores with the identity its metadata gives. Every field written out, in one literal:
 * a spread of the identity, whose field types vary by record, made each row's object slowly, one
 * property at a time (about 7% of a worker's time on the SOB files).
 */
function withIdentity(metadata: PyObject, s: Scores): RecordScore {
  const id = identity(metadata);
  const out: RecordScore = {
    recordId: id.recordId,
    modelId: id.modelId,
    schemaComplexity: id.schemaComplexity,
    questionDifficulty: id.questionDifficulty,
    difficulty: id.difficulty,
    weightingBasis: id.weightingBasis,
    weight: id.weight,
    knownDifficulty: id.knownDifficulty,
    jsonParse: s.jsonParse,
    rootStructured: s.rootStructured,
    schemaValidInput: s.schemaValidInput,
    jsonPass: s.jsonPass,
    valueAccuracy: s.valueAccuracy,
    faithfulness: s.faithfulness,
    pathRecall: s.pathRecall,
    structureCoverage: s.structureCoverage,
    typeSafety: s.typeSafety,
    requiredKeyRecall: s.requiredKeyRecall,
    perfect: s.perfect,
    missingGtPaths: s.missingGtPaths,
    missingRequiredPaths: s.missingRequiredPaths,
    explanation: s.explanation,
  };
  if (s.lenientParse !== undefined) out.lenientParse = s.lenientParse;
  return out;
}

/**
 * Scores a handful of made-up records (no schema cache, no validator, no I/O: the schema's facts
 * and validator are its own) whose answers take the scorer's less common paths: every kind of
 * value against every other, empty and nested containers, missing and extra leaves, an answer
 * that is not structured, a schema that is not valid, each modality's gate. A scoring worker runs
 * it before its first file: V8 compiles the scorer a few hundred records in, for the paths those
 * records took; a path first taken later (a number where the truth has a string, say) threw that
 * code away and compiled it again, in every worker. Returns the scores (for the row writers).
 */
export function primeScorer(): { score: RecordScore; modality: Modality }[] {
  const gtText =
    '{"a": "The quick fox", "b": 1, "c": 1.5, "d": null, "e": true, "f": [1, "\u00e9 u", {"g": -0.0}], "h": {"i": "a\\"b"}, "j": "", "k.l": 2, "m": [], "n": 12345678901234567890}';
  const gt = parsePyJson(gtText);
  const answers = [
    // The truth itself (read again), then the same numbers written differently (1.0, 0.0).
    gtText,
    gtText.replace('"b": 1,', '"b": 1.0,'),
    gtText.replace('-0.0', '0.0'),
    '{"a": "the QUICK fox!", "b": 1.0, "c": 2, "d": "null", "e": "true", "f": [1, "e u", {"g": 0.0}], "h": {"i": 5}, "j": null, "k": {"l": 2}, "m": [[]], "x": false}',
    '{"a": 3, "b": "1", "c": null, "d": false, "e": 1, "f": {}, "h": [], "j": "", "n": 1.5}',
    '[1, "a", {"b": [true]}]',
    '{}',
  ].map((t) => ({ value: parsePyJson(t) as PyValue | undefined, text: t as string | undefined }));
  answers.push(
    { value: gt, text: undefined },
    { value: 'not an object', text: undefined },
    { value: undefined, text: undefined },
  );
  const schema = {
    type: 'object',
    properties: {
      a: { type: 'string' },
      b: { type: 'integer' },
      c: { type: 'number' },
      d: { type: 'null' },
      e: { type: 'boolean' },
      f: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'object', required: ['g'] }] } },
      h: { type: 'object', properties: { i: { type: 'string' } }, required: ['i'] },
      j: { type: ['string', 'null'] },
      m: { type: 'array', items: { type: 'array' } },
      n: { type: 'integer' },
    },
    required: ['a', 'b', 'f', 'h', 'h.i'],
  };
  let calls = 0;
  const validate = Object.assign(
    (_: unknown) => {
      const ok = calls++ % 2 === 0;
      validate.errors = ok ? null : [{ instancePath: '/a', message: 'must be string' }];
      return ok;
    },
    { errors: null as { instancePath: string; message: string }[] | null },
  );
  const valid: SchemaFacts = {
    entry: { key: '', valid: true, validate: validate as unknown as ValidateFunction, schema },
    schema: () => schema,
  };
  const invalid: SchemaFacts = {
    entry: { key: '', valid: false, reason: 'not a schema' },
    schema: () => schema,
  };
  const metadata: PyObject[] = [
    new Map<string, PyValue>([
      ['record_id', 'r1'],
      ['model_id', 'm'],
      ['schema_complexity', 'hard'],
      ['difficulty', 'easy'],
    ]),
    new Map<string, PyValue>([['record_id', 7n]]),
  ];
  const modalities: Modality[] = ['text', 'image', 'audio'];
  const out: { score: RecordScore; modality: Modality }[] = [];
  answers.forEach((a, i) => {
    for (const facts of [valid, invalid]) {
      const modality = modalities[i % 3];
      // A view as the reader makes them (the same hidden class as every real record's).
      const line = new Map<string, PyValue>([
        ['metadata', metadata[i % 2]],
        ['output', new Map<string, PyValue>([['ground_truth', gt]])],
      ]);
      if (a.value !== undefined) (line.get('output') as PyObject).set('candidate_response', a.value);
      const made = scoringView(
        line,
        a.text === undefined ? undefined : new Map([['output.candidate_response', a.text]]),
      );
      if (!made.ok) throw new Error(made.error);
      const view = made.view;
      out.push({ score: scoreRecordWith(view, { modality }, () => facts), modality });
    }
  });
  return out;
}

function describe(v: PyValue | undefined): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (typeof v === 'string')
    return v.length > 40 ? `a string (${v.length} chars)` : `a string: ${JSON.stringify(v)}`;
  return `a ${typeof v === 'bigint' ? 'number' : typeof v}`;
}

/** A record that could not be scored in its time budget: every score 0, the reason kept. */
export function failedRecordScore(metadata: PyObject, reason: string): RecordScore {
  return withIdentity(metadata, {
    jsonParse: 0,
    rootStructured: 0,
    schemaValidInput: 0,
    jsonPass: 0,
    valueAccuracy: 0,
    faithfulness: 0,
    pathRecall: 0,
    structureCoverage: 0,
    typeSafety: 0,
    requiredKeyRecall: 0,
    perfect: 0,
    missingGtPaths: [],
    missingRequiredPaths: [],
    explanation: { scoring_error: reason },
  });
}

/**
 * `dumpsPy(toReferenceRow(s, modality))`, written directly: one string built per record instead
 * of an object walked by the generic writer (the same bytes).
 */
export function referenceRowJson(s: RecordScore, modality: Modality): string {
  const str = (v: PyValue) => (typeof v === 'string' ? pyJsonString(v) : dumpsPy(v));
  const list = (xs: string[]) => (xs.length === 0 ? '[]' : `[${xs.map((x) => pyJsonString(x)).join(', ')}]`);
  let out =
    `{"record_id": ${str(s.recordId)}, "model_id": ${str(s.modelId)}, "schema_complexity": ${str(s.schemaComplexity)}` +
    `, "question_difficulty": ${str(s.questionDifficulty)}, "difficulty": ${pyJsonString(s.difficulty)}` +
    `, "weighting_basis": ${pyJsonString(s.weightingBasis)}, "difficulty_weight": ${floatJson(s.weight)}` +
    `, "known_difficulty": ${s.knownDifficulty ? '1.0' : '0.0'}, "json_parse_success": ${floatJson(s.jsonParse)}` +
    `, "json_root_structured": ${floatJson(s.rootStructured)}, "schema_valid_input": ${floatJson(s.schemaValidInput)}` +
    `, "schema_compliance": ${floatJson(s.jsonPass)}, "leaf_value_em": ${floatJson(s.valueAccuracy)}` +
    `, "value_token_f1": ${floatJson(s.faithfulness)}, "hier_path_recall": ${floatJson(s.pathRecall)}` +
    `, "path_set_f1": ${floatJson(s.structureCoverage)}, "type_precision": ${floatJson(s.typeSafety)}` +
    `, "required_key_recall": ${floatJson(s.requiredKeyRecall)}, "strict_json_em": ${floatJson(s.perfect)}`;
  if (modality === 'image')
    out += `, "missing_gt_paths": ${list(s.missingGtPaths)}, "missing_required_paths": ${list(s.missingRequiredPaths)}`;
  if (s.lenientParse !== undefined) out += `, "lenient_parse": ${floatJson(s.lenientParse)}`;
  for (const _ in s.explanation) {
    out += `, "explanation": ${dumpsPy(s.explanation as Record<string, unknown>)}`;
    break;
  }
  return `${out}}`;
}

/** The reference's row (`eval_records.jsonl`), field names and order as it writes them. */
export function toReferenceRow(s: RecordScore, modality: Modality): EvalRow {
  const row: EvalRow = {
    record_id: s.recordId,
    model_id: s.modelId,
    schema_complexity: s.schemaComplexity,
    question_difficulty: s.questionDifficulty,
    difficulty: s.difficulty,
    weighting_basis: s.weightingBasis,
    difficulty_weight: s.weight,
    known_difficulty: s.knownDifficulty ? 1 : 0,
    json_parse_success: s.jsonParse,
    json_root_structured: s.rootStructured,
    schema_valid_input: s.schemaValidInput,
    schema_compliance: s.jsonPass,
    leaf_value_em: s.valueAccuracy,
    value_token_f1: s.faithfulness,
    hier_path_recall: s.pathRecall,
    path_set_f1: s.structureCoverage,
    type_precision: s.typeSafety,
    required_key_recall: s.requiredKeyRecall,
    strict_json_em: s.perfect,
  };
  if (modality === 'image') {
    row.missing_gt_paths = s.missingGtPaths;
    row.missing_required_paths = s.missingRequiredPaths;
  }
  if (s.lenientParse !== undefined) row.lenient_parse = s.lenientParse;
  if (Object.keys(s.explanation).length > 0) row.explanation = s.explanation;
  return row;
}
