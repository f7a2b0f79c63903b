/**
 * Scores one JSONL line of a response file: parse losslessly, read the record's parts, score.
 * Shared by the worker and the in-process path so both give the same rows.
 */

import { createHash } from 'node:crypto';
import { fieldLines } from '../../metrics/fields.ts';
import {
  failedRecordScore,
  parseSchemaText,
  primeScorer,
  type RecordScore,
  referenceRowJson,
  schemaSourceOf,
  scoreRecord,
  toReferenceRow,
} from '../../metrics/record.ts';
import { parseAnswer, scoreRecordStrict } from '../../metrics/strict.ts';
import { summaryRow } from '../../metrics/summary.ts';
import { pyEquals, strictEquals } from '../../metrics/values.ts';
import type { ParsedLine } from '../core/jsonl.ts';
import { namesModality, recordModality } from '../core/modality.ts';
import { dumpsPy, isStructured, type PyObject, type PyValue, parsePyJson, toPlain } from '../core/pyjson.ts';
import { type Modality, type ScoringView, scoringView } from '../core/record.ts';
import { isKnownSchemaText } from '../core/schema.ts';
import { TextMap } from '../core/text-map.ts';
import type { BenchmarkLookup, BenchmarkRecord } from './benchmark.ts';
import { failedSchemaRecord, isSchemaRecord, scoreSchemaRecord, sobRecordTrack } from './compliance.ts';
import { type LoadedScorer, runScorers, type ScorerRecord } from './custom-scorers.ts';
import type { FieldsOf, LenientRowPart, LineOutcome, ProfileOptions } from './line-types.ts';
import { SCHEMA_TIMED_OUT } from './verdicts.ts';

export type { FieldsOf, LineOutcome, Profile, ProfileOptions } from './line-types.ts';
export { schemaTextHash } from './verdicts.ts';

/** Ground truths by their source text (the same record recurs in every model's file). */
const groundTruths = new TextMap<PyValue>();
/**
 * How many the cache holds before it starts over: 20,000 while it is used, a quarter of that at
 * each start-over that found it mostly unused (down to 1,024). A benchmark of a million distinct
 * records never meets a ground truth twice in a file, and 20,000 parsed ones (with their
 * fields.jsonl parts) were the scoring worker's largest garbage: tens of MB let go at once, every
 * few seconds.
 */
const GT_CACHE_MAX = 20_000;
const GT_CACHE_MIN = 1_024;
let gtCacheCap = GT_CACHE_MAX;
let gtCacheHits = 0;

/** What a line is scored with besides itself. */
export interface LineContext {
  pathModality: Modality;
  /** Nothing in the file's path tells its modality (`pathModality` is the default, text). */
  pathDefaulted?: boolean;
  forced?: Modality;
  profile: ProfileOptions;
  /** When a benchmark is known: its records by id (ground truth, schema and weight come from it). */
  benchmark?: BenchmarkLookup;
  /** Told when schema-dependent work starts (true) and ends (false). */
  schemaPhase?: (on: boolean) => void;
  /** Whether a schema text already ran over the time budget (its records are not run again). */
  timedOut?: (schemaKey: () => string) => boolean;
  /** `--match`: scoring beside the profile's, on every SOB row (src/scoring/lenient.ts). */
  rowHook?: RowHook;
  /** `--scorer`: scorers of your own, loaded (src/scoring/custom-scorers.ts). */
  scorers?: LoadedScorer[];
  /** Told which scorer of your own runs (its index), and -1 when they are done. */
  scorerPhase?: (scorer: number) => void;
}

/**
 * Scoring beside the profile's (`--match`: lenient matching): given the record (null when it
 * could not be scored), its exact scores and the reference row about to be written, it may add
 * fields to the row and returns what the parent collects.
 */
export type RowHook = (
  view: ScoringView | null,
  score: RecordScore,
  modality: Modality,
  row: Record<string, unknown>,
  line: number,
  fields: FieldsOf,
) => LenientRowPart;

