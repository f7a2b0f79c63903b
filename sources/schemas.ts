/**
 * Schema-only records (the schema compliance track, issue 11): a JSON Schema and the
 * JSONSchemaBench prompt asking for an instance valid under it, with no ground truth beyond
 * "any valid instance". `sob build schemas <dir-or-file>` reads a user's own schemas;
 * `sob build jsonschemabench <dir>` (sources/jsonschemabench.ts) reads that benchmark's layout.
 *
 * How a schema record says what it is (for the scorers):
 * - `metadata.source` is `schema`, `metadata.source_category` its dataset (JSONSchemaBench's
 *   `Github_easy`, ...; for a user's schemas the folder or file they came from);
 * - `output.ground_truth` is `null` and `metadata.track` is `compliance`: there is no value to
 *   compare, so the SOB value metrics are not computed on these records; the compliance track
 *   scores them (does the answer parse and validate; declared and empirical coverage);
 * - `metadata.schema_compiles` says whether our validator (src/core/validator.ts, the compliance
 *   track's: the draft its `$schema` names, formats asserted, ECMA-262 patterns, remote `$ref`s
 *   never fetched) compiles the schema; a schema that it cannot is kept, flagged `false` with
 *   `schema_compile_error`, never dropped: a provider may still accept it, and a benchmark that
 *   silently loses its hardest schemas measures less.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, relative, sep } from 'node:path';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { type PyValue, parsePyJson } from '../src/core/pyjson.ts';
import { compileSchema } from '../src/core/validator.ts';
import type { Candidate, Problem, RecordLoader, RecordLoadResult } from './types.ts';

/**
 * JSONSchemaBench's prompt: the system message of the paper's evaluation harness ("Generating
 * Structured Outputs from Language Models: Benchmark and Studies", Geng et al., 2025), followed
 * there by the schema itself; our runner shows the schema after the question.
 */
const JSONSCHEMABENCH_PROMPT = 'You need to generate a JSON object that matches the schema below.';

export interface SchemaVerdict {
  compiles: boolean;
  /** Why it does not compile (the validator's reason). */
  reason?: string;
  /** The draft the validator read it as (its `$schema`, draft-07 when it names none). */
  dialect: string;
}

/** Whether the compliance track's validator (src/core/validator.ts) compiles a schema. */
function schemaVerdict(schema: unknown): SchemaVerdict {
  const r = compileSchema(schema);
  return r.ok
    ? { compiles: true, dialect: r.compiled.dialect }
    : { compiles: false, reason: r.reason, dialect: r.dialect };
}

/** A schema file's text parsed twice: plainly (to check it) and losslessly (to write it as written). */
function parseSchemaText(text: string): { plain: unknown; lossless?: PyValue } {
  const plain = JSON.parse(text) as unknown;
  let lossless: PyValue | undefined;
  try {
    lossless = parsePyJson(text);
  } catch {
    lossless = undefined;
  }
  return { plain, lossless };
}

export interface SchemaSource {
  origin: string;
  recordId: string;
  /** The dataset (metadata.source_category). */
  category: string;
  schema: unknown;
  lossless?: PyValue;
  question?: string;
  /** More metadata (dataset name, schema id, file). */
  metadata: Record<string, unknown>;
}

/** A schema as a candidate record, its compile verdict in the metadata. */
function schemaCandidate(s: SchemaSource): { candidate: Candidate; verdict: SchemaVerdict } {
  const verdict = schemaVerdict(s.schema);
  const metadata: Record<string, unknown> = {
    record_id: s.recordId,
    source: 'schema',
    source_category: s.category,
    ...s.metadata,
    track: 'compliance',
    schema_dialect: verdict.dialect,
    schema_compiles: verdict.compiles,
  };
  if (!verdict.compiles) metadata.schema_compile_error = verdict.reason;
  const candidate: Candidate = {
    origin: s.origin,
    record: {
      metadata,
      input: { context: '', question: s.question ?? JSONSCHEMABENCH_PROMPT, json_schema: s.schema },
      output: { ground_truth: null },
    },
  };
  if (s.lossless !== undefined && s.lossless instanceof Map) candidate.lossless = { json_schema: s.lossless };
  return { candidate, verdict };
}

/** Reads one schema file; a file that is not JSON is a problem, not a crash. */
export function readSchemaFile(file: string): { text: string; plain: unknown; lossless?: PyValue } | Problem {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (e) {
    return { origin: file, reasons: [`cannot read: ${errorMessage(e)}`] };
  }
  try {
    return { text, ...parseSchemaText(text) };
  } catch (e) {
    return { origin: file, reasons: [`not valid JSON: ${errorMessage(e)}`] };
  }
}

export function isProblem(v: object): v is Problem {
  return 'reasons' in v;
}

/** Every `*.json` under a folder, sorted, at any depth. */
function listJsonFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 16) return;
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      const st = statSync(p);
      if (st.isDirectory()) walk(p, depth + 1);
      else if (e.toLowerCase().endsWith('.json')) out.push(p);
    }
  };
  walk(dir, 0);
  return out;
}

