/**
 * The benchmark manifest written beside a records file (DESIGN.md "Records and benchmarks"):
 * per source, the record count and total weight (easy 1, medium 2, hard 3). The leaderboard
 * reads exactly `sources.<modality>.{records, weight}`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJsonl } from '../src/core/jsonl.ts';
import { toPlain } from '../src/core/pyjson.ts';
import { isModality, MODALITIES, type Modality } from '../src/core/record.ts';
import { COMPLEXITY_WEIGHT, isComplexity } from './checks.ts';

export interface SourceTotals {
  records: number;
  weight: number;
}

export interface BenchmarkManifest {
  sources: Record<Modality, SourceTotals>;
  records: number;
  created: string;
  tool_version: string;
  /** The records file this manifest describes (its name, relative to the manifest). */
  benchmark?: string;
}

export function toolVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export function emptyTotals(): Record<Modality, SourceTotals> {
  const out = {} as Record<Modality, SourceTotals>;
  for (const m of MODALITIES) out[m] = { records: 0, weight: 0 };
  return out;
}

/** Adds one record to the totals; a record without a known source or complexity is not counted. */
export function addRecord(
  totals: Record<Modality, SourceTotals>,
  source: unknown,
  complexity: unknown,
): boolean {
  if (!isModality(source) || !isComplexity(complexity)) return false;
  totals[source].records++;
  totals[source].weight += COMPLEXITY_WEIGHT[complexity];
  return true;
}

/** Totals over a whole records file (used after an append, so the manifest covers every line). */
export async function totalsOfFile(file: string): Promise<Record<Modality, SourceTotals>> {
  const totals = emptyTotals();
  for await (const line of readJsonl(file)) {
    if (!line.ok) continue;
    const rec = toPlain(line.value) as { metadata?: { source?: unknown; schema_complexity?: unknown } };
    addRecord(totals, rec?.metadata?.source, rec?.metadata?.schema_complexity);
  }
  return totals;
}

export function makeManifest(
  totals: Record<Modality, SourceTotals>,
  benchmarkFile?: string,
): BenchmarkManifest {
  const records = MODALITIES.reduce((n, m) => n + totals[m].records, 0);
  const m: BenchmarkManifest = {
    sources: totals,
    records,
    created: new Date().toISOString(),
    tool_version: toolVersion(),
  };
  if (benchmarkFile) m.benchmark = benchmarkFile;
  return m;
}

export function manifestPathFor(recordsFile: string): string {
  return join(dirname(recordsFile), 'manifest.json');
}

export function writeManifest(recordsFile: string, manifest: BenchmarkManifest): string {
  const path = manifestPathFor(recordsFile);
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
  return path;
}
