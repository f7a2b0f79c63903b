/**
 * The schema compliance track, read back: `<dir>/schema/<model>/eval_summary.json` (what
 * `sob score` writes for schema records) into JSONSchemaBench's table (datasets as columns;
 * declared coverage, empirical coverage, compliance and partial validity per model; efficiency
 * where timings exist) as a terminal table, Markdown, CSV or JSON; and the report's compliance
 * section (per-dataset coverage bars, the commonest violation keywords, each record's violations).
 *
 * Folder, model and dataset names are the user's (`constructor`, `__proto__`): looked up through
 * Maps and arrays, never as keys of ordinary objects.
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import {
  type ComplianceBoard,
  type ComplianceBoardRow,
  type ComplianceEntry,
  type ComplianceGroup,
  complianceBoard,
  RATES,
  TIMINGS,
} from '../../metrics/compliance-track.ts';
import { errorMessage } from '../core/errors.ts';
import { EVAL_ROW } from '../core/formats/eval-row.ts';
import { checkEvalSummary } from '../core/formats/eval-summary.ts';
import { checkVersion } from '../core/formats/version.ts';
import { readJsonl } from '../core/jsonl.ts';
import { parsePyJson, pyStr, toPlain } from '../core/pyjson.ts';
import { MODALITIES } from '../core/record.ts';
import { csvTable, mdCell, nameCell } from './cells.ts';
import { type EvaluationFolder, type SkippedFolder, scanModelFolders } from './evaluation.ts';
import { USAGE_CSV_KEYS, USAGE_HEADER, usageCellsOf, usageCsvOf } from './tables.ts';
import { attachComplianceUsage } from './usage.ts';

/** The folder schema records are scored into, beside text/image/audio. */
export const SCHEMA_SOURCE = 'schema';

// -- Reading summaries ------------------------------------------------------------------------

