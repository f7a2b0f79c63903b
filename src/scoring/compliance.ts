/**
 * The schema compliance track inside `sob score` (issue 11): the hooks score-line.ts,
 * score-files.ts and worker.ts call.
 *
 * - Schema records (`metadata.source` `schema`) are scored here, on a scoring worker, so the
 *   per-record time budget covers validation: a row with the record's `compliance` block
 *   (SchemaBench's fine-grained validation: every violation with its instance path, schema path
 *   and keyword, partial validity) and, when the record has a ground truth, the SOB metrics; the
 *   row goes to `<out>/schema/<model>/`.
 * - In the `strict` profile, rows of the SOB sources also carry the `compliance` block of the
 *   answer the row scored. The `sob` profile's rows are unchanged.
 * - A record whose schema the provider refused (`eval_info.schema_rejected`) is not declared on
 *   the compliance track; a SOB record refused so is left out of the SOB means (and out of
 *   eval_records.jsonl) and counted in `data_quality.schema_rejected_count` (HELPERS.md).
 * - `TrackCollector` and `summarizeJob` (the parent side, in track.ts) gather what a folder's
 *   summary needs and write it: `schema/<model>/eval_summary.json` gains `compliance`
 *   (metrics/compliance-track.ts).
 */
import {
  answerFromRow,
  complianceOfRecord,
  complianceRow,
  type ParsedAnswer,
  type RecordCompliance,
  recordDialect,
  SchemaCache,
  unvalidated,
} from '../../metrics/compliance.ts';
import { withIntCounts } from '../../metrics/compliance-track.ts';
import {
  failedRecordScore,
  type RecordScore,
  schemaSourceOf,
  scoreRecord,
  toReferenceRow,
} from '../../metrics/record.ts';
import { parseAnswer, scoreRecordStrict } from '../../metrics/strict.ts';
import type { EvalRow } from '../core/formats/eval-row.ts';
import type { ParsedLine } from '../core/jsonl.ts';
import { dumpsPy, isStructured, type PyObject, type PyValue, toPlain } from '../core/pyjson.ts';
import type { ScoringView } from '../core/record.ts';
import {
  type Dialect,
  localRemotes,
  type Protocol,
  type RemoteResolver,
  validateCompiled,
} from '../core/validator.ts';
import { defaultProtocol, unsatisfiableFormats } from '../core/validator-protocols.ts';
import type { LineOutcome, ProfileOptions } from './line-types.ts';
import type { TrackInfo } from './track.ts';

// The parent side (what a folder gathers, its summary) lives in track.ts: the main thread
// loads neither ajv nor the metrics.
export { type SummaryJob, summarizeJob, TrackCollector, type TrackData, type TrackInfo } from './track.ts';

/**
 * The protocol a schema record is read under: `--protocol` when asked, else the default for its
 * data (`defaultProtocol`: JSONSchemaBench-built records as the harness reads them, any other
 * in its own draft).
 */
export function protocolOf(view: ScoringView, profile: Pick<ProfileOptions, 'protocol'>): Protocol {
  return profile.protocol ?? defaultProtocol(view.metadata.get('dataset'));
}

/**
 * The places of a schema's formats no value satisfies under the protocol
 * (`unsatisfiableFormats`), by schema text: each schema is walked once per worker.
 */
const neverFormats = new Map<string, string[]>();
function neverFormatsOf(key: string, plain: () => unknown, protocol: Protocol): string[] {
  if (protocol !== 'jsonschemabench') return [];
  let got = neverFormats.get(key);
  if (got === undefined) {
    got = unsatisfiableFormats(plain(), protocol);
    if (neverFormats.size >= 4096) neverFormats.clear();
    neverFormats.set(key, got);
  }
  return got;
}

/** A schema record: the compliance track scores it (whatever `--modality` says). */
export function isSchemaRecord(metadata: PyObject): boolean {
  return metadata.get('source') === 'schema';
}

/**
 * Compiled schemas of this worker, by schema text (every model's file repeats them, often in
 * more than one spelling: the 34 SOB image files hold 424 texts of 209 schemas), one cache per
 * format setting. Up to 4,096 schemas and 32 MB of schema text (about 260 MB compiled).
 */
