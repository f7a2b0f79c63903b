/**
 * `sob eval --epochs N` (docs/ci.md): each epoch's scores read back (epoch 1 from
 * `<eval-dir>/evaluation`, epoch e from `<eval-dir>/epochs/<e>/evaluation`) and summarized per
 * `<source>/<model>`: the epochs' weighted means, their mean and standard deviation, and the
 * share of records whose score changes between epochs; written as epochs.json and epochs.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EpochStats, epochStats } from '../../metrics/epochs.ts';
import { checkEvalSummary, type EvalSummary } from '../core/formats/eval-summary.ts';
import { MODALITIES } from '../core/record.ts';
import { mdCell } from './cells.ts';
import { COMPARED, loadModelRows } from './compare.ts';

/** Where epoch `e` of an eval directory keeps its scores. */
export function epochEvaluationDir(evalDir: string, e: number): string {
  return e === 1 ? join(evalDir, 'evaluation') : join(evalDir, 'epochs', String(e), 'evaluation');
}

/** Where epoch `e` (>= 2) keeps its run directories. */
export function epochRunsDir(evalDir: string, e: number): string {
  return e === 1 ? join(evalDir, 'runs') : join(evalDir, 'epochs', String(e), 'runs');
}

export interface EpochEntry extends EpochStats {
  /** `<source>/<model>` */
  subject: string;
}

function weightedMeans(summaryFile: string): number[] {
  const raw: unknown = JSON.parse(readFileSync(summaryFile, 'utf8'));
  checkEvalSummary(raw, summaryFile);
  const s = raw as EvalSummary;
  return COMPARED.map(([k]) => s.summary.overall_weighted.metrics[k]?.mean ?? 0);
}

/**
 * Every `<source>/<model>` scored in all `epochs` epochs, summarized; `incomplete` names those
 * scored in some epochs only (left out, said by the caller).
 */
export async function readEpochs(
  evalDir: string,
  models: string[],
  epochs: number,
): Promise<{ entries: EpochEntry[]; incomplete: string[] }> {
  const out: EpochEntry[] = [];
  const incomplete: string[] = [];
  for (const model of models)
    for (const m of MODALITIES) {
      const folders = Array.from({ length: epochs }, (_, i) =>
        join(epochEvaluationDir(evalDir, i + 1), m, model),
      );
      const scored = folders.map(
        (f) => existsSync(join(f, 'eval_summary.json')) && existsSync(join(f, 'eval_records.jsonl')),
      );
      if (!scored.every(Boolean)) {
        const which = scored.flatMap((x, i) => (x ? [i + 1] : []));
        if (which.length > 0) incomplete.push(`${m}/${model} (scored in epochs ${which.join(', ')})`);
        continue;
      }
      const means = folders.map((f) => weightedMeans(join(f, 'eval_summary.json')));
      const rows = await Promise.all(folders.map(loadModelRows));
      const stats = epochStats(
        COMPARED.map(([k]) => k),
        means,
        rows.map((r) => new Map([...r.rows].map(([id, v]) => [id, v.values]))),
      );
      out.push({ subject: `${m}/${model}`, ...stats });
    }
  return { entries: out, incomplete };
}

/** Mean ± sd per metric, and how many records changed, as a Markdown table (one row per subject and metric). */
export function epochsMarkdown(entries: EpochEntry[], only?: string[]): string {
  const n = entries[0]?.epochs ?? 0;
  const head = [
    'Source/model',
    'Metric',
    ...Array.from({ length: n }, (_, i) => `Epoch ${i + 1}`),
    'Mean',
    'SD',
    'Records changed',
  ];
  const lines = [
    `Repeated samples: ${n} epochs. Per epoch the schema-complexity weighted mean; Mean and SD (sample, n - 1) over the epochs' means; Records changed: records whose score differs between epochs / records scored in every epoch.`,
    '',
    `| ${head.join(' | ')} |`,
    `| --- | --- |${head
      .slice(2)
      .map(() => ' ---: ')
      .join('|')}|`,
  ];
  for (const e of entries)
    for (const [k, label] of COMPARED) {
      if (only && !only.includes(k)) continue;
      const s = e.metrics[k];
      lines.push(
        `| ${mdCell(e.subject)} | ${label} | ${s.per_epoch.map((v) => v.toFixed(3)).join(' | ')} | ${s.mean.toFixed(3)} | ${s.sd.toFixed(3)} | ${s.changed}/${e.records} (${(100 * s.changed_share).toFixed(1)}%) |`,
      );
    }
  return lines.join('\n');
}

/** epochs.json: the entries with the metrics under the paper's names beside the reference's. */
export function epochsJson(entries: EpochEntry[]): string {
  return JSON.stringify(
    entries.map((e) => ({
      subject: e.subject,
      epochs: e.epochs,
      records: e.records,
      metrics: Object.fromEntries(COMPARED.map(([k, label]) => [k, { name: label, ...e.metrics[k] }])),
    })),
    null,
    2,
  );
}
