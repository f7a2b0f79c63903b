/**
 * Reads an evaluation folder (`<dir>/<modality>/<model-dir>/eval_summary.json`, the SOB
 * repository's layout) into leaderboard rows, and decides the benchmark's per-source totals
 * (coverage denominators and source weights), saying where each came from:
 *
 *  - `--benchmark-totals sob`: the official SOB constants, for every source;
 *  - a benchmark manifest (`--manifest`, else one found in or near the folder: `manifest.json`
 *    in it, `../benchmark/manifest.json` as `sob eval` lays it out, the benchmark a run's
 *    manifest or the summaries name): `manifest:<path>`;
 *  - else, per source: `sob` when the source is recognisably the released SOB set's (see
 *    `recogniseSobSource`), `records` (distinct record ids over the models' eval_records.jsonl),
 *    or `summaries` (no per-record rows: the largest summary, weight taken as 2 per record).
 *
 * Model names are folder names a user chose (`constructor`, `__proto__` included), so every
 * lookup by name goes through a Map. Dot-folders (a writer's temp or old folders) are ignored;
 * every other model folder left out is named with the reason.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import {
  type BenchmarkTotals,
  type LeaderboardRow,
  leaderboardRow,
  type RowQuality,
  recogniseSobSource,
  SOB_TOTALS,
  type SourceResult,
  sortLeaderboard,
} from '../../metrics/leaderboard.ts';
import { lenientColumns, rankLenient } from '../../metrics/lenient-leaderboard.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { EVAL_ROW } from '../core/formats/eval-row.ts';
import { checkEvalSummary, type EvalSummary, type MetricBlock } from '../core/formats/eval-summary.ts';
import { checkBenchmarkManifest } from '../core/formats/manifest.ts';
import { checkVersion, FormatVersionError } from '../core/formats/version.ts';
import { readLines } from '../core/jsonl.ts';
import { parsePyJson, toPlain } from '../core/pyjson.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import { lenientWarnings, readLenientBlock } from './lenient.ts';

/** What the scorer recorded beside the numbers (HELPERS.md contracts), where present. */
export interface SummaryInfo {
  /** `sob` | `strict`; null when the summary does not say (the reference evaluator's files). */
  profile: string | null;
  /** Why that profile was chosen (`profile_reason`, ours), when the summary says. */
  profileReason?: string;
  responseFile?: string;
  /** `data_quality` counts (numbers only), in the file's order. */
  dataQuality: [string, number][];
  duplicates?: number;
  distinctIds?: number;
  benchmark?: {
    path?: string;
    sha256?: string;
    records?: number;
    missingIds?: number;
    unknownIds?: number;
  };
}

export interface SkippedFolder {
  /** `<source>/<model-dir>`, relative to the evaluation folder. */
  folder: string;
  reason: string;
}

export type TotalsMode = 'auto' | 'sob' | 'records';

export interface LoadOptions {
  /** A benchmark manifest (`sources.<modality>.{records, weight}`). */
  manifest?: string;
  /** `auto` (default): a manifest, else per source SOB-if-recognised, else the records. */
  totals?: TotalsMode;
}

export interface EvaluationFolder {
  dir: string;
  /** model dir -> modality -> result */
  models: Map<string, Partial<Record<Modality, SourceResult>>>;
  /** model dir -> modality -> what the summary says about itself */
  info: Map<string, Partial<Record<Modality, SummaryInfo>>>;
  /** Totals with `origin` per source. */
  totals: BenchmarkTotals;
  /** Why each source's totals are what they are, for people. */
  totalsNote: Record<Modality, string>;
  /** Model folders left out, with why. */
  skipped: SkippedFolder[];
  /** Things a reader of the numbers must know (mixed profiles, repeated ids, ...), one line each. */
  warnings: string[];
}

