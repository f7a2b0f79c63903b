/**
 * Deterministic checks run on every benchmark record: by `sob build` on what it writes, and by the
 * benchmark loader (src/core/benchmark-records.ts) on what `run`, `eval` and `score` read.
 *
 * Hard failures reject the record (it goes to `rejected.jsonl` with its reasons):
 * - the record shape (zod `BenchmarkRecord`), a unique `metadata.record_id`;
 * - the schema is a valid draft-07 schema; the ground truth validates against it;
 * - the schema declares at least three properties (counted over every nesting level).
 * Warnings keep the record but are reported:
 * - a given `schema_complexity` that differs from the one derived from the schema;
 * - a string leaf of the ground truth that cannot be found in the context, as written, as a date
 *   or as a number (grounding, src/core/grounding.ts).
 */
import { distance } from 'fastest-levenshtein';
import { countProperties, deriveComplexity, isObj } from './complexity.ts';
import { groundLeaves, ungroundedWarning } from './grounding.ts';
import type { Complexity } from './record.ts';
import { BenchmarkRecord } from './record-shape.ts';
import { checkDraft7Schema, validateInstance } from './schema.ts';
import { defaultProtocol, unsatisfiableFormats, unsatisfiableWarning } from './validator-protocols.ts';

/**
 * How a record is checked: `extraction` = every check (schema, ground truth valid under it, >= 3
 * properties, grounding warnings); `probe` = the same without grounding (a probe's values are
 * transformed from the context on purpose); `compliance` = schema-only records (no ground truth):
 * the shape and a unique id, the schema an object; `records` = a user's own records (`sob build
 * records`): every check, but a schema of fewer than 3 properties is a warning, as `run` and
 * `eval` read such a record.
 */
export {
  COMPLEXITY_WEIGHT,
  countProperties,
  deriveComplexity,
  isComplexity,
  SHAPE_BUDGET,
} from './complexity.ts';

export type CheckMode = 'extraction' | 'probe' | 'compliance' | 'records';

export const MIN_PROPERTIES = 3;

export interface CheckResult {
  ok: boolean;
  /** Hard failures: the record is rejected when there is at least one. */
  errors: string[];
  warnings: string[];
  /** The complexity derived from the schema (undefined when the schema is unusable). */
  derivedComplexity?: Complexity;
  record?: BenchmarkRecord;
}

// ---------------------------------------------------------------------------------------------
// Grounding (src/core/grounding.ts)

export {
  bestSubstringDistance,
  editWindow,
  GroundingIndex,
  groundLeaves,
  normaliseForGrounding,
  stringLeaves,
  ungroundedPaths,
} from './grounding.ts';

// ---------------------------------------------------------------------------------------------
// Known keys

/**
 * The keys a benchmark record may hold in each block (the response format without the answer; a
 * response line's `candidate_response`, `raw_response` and `eval_info` are tolerated, so a
 * response file can serve as a benchmark). `metadata` is open: anything passes through.
 */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  // `format_version`: a response line's (docs/formats.md), so this build's responses.jsonl still serves.
  record: ['format_version', 'metadata', 'input', 'output', 'eval_info'],
  input: ['context', 'question', 'json_schema', 'attachments'],
  output: ['ground_truth', 'candidate_response', 'raw_response'],
};
/** Metadata keys the tool reads: a key one or two edits from one of them (and it absent) is a typo. */
const READ_METADATA = ['record_id', 'source', 'schema_complexity', 'difficulty', 'model_id'];

/** The known key `key` is most likely a typo of, or undefined when none is close. */
export function didYouMean(key: string, known: readonly string[], maxEdits?: number): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(key.toLowerCase(), k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  const limit = maxEdits ?? Math.max(2, Math.floor((best?.length ?? 0) / 3));
  return bestD <= limit ? best : undefined;
}

/** The fields of a flat row (`sob build records`' input), as a user writes them. */
const FLAT_ROW_KEYS = ['id', 'record_id', 'context', 'question', 'schema', 'json_schema', 'ground_truth'];

/** A flat row, not a record: none of a record's sections, and one of a row's fields. */
export function isFlatRow(candidate: unknown): boolean {
  if (!isObj(candidate)) return false;
  const keys = Object.keys(candidate);
  return !keys.some((k) => KNOWN_KEYS.record.includes(k)) && keys.some((k) => FLAT_ROW_KEYS.includes(k));
}