/** Per category: records made and schemas that do not compile, for one log line each. */
class CategoryTally {
  readonly counts = new Map<string, { records: number; flagged: number }>();
  add(category: string, compiles: boolean): void {
    const c = this.counts.get(category) ?? { records: 0, flagged: 0 };
    c.records++;
    if (!compiles) c.flagged++;
    this.counts.set(category, c);
  }
  lines(): string[] {
    return [...this.counts].map(
      ([k, c]) =>
        `${k}: ${c.records} schemas${c.flagged > 0 ? ` (${c.flagged} flagged: ${c.flagged === 1 ? 'it does' : 'they do'} not compile in our validator; kept)` : ''}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// A user's own schemas

/** A line or item of a schemas file: a schema, or `{id?, category?, question?, json_schema|schema}`. */
function unwrap(v: unknown): { schema: unknown; id?: string; category?: string; question?: string } {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const inner =
      'json_schema' in o ? o.json_schema : 'schema' in o && !('$schema' in o) ? o.schema : undefined;
    if (
      inner !== undefined &&
      (typeof inner === 'boolean' || (inner !== null && typeof inner === 'object'))
    ) {
      const str = (x: unknown) => (typeof x === 'string' && x !== '' ? x : undefined);
      return {
        schema: inner,
        id: str(o.id) ?? str(o.record_id),
        category: str(o.category),
        question: str(o.question),
      };
    }
  }
  return { schema: v };
}

function safeId(s: string): string {
  return s
    .replace(/\.json$/i, '')
    .split(sep)
    .join('/');
}

/** Schemas of a JSONL file (one a line) or a JSON file (one schema, or an array of them). */
function schemasOfFile(file: string): { sources: SchemaSource[]; problems: Problem[] } {
  const stem = basename(file).replace(/\.(jsonl|json)$/i, '');
  const sources: SchemaSource[] = [];
  const problems: Problem[] = [];
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const add = (origin: string, fallbackId: string, value: unknown, lossless?: PyValue) => {
    const u = unwrap(value);
    const wrapped = u.schema !== value;
    const innerLossless =
      wrapped && lossless instanceof Map ? (lossless.get('json_schema') ?? lossless.get('schema')) : lossless;
    sources.push({
      origin,
      recordId: u.id ?? fallbackId,
      category: u.category ?? stem,
      schema: u.schema,
      lossless: innerLossless,
      question: u.question,
      metadata: { dataset: 'schemas', schema_file: file },
    });
  };
  if (extname(file).toLowerCase() === '.jsonl') {
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      const origin = `${file}:${i + 1}`;
      try {
        const { plain, lossless } = parseSchemaText(line);
        add(origin, `${stem}-${i + 1}`, plain, lossless);
      } catch (e) {
        problems.push({ origin, reasons: [`not valid JSON: ${errorMessage(e)}`] });
      }
    });
    return { sources, problems };
  }
  const r = readSchemaFile(file);
  if (isProblem(r)) return { sources, problems: [r] };
  if (Array.isArray(r.plain)) {
    r.plain.forEach((v, i) => {
      const l = Array.isArray(r.lossless) ? r.lossless[i] : undefined;
      add(`${file}: item ${i}`, `${stem}-${i + 1}`, v, l);
    });
  } else add(file, stem, r.plain, r.lossless);
  return { sources, problems };
}

/** A folder of schema files: category = the first folder under the input (else the input's name). */
function schemasOfFolder(dir: string): { sources: SchemaSource[]; problems: Problem[] } {
  const sources: SchemaSource[] = [];
  const problems: Problem[] = [];
  for (const file of listJsonFiles(dir)) {
    const rel = relative(dir, file);
    const parts = rel.split(sep);
    const r = readSchemaFile(file);
    if (isProblem(r)) {
      problems.push(r);
      continue;
    }
    const u = unwrap(r.plain);
    const wrapped = u.schema !== r.plain;
    sources.push({
      origin: file,
      recordId: u.id ?? safeId(rel),
      category: u.category ?? (parts.length > 1 ? parts[0] : basename(dir)),
      schema: u.schema,
      lossless: wrapped ? undefined : r.lossless,
      question: u.question,
      metadata: { dataset: 'schemas', schema_file: rel.split(sep).join('/') },
    });
  }
  return { sources, problems };
}

/** Schema sources -> candidates with their verdicts; logs one line per category. */
export async function schemaCandidates(
  sources: SchemaSource[],
  problems: Problem[],
  log: (line: string) => void,
): Promise<RecordLoadResult> {
  const tally = new CategoryTally();
  const candidates: Candidate[] = [];
  for (const s of sources) {
    const { candidate, verdict } = schemaCandidate(s);
    tally.add(s.category, verdict.compiles);
    candidates.push(candidate);
  }
  for (const line of tally.lines()) log(line);
  return { candidates, problems };
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'compliance',
  loadRecords: async (input, ctx) => {
    if (input === undefined)
      throw new UserError('schemas needs an <input>: a folder of schema files or a JSON/JSONL file', 2);
    const found = statSync(input).isDirectory() ? schemasOfFolder(input) : schemasOfFile(input);
    if (found.sources.length === 0 && found.problems.length === 0)
      throw new UserError(`${input}: no JSON schemas in it (*.json files, or a JSON/JSONL file of schemas)`);
    return schemaCandidates(found.sources, found.problems, ctx.log);
  },
};
