/**
 * Per-source leaderboards (the paper's Tables 4-6: one source, sorted by Value Accuracy) and
 * each model's rank on every source, to show how ranks shift between sources. Pure math.
 */
import { MODALITIES, type Modality } from '../src/core/record.ts';
import { LEADERBOARD_METRICS, type SourceMetrics, type SourceResult } from './leaderboard.ts';
import { lenientSourceMetrics } from './lenient-leaderboard.ts';

export interface SourceRow {
  rank: number;
  model: string;
  display_name: string;
  n: number;
  metrics: SourceMetrics;
}

const PERFECT: [string, string] = ['strict_json_em', 'perfect'];

/** One source's table, best Value Accuracy first (ties by model name). */
export function sourceTable(
  models: Map<string, Partial<Record<Modality, SourceResult>>>,
  names: ReadonlyMap<string, string>,
  source: Modality,
): SourceRow[] {
  const rows: Omit<SourceRow, 'rank'>[] = [];
  for (const [model, sources] of models) {
    const s = sources[source];
    if (!s) continue;
    // Metric names are ours (fixed), never a model's.
    const metrics: SourceMetrics = {};
    for (const [key, name] of [...LEADERBOARD_METRICS, PERFECT]) {
      const ci = s.ci?.[key];
      metrics[name] = {
        mean: s.weighted[key] ?? null,
        ci95_low: ci ? ci[0] : null,
        ci95_high: ci ? ci[1] : null,
      };
    }
    Object.assign(metrics, lenientSourceMetrics(s));
    // `--scorer`: each score of your own, with its interval, under its own name.
    for (const [k, mean] of Object.entries(s.custom?.weighted ?? {})) {
      const ci = s.custom && Object.hasOwn(s.custom.ci, k) ? s.custom.ci[k] : undefined;
      metrics[k] = { mean, ci95_low: ci ? ci[0] : null, ci95_high: ci ? ci[1] : null };
    }
    rows.push({ model, display_name: names.get(model) ?? model, n: s.records, metrics });
  }
  rows.sort(
    (a, b) =>
      (b.metrics.value_accuracy.mean ?? -1) - (a.metrics.value_accuracy.mean ?? -1) ||
      (a.model < b.model ? -1 : 1),
  );
  return rows.map((r, i) => ({ rank: i + 1, ...r }));
}

/** Each model's Value Accuracy rank per source (absent where it has no results). */
export function sourceRanks(
  models: Map<string, Partial<Record<Modality, SourceResult>>>,
): Map<string, Partial<Record<Modality, number>>> {
  const out = new Map<string, Partial<Record<Modality, number>>>();
  for (const m of MODALITIES) {
    for (const r of sourceTable(models, new Map(), m)) {
      const entry = out.get(r.model) ?? {};
      entry[m] = r.rank;
      out.set(r.model, entry);
    }
  }
  return out;
}
