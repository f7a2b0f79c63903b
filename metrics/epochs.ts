/**
 * Repeated samples (`sob eval --epochs N`, docs/ci.md): each record asked N times, each epoch
 * scored on its own. Per metric: the epochs' means, their mean, the between-epoch standard
 * deviation, and the share of records whose score changes from one epoch to another. Pure.
 */

export interface EpochMetricStats {
  /** The metric's (weighted) mean in each epoch, epoch 1 first. */
  per_epoch: number[];
  /** Mean of the epochs' means. */
  mean: number;
  /** Sample standard deviation of the epochs' means (n - 1 in the denominator; 0 for one epoch). */
  sd: number;
  /** Records (answered in every epoch) whose score is not the same in every epoch / those records. */
  changed_share: number;
  changed: number;
}

export interface EpochStats {
  epochs: number;
  /** Records answered and scored in every epoch (the ones `changed_share` is over). */
  records: number;
  metrics: Record<string, EpochMetricStats>;
}

function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function sampleSd(xs: number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * `means[e][k]`: epoch e's mean of metric `metrics[k]`; `rows[e]`: epoch e's per-record values
 * (record id -> values in `metrics` order). A record counts towards `changed_share` when every
 * epoch has it; it changed, for a metric, when its value there differs between two epochs.
 */
export function epochStats(metrics: string[], means: number[][], rows: Map<string, number[]>[]): EpochStats {
  const common = [...(rows[0]?.keys() ?? [])].filter((id) => rows.every((r) => r.has(id)));
  const out: Record<string, EpochMetricStats> = {};
  metrics.forEach((name, k) => {
    const per = means.map((m) => m[k]);
    let changed = 0;
    for (const id of common) {
      const first = rows[0].get(id)![k];
      if (rows.some((r) => r.get(id)![k] !== first)) changed++;
    }
    out[name] = {
      per_epoch: per,
      mean: mean(per),
      sd: sampleSd(per),
      changed,
      changed_share: common.length === 0 ? 0 : changed / common.length,
    };
  });
  return { epochs: means.length, records: common.length, metrics: out };
}
