/**
 * The benchmark manifest written beside a records file (docs/design.md "Records and benchmarks"):
 * per source, the record count and total weight (easy 1, medium 2, hard 3). The leaderboard
 * reads exactly `sources.<modality>.{records, weight}`; `sources.schema` counts the schema
 * track's records (readers of the three modalities pass it by).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeJsonAtomic } from '../src/core/files.ts';
import {
  type BenchmarkManifest,
  benchmarkManifestDoc,
  checkBenchmarkManifest,
  type SourceTotals,
  type Uncounted,
} from '../src/core/formats/manifest.ts';
import { readJsonl } from '../src/core/jsonl.ts';
import { PACKAGE_ROOT } from '../src/core/paths.ts';
import { toPlain } from '../src/core/pyjson.ts';
import { isSource, SOURCES, type Source } from '../src/core/record.ts';
import { COMPLEXITY_WEIGHT, isComplexity } from './checks.ts';

export type { BenchmarkManifest, SourceTotals, Uncounted } from '../src/core/formats/manifest.ts';

export function toolVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export function emptyTotals(): Record<Source, SourceTotals> {
  const out = {} as Record<Source, SourceTotals>;
  for (const m of SOURCES) out[m] = { records: 0, weight: 0 };
  return out;
}

/** Adds one record to the totals; a record without a known source or complexity is not counted. */
export function addRecord(
  totals: Record<Source, SourceTotals>,
  source: unknown,
  complexity: unknown,
): boolean {
  if (!isSource(source) || !isComplexity(complexity)) return false;
  totals[source].records++;
  totals[source].weight += COMPLEXITY_WEIGHT[complexity];
  return true;
}

export interface FileTotals {
  totals: Record<Source, SourceTotals>;
  /** Records counted in `totals`. */
  records: number;
  uncounted: Uncounted;
}

export function uncountedLines(u: Uncounted): number {
  return u.not_json + u.no_source + u.no_complexity;
}

/** Totals over a whole records file (used after an append, so the manifest covers every line),
 * with the lines it could not count and why. */
export async function totalsOfFile(file: string): Promise<FileTotals> {
  const totals = emptyTotals();
  const uncounted: Uncounted = { not_json: 0, no_source: 0, no_complexity: 0 };
  let records = 0;
  if (!existsSync(file)) return { totals, records, uncounted };
  for await (const line of readJsonl(file)) {
    if (!line.ok) {
      uncounted.not_json++;
      continue;
    }
    const rec = toPlain(line.value) as { metadata?: { source?: unknown; schema_complexity?: unknown } };
    const source = rec?.metadata?.source;
    const complexity = rec?.metadata?.schema_complexity;
    if (addRecord(totals, source, complexity)) records++;
    else if (!isSource(source)) uncounted.no_source++;
    else uncounted.no_complexity++;
  }
  return { totals, records, uncounted };
}

/** One phrase for the lines a manifest does not count, e.g. "3 without a known source". */
export function describeUncounted(u: Uncounted): string {
  const parts: string[] = [];
  if (u.no_source) parts.push(`${u.no_source} without a known source`);
  if (u.no_complexity) parts.push(`${u.no_complexity} without a schema complexity`);
  if (u.not_json) parts.push(`${u.not_json} not JSON`);
  return parts.join(', ');
}

export function makeManifest(
  totals: Record<Source, SourceTotals>,
  benchmarkFile?: string,
  uncounted?: Uncounted,
): BenchmarkManifest {
  const records = SOURCES.reduce((n, m) => n + totals[m].records, 0);
  const m: BenchmarkManifest = benchmarkManifestDoc({
    sources: totals,
    records,
    created: new Date().toISOString(),
    tool_version: toolVersion(),
  });
  if (uncounted && uncountedLines(uncounted) > 0) m.uncounted_lines = uncounted;
  if (benchmarkFile) m.benchmark = benchmarkFile;
  return m;
}

export function manifestPathFor(recordsFile: string): string {
  return join(dirname(recordsFile), 'manifest.json');
}

/** Writes `manifest.json` beside the records file, whole or not at all (never through a link). */
export function writeManifest(recordsFile: string, manifest: BenchmarkManifest): string {
  const path = manifestPathFor(recordsFile);
  writeJsonAtomic(path, manifest);
  return path;
}

/**
 * The manifest beside a records file, or undefined when there is none or it does not parse; a
 * newer sob-eval's manifest stops the caller in one line (exit 2) rather than being overwritten.
 */
export function readManifest(recordsFile: string): BenchmarkManifest | undefined {
  const file = manifestPathFor(recordsFile);
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  checkBenchmarkManifest(v, file);
  return v as BenchmarkManifest;
}