/** Short hashes of schema texts (a row of `fields.jsonl` names its schema by one). */
const schemaHashes = new Map<string, string>();
function schemaHash(key: string): string {
  let h = schemaHashes.get(key);
  if (h === undefined) {
    h = createHash('sha256').update(key).digest('hex').slice(0, 12);
    if (schemaHashes.size >= 4096) schemaHashes.clear();
    schemaHashes.set(key, h);
  }
  return h;
}

/** What builds a scored record's `fields.jsonl` lines (the answer as its profile read it). */
function fieldsOf(view: ScoringView, score: RecordScore, profile: ProfileOptions): FieldsOf {
  const strict = profile.profile === 'strict';
  const read = strict ? parseAnswer(view.raw, view.candidate).value : view.candidate;
  const candidate = isStructured(read) ? (read as PyValue) : null;
  const schema = schemaHash(schemaSourceOf(view).key);
  return (lenient) =>
    fieldLines({
      score,
      schema,
      gold: view.groundTruth,
      candidate,
      equals: strict ? strictEquals : pyEquals,
      lenient,
    });
}

/**
 * The outcome of a scored SOB record: its row (written directly when nothing is added to it),
 * with whatever the hook adds. `rowObject`: the row already built (the strict profile's, with its
 * compliance block).
 */
function rowOutcome(
  line: number,
  modality: Modality,
  score: RecordScore,
  view: ScoringView | null,
  hook: RowHook | undefined,
  profile: ProfileOptions | undefined,
  rowObject?: Record<string, unknown>,
): Extract<LineOutcome, { kind: 'row' }> {
  const summary = summaryRow(score, modality === 'image');
  const fields: FieldsOf =
    view && profile && profile.fields !== false ? fieldsOf(view, score, profile) : () => '';
  if (!hook) {
    const json = rowObject ? dumpsPy(rowObject) : referenceRowJson(score, modality);
    return { kind: 'row', line, modality, score: summary, json, fields: fields(null) };
  }
  const row = rowObject ?? toReferenceRow(score, modality);
  const lenient = hook(view, score, modality, row, line, fields);
  const text = lenient.fields ?? '';
  lenient.fields = undefined;
  return { kind: 'row', line, modality, score: summary, json: dumpsPy(row), lenient, fields: text };
}

/**
 * The schema text (the cache key) a line is scored with: the benchmark record's when a benchmark
 * is known, else the line's own. Undefined when the line has no record to score.
 */
export function schemaKeyOfLine(parsed: ParsedLine, ctx: LineContext): string | undefined {
  const vm = viewOf(parsed, ctx);
  return 'kind' in vm ? undefined : schemaSourceOf(vm.view).key;
}

/** The answer's metadata with the benchmark record's weight fields and source over it. */
function withBenchmarkMetadata(metadata: PyObject, b: BenchmarkRecord): PyObject {
  const m: PyObject = new Map(metadata);
  for (const [k, v] of [
    ['schema_complexity', b.schemaComplexity],
    ['difficulty', b.difficulty],
    ['accepted_alternatives', b.acceptedAlternatives],
    ['gold_version', b.goldVersion],
  ] as const) {
    if (v === undefined) m.delete(k);
    else m.set(k, v as PyValue);
  }
  if (b.modality) m.set('source', b.modality);
  return m;
}

/**
 * The record's view for scoring, with the benchmark's ground truth, schema and weight put in when
 * a benchmark is known; or the outcome that stops it (not a record, an id the benchmark lacks).
 */