/** Weight assumed per record when a source has summaries but no per-record rows. */
const ASSUMED_WEIGHT_PER_RECORD = 2;

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(o: Record<string, unknown>, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** JSON as Python wrote it (NaN and Infinity allowed); `__proto__` stays an own key. */
function readJsonFile(file: string): unknown {
  return toPlain(parsePyJson(readFileSync(file, 'utf8')));
}

/** One summary: its weighted means (and intervals) and what it says about itself; throws a reason. */
function readSummary(file: string): { result: SourceResult; info: SummaryInfo } {
  let raw: unknown;
  try {
    raw = readJsonFile(file);
  } catch (e) {
    throw new Error(`not valid JSON (${errorMessage(e).split('\n')[0]})`);
  }
  if (!isObject(raw)) throw new Error('not a JSON object');
  // A newer sob-eval's summary stops the command (exit 2): its numbers may not mean what ours do.
  checkEvalSummary(raw, file);
  // Own keys only (a model folder's file is untrusted: `__proto__` stays data), then the shape checked.
  const doc = raw as Partial<EvalSummary>;
  const n = own(raw, 'num_records');
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    throw new Error('num_records: expected an integer >= 0');
  const summary = own(raw, 'summary');
  const ow = isObject(summary) ? own(summary, 'overall_weighted') : undefined;
  const metrics = isObject(ow) ? own(ow, 'metrics') : undefined;
  if (!isObject(metrics)) throw new Error('summary.overall_weighted.metrics: missing');
  const weighted: Record<string, number> = Object.create(null);
  const ci: Record<string, [number, number]> = Object.create(null);
  for (const [k, v] of Object.entries(metrics)) {
    if (!isObject(v)) continue;
    const block = v as Partial<MetricBlock>;
    if (typeof block.mean !== 'number')
      throw new Error(`summary.overall_weighted.metrics.${k}.mean: expected a number`);
    weighted[k] = block.mean;
    if (typeof block.ci95_low === 'number' && typeof block.ci95_high === 'number')
      ci[k] = [block.ci95_low, block.ci95_high];
  }
  const dq = isObject(doc.data_quality) ? doc.data_quality : undefined;
  const dataQuality: [string, number][] = [];
  if (dq) for (const [k, v] of Object.entries(dq)) if (typeof v === 'number') dataQuality.push([k, v]);
  const dqGet = (k: string) => (dq ? own(dq, k) : undefined);
  const distinctRaw = dqGet('distinct_record_ids');
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const info: SummaryInfo = {
    profile: text(own(raw, 'profile')) ?? null,
    profileReason: text(own(raw, 'profile_reason')),
    responseFile: text(own(raw, 'response_file')),
    dataQuality,
    duplicates: numberOr(dqGet('duplicate_record_id_count')),
    distinctIds: Array.isArray(distinctRaw) ? distinctRaw.length : numberOr(distinctRaw),
  };
  const b = own(raw, 'benchmark');
  if (isObject(b)) {
    info.benchmark = {
      path: text(own(b, 'path')),
      sha256: text(own(b, 'sha256')),
      records: numberOr(own(b, 'records')),
      missingIds: numberOr(own(b, 'missing_ids')),
      unknownIds: numberOr(own(b, 'unknown_ids')),
    };
  }
  // Coverage counts distinct records the benchmark knows (HELPERS.md), when the summary says so.
  let evaluated = info.distinctIds ?? n;
  if (info.benchmark?.unknownIds !== undefined)
    evaluated = Math.max(0, evaluated - info.benchmark.unknownIds);
  const lenient = readLenientBlock(raw);
  const custom = readCustomBlock(raw);
  return {
    result: {
      records: n,
      evaluated,
      weighted,
      ci,
      ...(lenient ? { lenient } : {}),
      ...(custom ? { custom } : {}),
    },
    info,
  };
}

/** `custom_scores.overall_weighted.metrics` (`--scorer`): each name's weighted mean and interval. */
function readCustomBlock(raw: Record<string, unknown>): SourceResult['custom'] {
  const block = own(raw, 'custom_scores');
  const ow = isObject(block) ? own(block, 'overall_weighted') : undefined;
  const metrics = isObject(ow) ? own(ow, 'metrics') : undefined;
  if (!isObject(metrics)) return undefined;
  const weighted: Record<string, number> = Object.create(null);
  const ci: Record<string, [number, number]> = Object.create(null);
  for (const [k, v] of Object.entries(metrics)) {
    if (!isObject(v) || typeof v.mean !== 'number') continue;
    weighted[k] = v.mean;
    if (typeof v.ci95_low === 'number' && typeof v.ci95_high === 'number') ci[k] = [v.ci95_low, v.ci95_high];
  }
  return Object.keys(weighted).length > 0 ? { weighted, ci } : undefined;
}

/** Distinct record ids (first weight seen per id) and the rows of each file. */
async function countRecords(
  files: { folder: string; file: string; summaryRecords: number }[],
): Promise<{ ids: number; weight: number; mismatched: string[] }> {
  const weights = new Map<string, number>();
  const mismatched: string[] = [];
  for (const f of files) {
    let rows = 0;
    for await (const l of readLines(f.file)) {
      let v: unknown;
      try {
        v = JSON.parse(l.text);
      } catch {
        try {
          v = toPlain(parsePyJson(l.text));
        } catch {
          continue;
        }
      }
      if (!isObject(v)) continue;
      checkVersion(v, EVAL_ROW, `${f.file}:${l.line}`);
      rows++;
      const id = own(v, 'record_id');
      if (typeof id !== 'string' && typeof id !== 'number') continue;
      const key = String(id);
      if (weights.has(key)) continue;
      const w = own(v, 'difficulty_weight');
      weights.set(key, typeof w === 'number' && Number.isFinite(w) ? w : 0);
    }
    if (rows !== f.summaryRecords)
      mismatched.push(
        `${f.folder}: eval_records.jsonl has ${rows} rows but eval_summary.json counts ${f.summaryRecords} (written by different runs? score it again)`,
      );
  }
  let weight = 0;
  for (const w of weights.values()) weight += w;
  return { ids: weights.size, weight, mismatched };
}

const ManifestShape = 'a benchmark manifest with sources.<modality>.{records, weight}';

/** A benchmark manifest's per-source totals, or why the file is not one. */
function readManifestTotals(file: string): { totals: BenchmarkTotals } | { error: string } {
  let raw: unknown;
  try {
    raw = readJsonFile(file);
  } catch (e) {
    return { error: `not valid JSON (${errorMessage(e).split('\n')[0]})` };
  }
  const sources = isObject(raw) ? own(raw, 'sources') : undefined;
  if (!isObject(sources)) return { error: `not ${ManifestShape}` };
  checkBenchmarkManifest(raw, file);
  const totals: BenchmarkTotals = {
    weight: { text: 0, image: 0, audio: 0 },
    records: { text: 0, image: 0, audio: 0 },
  };
  for (const m of MODALITIES) {
    const s = own(sources, m);
    if (s === undefined) continue;
    const r = isObject(s) ? numberOr(own(s, 'records')) : undefined;
    const w = isObject(s) ? numberOr(own(s, 'weight')) : undefined;
    if (r === undefined || w === undefined || r < 0 || w < 0)
      return { error: `sources.${m}: expected {records, weight} as numbers >= 0` };
    totals.records[m] = r;
    totals.weight[m] = w;
  }
  return { totals };
}

/**
 * Where a benchmark manifest may be found for an evaluation folder, nearest first: in it, in
 * `../benchmark/` (`sob eval`), beside the benchmark a run directory's manifest names (`sob run`),
 * beside the benchmark the summaries name (`sob score --benchmark`).
 */
function manifestCandidates(dir: string, benchmarkPaths: string[]): string[] {
  const out = [
    join(dir, 'manifest.json'),
    join(dir, 'benchmark.json'),
    join(dir, '..', 'benchmark', 'manifest.json'),
  ];
  const runManifest = join(dir, '..', 'manifest.json');
  if (existsSync(runManifest)) {
    try {
      const m = readJsonFile(runManifest);
      const b = isObject(m) ? own(m, 'benchmark') : undefined;
      const p = isObject(b) ? own(b, 'path') : typeof b === 'string' ? b : undefined;
      if (typeof p === 'string') out.push(join(dirname(resolve(dirname(runManifest), p)), 'manifest.json'));
      else out.push(runManifest);
    } catch {
      // not ours to judge here: a run manifest the runner will complain about
    }
  }
  for (const p of benchmarkPaths)
    out.push(join(dirname(isAbsolute(p) ? p : resolve(dir, p)), 'manifest.json'));
  return [...new Set(out.map((p) => resolve(p)))];
}

/** A path as the outputs show it: relative to the evaluation folder when near it. */
function shownPath(dir: string, p: string): string {
  const rel = relative(resolve(dir), resolve(p));
  return rel.startsWith('../../..') || isAbsolute(rel) ? p : rel;
}

export interface ModelFolder {
  model: string;
  /** `<source>/<model-dir>` */
  folder: string;
  path: string;
  result: SourceResult;
  info: SummaryInfo;
  /** Its eval_records.jsonl, when there is one. */
  records?: string;
}

/**
 * The model folders of one source (`<dir>/<source>/<model-dir>`) whose `eval_summary.json`
 * `read` accepts (it throws the reason it cannot), and every other non-dot folder with why it is
 * left out (`exclude` may name folders that are not entries). Dot-folders are a writer's temp or
 * old folders (the whole-or-absent contract) and are ignored.
 */
export function scanModelFolders<T extends object>(
  dir: string,
  source: string,
  read: (summaryFile: string) => T,
  exclude: (child: string) => string | undefined = () => undefined,
): {
  folders: ({ model: string; folder: string; path: string; records?: string } & T)[];
  skipped: SkippedFolder[];
} {
  const folders: ({ model: string; folder: string; path: string; records?: string } & T)[] = [];
  const skipped: SkippedFolder[] = [];
  const mdir = join(dir, source);
  if (!isDir(mdir)) return { folders, skipped };
  for (const child of readdirSync(mdir).sort()) {
    if (child.startsWith('.')) continue;
    const path = join(mdir, child);
    if (!isDir(path)) continue;
    const folder = `${source}/${child}`;
    const excluded = exclude(child);
    if (excluded) {
      skipped.push({ folder, reason: excluded });
      continue;
    }
    const summaryPath = join(path, 'eval_summary.json');
    const recs = join(path, 'eval_records.jsonl');
    const hasRecords = existsSync(recs);
    if (!existsSync(summaryPath)) {
      skipped.push({
        folder,
        reason: hasRecords
          ? 'records without a summary (eval_records.jsonl but no eval_summary.json: an interrupted sob score? score it again)'
          : 'no eval_summary.json',
      });
      continue;
    }
    let got: T;
    try {
      got = read(summaryPath);
    } catch (e) {
      if (e instanceof FormatVersionError) throw e;
      skipped.push({ folder, reason: `unreadable eval_summary.json: ${errorMessage(e)}` });
      continue;
    }
    folders.push({ model: child, folder, path, ...got, records: hasRecords ? recs : undefined });
  }
  return { folders, skipped };
}

/** The model folders of one SOB source with a readable summary, and the others with why not. */
export function scanSource(dir: string, m: Modality): { folders: ModelFolder[]; skipped: SkippedFolder[] } {
  return scanModelFolders(dir, m, readSummary, (child) =>
    child.endsWith('_audio_true')
      ? 'an audio-input ablation folder (*_audio_true), not a leaderboard entry'
      : undefined,
  );
}

export async function loadEvaluation(
  dir: string,
  options: string | LoadOptions = {},
): Promise<EvaluationFolder> {
  const opts: LoadOptions = typeof options === 'string' ? { manifest: options } : options;
  const mode = opts.totals ?? 'auto';
  if (!isDir(dir)) throw new UserError(`no such evaluation folder: ${dir}`);
  const models = new Map<string, Partial<Record<Modality, SourceResult>>>();
  const info = new Map<string, Partial<Record<Modality, SummaryInfo>>>();
  const skipped: SkippedFolder[] = [];
  const warnings: string[] = [];
  const recordFiles: Record<Modality, { folder: string; file: string; summaryRecords: number }[]> = {
    text: [],
    image: [],
    audio: [],
  };
  for (const m of MODALITIES) {
    const scan = scanSource(dir, m);
    skipped.push(...scan.skipped);
    for (const f of scan.folders) {
      const entry = models.get(f.model) ?? {};
      entry[m] = f.result;
      models.set(f.model, entry);
      const ie = info.get(f.model) ?? {};
      ie[m] = f.info;
      info.set(f.model, ie);
      if (f.records)
        recordFiles[m].push({ folder: f.folder, file: f.records, summaryRecords: f.result.records });
    }
  }
  if (models.size === 0) {
    const why =
      skipped.length > 0 ? ` (skipped: ${skipped.map((s) => `${s.folder}: ${s.reason}`).join('; ')})` : '';
    throw new UserError(
      `no <modality>/<model>/eval_summary.json under ${dir} (expected the layout sob score writes)${why}`,
    );
  }

  // The benchmark's totals, per source, with their origin.
  const totals: BenchmarkTotals = {
    weight: { text: 0, image: 0, audio: 0 },
    records: { text: 0, image: 0, audio: 0 },
    origin: { text: 'records', image: 'records', audio: 'records' },
  };
  const origin = totals.origin!;
  const note = {} as Record<Modality, string>;
  const bySource = (m: Modality) => {
    const out: { result: SourceResult; info: SummaryInfo }[] = [];
    for (const [model, r] of models) {
      const res = r[m];
      const inf = info.get(model)?.[m];
      if (res && inf) out.push({ result: res, info: inf });
    }
    return out;
  };
  let manifest: { path: string; totals: BenchmarkTotals } | undefined;
  if (mode === 'sob') {
    for (const m of MODALITIES) {
      totals.records[m] = SOB_TOTALS.records[m];
      totals.weight[m] = SOB_TOTALS.weight[m];
      origin[m] = 'sob';
      note[m] = 'the released SOB set (asked for with --benchmark-totals sob)';
    }
  } else if (opts.manifest) {
    if (!existsSync(opts.manifest)) throw new UserError(`no such manifest: ${opts.manifest}`);
    const r = readManifestTotals(opts.manifest);
    if ('error' in r) throw new UserError(`${opts.manifest}: ${r.error}`);
    manifest = { path: opts.manifest, totals: r.totals };
  } else if (mode === 'auto') {
    const benchPaths = new Set<string>();
    for (const ie of info.values())
      for (const m of MODALITIES) if (ie[m]?.benchmark?.path) benchPaths.add(ie[m]!.benchmark!.path!);
    for (const c of manifestCandidates(dir, [...benchPaths])) {
      if (!existsSync(c)) continue;
      const r = readManifestTotals(c);
      if ('error' in r) {
        if (c.startsWith(resolve(dir))) warnings.push(`${shownPath(dir, c)} ignored: ${r.error}`);
        continue;
      }
      manifest = { path: c, totals: r.totals };
      break;
    }
  }
  if (manifest) {
    const shown = shownPath(dir, manifest.path);
    for (const m of MODALITIES) {
      totals.records[m] = manifest.totals.records[m];
      totals.weight[m] = manifest.totals.weight[m];
      origin[m] = `manifest:${shown}`;
      note[m] = `the benchmark manifest ${shown}`;
      if (totals.records[m] === 0 && bySource(m).length > 0)
        warnings.push(
          `${m} has results but the manifest ${shown} lists no ${m} records: they count for nothing`,
        );
    }
  } else if (mode !== 'sob') {
    for (const m of MODALITIES) {
      const summaries = bySource(m);
      const files = recordFiles[m];
      const counted = files.length > 0 ? await countRecords(files) : undefined;
      if (counted) warnings.push(...counted.mismatched);
      const sob =
        mode === 'auto'
          ? recogniseSobSource(m, {
              summaries: summaries.map((s) => ({
                records: s.result.records,
                responseFile: s.info.responseFile,
              })),
              distinctIds: counted?.ids,
              weight: counted?.weight,
            })
          : null;
      if (sob) {
        totals.records[m] = SOB_TOTALS.records[m];
        totals.weight[m] = SOB_TOTALS.weight[m];
        origin[m] = 'sob';
        note[m] = `the released SOB set, recognised: ${sob}`;
      } else if (counted) {
        totals.records[m] = counted.ids;
        totals.weight[m] = counted.weight;
        origin[m] = 'records';
        note[m] =
          `the records present: ${counted.ids} distinct record ids in ${files.length} eval_records.jsonl`;
      } else if (summaries.length > 0) {
        let most = 0;
        for (const s of summaries) most = Math.max(most, s.result.evaluated ?? s.result.records);
        totals.records[m] = most;
        totals.weight[m] = most * ASSUMED_WEIGHT_PER_RECORD;
        origin[m] = 'summaries';
        note[m] =
          `summaries only (no eval_records.jsonl): the largest model's ${most} records, weight assumed ${ASSUMED_WEIGHT_PER_RECORD} per record; give --manifest for the real totals`;
      } else {
        origin[m] = 'records';
        note[m] = 'no results for this source here';
      }
    }
  }
  warnings.push(...profileWarnings(info), ...qualityWarnings(info), ...lenientWarnings(models));
  return { dir, models, info, totals, totalsNote: note, skipped, warnings };
}

/**
 * The report's header line on the profile: which one scored every summary and why (each
 * summary's `profile_reason`), or that they differ. A summary that names none is the sob profile.
 */
export function profileHeader(info: Map<string, Partial<Record<Modality, SummaryInfo>>>): string {
  const seen = new Map<string, Set<string>>();
  for (const sources of info.values())
    for (const s of Object.values(sources)) {
      if (!s) continue;
      const p = s.profile ?? 'sob';
      const reasons = seen.get(p) ?? new Set<string>();
      reasons.add(
        s.profileReason ?? (s.profile ? 'not stated' : "the reference's own summaries: the sob profile"),
      );
      seen.set(p, reasons);
    }
  if (seen.size === 0) return '';
  const part = ([p, reasons]: [string, Set<string>]) => `${p} (${[...reasons].join('; ')})`;
  if (seen.size === 1) return `Profile: ${part([...seen][0])}`;
  return `Mixed profiles: ${[...seen].map(part).join(', ')}: their numbers do not compare`;
}

/** One line when the summaries were scored with different profiles (their numbers do not compare). */
export function profileWarnings(info: Map<string, Partial<Record<Modality, SummaryInfo>>>): string[] {
  const count = new Map<string, number>();
  for (const ie of info.values())
    for (const m of MODALITIES) {
      const s = ie[m];
      if (!s) continue;
      const p = s.profile ?? 'sob';
      count.set(p, (count.get(p) ?? 0) + 1);
    }
  if (count.size < 2) return [];
  const parts = [...count.entries()].sort().map(([p, n]) => `${n} with ${p}`);
  return [
    `mixed scoring profiles: ${parts.join(', ')} (a summary that names none is the sob profile): their numbers do not compare; score them all with one --profile`,
  ];
}

function qualityWarnings(info: Map<string, Partial<Record<Modality, SummaryInfo>>>): string[] {
  const out: string[] = [];
  for (const [model, ie] of info)
    for (const m of MODALITIES) {
      const s = ie[m];
      if (!s) continue;
      const parts: string[] = [];
      if (s.duplicates) parts.push(`${s.duplicates} repeated record ids`);
      if (s.benchmark?.missingIds) parts.push(`${s.benchmark.missingIds} benchmark records not answered`);
      if (s.benchmark?.unknownIds)
        parts.push(`${s.benchmark.unknownIds} answers with ids not in the benchmark`);
      // SPEC "Weight": a record with no easy/medium/hard weighs 0, so its scores count for
      // nothing in the weighted means (all of them 0 when no record has one).
      const unknown = s.dataQuality.find(([k]) => k === 'unknown_difficulty_count')?.[1] ?? 0;
      if (unknown > 0)
        parts.push(
          `${unknown} records with no schema_complexity (weight 0: left out of the weighted means; give metadata.schema_complexity, or score against the benchmark with --benchmark)`,
        );
      if (parts.length > 0) out.push(`${m}/${model}: ${parts.join(', ')}`);
    }
  return out;
}

/** `{"<model-dir>": "<display name>"}` (other keys, such as `_comment`, are never looked up). */
export function readDisplayNames(file: string | undefined, dir: string): Map<string, string> {
  const path = file ?? join(dir, 'display_names.json');
  const out = new Map<string, string>();
  if (!existsSync(path)) {
    if (file) throw new UserError(`no such file: ${file}`);
    return out;
  }
  let raw: unknown;
  try {
    raw = readJsonFile(path);
  } catch (e) {
    throw new UserError(`${path}: not valid JSON (${errorMessage(e).split('\n')[0]})`);
  }
  if (!isObject(raw)) throw new UserError(`${path}: expected an object of folder name -> display name`);
  // Only a model folder's own name is ever looked up, so comment keys (`_comment`) do no harm.
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string') out.set(k, v);
  return out;
}

/** A display name: from a Map, or from a plain object by its own keys only. */
export function displayName(
  names: ReadonlyMap<string, string> | Record<string, string>,
  model: string,
): string {
  if (names instanceof Map) return names.get(model) ?? model;
  const o = names as Record<string, string>;
  return Object.hasOwn(o, model) && typeof o[model] === 'string' ? o[model] : model;
}

export function buildLeaderboard(
  ev: EvaluationFolder,
  names: ReadonlyMap<string, string> | Record<string, string> = new Map(),
): LeaderboardRow[] {
  const rows: LeaderboardRow[] = [];
  for (const [model, sources] of ev.models) {
    const row = leaderboardRow(model, displayName(names, model), sources, ev.totals);
    if (!row) continue;
    const quality: Partial<Record<Modality, RowQuality>> = {};
    const ie = ev.info.get(model) ?? {};
    for (const m of row.modalities) {
      const s = ie[m];
      if (!s) continue;
      const q: RowQuality = { profile: s.profile ?? 'sob' };
      if (s.duplicates !== undefined) q.duplicate_record_id_count = s.duplicates;
      if (s.benchmark?.missingIds !== undefined) q.missing_ids = s.benchmark.missingIds;
      if (s.benchmark?.unknownIds !== undefined) q.unknown_ids = s.benchmark.unknownIds;
      const recovered = s.dataQuality.find(([k]) => k === 'lenient_parse_count')?.[1];
      if (recovered) q.lenient_parse_count = recovered;
      quality[m] = q;
    }
    row.data_quality = quality;
    const lenient = lenientColumns(row, sources, ev.totals);
    if (lenient) row.lenient = lenient;
    rows.push(row);
  }
  const sorted = sortLeaderboard(rows);
  rankLenient(sorted);
  return sorted;
}

/** The totals as one line per source, for stderr and the outputs' footers. */
export function totalsLines(ev: EvaluationFolder): string[] {
  return MODALITIES.map(
    (m) =>
      `${m}: ${ev.totals.records[m]} records, weight ${ev.totals.weight[m]} (${ev.totals.origin?.[m] ?? 'unknown'}: ${ev.totalsNote[m]})`,
  );
}