const compiledSchemas = new Map<string, { cache: SchemaCache; remotes?: RemoteResolver }>();
function compiledFor(
  key: string,
  plain: () => unknown,
  assertFormats: boolean,
  protocol: Protocol,
  remotes: ProfileOptions['remotes'] = [],
  defaultDialect?: Dialect,
  lazyRefs?: boolean,
) {
  const setting = `${protocol}:${assertFormats}:${defaultDialect}:${lazyRefs}:${JSON.stringify(remotes)}`;
  let entry = compiledSchemas.get(setting);
  if (!entry) {
    const resolvers = remotes.map((r) => localRemotes(r.dir, r.base));
    entry = {
      cache: new SchemaCache(4096, 32_000_000),
      remotes:
        resolvers.length > 0 ? (uri) => resolvers.map((f) => f(uri)).find((d) => d !== undefined) : undefined,
    };
    compiledSchemas.set(setting, entry);
  }
  return entry.cache.get(key, plain, {
    assertFormats,
    protocol,
    remotes: entry.remotes,
    defaultDialect,
    lazyRefs,
  });
}

/**
 * A SchemaBench record (sources/schemabench.ts: its `metadata.verify_schema`), scored as its
 * evaluator scores: the answer parsed as JSON (one ```json block allowed, as its code-block parser
 * reads it), validated with Python `jsonschema.validate` against the schema the model saw, then
 * against the verify schema (the custom formats' patterns or base64 `const`, the escape string's
 * `const`). `jsonschema.validate` reads each schema in its `$schema` draft (Draft 2020-12 when
 * none), checks no format and resolves `$ref`s lazily: the dialect reading, formats off, lazy
 * references.
 */
function schemaBenchCompliance(view: ScoringView, verify: PyValue, rejected: boolean): RecordCompliance {
  const src = schemaSourceOf(view);
  const compiled = compiledFor(src.key, src.plain, false, 'dialect', [], '2020-12', true);
  const answer = answerFromRow(typeof view.raw === 'string' ? view.raw : undefined, answerCandidate(view), {
    fences: true,
  });
  const block: RecordCompliance & { verify_valid?: boolean | null } = complianceOfRecord({
    schema: undefined,
    answer,
    schemaRejected: rejected,
    compiled,
  });
  block.verify_valid = null;
  if (!block.valid || !answer.parsed) return block;
  const verifyPlain = toPlain(verify);
  const vc = compiledFor(
    JSON.stringify(verifyPlain),
    () => verifyPlain,
    false,
    'dialect',
    [],
    '2020-12',
    true,
  );
  if (!vc.ok) {
    block.valid = false;
    block.verify_valid = false;
    block.validation_error = `verify schema: ${vc.reason}`;
    return block;
  }
  const v = validateCompiled(vc.compiled, answer.value);
  block.verify_valid = v.valid;
  if (!v.valid) {
    block.valid = false;
    const extra = v.violations.map((x) => ({ ...x, schema_path: `verify:${x.schema_path}` }));
    block.violations = [...block.violations, ...extra].slice(0, 100);
    block.violation_count += v.violations.length;
    for (const x of v.violations) {
      const k = `verify:${x.keyword}`;
      block.violation_keywords[k] = (block.violation_keywords[k] ?? 0) + 1;
    }
  }
  return block;
}

function evalInfoOf(line: PyValue): Record<string, unknown> {
  const info = line instanceof Map ? line.get('eval_info') : undefined;
  if (!(info instanceof Map)) return {};
  const out: Record<string, unknown> = Object.create(null);
  for (const k of ['latency_ms', 'ttft_ms', 'tpot_ms', 'schema_rejected', 'error']) {
    const v = info.get(k);
    if (v !== undefined) out[k] = typeof v === 'bigint' ? Number(v) : v;
  }
  return out;
}

function text(v: PyValue | undefined, fallback: string): string {
  return typeof v === 'string' && v !== '' ? v : fallback;
}