const Count = z.number().int().nonnegative();
const Rate = z.object({
  count: Count,
  of: Count,
  rate: z.number(),
  ci95: z.tuple([z.number(), z.number()]).nullable(),
});
const Spread = z.object({ n: Count, median: z.number().nullable(), p90: z.number().nullable() });
const Group = z.object({
  n: Count,
  declared_coverage: Rate,
  empirical_coverage: Rate,
  compliance: Rate,
  partial_validity: z.object({ n: Count, mean: z.number().nullable() }),
  violation_keywords: z.array(z.object({ keyword: z.string(), records: Count })),
  efficiency: z.object({ ttft_ms: Spread, tpot_ms: Spread, latency_ms: Spread }),
});

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(o: Record<string, unknown>, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

function group(v: unknown, where: string): ComplianceGroup {
  const r = Group.safeParse(v);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${[where, ...i.path].join('.')}: ${i.message}`);
  }
  return r.data;
}

export interface ComplianceSummaryFile {
  entry: Omit<ComplianceEntry, 'model' | 'display_name'>;
  /** `data_quality` counts, in the file's order. */
  dataQuality: [string, number][];
}

/** One `schema/<model>/eval_summary.json`; throws the reason it cannot be read. */
export function readComplianceSummary(file: string): ComplianceSummaryFile {
  let raw: unknown;
  try {
    raw = toPlain(parsePyJson(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new Error(`not valid JSON (${errorMessage(e).split('\n')[0]})`);
  }
  if (!isObject(raw)) throw new Error('not a JSON object');
  checkEvalSummary(raw, file);
  const n = own(raw, 'num_records');
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    throw new Error('num_records: expected an integer >= 0');
  const c = own(raw, 'compliance');
  if (!isObject(c))
    throw new Error('no compliance block (not scored by a sob score that knows schema records?)');
  const ds = own(c, 'datasets');
  if (!isObject(ds)) throw new Error('compliance.datasets: expected an object');
  const datasets: Record<string, ComplianceGroup> = Object.create(null);
  for (const [name, g] of Object.entries(ds)) datasets[name] = group(g, `compliance.datasets.${name}`);
  const bootstrap = own(c, 'bootstrap');
  const b = isObject(bootstrap) ? bootstrap : {};
  const dq = own(raw, 'data_quality');
  const dataQuality: [string, number][] = [];
  if (isObject(dq))
    for (const [k, v] of Object.entries(dq)) if (typeof v === 'number') dataQuality.push([k, v]);
  const profile = own(raw, 'profile');
  const responseFile = own(raw, 'response_file');
  const protocol = own(raw, 'protocol');
  const protocolReason = own(raw, 'protocol_reason');
  const never = own(raw, 'unsatisfiable_formats');
  return {
    entry: {
      records: n,
      profile: typeof profile === 'string' ? profile : null,
      ...(typeof responseFile === 'string' ? { responseFile } : {}),
      protocol: typeof protocol === 'string' ? protocol : null,
      ...(typeof protocolReason === 'string' ? { protocolReason } : {}),
      ...(Array.isArray(never) && never.length > 0
        ? { unsatisfiable: never as { record_id: string; formats: string[] }[] }
        : {}),
      summary: {
        datasets,
        overall: group(own(c, 'overall'), 'compliance.overall'),
        bootstrap: {
          samples: typeof own(b, 'samples') === 'number' ? (own(b, 'samples') as number) : 0,
          seed: typeof own(b, 'seed') === 'number' ? (own(b, 'seed') as number) : 0,
        },
      },
    },
    dataQuality,
  };
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export interface ComplianceFolder extends ComplianceSummaryFile {
  model: string;
  /** `schema/<model-dir>` */
  folder: string;
  path: string;
  /** Its eval_records.jsonl, when there is one. */
  records?: string;
}

/**
 * The model folders under `<dir>/schema/` with a readable compliance summary, and every other
 * non-dot folder with why it is left out (dot-folders are a writer's temp or old folders).
 */
export function scanCompliance(dir: string): { folders: ComplianceFolder[]; skipped: SkippedFolder[] } {
  return scanModelFolders(dir, SCHEMA_SOURCE, readComplianceSummary);
}

/** Whether `<dir>` holds any SOB-source model folder (text, image or audio). */
export function hasSobResults(dir: string): boolean {
  return MODALITIES.some(
    (m) =>
      isDir(join(dir, m)) &&
      readdirSync(join(dir, m)).some((c) => !c.startsWith('.') && isDir(join(dir, m, c))),
  );
}

/** The compliance board of an evaluation folder, with the folders left out. */
export function loadComplianceBoard(
  dir: string,
  names: ReadonlyMap<string, string> = new Map(),
): { board: ComplianceBoard; folders: ComplianceFolder[]; skipped: SkippedFolder[] } {
  const { folders, skipped } = scanCompliance(dir);
  const board = complianceBoard(
    folders.map((f) => ({ ...f.entry, model: f.model, display_name: names.get(f.model) ?? f.model })),
  );
  return { board, folders, skipped };
}

// -- The table (`sob leaderboard --track compliance`) --------------------------------------------

function f3(x: number | null | undefined): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}

function ms(x: number | null | undefined): string {
  return typeof x === 'number' ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1)) : '-';
}

type Cell = (g: ComplianceGroup) => string;

/** The sections of the table: a title, what it measures, and how a cell reads a group. */
function sections(
  board: ComplianceBoard,
  withInterval: boolean,
): { title: string; note: string; cell: Cell }[] {
  const rate =
    (k: (typeof RATES)[number][0]): Cell =>
    (g) => {
      const r = g[k];
      if (r.of === 0) return '-';
      return withInterval && r.ci95 ? `${f3(r.rate)} [${f3(r.ci95[0])}, ${f3(r.ci95[1])}]` : f3(r.rate);
    };
  const notes: Record<string, string> = {
    declared_coverage: 'the provider accepted the schema (not schema_rejected) / all records',
    empirical_coverage: 'the answer parses and validates / all records',
    compliance: 'valid / declared',
  };
  const out: { title: string; note: string; cell: Cell }[] = RATES.map(([k, title]) => ({
    title,
    note: notes[k],
    cell: rate(k),
  }));
  out.push({
    title: 'Partial validity',
    note: "mean share of the schema's applicable constraints the answer meets (SchemaBench)",
    cell: (g) => f3(g.partial_validity.mean),
  });
  for (const [k, title] of timingsOf(board))
    out.push({
      title,
      note: 'median / 90th percentile over the declared records that recorded it',
      cell: (g) => {
        const s = g.efficiency[k];
        return s.n === 0 ? '-' : `${ms(s.median)} / ${ms(s.p90)}`;
      },
    });
  return out;
}

/** The timings some model recorded (time to first token and per token need streaming). */
function timingsOf(board: ComplianceBoard): (typeof TIMINGS)[number][] {
  return TIMINGS.filter(([k]) => board.rows.some((r) => r.overall.efficiency[k].n > 0));
}

function header(board: ComplianceBoard): string[] {
  return ['#', 'Model', 'n', ...board.datasets, 'Overall'];
}

function cellsOf(board: ComplianceBoard, row: ComplianceBoardRow, i: number, cell: Cell): string[] {
  return [
    String(i + 1),
    row.display_name,
    String(row.records),
    ...board.datasets.map((d) => {
      const g = row.datasets.get(d);
      return g ? cell(g) : '-';
    }),
    cell(row.overall),
  ];
}

const INTRO =
  'Schema compliance (JSONSchemaBench): per dataset (metadata.source_category) and overall, models by empirical coverage.';

/** Which validation protocol the models' schemas were read under (docs/compliance-protocols.md). */
export function protocolLine(board: ComplianceBoard): string {
  const named = (r: ComplianceBoardRow) =>
    r.protocol === null
      ? 'dialect (summary without a protocol)'
      : r.protocolReason
        ? `${r.protocol} (${r.protocolReason})`
        : r.protocol;
  const names = [
    ...new Set(board.rows.map((r) => r.protocol ?? 'dialect (summary without a protocol)')),
  ].sort();
  if (names.length === 0) return 'Validation protocol: -';
  if (names.length === 1) {
    const full = [...new Set(board.rows.map(named))];
    return `Validation protocol: ${full.length === 1 ? full[0] : names[0]}.`;
  }
  return `Validation protocols differ between models (${names.join(', ')}): their rates are not comparable.`;
}

/** One line per model whose schemas have formats no value can satisfy under its protocol. */
export function unsatisfiableBoardLines(board: ComplianceBoard): string[] {
  return board.rows.flatMap((r) => {
    const u = r.unsatisfiable;
    if (!u || u.length === 0) return [];
    const shown = u
      .slice(0, 5)
      .map((x) => `${x.record_id} ${x.formats.join(', ')}`)
      .join('; ');
    return [
      `Warning: ${r.display_name}: ${u.length} schema${u.length === 1 ? '' : 's'} with a format no value can satisfy under the ${r.protocol} protocol (the harness's ipv4/ipv6/uuid return None): ${shown}${u.length > 5 ? '; ...' : ''}; --protocol dialect checks them as written.`,
    ];
  });
}