function viewOf(
  parsed: ParsedLine,
  ctx: LineContext,
): { view: ScoringView; modality: Modality; defaulted?: true } | Exclude<LineOutcome, { kind: 'row' }> {
  if (!parsed.ok) return { kind: 'malformed', line: parsed.line, error: `not JSON: ${parsed.error}` };
  const v = scoringView(parsed.value, parsed.spans);
  if (!v.ok) return { kind: 'malformed', line: parsed.line, error: v.error };
  const view = v.view;
  if (ctx.benchmark) {
    const id = view.metadata.get('record_id');
    const b = typeof id === 'string' ? ctx.benchmark.get(id) : undefined;
    if (!b)
      return {
        kind: 'unknown',
        line: parsed.line,
        modality: recordModality(view.metadata, ctx.pathModality, ctx.forced),
        recordId: typeof id === 'string' ? id : id === undefined ? '(no record_id)' : dumpsPy(id),
      };
    view.metadata = withBenchmarkMetadata(view.metadata, b);
    view.schema = undefined;
    view.schemaPlain = undefined;
    view.schemaText = b.schemaText;
    view.groundTruth = undefined;
    view.groundTruthText = b.groundTruthText;
  }
  const modality = recordModality(view.metadata, ctx.pathModality, ctx.forced);
  // A SOB record whose schema the provider refused has no answer to score; a schema record's
  // refusal is the compliance track's to count.
  if (view.schemaRejected && !isSchemaRecord(view.metadata)) {
    const id = view.metadata.get('record_id');
    return {
      kind: 'rejected',
      line: parsed.line,
      modality,
      recordId: typeof id === 'string' ? id : id === undefined ? '' : dumpsPy(id),
    };
  }
  if (ctx.pathDefaulted && !ctx.forced && !namesModality(view.metadata))
    return { view, modality, defaulted: true };
  return { view, modality };
}