/**
 * Keys a record holds that no reader knows, each as one reason: "unknown key `ground_truht` in
 * output; did you mean `ground_truth`?". A misspelt key would otherwise read as a missing value
 * (a null ground truth, a weight of 0) and be scored as the model's fault.
 */
export function unknownKeys(candidate: unknown): string[] {
  const out: string[] = [];
  if (!isObj(candidate)) return out;
  // A flat row (the input of `sob build records`) among records: one reason, not one per key.
  if (isFlatRow(candidate))
    return [
      `a flat row (${Object.keys(candidate).join(', ')}), not a record: \`sob eval\`, \`sob run\` and \`sob score\` read a file of flat rows as \`sob build records\` does, but a file mixing rows and records is not read; write this one as a record (metadata, input, output: docs/records.md) or the whole file as rows`,
    ];
  const check = (block: string, obj: unknown) => {
    if (!isObj(obj)) return;
    const known = KNOWN_KEYS[block];
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const hint = didYouMean(key, known);
      const where = block === 'record' ? 'the record' : block;
      out.push(
        `unknown key \`${key}\` in ${where}${hint ? `; did you mean \`${hint}\`?` : ` (known: ${known.join(', ')})`}`,
      );
    }
  };
  check('record', candidate);
  check('input', candidate.input);
  check('output', candidate.output);
  if (isObj(candidate.metadata)) {
    for (const key of Object.keys(candidate.metadata)) {
      if (READ_METADATA.includes(key)) continue;
      const hint = didYouMean(key, READ_METADATA, 2);
      if (hint && !(hint in candidate.metadata))
        out.push(`unknown key \`${key}\` in metadata; did you mean \`${hint}\`?`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The record check

export interface CheckOptions {
  /** record ids already written: a repeat is a hard failure. Updated with accepted ids. */
  seenIds?: Set<string>;
  /** Skip the grounding check (a source whose values are not meant to be quoted). */
  skipGrounding?: boolean;
  /**
   * `extraction` (default): every check. `probe`: no grounding (values transformed on purpose).
   * `compliance`: a schema-only record (no ground truth; the schema need not pass draft-07's
   * meta-schema, since it is the thing under test): the shape and a unique id only.
   */
  mode?: CheckMode;
  /**
   * The ">= 3 properties" rule (the paper's curation of a benchmark): a rejection for `sob build`
   * (default), a warning for records read as they are (`run`, `eval`, `score --benchmark`).
   */
  fewProperties?: 'error' | 'warning';
  /**
   * A ground truth its own schema rejects: a rejection (default), or a warning where the record
   * is to be asked anyway (the SOB image set has one such record, and the reference scores it).
   */
  invalidGroundTruth?: 'error' | 'warning';
}

/** All checks on one candidate record; never throws. Adds the id to `seenIds` when accepted. */
export function checkRecord(candidate: unknown, opts: CheckOptions = {}): CheckResult {
  return withSeenIds(checkRecordContent(candidate, opts), opts.seenIds);
}

/**
 * The checks of one record that need nothing but the record (every one but the unique id): what
 * the record check's worker runs (src/core/record-checker.ts). Never throws.
 */
export function checkRecordContent(
  candidate: unknown,
  opts: Omit<CheckOptions, 'seenIds'> = {},
): CheckResult {
  const errors: string[] = unknownKeys(candidate);
  const warnings: string[] = [];
  const parsed = BenchmarkRecord.safeParse(candidate);
  if (errors.length > 0) return { ok: false, errors, warnings };
  if (!parsed.success) {
    for (const issue of parsed.error.issues.slice(0, 3)) {
      errors.push(`record shape: ${issue.path.join('.') || 'record'}: ${issue.message}`);
    }
    return { ok: false, errors, warnings };
  }
  const record = parsed.data;
  // A number beyond a double's range was read as Infinity: no JSON writer can carry it.
  errors.push(...nonFiniteNumbers(candidate));
  const schema = record.input.json_schema;
  if (opts.mode === 'compliance') {
    // A format no value satisfies under the protocol the record will be read with: one warning.
    const protocol = defaultProtocol((record.metadata as Record<string, unknown>).dataset);
    const never = unsatisfiableFormats(schema, protocol);
    if (never.length > 0) warnings.push(unsatisfiableWarning(never, protocol));
    return { ok: errors.length === 0, errors, warnings, derivedComplexity: deriveComplexity(schema), record };
  }
  const truth = record.output.ground_truth;
  if (truth === undefined) errors.push('no ground truth (output.ground_truth)');
  else if (truth === null || typeof truth !== 'object')
    errors.push(
      `the ground truth is ${scalarWords(truth)}, not a JSON object or array: the SOB metrics score the leaves of a structured answer, so every answer to it would score 0 (docs/records.md); wrap it, e.g. {"answer": ...}`,
    );
  let derived: Complexity | undefined;
  const depth = nestingDepth(schema, MAX_SCHEMA_DEPTH);
  const schemaCheck: ReturnType<typeof checkDraft7Schema> =
    depth > MAX_SCHEMA_DEPTH
      ? {
          valid: false,
          reason: `nested more than ${MAX_SCHEMA_DEPTH} levels deep (no schema a model is asked needs that)`,
        }
      : checkDraft7Schema(schema);
  if (!schemaCheck.valid) {
    errors.push(`invalid draft-07 schema: ${schemaCheck.reason}`);
  } else {
    const gt = validateInstance(schema, truth);
    if (truth !== undefined && !gt.valid)
      (opts.invalidGroundTruth === 'warning' ? warnings : errors).push(
        `ground truth does not validate against the schema: ${gt.reason}`,
      );
    const nProps = countProperties(schema);
    if (nProps < MIN_PROPERTIES) {
      ((opts.fewProperties ?? (opts.mode === 'records' ? 'warning' : 'error')) === 'warning'
        ? warnings
        : errors
      ).push(
        `the schema declares ${nProps} propert${nProps === 1 ? 'y' : 'ies'}; at least ${MIN_PROPERTIES} are needed`,
      );
    }
    derived = deriveComplexity(schema);
    const given = record.metadata.schema_complexity;
    if (given !== undefined && given !== derived) {
      warnings.push(`schema_complexity is "${given}" but the schema's shape makes it "${derived}"`);
    }
  }
  if (!opts.skipGrounding && opts.mode !== 'probe') {
    const furniture = record.metadata.page_furniture;
    for (const leaf of groundLeaves(
      truth,
      record.input.context,
      Array.isArray(furniture) ? furniture.filter((x): x is string => typeof x === 'string') : [],
    ))
      if (leaf.by === null) warnings.push(ungroundedWarning(leaf));
  }
  return { ok: errors.length === 0, errors, warnings, derivedComplexity: derived, record };
}

/**
 * The unique-id check over a record's other checks: a record whose id is in `seenIds` is a
 * duplicate (the reason first); an accepted record's id joins the set.
 */
export function withSeenIds(
  res: CheckResult,
  seenIds: { has(id: string): boolean; add(id: string): unknown } | undefined,
): CheckResult {
  const id = res.record?.metadata.record_id;
  if (!seenIds || id === undefined) return res;
  if (seenIds.has(id)) return { ...res, ok: false, errors: [`duplicate record_id "${id}"`, ...res.errors] };
  if (res.ok) seenIds.add(id);
  return res;
}

/** A scalar ground truth in words: `the integer 42`, `the string "42"`. */
function scalarWords(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string')
    return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === 'number') return `the ${Number.isInteger(v) ? 'integer' : 'number'} ${v}`;
  if (typeof v === 'boolean') return `the boolean ${v}`;
  return `a ${typeof v}`;
}

/**
 * Each number of a record that is not finite, by its path (`output.ground_truth.total`): a JSON
 * text beyond a double's range (`1e400`) reads as Infinity, which no JSON writer can carry.
 */
export function nonFiniteNumbers(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, p: string, depth: number): void => {
    if (out.length >= 3 || depth > 1000) return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        out.push(
          `${p || 'record'}: a number beyond the range of a JSON number (a double, up to about 1.8e308): ${Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity'} cannot be written back; write it as a string, or within range`,
        );
    } else if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`, depth + 1);
    else if (isObj(v)) for (const [k, x] of Object.entries(v)) walk(x, p ? `${p}.${k}` : k, depth + 1);
  };
  walk(value, '', 0);
  return out;
}

/**
 * A record's schema deeper than this is refused by the record check: compiling one thousands of
 * levels deep takes ajv minutes (3,000 levels: 127 s on a worker's stack), for no real schema.
 */
export const MAX_SCHEMA_DEPTH = 1000;

/** How deep `value` nests (objects and arrays), counted without recursion; stops past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) max = d + 1;
    if (max > limit) return max;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d + 1]);
  }
  return max;
}
