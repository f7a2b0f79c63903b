/**
 * `sob report`: one self-contained HTML file (no network: inline CSS and JS, charts as SVG) with
 * the unified and per-source leaderboards, JSON Pass vs Value Accuracy (the paper's Figure 2),
 * per-source bars, rank shifts, the error taxonomy, the pairwise comparison and a per-record
 * drill-down with a leaf-by-leaf diff. The data is embedded once (contexts and schemas stored
 * once per record, not per model) and the page renders tables and records lazily.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { flattenLeaves } from '../../metrics/paths.ts';
import { coverageGate } from '../../metrics/record.ts';
import { classify, ERROR_CLASSES, TaxonomyAccumulator, type TaxonomyRow } from '../../metrics/taxonomy.ts';
import { pyEquals, tokenF1 } from '../../metrics/values.ts';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import { EVAL_ROW } from '../core/formats/eval-row.ts';
import { checkVersion } from '../core/formats/version.ts';
import { readJsonl } from '../core/jsonl.ts';
import { modelDirName } from '../core/modality.ts';
import { dumpsPy, type PyValue, toPlain } from '../core/pyjson.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import { type ModelRows, matrixTable, pairwiseMatrix } from './compare.ts';
import { compactCompliance, complianceReportData, emptyEvaluation, hasSobResults } from './compliance.ts';
import { COMPLIANCE_CLIENT, COMPLIANCE_CSS } from './compliance-client.ts';
import { buildLeaderboard, loadEvaluation, profileHeader, readDisplayNames } from './evaluation.ts';
import { explainRow } from './explain.ts';
import { REPORT_CLIENT, REPORT_CSS } from './html-client.ts';
import { LenientReport } from './lenient-report.ts';
import { attachRunSettings } from './row-settings.ts';
import { REPORT_MAX_RECORDS, sampleRecords, sampleSizes } from './sample.ts';
import { customNames } from './tables.ts';
import { attachCorrectFields, attachUsage } from './usage.ts';

export interface ReportOptions {
  /** An eval directory (sob eval), a run directory (sob run), or an evaluation folder. */
  dir: string;
  out: string;
  /** Response files for the drill-down when `dir` is a bare evaluation folder. */
  responses?: string;
  names?: string;
  /** Bootstrap resamples for the pairwise matrix. */
  samples?: number;
  /** At most this many diff leaves are embedded (wrong answers first); default 400,000. */
  maxDiffLeaves?: number;
  /** Past this many records the page embeds a sample of them (src/report/sample.ts); default 10,000. */
  maxRecords?: number;
  /** Where to say which folders were left out and what to be wary of (stderr in the CLI). */
  log?: (line: string) => void;
  /** What only the runner knows of a run directory (its model folder name, its prompt). */
  runs?: RunAccess;
}

/** The prompt a run sent for a record, exactly as its runner rendered it. */
export type PromptRenderer = (f: {
  context: string;
  question: string;
  schema: unknown;
  recordId: string;
  /** `--input document|both`: the kinds of the documents sent (`eval_info.documents`). */
  documents?: { kind: string }[];
}) => {
  system: string;
  user: string;
};

/**
 * A record's page as the drill-down embeds it (issue 31): an image attachment (a page render) as a
 * data URL, downscaled until it is at most `PAGE_MAX_BYTES`; a PDF without a render, audio, or a
 * file that cannot be read: a note instead.
 */
export interface ReportPage {
  /** The attachment shown (or noted), as the record names it. */
  path: string;
  kind: string;
  /** `data:image/...;base64,...` */
  src?: string;
  /** Why no image is shown, or what was done to it (downscaled). */
  note?: string;
}

/** The largest page image embedded, bytes (larger ones are downscaled until they fit). */
export const PAGE_MAX_BYTES = 150 * 1024;
/** The most page bytes one report embeds; past it, each further page is a note. */
export const PAGES_MAX_TOTAL_BYTES = 24 * 1024 * 1024;