export function scoreParsedLine(parsed: ParsedLine, ctx: LineContext): LineOutcome {
  const { profile } = ctx;
  const vm = viewOf(parsed, ctx);
  if ('kind' in vm) return vm;
  const view = vm.view;
  // A schema the reader skipped is checked here: parsed the first time its text is seen.
  const text = view.schemaText;
  if (text !== undefined && (text.startsWith('{') || text.startsWith('[')) && !isKnownSchemaText(text)) {
    try {
      view.schemaPlain = parseSchemaText(text);
    } catch (e) {
      return {
        kind: 'malformed',
        line: parsed.line,
        error: `not JSON: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }
  // A ground truth the reader skipped is built from its text, once per distinct text.
  const gtText = view.groundTruthText;
  if (gtText !== undefined) {
    let gt = groundTruths.get(gtText);
    if (gt !== undefined) gtCacheHits++;
    else {
      try {
        gt = parsePyJson(gtText);
      } catch (e) {
        return {
          kind: 'malformed',
          line: parsed.line,
          error: `not JSON: ${e instanceof Error ? e.message : String(e)}`,
        };
      }
      if (groundTruths.size >= gtCacheCap) {
        // Used (a hit for every four held): full size again; else smaller.
        gtCacheCap =
          gtCacheHits * 4 >= groundTruths.size ? GT_CACHE_MAX : Math.max(GT_CACHE_MIN, gtCacheCap >> 2);
        gtCacheHits = 0;
        groundTruths.clear();
      }
      groundTruths.set(gtText, gt);
    }
    view.groundTruth = gt;
  }
  if (isSchemaRecord(view.metadata)) return slim(scoreSchemaRecord(parsed as ParsedOk, view, profile));
  const modality = vm.modality;
  if (ctx.timedOut?.(() => schemaSourceOf(view).key)) {
    const failed = failedRecordScore(view.metadata, SCHEMA_TIMED_OUT);
    return rowOutcome(parsed.line, modality, failed, null, ctx.rowHook, undefined);
  }
  const schemaPhase = ctx.schemaPhase;
  let row: Extract<LineOutcome, { kind: 'row' }>;
  if (profile.profile === 'strict') {
    const score = scoreRecordStrict(view, { modality, assertFormats: profile.assertFormats, schemaPhase });
    const custom = customScores(parsed, view, ctx);
    if (custom instanceof Error) return failedRow(parsed, view, modality, custom.message, ctx);
    // The strict row carries the compliance block of the answer it scored.
    const rowObject = toReferenceRow(score, modality);
    sobRecordTrack(parsed as ParsedOk, view, rowObject, profile);
    if (custom) rowObject.custom_scores = custom;
    row = rowOutcome(parsed.line, modality, score, view, ctx.rowHook, profile, rowObject);
    if (custom) row.custom = custom;
  } else {
    const score = scoreRecord(view, { modality, schemaPhase });
    const custom = customScores(parsed, view, ctx);
    if (custom instanceof Error) return failedRow(parsed, view, modality, custom.message, ctx);
    const rowObject = custom ? { ...toReferenceRow(score, modality), custom_scores: custom } : undefined;
    row = rowOutcome(parsed.line, modality, score, view, ctx.rowHook, profile, rowObject);
    if (custom) row.custom = custom;
  }
  if (vm.defaulted) row.defaulted = true;
  return row;
}

/** A record whose scorer of your own failed: all scores 0, the reason as its `scoring_error`. */
function failedRow(
  parsed: ParsedLine,
  view: ScoringView,
  modality: Modality,
  reason: string,
  ctx: LineContext,
): LineOutcome {
  return rowOutcome(
    parsed.line,
    modality,
    failedRecordScore(view.metadata, reason),
    null,
    ctx.rowHook,
    undefined,
  );
}

/** A second-level value's text the reader kept (`--scorer` asks for the context and question). */
function spanValue(parsed: ParsedLine, key: string): unknown {
  const text = parsed.ok ? parsed.spans?.get(key) : undefined;
  if (text === undefined) return undefined;
  try {
    return toPlain(parsePyJson(text));
  } catch {
    return undefined;
  }
}

/**
 * `--scorer`: the numbers of every scorer of your own for this record (undefined: none given),
 * or the Error that makes it the record's `scoring_error` (a throw, a bad value).
 */
function customScores(
  parsed: ParsedLine,
  view: ScoringView,
  ctx: LineContext,
): Record<string, number> | Error | undefined {
  const scorers = ctx.scorers;
  if (!scorers || scorers.length === 0) return undefined;
  const metadata = toPlain(view.metadata) as Record<string, unknown>;
  let schema: unknown = view.schemaPlain;
  if (schema === undefined && view.schema !== undefined) schema = toPlain(view.schema);
  if (schema === undefined && view.schemaText !== undefined) schema = spanText(view.schemaText);
  const record: ScorerRecord = {
    record_id: metadata.record_id,
    metadata,
    context: spanValue(parsed, 'input.context'),
    question: spanValue(parsed, 'input.question'),
    schema,
    ground_truth: view.groundTruth === undefined ? null : toPlain(view.groundTruth),
  };
  const read =
    ctx.profile.profile === 'strict' ? parseAnswer(view.raw, view.candidate).value : view.candidate;
  const answer = isStructured(read) ? toPlain(read as PyValue) : null;
  try {
    return runScorers(scorers, record, answer, ctx.scorerPhase);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  } finally {
    ctx.scorerPhase?.(-1);
  }
}

function spanText(text: string): unknown {
  try {
    return toPlain(parsePyJson(text));
  } catch {
    return text;
  }
}

type ParsedOk = Extract<ParsedLine, { ok: true }>;

/**
 * A scoring worker's start: the scorer and the row writers run on made-up records
 * (`primeScorer`), so V8 compiles them once for the paths real records take now and then. Nothing
 * is kept; the outcomes are returned for the worker's own message writer.
 */
export function primeScoring(): LineOutcome[] {
  return primeScorer().map(({ score, modality }, i) =>
    rowOutcome(i + 1, modality, score, null, undefined, undefined),
  );
}

/** The compliance track's outcome with only what the summary needs of its scores. */
function slim(o: LineOutcome): LineOutcome {
  return o.kind === 'row' ? { ...o, score: summaryRow(o.score as RecordScore, false) } : o;
}

/** The row for a record that could not be scored (time or memory budget): all scores 0. */
export function failedLine(parsed: ParsedLine, reason: string, ctx: LineContext): LineOutcome {
  const vm = viewOf(parsed, ctx);
  if ('kind' in vm) return vm;
  if (isSchemaRecord(vm.view.metadata))
    return slim(failedSchemaRecord(parsed as ParsedOk, vm.view, reason, ctx.profile.protocol));
  const score = failedRecordScore(vm.view.metadata, reason);
  return rowOutcome(parsed.line, vm.modality, score, null, ctx.rowHook, undefined);
}