export function complianceTable(board: ComplianceBoard): string {
  const out = [INTRO, protocolLine(board), ...unsatisfiableBoardLines(board)];
  for (const s of sections(board, false)) {
    const head = header(board);
    const body = board.rows.map((r, i) => cellsOf(board, r, i, s.cell));
    const widths = head.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
    const line = (cs: string[]) =>
      cs
        .map((c, i) => (i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
        .join('  ')
        .trimEnd();
    out.push('', `${s.title}: ${s.note}`, line(head), ...body.map(line));
  }
  const usage = usageSection(board);
  if (usage) {
    const widths = usage.head.map((h, c) => Math.max(h.length, ...usage.body.map((b) => b[c].length)));
    const line = (cs: string[]) =>
      cs.map((c, i) => (i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    out.push('', `Cost and speed: ${USAGE_NOTE}`, line(usage.head), ...usage.body.map(line));
  }
  out.push('', '95% bootstrap intervals: --format md, csv or json.');
  return out.join('\n');
}

export function complianceMarkdown(board: ComplianceBoard): string {
  const out = [INTRO, '', protocolLine(board), ...unsatisfiableBoardLines(board).map((l) => `\n${l}`)];
  for (const s of sections(board, true)) {
    const head = header(board);
    out.push(
      '',
      `**${s.title}**: ${s.note}`,
      '',
      `| ${head.map(mdCell).join(' | ')} |`,
      `|${head.map((_, i) => (i === 1 ? ' --- ' : ' ---: ')).join('|')}|`,
    );
    board.rows.forEach((r, i) => {
      out.push(`| ${cellsOf(board, r, i, s.cell).map(nameCell).join(' | ')} |`);
    });
  }
  const usage = usageSection(board);
  if (usage)
    out.push(
      '',
      `**Cost and speed**: ${USAGE_NOTE}`,
      '',
      `| ${usage.head.join(' | ')} |`,
      `|${usage.head.map((_, i) => (i === 1 ? ' --- ' : ' ---: ')).join('|')}|`,
      ...usage.body.map((b) => `| ${b.map(nameCell).join(' | ')} |`),
    );
  out.push('', 'Cells: rate [95% bootstrap interval]; - where a model has no record of the dataset.');
  return out.join('\n');
}

type Num = (g: ComplianceGroup) => number | null;

/** CSV rows: one per (measure, model), datasets as columns, then overall. */
export function complianceCsv(board: ComplianceBoard): string {
  const measures: [string, Num][] = [];
  for (const [k] of RATES) {
    measures.push([k, (g) => (g[k].of === 0 ? null : g[k].rate)]);
    measures.push([`${k}_ci95_low`, (g) => g[k].ci95?.[0] ?? null]);
    measures.push([`${k}_ci95_high`, (g) => g[k].ci95?.[1] ?? null]);
    measures.push([`${k}_count`, (g) => g[k].count]);
    measures.push([`${k}_of`, (g) => g[k].of]);
  }
  measures.push(['partial_validity', (g) => g.partial_validity.mean]);
  // Per model, not per dataset: in the overall column only.
  for (const [k] of timingsOf(board)) {
    measures.push([`${k}_median`, (g) => g.efficiency[k].median]);
    measures.push([`${k}_p90`, (g) => g.efficiency[k].p90]);
  }
  const rows: (string | number)[][] = [
    ['measure', 'rank', 'model', 'display_name', 'records', ...board.datasets, 'overall'],
  ];
  for (const [name, get] of measures)
    board.rows.forEach((r, i) => {
      const v = (g: ComplianceGroup | undefined) => {
        const x = g ? get(g) : null;
        return x === null ? '' : x;
      };
      rows.push([
        name,
        i + 1,
        r.model,
        r.display_name,
        r.records,
        ...board.datasets.map((d) => v(r.datasets.get(d))),
        v(r.overall),
      ]);
    });
  if (board.rows.some((r) => r.usage))
    for (const k of USAGE_CSV_KEYS)
      board.rows.forEach((r, i) => {
        const v = r.usage ? usageCsvOf(r.usage)[k] : '';
        rows.push([k, i + 1, r.model, r.display_name, r.records, ...board.datasets.map(() => ''), v ?? '']);
      });
  return csvTable(rows);
}

const USAGE_NOTE =
  "totals over each model's answers (cost where the provider priced them); latency and time to first token: 50th/95th percentiles in ms";

/** The cost-and-speed table (one row per model), when some model's answers were found. */
function usageSection(board: ComplianceBoard): { head: string[]; body: string[][] } | null {
  if (!board.rows.some((r) => r.usage)) return null;
  return {
    head: ['#', 'Model', ...USAGE_HEADER],
    body: board.rows.map((r, i) => [String(i + 1), r.display_name, ...usageCellsOf(r.usage)]),
  };
}

/** An array sorted as the table: each model's overall and per-dataset groups, as the summaries hold them. */
export function complianceJson(board: ComplianceBoard): string {
  return JSON.stringify(
    board.rows.map((r, i) => {
      const datasets: Record<string, ComplianceGroup> = Object.create(null);
      for (const d of board.datasets) {
        const g = r.datasets.get(d);
        if (g) datasets[d] = g;
      }
      return {
        rank: i + 1,
        model: r.model,
        display_name: r.display_name,
        records: r.records,
        profile: r.profile,
        protocol: r.protocol,
        ...(r.protocolReason ? { protocol_reason: r.protocolReason } : {}),
        ...(r.unsatisfiable ? { unsatisfiable_formats: r.unsatisfiable } : {}),
        declared_coverage: r.overall.declared_coverage.rate,
        empirical_coverage: r.overall.empirical_coverage.rate,
        compliance: r.overall.compliance.rate,
        partial_validity: r.overall.partial_validity.mean,
        ...(r.usage ? { usage: r.usage } : {}),
        overall: r.overall,
        datasets,
      };
    }),
    null,
    2,
  );
}

export type ComplianceFormat = 'table' | 'md' | 'csv' | 'json';

export function complianceText(board: ComplianceBoard, format: ComplianceFormat): string {
  return format === 'json'
    ? complianceJson(board)
    : format === 'csv'
      ? complianceCsv(board)
      : format === 'md'
        ? complianceMarkdown(board)
        : complianceTable(board);
}

/** `sob score`'s line for a schema folder (its SOB metrics are not what it measures). */
export function complianceScoreLine(summary: Record<string, unknown>): string {
  const c = isObject(summary.compliance) ? summary.compliance : {};
  const o = isObject(c.overall) ? (c.overall as unknown as ComplianceGroup) : undefined;
  if (!o) return 'compliance: -';
  const r = (x: { count: number; of: number; rate: number }) => `${x.rate.toFixed(3)} (${x.count}/${x.of})`;
  const protocol = typeof summary.protocol === 'string' ? summary.protocol : 'dialect';
  const why = typeof summary.protocol_reason === 'string' ? ` (${summary.protocol_reason})` : '';
  return `declared ${r(o.declared_coverage)}  empirical ${r(o.empirical_coverage)}  compliance ${r(o.compliance)}  partial validity ${f3(o.partial_validity.mean)}  protocol: ${protocol}${why}`;
}

// -- The report's section --------------------------------------------------------------------------

/** An evaluation with no SOB-source results (a folder of schema records only). */
export function emptyEvaluation(dir: string): EvaluationFolder {
  const zero = { text: 0, image: 0, audio: 0 };
  return {
    dir,
    models: new Map(),
    info: new Map(),
    totals: {
      weight: { ...zero },
      records: { ...zero },
      origin: { text: 'records', image: 'records', audio: 'records' },
    },
    totalsNote: { text: 'no results', image: 'no results', audio: 'no results' },
    skipped: [],
    warnings: [],
  };
}

/** Outcome codes of a schema record, in the report. */
export const OUTCOMES = [
  'valid',
  'invalid',
  'not JSON',
  'refused',
  'schema does not compile',
  'scoring error',
] as const;

type PlainViolation = {
  instance_path?: unknown;
  schema_path?: unknown;
  keyword?: unknown;
  message?: unknown;
};

/**
 * A row's compliance block, compact for the page: [partial validity, violation count,
 * [[instance path, schema path, keyword, message]...], outcome code (`OUTCOMES`)].
 */
export function compactCompliance(
  block: unknown,
  max = 100,
): [number | null, number, string[][], number] | undefined {
  if (!isObject(block)) return undefined;
  const list = Array.isArray(block.violations) ? (block.violations as PlainViolation[]) : [];
  const count = typeof block.violation_count === 'number' ? block.violation_count : list.length;
  const pv = typeof block.partial_validity === 'number' ? block.partial_validity : null;
  return [
    pv,
    count,
    list
      .slice(0, max)
      .map((v) => [
        String(v.instance_path ?? ''),
        String(v.schema_path ?? ''),
        String(v.keyword ?? ''),
        String(v.message ?? ''),
      ]),
    outcomeOf(block, {}),
  ];
}

function outcomeOf(block: Record<string, unknown>, explanation: Record<string, unknown>): number {
  if (block.schema_rejected === true) return 3;
  if (typeof explanation.scoring_error === 'string') return 5;
  if (block.schema_compiles === false) return 4;
  if (block.parses !== true) return 2;
  return block.valid === true ? 0 : 1;
}

function whyOf(block: Record<string, unknown>, explanation: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const k of ['schema_rejected', 'scoring_error'] as const)
    if (typeof explanation[k] === 'string' && explanation[k]) parts.push(String(explanation[k]));
  for (const k of ['schema_error', 'parse_error', 'validation_error'] as const)
    if (typeof block[k] === 'string') parts.push(String(block[k]));
  return parts.join('; ');
}

/** Embedded at most (characters): a schema, an answer. */
const EMBED = { schema: 20_000, answer: 4000 };
/** Violations embedded over the whole report; past it, records keep their counts only. */
const MAX_VIOLATIONS = 200_000;

interface ReportRecord {
  id: string;
  /** Dataset index. */
  d: number;
  schema?: string;
  slen?: number;
}

function cut(s: string, max: number): [string, number | undefined] {
  return s.length > max ? [s.slice(0, max), s.length] : [s, undefined];
}

/**
 * The compliance section's data, or null when the folder has no schema results. `responses`
 * maps model folder names to response files (for each record's schema and answer); a run
 * directory's own responses.jsonl is found beside its evaluation/.
 */
export async function complianceReportData(opts: {
  evalDir: string;
  /** The report's input (a run directory keeps responses.jsonl beside evaluation/). */
  dir: string;
  responses: Map<string, string[]>;
  names: ReadonlyMap<string, string>;
  log?: (line: string) => void;
}): Promise<Record<string, unknown> | null> {
  const { board, folders, skipped } = loadComplianceBoard(opts.evalDir, opts.names);
  for (const s of skipped) opts.log?.(`skipped ${s.folder}: ${s.reason}`);
  if (folders.length === 0) return skipped.length > 0 ? { empty: true, skipped } : null;
  await attachComplianceUsage(board, folders);
  const byModel = new Map(folders.map((f) => [f.model, f]));
  const models = board.rows.map((r) => r.model);
  const dsIndex = new Map(board.datasets.map((d, i) => [d, i]));
  const recIndex = new Map<string, number>();
  const records: ReportRecord[] = [];
  let violationsLeft = MAX_VIOLATIONS;
  let violationsOmitted = 0;
  /** [model index, rows]; a row is [record index, outcome, partial validity, violation count, violations, why, timing?]. */
  const rows: [number, unknown[][]][] = [];
  for (const [mi, model] of models.entries()) {
    const f = byModel.get(model)!;
    const list: unknown[][] = [];
    if (f.records)
      for await (const l of readJsonl(f.records)) {
        if (!l.ok) continue;
        checkVersion(l.value, EVAL_ROW, `${f.records}:${l.line}`);
        const r = toPlain(l.value);
        if (!isObject(r) || !isObject(r.compliance)) continue;
        const id = String(r.record_id ?? '');
        const ds = typeof r.source_category === 'string' ? r.source_category : 'unknown';
        let ri = recIndex.get(id);
        if (ri === undefined) {
          ri = records.length;
          recIndex.set(id, ri);
          if (!dsIndex.has(ds)) {
            dsIndex.set(ds, board.datasets.length);
            board.datasets.push(ds);
          }
          records.push({ id, d: dsIndex.get(ds)! });
        }
        const expl = isObject(r.explanation) ? r.explanation : {};
        const [pv, count, violations] = compactCompliance(r.compliance)!;
        let shown = violations;
        if (violations.length > violationsLeft) {
          violationsOmitted += violations.length;
          shown = [];
        } else violationsLeft -= violations.length;
        const row: unknown[] = [
          ri,
          outcomeOf(r.compliance, expl),
          pv,
          count,
          shown,
          whyOf(r.compliance, expl),
        ];
        if (isObject(r.timing)) row.push(r.timing);
        list.push(row);
      }
    rows.push([mi, list]);
  }

  // Schemas and answers from the response files.
  const responses = new Map(opts.responses);
  const runResponses = join(resolve(opts.dir), 'responses.jsonl');
  if (existsSync(runResponses))
    for (const m of models) if (!responses.has(m)) responses.set(m, [runResponses]);
  const answers: Record<string, [string, number | undefined]> = Object.create(null);
  for (const [mi, model] of models.entries()) {
    for (const file of new Set(responses.get(model) ?? [])) {
      for await (const l of readJsonl(file)) {
        if (!l.ok || !(l.value instanceof Map)) continue;
        const md = l.value.get('metadata');
        const input = l.value.get('input');
        const output = l.value.get('output');
        if (!(md instanceof Map) || !(input instanceof Map) || !(output instanceof Map)) continue;
        if (md.get('source') !== SCHEMA_SOURCE) continue;
        const ri = recIndex.get(String(md.get('record_id') ?? ''));
        if (ri === undefined) continue;
        const rec = records[ri];
        if (rec.schema === undefined) {
          const schema = input.get('json_schema');
          [rec.schema, rec.slen] = cut(
            schema === undefined ? '' : JSON.stringify(toPlain(schema), null, 2),
            EMBED.schema,
          );
        }
        const key = `${mi}|${ri}`;
        if (Object.hasOwn(answers, key)) continue;
        const raw = output.get('raw_response');
        const cand = output.get('candidate_response');
        const text =
          typeof raw === 'string'
            ? raw
            : typeof cand === 'string'
              ? cand
              : cand === undefined || cand === null
                ? ''
                : JSON.stringify(toPlain(cand), null, 2);
        if (raw === null && (cand === null || cand === undefined)) continue;
        answers[key] = cut(text || pyStr(cand ?? null), EMBED.answer);
      }
    }
  }

  return {
    datasets: board.datasets,
    models,
    names: board.rows.map((r) => r.display_name),
    timed: board.timed,
    outcomes: OUTCOMES,
    summaries: board.rows.map((r, mi) => ({
      m: mi,
      records: r.records,
      profile: r.profile,
      protocol: r.protocol,
      protocolReason: r.protocolReason ?? null,
      unsatisfiable: r.unsatisfiable ?? [],
      overall: r.overall,
      datasets: board.datasets.flatMap((d, di) => {
        const g = r.datasets.get(d);
        return g ? [[di, g]] : [];
      }),
      quality: byModel.get(r.model)!.dataQuality,
      usage: r.usage ?? null,
    })),
    records,
    rows,
    answers,
    skipped,
    violationsOmitted,
    maxViolations: MAX_VIOLATIONS,
  };
}