/** Given by the command line (the runner's knowledge; this module does not import the runner). */
export interface RunAccess {
  /**
   * The page of a record a response file answered (its run's benchmark folder holds the
   * attachments), size-bounded to `maxBytes`; undefined when the record has none.
   */
  page?(responseFile: string, attachments: unknown, maxBytes: number): Promise<ReportPage | undefined>;
  /** The model folder `sob score`/`sob eval` name a run directory's scores by, or undefined when not a run. */
  modelDir(runDir: string): string | undefined;
  /** The renderer of the run a response file belongs to (its manifest's prompt template), if any. */
  prompt(responseFile: string): PromptRenderer | undefined;
}

interface Layout {
  evalDir: string;
  /** model folder name -> response files (JSONL) */
  responses: Map<string, string[]>;
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

function layoutOf(opts: ReportOptions): Layout {
  const dir = resolve(opts.dir);
  const responses = new Map<string, string[]>();
  const add = (model: string, file: string) => responses.set(model, [...(responses.get(model) ?? []), file]);
  let evalDir = dir;
  if (isDir(join(dir, 'evaluation'))) {
    evalDir = join(dir, 'evaluation');
    // sob eval: runs/<model>/responses.jsonl; sob run: responses.jsonl beside evaluation/
    if (isDir(join(dir, 'runs'))) {
      for (const m of readdirSync(join(dir, 'runs'))) {
        const f = join(dir, 'runs', m, 'responses.jsonl');
        if (existsSync(f)) add(m, f);
      }
    }
    if (existsSync(join(dir, 'responses.jsonl'))) {
      for (const m of MODALITIES) {
        if (!isDir(join(evalDir, m))) continue;
        for (const model of readdirSync(join(evalDir, m))) add(model, join(dir, 'responses.jsonl'));
      }
    }
  }
  if (opts.responses) {
    if (!isDir(opts.responses)) throw new UserError(`no such folder: ${opts.responses}`);
    const before = new Set(responses.keys());
    const files = readdirSync(opts.responses)
      .sort()
      .filter((x) => x.endsWith('.jsonl'));
    for (const f of files) {
      for (const m of MODALITIES) add(modelDirName(f, m), join(opts.responses, f));
    }
    // A folder of run directories (sob run's runs/, sob eval's <eval>/runs/): each run's
    // responses.jsonl under its folder's name and under the model folder its scores are named by.
    const runs: string[] = [];
    for (const sub of readdirSync(opts.responses).sort()) {
      const file = join(opts.responses, sub, 'responses.jsonl');
      if (sub.startsWith('.') || !isDir(join(opts.responses, sub)) || !existsSync(file)) continue;
      runs.push(sub);
      for (const name of new Set([sub, opts.runs?.modelDir(join(opts.responses, sub)) ?? sub]))
        add(name, file);
    }
    const scored = new Set<string>();
    for (const m of MODALITIES)
      if (isDir(join(evalDir, m))) for (const d of readdirSync(join(evalDir, m))) scored.add(d);
    const matched = [...responses.keys()].filter((k) => !before.has(k) && scored.has(k)).sort();
    const what = [
      files.length > 0 ? `${files.length} response file${files.length === 1 ? '' : 's'}` : '',
      runs.length > 0 ? `${runs.length} run director${runs.length === 1 ? 'y' : 'ies'}` : '',
    ].filter(Boolean);
    opts.log?.(
      `--responses ${opts.responses}: ${what.length > 0 ? what.join(' and ') : 'no *.jsonl file and no run directory'}; matched ${matched.length} of ${scored.size} scored model${scored.size === 1 ? '' : 's'}${matched.length > 0 ? ` (${matched.join(', ')})` : ''}`,
    );
  }
  return { evalDir, responses };
}

const CLASS_CODE = new Map(ERROR_CLASSES.map((c, i) => [c, i]));

/** The seven metrics of a row, in the order the page shows them. */
const METRIC_KEYS = [
  'leaf_value_em',
  'value_token_f1',
  'schema_compliance',
  'hier_path_recall',
  'path_set_f1',
  'type_precision',
  'strict_json_em',
] as const;

function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0;
}