/** The answer as JSONSchemaBench reads it: the raw text parsed as strict JSON. */
function schemaAnswer(view: ScoringView): ParsedAnswer {
  return answerFromRow(typeof view.raw === 'string' ? view.raw : undefined, answerCandidate(view));
}

/** The row's candidate as a plain value. */
function answerCandidate(view: ScoringView): unknown {
  const c = view.candidate;
  if (isStructured(c)) return plainAnswer(c as PyValue, view.candidateText);
  if (typeof c === 'bigint') return Number(c);
  return c;
}

/** The text a strictly parsed answer came from (the raw text, else the candidate's own). */
function strictText(view: ScoringView): string | undefined {
  return typeof view.raw === 'string' ? view.raw : view.candidateText;
}

/** An answer as plain JS: the native parser on its text when it has one (faster), else converted. */
function plainAnswer(value: PyValue, text: string | undefined): unknown {
  if (text !== undefined) {
    try {
      return JSON.parse(text);
    } catch {
      // NaN / Infinity: only the lossless parser reads them
    }
  }
  return toPlain(value);
}

/** The timings a row keeps (for the report's record view), when recorded. */
function timing(info: Record<string, unknown>): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const k of ['latency_ms', 'ttft_ms', 'tpot_ms']) {
    const v = info[k];
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The fields a row starts with: the record's identity and weight, as `toReferenceRow` names them. */
const IDENTITY = [
  'record_id',
  'model_id',
  'schema_complexity',
  'question_difficulty',
  'difficulty',
  'weighting_basis',
  'difficulty_weight',
  'known_difficulty',
] as const;

function identityRow(metadata: PyObject): EvalRow {
  const full = toReferenceRow(failedRecordScore(metadata, ''), 'text');
  const row: EvalRow = {};
  for (const k of IDENTITY) row[k as string] = full[k];
  return row;
}

/** Whether a schema record also has a value to compare (the probes: `track: both`). */
function hasValues(view: ScoringView): boolean {
  const track = view.metadata.get('track');
  if (track === 'compliance') return false;
  if (track === 'both') return true;
  return view.groundTruth !== undefined && view.groundTruth !== null;
}

function schemaOutcome(
  line: number,
  view: ScoringView,
  score: RecordScore,
  row: EvalRow,
  c: RecordCompliance,
  info: Record<string, unknown>,
  o: { values: boolean; scoringError?: string; never?: string[] },
): LineOutcome {
  const md = view.metadata;
  const dataset = text(md.get('source_category'), 'unknown');
  const rejected = c.schema_rejected;
  const explanation: Record<string, unknown> = { ...(row.explanation ?? {}) };
  delete row.explanation;
  row.source_category = dataset;
  row.track = o.values ? 'both' : 'compliance';
  row.compliance = withIntCounts(c);
  // Formats no value can satisfy under the protocol: named on the row (and in the summary).
  if (o.never && o.never.length > 0)
    (row.compliance as Record<string, unknown>).unsatisfiable_formats = o.never;
  const t = timing(info);
  if (t) row.timing = t;
  if (rejected)
    explanation.schema_rejected =
      typeof info.error === 'string' ? info.error : 'the provider refused the schema';
  if (o.scoringError) explanation.scoring_error = o.scoringError;
  if (Object.keys(explanation).length > 0) row.explanation = explanation;
  const aggregate = complianceRow(dataset, c, info);
  return {
    kind: 'row',
    line,
    modality: 'schema',
    score,
    json: dumpsPy(row),
    track: {
      sob: o.values && !rejected && !o.scoringError,
      write: true,
      rejected,
      schema: {
        row: aggregate,
        recordId: String(row.record_id),
        modelId: String(row.model_id),
        protocol: c.protocol,
        ...(o.never && o.never.length > 0 ? { never: o.never } : {}),
        parses: c.parses,
        compiles: c.schema_compiles,
        scoringError: o.scoringError !== undefined,
      },
    },
  };
}

/**
 * A schema record's row: its compliance block (the answer read as strict JSON from the raw
 * text; formats asserted, as JSONSchemaBench's validator does), and with a ground truth the SOB
 * metrics under the profile (the text source's rules).
 */
export function scoreSchemaRecord(
  parsed: Extract<ParsedLine, { ok: true }>,
  view: ScoringView,
  profile: ProfileOptions,
): LineOutcome {
  const info = evalInfoOf(parsed.value);
  const verify = view.metadata.get('verify_schema');
  let c: RecordCompliance;
  let never: string[] = [];
  if (verify !== undefined && verify !== null)
    c = schemaBenchCompliance(view, verify, info.schema_rejected === true);
  else {
    const src = schemaSourceOf(view);
    const protocol = protocolOf(view, profile);
    const compiled = compiledFor(src.key, src.plain, true, protocol, profile.remotes);
    never = neverFormatsOf(src.key, src.plain, protocol);
    c = complianceOfRecord({
      schema: undefined,
      answer: schemaAnswer(view),
      schemaRejected: info.schema_rejected === true,
      compiled,
    });
  }
  const values = hasValues(view);
  let score: RecordScore;
  let row: EvalRow;
  if (values) {
    score =
      profile.profile === 'strict'
        ? scoreRecordStrict(view, { modality: 'text', assertFormats: profile.assertFormats })
        : scoreRecord(view, { modality: 'text' });
    row = toReferenceRow(score, 'text');
  } else {
    score = { ...failedRecordScore(view.metadata, ''), explanation: {} };
    row = identityRow(view.metadata);
  }
  return schemaOutcome(parsed.line, view, score, row, c, info, { values, never });
}

/** A schema record that ran out of its time or memory budget: invalid, with the reason. */
export function failedSchemaRecord(
  parsed: Extract<ParsedLine, { ok: true }>,
  view: ScoringView,
  reason: string,
  asked?: Protocol,
): LineOutcome {
  const protocol = protocolOf(view, { protocol: asked });
  const info = evalInfoOf(parsed.value);
  const rejected = info.schema_rejected === true;
  let dialect: RecordCompliance['dialect'] = 'draft-07';
  try {
    dialect = recordDialect(toPlain(view.schema ?? null), { protocol });
  } catch {
    // keep the default
  }
  // Whether its schema compiles is not known: the time may have run out compiling it, or
  // validating the answer under it.
  const c: RecordCompliance = {
    ...unvalidated(dialect, null, rejected, false, protocol),
    validation_error: reason,
  };
  const score = failedRecordScore(view.metadata, reason);
  const row = identityRow(view.metadata);
  return schemaOutcome(parsed.line, view, score, row, c, info, {
    values: hasValues(view),
    scoringError: reason,
  });
}

/**
 * A SOB record's row, as the profile wrote it, with the track's additions: in the strict
 * profile its `compliance` block (of the answer the row scored: strict JSON, else the recovered
 * one; formats asserted as the row's JSON Pass asserts them); a refused schema marks the row to
 * be left out of the SOB means and counted. Nothing is added in the `sob` profile.
 */
export function sobRecordTrack(
  parsed: Extract<ParsedLine, { ok: true }>,
  view: ScoringView,
  row: EvalRow,
  profile: ProfileOptions,
): TrackInfo | undefined {
  const info = evalInfoOf(parsed.value);
  const rejected = info.schema_rejected === true;
  // A refused record's row is not written: nothing to validate.
  if (rejected) return { sob: false, write: false, rejected };
  if (profile.profile === 'strict') {
    const a = parseAnswer(view.raw, view.candidate);
    const src = schemaSourceOf(view);
    // A SOB record's block reads its schema in its own draft (the SOB sources are draft-07).
    const compiled = compiledFor(src.key, src.plain, profile.assertFormats, 'dialect');
    const answer: ParsedAnswer =
      a.value !== undefined
        ? { parsed: true, value: plainAnswer(a.value, a.strict ? strictText(view) : undefined) }
        : { parsed: false, reason: 'the answer is not a JSON object or array, even after recovery' };
    const c = complianceOfRecord({ schema: undefined, answer, compiled });
    const explanation = row.explanation;
    delete row.explanation;
    row.compliance = withIntCounts(c);
    if (explanation !== undefined) row.explanation = explanation;
  }
  return undefined;
}
