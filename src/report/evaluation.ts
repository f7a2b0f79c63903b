/**
 * Reads an evaluation folder (`<dir>/<modality>/<model-dir>/eval_summary.json`, the SOB
 * repository's layout) into leaderboard rows, with the benchmark's per-source totals taken from
 * data: a benchmark manifest when there is one, else the records' own weights, else the SOB set's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  type BenchmarkTotals,
  type LeaderboardRow,
  leaderboardRow,
  SOB_TOTALS,
  type SourceResult,
  sortLeaderboard,
} from '../../metrics/leaderboard.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { readJsonl } from '../core/jsonl.ts';
import { MODALITIES, type Modality } from '../core/record.ts';

const MetricMean = z.object({ mean: z.number() }).passthrough();
const SummaryFile = z
  .object({
    num_records: z.number().int().nonnegative(),
    summary: z.object({
      overall_weighted: z.object({ metrics: z.record(MetricMean) }).passthrough(),
    }),
  })
  .passthrough();

/** A benchmark manifest's per-source totals (`sources.<modality>.{records, weight}`). */
const ManifestTotals = z.object({
  sources: z.record(
    z.object({ records: z.number().nonnegative(), weight: z.number().nonnegative() }).passthrough(),
  ),
});

export interface EvaluationFolder {
  /** model dir -> modality -> result */
  models: Map<string, Partial<Record<Modality, SourceResult>>>;
  totals: BenchmarkTotals;
  /** Where each source's totals came from, for the user to see. */
  totalsFrom: Record<Modality, string>;
}

function readSummary(file: string): SourceResult {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`${file}: not valid JSON (${errorMessage(e)})`);
  }
  const r = SummaryFile.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new UserError(`${file}: ${i.path.join('.')}: ${i.message}`);
  }
  const weighted: Record<string, number> = {};
  const ci: Record<string, [number, number]> = {};
  for (const [k, v] of Object.entries(r.data.summary.overall_weighted.metrics)) {
    weighted[k] = v.mean;
    if (typeof v.ci95_low === 'number' && typeof v.ci95_high === 'number') ci[k] = [v.ci95_low, v.ci95_high];
  }
  return { records: r.data.num_records, weighted, ci };
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

async function recordsWeight(file: string): Promise<{ records: number; weight: number }> {
  let records = 0;
  let weight = 0;
  for await (const l of readJsonl(file)) {
    if (!l.ok || !(l.value instanceof Map)) continue;
    const w = l.value.get('difficulty_weight');
    records++;
    weight += typeof w === 'number' ? w : typeof w === 'bigint' ? Number(w) : 0;
  }
  return { records, weight };
}

export async function loadEvaluation(dir: string, manifestPath?: string): Promise<EvaluationFolder> {
  if (!isDir(dir)) throw new UserError(`no such evaluation folder: ${dir}`);
  const models = new Map<string, Partial<Record<Modality, SourceResult>>>();
  const recordFiles: Partial<Record<Modality, { file: string; records: number }>> = {};
  for (const m of MODALITIES) {
    const mdir = join(dir, m);
    if (!isDir(mdir)) continue;
    for (const child of readdirSync(mdir).sort()) {
      if (child.startsWith('.') || child.endsWith('_audio_true')) continue;
      const summaryPath = join(mdir, child, 'eval_summary.json');
      if (!existsSync(summaryPath)) continue;
      const res = readSummary(summaryPath);
      const entry = models.get(child) ?? {};
      entry[m] = res;
      models.set(child, entry);
      const recs = join(mdir, child, 'eval_records.jsonl');
      if (existsSync(recs) && res.records > (recordFiles[m]?.records ?? -1))
        recordFiles[m] = { file: recs, records: res.records };
    }
  }
  if (models.size === 0) {
    throw new UserError(
      `no <modality>/<model>/eval_summary.json under ${dir} (expected the layout sob score writes)`,
    );
  }

  const totals: BenchmarkTotals = { weight: { ...SOB_TOTALS.weight }, records: { ...SOB_TOTALS.records } };
  const totalsFrom = { text: 'SOB default', image: 'SOB default', audio: 'SOB default' } as Record<
    Modality,
    string
  >;
  const manifest =
    manifestPath ?? [join(dir, 'manifest.json'), join(dir, 'benchmark.json')].find((p) => existsSync(p));
  if (manifest) {
    let parsed: z.infer<typeof ManifestTotals>;
    try {
      parsed = ManifestTotals.parse(JSON.parse(readFileSync(manifest, 'utf8')));
    } catch (e) {
      throw new UserError(
        `${manifest}: not a benchmark manifest with sources.<modality>.{records, weight} (${errorMessage(e).split('\n')[0]})`,
      );
    }
    for (const m of MODALITIES) {
      const s = parsed.sources[m];
      totals.weight[m] = s?.weight ?? 0;
      totals.records[m] = s?.records ?? 0;
      totalsFrom[m] = manifest;
    }
  } else {
    // Without a manifest: a source whose records are here is measured from them.
    for (const m of MODALITIES) {
      const rf = recordFiles[m];
      if (!rf) continue;
      const { records, weight } = await recordsWeight(rf.file);
      totals.records[m] = records;
      totals.weight[m] = weight;
      totalsFrom[m] = rf.file;
    }
  }
  return { models, totals, totalsFrom };
}

export function readDisplayNames(file: string | undefined, dir: string): Record<string, string> {
  const path = file ?? join(dir, 'display_names.json');
  if (!existsSync(path)) {
    if (file) throw new UserError(`no such file: ${file}`);
    return {};
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`${path}: not valid JSON (${errorMessage(e)})`);
  }
  const names = z.record(z.unknown()).safeParse(raw);
  if (!names.success) throw new UserError(`${path}: expected an object of folder name -> display name`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(names.data))
    if (!k.startsWith('_') && typeof v === 'string') out[k] = v;
  return out;
}

export function buildLeaderboard(ev: EvaluationFolder, names: Record<string, string>): LeaderboardRow[] {
  const rows: LeaderboardRow[] = [];
  for (const [model, sources] of ev.models) {
    const row = leaderboardRow(model, names[model] ?? model, sources, ev.totals);
    if (row) rows.push(row);
  }
  return sortLeaderboard(rows);
}