function short(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A leaf as JSON writes it (`true`, `null`, `"text"`, `1.0` as in the file), never Python's `True`. */
function leafText(v: PyValue | undefined): string {
  if (v === undefined) return '';
  return short(dumpsPy(v, { ensureAscii: false }), 200);
}

/** Status codes of the leaf diff: 0 match, 1 wrong value, 2 missing, 3 extra. */
type DiffLeaf = [string, number, string, string, number];

/**
 * The leaf diff of ground truth against the answer, and the gate that fired: the path-set F1 of
 * all leaves (not only the embedded ones) and `coverageGate` of it, as the scorer computes them.
 */
function leafDiff(
  gt: PyValue | undefined,
  cand: PyValue | undefined,
  modality: Modality,
): { leaves: DiffLeaf[]; structureF1: number; gate: number } {
  const g = flattenLeaves(gt);
  const p = flattenLeaves(cand);
  const out: DiffLeaf[] = [];
  let overlap = 0;
  for (const [path, gv] of g) {
    const pv = p.get(path);
    if (pv !== undefined) overlap++;
    if (out.length >= 300) continue;
    const f1 = Math.round(tokenF1(gv, pv ?? null) * 1000) / 1000;
    out.push([path, pv === undefined ? 2 : pyEquals(gv, pv) ? 0 : 1, leafText(gv), leafText(pv), f1]);
  }
  for (const [path, pv] of p) {
    if (out.length >= 300) break;
    if (!g.has(path)) out.push([path, 3, '', leafText(pv), 0]);
  }
  const precision = p.size ? overlap / p.size : 0;
  const recall = g.size ? overlap / g.size : 0;
  const structureF1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { leaves: out, structureF1, gate: coverageGate(modality, structureF1) };
}

/**
 * One model's diff against the record's shared ground-truth leaves: per ground-truth leaf `0`
 * (match, answer written as the truth, token F1 1), `2` (missing, token F1 0) or
 * [status, answer, token F1]; extra leaves [3, path, answer]. A record whose ground truth differs
 * between response files keeps the full rows ({full}).
 */
function compactDiff(full: DiffLeaf[], rec: { leaves?: [string, string][] }): unknown {
  const gt = full.filter((l) => l[1] !== 3).map((l): [string, string] => [l[0], l[2]]);
  if (rec.leaves === undefined) rec.leaves = gt;
  else if (
    rec.leaves.length !== gt.length ||
    gt.some((g, i) => g[0] !== rec.leaves![i][0] || g[1] !== rec.leaves![i][1])
  )
    return { full };
  return full.map((l) => {
    if (l[1] === 3) return [3, l[0], l[3]];
    if (l[1] === 0 && l[3] === l[2] && l[4] === 1) return 0;
    if (l[1] === 2 && l[4] === 0) return 2;
    return [l[1], l[3], l[4]];
  });
}

/** Embedded at most (characters); the page shows less and expands to this on request. */
const EMBED = { question: 4000, context: 20_000, schema: 20_000, prompt: 60_000 };

interface ReportRecord {
  id: string;
  /** Index into the report's `pages` (the record's page image, or a note). */
  page?: number;
  source: string;
  complexity: string;
  /** SOB's `metadata.source_category` (e.g. `tables`, `multi_column`), from the response files. */
  category?: string;
  question?: string;
  /** Full lengths, when the embedded text is cut. */
  qlen?: number;
  context?: string;
  clen?: number;
  schema?: string;
  slen?: number;
  /** The ground-truth leaves [path, value] of the diff, stored once for every model. */
  leaves?: [string, string][];
}

/** The evaluation folder as the page shows it: relative to the report's folder, else its name. */
function shownFrom(evalDir: string, out: string): string {
  if (!out) return basename(evalDir);
  const rel = relative(dirname(resolve(out)), evalDir);
  if (rel === '') return '.';
  return rel.startsWith('../..') || isAbsolute(rel) ? basename(evalDir) : rel;
}

/** The text embedded, and its full length when cut. */
function embed(s: string, max: number): [string, number | undefined] {
  return s.length > max ? [s.slice(0, max), s.length] : [s, undefined];
}

export async function buildReportData(opts: ReportOptions): Promise<Record<string, unknown>> {
  const layout = layoutOf(opts);
  const names = readDisplayNames(opts.names, layout.evalDir);
  // The schema compliance track (schema/<model>/), when the folder has it; a folder of schema
  // results only has no SOB leaderboard.
  const compliance = await complianceReportData({ ...layout, dir: opts.dir, names, log: opts.log });
  const ev =
    compliance && !hasSobResults(layout.evalDir)
      ? emptyEvaluation(layout.evalDir)
      : await loadEvaluation(layout.evalDir);
  for (const s of ev.skipped) opts.log?.(`skipped ${s.folder}: ${s.reason}`);
  for (const w of ev.warnings) opts.log?.(`warning: ${w}`);
  const leaderboard = buildLeaderboard(ev, names);
  await attachUsage(leaderboard, ev);
  attachRunSettings(leaderboard, ev);
  // Which fields to trust (fields.jsonl), and each model's leaves answered right (cost per correct field).
  const fieldTable = await (await import('./fields.ts')).fieldTable(layout.evalDir);
  attachCorrectFields(leaderboard, fieldTable?.correct);

  // Models by index: folder names are a user's (`constructor`, `__proto__`, `a|b`), never keys.
  const models: string[] = [...ev.models.keys()].sort();
  const modelIndex = new Map(models.map((m, i) => [m, i]));
  const display = models.map((m) => names.get(m) ?? m);

  // Past the limit, the records embedded are a stated sample (the rest stay in the folder's files).
  const maxRecords = opts.maxRecords ?? REPORT_MAX_RECORDS;
  let recordsIn = 0;
  for (const m of MODALITIES) {
    let most = 0;
    for (const sources of ev.models.values()) most = Math.max(most, sources[m]?.records ?? 0);
    recordsIn += most;
  }
  const rowFiles = models.flatMap((model, mi) =>
    MODALITIES.map((m) => ({
      model: mi,
      m,
      file: join(layout.evalDir, m, model, 'eval_records.jsonl'),
    })).filter((f) => ev.models.get(model)?.[f.m] !== undefined && existsSync(f.file)),
  );
  const sample = recordsIn > maxRecords ? await sampleRecords(rowFiles, sampleSizes(maxRecords)) : undefined;
  if (sample)
    opts.log?.(
      `report: ${recordsIn} records is over ${maxRecords}: the page embeds ${sample.keep.size} of them (the ${sample.worst} with the lowest Value Accuracy per model and a seeded random ${sample.randomSize}); the rest are in the evaluation folder's eval_records.jsonl`,
    );

  // Records: one entry per record id (shared by every model), rows per model and source.
  const recIndex = new Map<string, number>();
  const records: ReportRecord[] = [];
  const recordOf = (id: string, source: string, complexity: string) => {
    let i = recIndex.get(id);
    if (i === undefined) {
      i = records.length;
      recIndex.set(id, i);
      records.push({ id, source, complexity });
    }
    return i;
  };

  /** [model index, source, rows]; a row is [record index, 7 metrics, outcome class, why]. */
  const rows: [number, Modality, unknown[][]][] = [];
  const taxa: [number, Modality, unknown][] = [];
  const forMatrix: Partial<Record<Modality, ModelRows[]>> = {};
  /** `mi|ri` of records answered fully right (their diffs go last under the size budget). */
  const correct = new Set<string>();
  const correctCode = ERROR_CLASSES.indexOf('correct');
  const lenient = new LenientReport();
  for (const [mi, model] of models.entries()) {
    for (const m of MODALITIES) {
      const file = join(layout.evalDir, m, model, 'eval_records.jsonl');
      if (ev.models.get(model)?.[m] === undefined || !existsSync(file)) continue;
      const list: unknown[][] = [];
      const tax = new TaxonomyAccumulator();
      const mr: ModelRows = { name: display[mi], rows: new Map() };
      for await (const l of readJsonl(file)) {
        if (!l.ok || !(l.value instanceof Map)) continue;
        const r = l.value;
        checkVersion(r, EVAL_ROW, `${file}:${l.line}`);
        const id = String(r.get('record_id') ?? '');
        const row: TaxonomyRow = {
          record_id: id,
          json_root_structured: num(r.get('json_root_structured')),
          schema_valid_input: num(r.get('schema_valid_input')),
          schema_compliance: num(r.get('schema_compliance')),
          hier_path_recall: num(r.get('hier_path_recall')),
          type_precision: num(r.get('type_precision')),
          leaf_value_em: num(r.get('leaf_value_em')),
          // The gate from the row's own path-set F1 (= the raw F1 where the answer passed its schema).
          coverage_gate: coverageGate(m, num(r.get('path_set_f1'))),
          missing_gt_paths: Array.isArray(r.get('missing_gt_paths'))
            ? (r.get('missing_gt_paths') as PyValue[]).map((p) => String(p))
            : undefined,
        };
        tax.add(row);
        // Past the limit: counted in the taxonomy, embedded only when sampled.
        if (sample && !sample.keep.has(id)) continue;
        const idx = recordOf(id, m, String(r.get('schema_complexity') ?? 'unknown'));
        lenient.row(mi, idx, r);
        const values = METRIC_KEYS.map((k) => num(r.get(k)));
        const expl = r.get('explanation');
        const { why, quirks } = explainRow(expl === undefined ? undefined : toPlain(expl), {
          source: m,
          jsonPass: values[2],
          structureF1: values[4],
        });
        const cls = CLASS_CODE.get(classify(row)) ?? 0;
        if (cls === correctCode) correct.add(`${mi}|${idx}`);
        const shown: unknown[] = [idx, ...values.map((v) => Math.round(v * 1000) / 1000), cls, why];
        if (quirks.length > 0) shown.push(quirks);
        // Strict profile: the answer's violations and partial validity (SchemaBench).
        const comp = compactCompliance(toPlain(r.get('compliance') ?? null));
        if (comp) [shown[10], shown[11]] = [quirks.length > 0 ? quirks : 0, comp];
        list.push(shown);
        // The pairwise matrix, past the limit, on the random sample only (the worst would bias it).
        if (!mr.rows.has(id) && (!sample || sample.random.has(id)))
          mr.rows.set(id, { values, weight: num(r.get('difficulty_weight')) });
      }
      rows.push([mi, m, list]);
      taxa.push([mi, m, tax.result()]);
      (forMatrix[m] ??= []).push(mr);
    }
  }

  // The drill-down: context, question, schema per record; a leaf diff per model and record.
  const diffs: Record<string, unknown> = Object.create(null);
  /** `mi|ri` -> [path-set F1, coverage gate] */
  const gates: Record<string, [number, number]> = Object.create(null);
  const maxLeaves = opts.maxDiffLeaves ?? 400_000;
  let leavesEmbedded = 0;
  let diffsOmitted = 0;
  // The exact prompt each answer was asked with (run directories only: their manifest has the
  // template); texts stored once ([text, full length when cut]), `mi|ri` -> [system, user] indexes.
  const promptTexts: [string, number?][] = [];
  const promptIndex = new Map<string, number>();
  const prompts: Record<string, [number, number]> = Object.create(null);
  const textIndex = (s: string) => {
    let i = promptIndex.get(s);
    if (i === undefined) {
      i = promptTexts.length;
      promptIndex.set(s, i);
      const [t, full] = embed(s, EMBED.prompt);
      promptTexts.push(full === undefined ? [t] : [t, full]);
    }
    return i;
  };
  const pages: ReportPage[] = [];
  let pageBytes = 0;
  for (const [mi, model] of models.entries()) {
    for (const file of new Set(layout.responses.get(model) ?? [])) {
      const render = opts.runs?.prompt(file);
      for await (const l of readJsonl(file)) {
        if (!l.ok || !(l.value instanceof Map)) continue;
        const md = l.value.get('metadata');
        const input = l.value.get('input');
        const output = l.value.get('output');
        if (!(md instanceof Map) || !(input instanceof Map) || !(output instanceof Map)) continue;
        const id = String(md.get('record_id') ?? '');
        const idx = recIndex.get(id);
        if (idx === undefined) continue;
        const rec = records[idx];
        if (rec.context === undefined) {
          [rec.question, rec.qlen] = embed(String(input.get('question') ?? ''), EMBED.question);
          [rec.context, rec.clen] = embed(String(input.get('context') ?? ''), EMBED.context);
          const schema = input.get('json_schema');
          [rec.schema, rec.slen] = embed(
            schema === undefined ? '' : JSON.stringify(toPlain(schema), null, 2),
            EMBED.schema,
          );
          const cat = md.get('source_category');
          if (typeof cat === 'string' && cat !== '') rec.category = cat;
        }
        // The page itself, once per record (from the first response file that has it).
        const atts = input.get('attachments');
        if (rec.page === undefined && atts !== undefined && atts !== null && opts.runs?.page) {
          const page =
            pageBytes >= PAGES_MAX_TOTAL_BYTES
              ? {
                  path: '',
                  kind: 'page',
                  note: `not embedded: the report's page budget (${PAGES_MAX_TOTAL_BYTES / 1024 / 1024} MB) is used`,
                }
              : await opts.runs.page(file, toPlain(atts), PAGE_MAX_BYTES);
          if (page) {
            pageBytes += page.src?.length ?? 0;
            rec.page = pages.length;
            pages.push(page);
          }
        }
        const key = `${mi}|${idx}`;
        if (Object.hasOwn(diffs, key)) continue;
        if (render && !Object.hasOwn(prompts, key)) {
          try {
            const info = l.value.get('eval_info');
            const sent = info instanceof Map ? toPlain(info.get('documents') ?? null) : null;
            const p = render({
              context: String(input.get('context') ?? ''),
              question: String(input.get('question') ?? ''),
              schema: toPlain(input.get('json_schema') ?? null),
              recordId: id,
              ...(Array.isArray(sent) ? { documents: sent as { kind: string }[] } : {}),
            });
            prompts[key] = [textIndex(p.system), textIndex(p.user)];
          } catch {
            // A schema too deep to print: the run could not ask it either; no prompt to show.
          }
        }
        const cand = output.get('candidate_response');
        if (!(cand instanceof Map || Array.isArray(cand))) {
          diffs[key] = {
            raw: short(typeof cand === 'string' ? cand : dumpsPy(cand ?? null, { ensureAscii: false }), 2000),
          };
          continue;
        }
        // A size budget keeps a huge benchmark's report openable: wrong answers first, then
        // correct ones while less than half the budget is used.
        if (leavesEmbedded >= maxLeaves || (correct.has(key) && leavesEmbedded >= maxLeaves / 2)) {
          diffsOmitted++;
          continue;
        }
        const d = leafDiff(output.get('ground_truth'), cand, rec.source as Modality);
        leavesEmbedded += d.leaves.length;
        diffs[key] = compactDiff(d.leaves, rec);
        gates[key] = [Math.round(d.structureF1 * 1000) / 1000, Math.round(d.gate * 1000) / 1000];
      }
    }
  }

  await lenient.readSideFiles(layout.evalDir, models, recIndex, records);
  // Which fields to trust: the worst rows, the table's size kept in bounds.
  const fields =
    fieldTable && fieldTable.stats.length > 0
      ? {
          stats: fieldTable.stats.slice(0, 2000),
          total: fieldTable.stats.length,
          perSchema: fieldTable.perSchema,
        }
      : null;

  // The pairwise comparison on the source with the most models.
  const src = MODALITIES.filter((m) => (forMatrix[m]?.length ?? 0) >= 2).sort(
    (a, b) => (forMatrix[b]?.length ?? 0) - (forMatrix[a]?.length ?? 0),
  )[0];
  const matrix = src ? { source: src, ...pairwiseMatrix(forMatrix[src]!, opts.samples ?? 300, 42) } : null;

  /** Per source: [model index, records, weighted means, intervals]. */
  const perSource: Partial<Record<Modality, unknown[]>> = {};
  for (const m of MODALITIES) {
    const list: unknown[] = [];
    for (const [model, sources] of ev.models) {
      const s = sources[m];
      if (!s) continue;
      list.push({
        m: modelIndex.get(model),
        n: s.records,
        weighted: s.weighted,
        ci: s.ci ?? {},
        ...(s.custom ? { custom: s.custom } : {}),
      });
    }
    if (list.length > 0) perSource[m] = list;
  }

  /** Per model and source: the profile it was scored with and what the scorer counted. */
  const quality: unknown[] = [];
  for (const [model, ie] of ev.info) {
    for (const m of MODALITIES) {
      const s = ie[m];
      const res = ev.models.get(model)?.[m];
      if (!s || !res) continue;
      const dq = new Map(s.dataQuality);
      quality.push({
        m: modelIndex.get(model),
        source: m,
        profile: s.profile ?? 'sob',
        stated: s.profile !== null,
        n: res.records,
        distinct: s.distinctIds ?? null,
        duplicates: s.duplicates ?? null,
        missing: s.benchmark?.missingIds ?? null,
        unknown: s.benchmark?.unknownIds ?? null,
        parseFailures: dq.get('json_parse_fail_count') ?? null,
        // strict profile: parsed only after recovery (0 when it recovered none; sob: not recorded).
        recovered: dq.get('lenient_parse_count') ?? (s.profile === 'strict' ? 0 : null),
        schemaRejected: dq.get('schema_rejected_count') ?? null,
        scoringErrors: dq.get('scoring_error_count') ?? null,
        malformed: dq.get('malformed_jsonl_line_count') ?? null,
      });
    }
  }

  return {
    generated: new Date().toISOString(),
    // Where the numbers come from, without the local absolute path: relative to the report.
    where: shownFrom(layout.evalDir, opts.out),
    totals: { ...ev.totals, note: ev.totalsNote },
    skipped: ev.skipped,
    warnings: ev.warnings,
    leaderboard,
    perSource,
    quality,
    models,
    names: display,
    records,
    rows,
    taxonomy: taxa,
    classes: ERROR_CLASSES,
    // `--scorer`: the names of the scorers-of-your-own columns.
    custom: customNames(leaderboard),
    matrix: matrix && {
      source: matrix.source,
      models: matrix.models,
      diff: matrix.cells.map((r) =>
        r.map((c) => (c ? [Math.round(c.difference * 1000) / 1000, c.pHolm] : null)),
      ),
      noCommon: matrix.noCommon,
      text: matrixTable(matrix),
    },
    diffs,
    gates,
    pages,
    prompts,
    promptTexts,
    lenient: lenient.data(leaderboard),
    fields,
    profile: profileHeader(ev.info),
    diffsOmitted,
    maxDiffLeaves: maxLeaves,
    ...(sample
      ? {
          sampling: {
            records: recordsIn,
            limit: maxRecords,
            embedded: records.length,
            worst: sample.worst,
            random: sample.randomSize,
            seed: sample.seed,
          },
        }
      : {}),
    compliance,
  };
}

export async function writeReport(opts: ReportOptions): Promise<string> {
  const data = await buildReportData(opts);
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const title = `sob-eval report: ${basename(resolve(opts.dir))}`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title.replace(/</g, '&lt;')}</title><style>${REPORT_CSS}${COMPLIANCE_CSS}</style></head>
<body><div id="app"><h1>${title.replace(/</g, '&lt;')}</h1><p class="muted">Loading…</p></div>
<script type="application/json" id="sob-data">${json}</script>
<script>${COMPLIANCE_CLIENT}</script>
<script>${REPORT_CLIENT}</script></body></html>
`;
  // Whole or not at all, and never through a symlink at the target (it is replaced); its folder
  // is made when new.
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileAtomic(opts.out, html);
  return opts.out;
}
