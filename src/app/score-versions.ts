/**
 * `sob score --benchmark <a version sob review --apply wrote>`: the same answers scored against
 * the version it came from too, and one table of both, per model (docs/review.md). The earlier
 * scoring goes to a temporary folder: only the table is kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { readManifest } from '../../sources/manifest.ts';
import type { EvalSummaryOut } from '../core/formats/eval-summary.ts';
import type { BenchmarkRef } from '../scoring/benchmark.ts';
import {
  type ScoredOutput,
  type ScoreOptions,
  type ScoreTarget,
  scoreFiles,
} from '../scoring/score-files.ts';

/** The version a benchmark was made from by `sob review --apply`, or undefined. */
export function previousVersion(
  benchmark: string,
): { path: string; version: number; current: number } | undefined {
  const m = readManifest(benchmark);
  const prev = m?.gold?.previous;
  if (!m?.gold || !prev) return undefined;
  return {
    path: resolve(dirname(benchmark), prev.benchmark),
    version: prev.version,
    current: m.gold.version,
  };
}

type Cells = { n: number; va: number; perfect: number; lenient?: number };

function cellsOf(o: ScoredOutput): Cells {
  const s = (o.summary as EvalSummaryOut).summary;
  const lw = (
    o.summary as {
      lenient?: { summary?: { overall_weighted?: { metrics?: Record<string, { mean?: number }> } } };
    }
  ).lenient?.summary?.overall_weighted?.metrics?.lenient_value_accuracy?.mean;
  return {
    n: o.records,
    va: s.overall_weighted.metrics.leaf_value_em.mean,
    perfect: s.overall_weighted.metrics.strict_json_em.mean,
    ...(typeof lw === 'number' ? { lenient: lw } : {}),
  };
}

const keyOf = (name: string, o: ScoredOutput) => `${name}\u0000${o.modality}`;

/**
 * Scores `targets` against `before` and prints, per model and source, Value Accuracy, lenient
 * Value Accuracy (with --match) and Perfect Response before and after, with the change.
 */
export async function beforeAfterTable(
  targets: ScoreTarget[],
  after: { name: string; outputs: ScoredOutput[] }[],
  before: BenchmarkRef,
  versions: { before: number; after: number },
  opts: Omit<ScoreOptions, 'outDir' | 'benchmark'>,
): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-before-'));
  try {
    const results = await scoreFiles(
      targets.map((t) => ({ file: t.file, modelDir: t.modelDir, profile: t.profile, benchmark: before })),
      {
        ...opts,
        outDir: tmp,
        benchmark: before,
        summary: { ...opts.summary, bootstrapSamples: 0 },
        log: () => {},
      },
    );
    const was = new Map<string, Cells>();
    for (const [i, r] of results.entries())
      for (const o of r.outputs) if (o.modality !== 'schema') was.set(keyOf(after[i].name, o), cellsOf(o));
    const lenient = after.some((a) => a.outputs.some((o) => cellsOf(o).lenient !== undefined));
    const b = `v${versions.before}`;
    const a = `v${versions.after}`;
    const header = [
      'model',
      'source',
      `n ${b}`,
      `n ${a}`,
      `Val.Acc. ${b}`,
      `Val.Acc. ${a}`,
      'change',
      ...(lenient ? [`Len.VA ${b}`, `Len.VA ${a}`, 'change'] : []),
      `Perfect ${b}`,
      `Perfect ${a}`,
    ];
    const rows: string[][] = [];
    const f = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(3));
    const d = (x: number | undefined, y: number | undefined) =>
      x === undefined || y === undefined ? '-' : `${y - x >= 0 ? '+' : ''}${(y - x).toFixed(3)}`;
    for (const m of after)
      for (const o of m.outputs) {
        if (o.modality === 'schema') continue;
        const now = cellsOf(o);
        const then = was.get(keyOf(m.name, o));
        rows.push([
          m.name,
          o.modality,
          then ? String(then.n) : '-',
          String(now.n),
          f(then?.va),
          f(now.va),
          d(then?.va, now.va),
          ...(lenient ? [f(then?.lenient), f(now.lenient), d(then?.lenient, now.lenient)] : []),
          f(then?.perfect),
          f(now.perfect),
        ]);
      }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (cs: string[]) =>
      cs.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    return `gold ${b} -> ${a} (weighted means; the same answers scored against both versions)\n${[fmt(header), ...rows.map(fmt)].join('\n')}\n`;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
