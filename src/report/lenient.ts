/**
 * Lenient matching in the outputs (issue 10): reading a summary's `lenient` block, the lenient
 * columns beside the exact ones in the leaderboard's table, Markdown and CSV (the JSON rows carry
 * `lenient` as is), the per-source table's lenient columns, `--sensitivity`, and what the HTML
 * report embeds for its "Exact vs lenient" section and record view.
 */
import type { LeaderboardRow, LenientSource, SourceResult } from '../../metrics/leaderboard.ts';
import type { Sensitivity } from '../../metrics/lenient-leaderboard.ts';
import { kendallTau } from '../../metrics/match/rank.ts';
import type { SourceRow } from '../../metrics/ranks.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import { csvTable, mdCell } from './cells.ts';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(o: unknown, k: string): unknown {
  return isObject(o) && Object.hasOwn(o, k) ? o[k] : undefined;
}

function meansOf(block: unknown): { means: Record<string, number>; ci: Record<string, [number, number]> } {
  const metrics = own(own(block, 'overall_weighted'), 'metrics');
  const means: Record<string, number> = Object.create(null);
  const ci: Record<string, [number, number]> = Object.create(null);
  if (!isObject(metrics)) return { means, ci };
  for (const [k, v] of Object.entries(metrics)) {
    const mean = own(v, 'mean');
    if (typeof mean !== 'number') continue;
    means[k] = mean;
    const lo = own(v, 'ci95_low');
    const hi = own(v, 'ci95_high');
    if (typeof lo === 'number' && typeof hi === 'number') ci[k] = [lo, hi];
  }
  return { means, ci };
}

/** A summary's `lenient` block (`sob score --match`), or undefined when it has none or it is unreadable. */
export function readLenientBlock(summary: Record<string, unknown>): LenientSource | undefined {
  const b = own(summary, 'lenient');
  if (!isObject(b)) return undefined;
  const { means, ci } = meansOf(own(b, 'summary'));
  if (typeof means.lenient_value_accuracy !== 'number') return undefined;
  const out: LenientSource = {
    policy: typeof own(b, 'policy') === 'string' ? (own(b, 'policy') as string) : '?',
    judge: typeof own(b, 'judge') === 'string' ? (own(b, 'judge') as string) : null,
    weighted: means,
    ci,
  };
  const nj = own(b, 'without_judge');
  if (isObject(nj)) out.withoutJudge = meansOf(nj).means;
  return out;
}

/** One line each: lenient scores that do not compare (mixed policies, some sources or models only). */
export function lenientWarnings(models: Map<string, Partial<Record<Modality, SourceResult>>>): string[] {
  const out: string[] = [];
  const policies = new Set<string>();
  let withL = 0;
  let without = 0;
  for (const [model, sources] of models) {
    const present = MODALITIES.filter((m) => sources[m]);
    const scored = present.filter((m) => sources[m]!.lenient);
    for (const m of scored) {
      const l = sources[m]!.lenient!;
      policies.add(`${l.policy}${l.judge ? ` + judge ${l.judge}` : ''}`);
    }
    if (scored.length === 0) without++;
    else {
      withL++;
      if (scored.length < present.length)
        out.push(
          `${model}: lenient scores on ${scored.join(', ')} only (not ${present.filter((m) => !scored.includes(m)).join(', ')}): no lenient columns for it; score every source with --match`,
        );
    }
  }
  if (policies.size > 1)
    out.push(
      `lenient scores from different policies: ${[...policies].sort().join('; ')}: the lenient columns do not compare; score them all with one --match`,
    );
  if (withL > 0 && without > 0)
    out.push(`${without} of ${withL + without} models have no lenient scores (scored without --match)`);
  return out;
}

// -- sob compare ---------------------------------------------------------------------------------

/** The lenient metrics `sob compare` compares, from rows scored with `--match`. */
export const LENIENT_COMPARED: [string, string][] = [
  ['lenient_value_accuracy', 'Lenient Value Accuracy'],
  ['lenient_faithfulness', 'Lenient Faithfulness'],
  ['field_f1', 'Field F1'],
];

export const MATRIX_METRICS = ['value_accuracy', ...LENIENT_COMPARED.map(([k]) => k)] as const;
export type MatrixMetric = (typeof MATRIX_METRICS)[number];

/** `sob compare --all --metric`: which numbers of a row, and the metric's name. */
export function matrixMetric(m: MatrixMetric): {
  pick: (r: { values: number[]; lenient?: number[] }) => number[] | undefined;
  label: string;
  lenient: boolean;
} {
  if (m === 'value_accuracy') return { pick: (r) => r.values, label: 'Value Accuracy', lenient: false };
  const i = LENIENT_COMPARED.findIndex(([k]) => k === m);
  return {
    pick: (r) => (r.lenient ? [r.lenient[i]] : undefined),
    label: LENIENT_COMPARED[i][1],
    lenient: true,
  };
}

// -- sob score: the printed rows -------------------------------------------------------------------

export const LENIENT_SHOWN = ['Len.VA', 'Gap'];

/** `sob score`'s printed lenient cells for one summary: lenient Value Accuracy and the gap. */
export function lenientShown(summary: Record<string, unknown>): string[] {
  const w = own(own(own(summary, 'lenient'), 'summary'), 'overall_weighted');
  const get = (k: string) => own(own(own(w, 'metrics'), k), 'mean');
  const va = get('lenient_value_accuracy');
  const gap = get('value_accuracy_gap');
  return [typeof va === 'number' ? va.toFixed(3) : '-', typeof gap === 'number' ? gap.toFixed(3) : '-'];
}

// -- The leaderboard's lenient columns -----------------------------------------------------------------

export const LENIENT_HEADER = ['Len.VA', 'Gap', 'Len.Overall', 'Shift'];

export function hasLenient(rows: LeaderboardRow[]): boolean {
  return rows.some((r) => r.lenient);
}

function f3(v: number | null | undefined): string {
  return typeof v === 'number' ? v.toFixed(3) : '-';
}

function signed(n: number | undefined): string {
  if (n === undefined) return '-';
  return n > 0 ? `+${n}` : String(n);
}

/** The lenient cells of one row (`-` when it has no lenient scores). */
export function lenientCells(r: LeaderboardRow): string[] {
  const l = r.lenient;
  if (!l) return LENIENT_HEADER.map(() => '-');
  return [
    f3(l.value_accuracy),
    `${l.gap >= 0 ? '+' : ''}${l.gap.toFixed(3)}`,
    f3(l.overall),
    signed(l.rank_shift),
  ];
}

/** Lines under the table: what the lenient columns mean, the policy, and tau between the rankings. */
export function lenientFooter(rows: LeaderboardRow[]): string[] {
  const withL = rows.filter((r) => r.lenient);
  if (withL.length === 0) return [];
  const tau =
    withL.length > 1
      ? kendallTau(
          withL.map((r) => r.overall),
          withL.map((r) => r.lenient!.overall),
        )
      : undefined;
  const policies = [...new Set(withL.map((r) => r.lenient!.policy))].join(', ');
  const judges = [...new Set(withL.map((r) => r.lenient!.judge).filter((j) => j))].join(', ');
  return [
    `Lenient (policy ${policies}${judges ? `, judge ${judges}` : ', no judge'}): Len.VA = lenient Value Accuracy; Gap = Len.VA - Val.Acc., the part of the loss that is formatting (1 - Len.VA is wrong values); Len.Overall = Overall with the lenient Value Accuracy and Faithfulness; Shift = exact rank - lenient rank by Overall${tau === undefined ? '' : `; Kendall's tau between the two rankings ${tau === null ? 'undefined' : tau.toFixed(3)}`}.`,
  ];
}

/** The lenient CSV columns of one row. */
export function lenientCsv(r: LeaderboardRow): Record<string, unknown> {
  const l = r.lenient;
  return {
    lenient_value_accuracy: l?.value_accuracy ?? '',
    lenient_faithfulness: l?.faithfulness ?? '',
    field_f1: l?.field_f1 ?? '',
    lenient_overall: l?.overall ?? '',
    value_accuracy_gap: l?.gap ?? '',
    gap_share: l?.gap_share ?? '',
    lenient_rank: l?.rank_lenient ?? '',
    rank_shift: l?.rank_shift ?? '',
    lenient_policy: l ? `${l.policy}${l.judge ? ` + judge ${l.judge}` : ''}` : '',
  };
}

// -- The per-source table's lenient columns ----------------------------------------------------------

const SOURCE_LENIENT: [string, string][] = [
  ['lenient_value_accuracy', 'Len.VA'],
  ['value_accuracy_gap', 'Gap'],
];

/** Rank by lenient Value Accuracy of the rows that have it (competition ranks). */
function lenientSourceRanks(rows: SourceRow[]): Map<string, number> {
  const scored = rows
    .filter((r) => typeof r.metrics.lenient_value_accuracy?.mean === 'number')
    .map((r) => [r.model, r.metrics.lenient_value_accuracy.mean as number] as const)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const out = new Map<string, number>();
  scored.forEach(([m, v], i) => {
    const prev = i > 0 ? scored[i - 1] : undefined;
    out.set(m, prev && prev[1] === v ? out.get(prev[0])! : i + 1);
  });
  return out;
}

/** The per-source table's lenient header cells (none when no row has lenient scores). */
export function sourceLenientHeader(rows: SourceRow[]): string[] {
  return rows.some((r) => r.metrics.lenient_value_accuracy)
    ? [...SOURCE_LENIENT.map(([, h]) => h), 'Shift']
    : [];
}

/** A per-source row's lenient cells (Len.VA with its interval, the gap, the rank shift by Value Accuracy). */
export function sourceLenientCells(rows: SourceRow[]): (r: SourceRow) => string[] {
  if (!rows.some((r) => r.metrics.lenient_value_accuracy)) return () => [];
  const ranks = lenientSourceRanks(rows);
  return (r) => {
    const va = r.metrics.lenient_value_accuracy;
    if (!va || va.mean === null) return ['-', '-', '-'];
    const ci =
      va.ci95_low !== null && va.ci95_high !== null ? ` [${f3(va.ci95_low)}, ${f3(va.ci95_high)}]` : '';
    const gap = r.metrics.value_accuracy_gap?.mean ?? null;
    const lr = ranks.get(r.model);
    return [
      `${f3(va.mean)}${ci}`,
      gap === null ? '-' : `${gap >= 0 ? '+' : ''}${gap.toFixed(3)}`,
      signed(lr === undefined ? undefined : r.rank - lr),
    ];
  };
}

// -- sob leaderboard --sensitivity -----------------------------------------------------------------

function tauText(t: number | null): string {
  return t === null ? 'undefined (all tied)' : t.toFixed(3);
}

/** The sensitivity report in one of the leaderboard's formats. */
export function sensitivityText(s: Sensitivity, format: 'table' | 'md' | 'csv' | 'json'): string {
  if (format === 'json') return JSON.stringify(s, null, 2);
  const names = s.rankings.map((r) => r.name);
  if (format === 'csv')
    return csvTable(
      s.models.map((m) => ({
        model: m.model,
        display_name: m.display_name,
        ...Object.fromEntries(
          names.flatMap((n) => [
            [`rank_${n}`, m.ranks[n] ?? ''],
            [`score_${n}`, m.scores[n] ?? ''],
          ]),
        ),
        max_shift: m.max_shift,
      })),
      true,
    );
  const by = s.rank_by === 'overall' ? 'Overall' : 'Value Accuracy';
  const header = ['Model', ...s.rankings.map((r) => `${r.name} (${by})`), 'Moves'];
  const body = s.models.map((m) => [
    m.display_name,
    ...names.map((n) => (m.ranks[n] === null ? '-' : `${m.ranks[n]} (${f3(m.scores[n])})`)),
    String(m.max_shift),
  ]);
  const notes = [
    `Rankings by ${by}: ${s.rankings.map((r) => `${r.name} = ${r.label}`).join('; ')}.`,
    ...s.tau.map((t) => `Kendall's tau-b, ${t.a} vs ${t.b}: ${tauText(t.tau)} over ${t.models} models`),
    `Models whose rank moves (${names.join(' / ')} rank), biggest move first: ${
      s.models
        .filter((m) => m.max_shift > 0)
        .map((m) => `${m.display_name} (${names.map((n) => m.ranks[n] ?? '-').join(' / ')})`)
        .join(', ') || 'none'
    }`,
    ...(s.left_out.length > 0
      ? [`Left out (no lenient scores on every source; score with --match): ${s.left_out.join(', ')}`]
      : []),
  ];
  if (format === 'md')
    return [
      `| ${header.join(' | ')} |`,
      `|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
      ...body.map((b) => `| ${b.map((c, j) => (j === 0 ? mdCell(c) : c)).join(' | ')} |`),
      '',
      ...notes.flatMap((n) => [n, '']),
    ].join('\n');
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cs: string[]) =>
    cs.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), '', ...notes].join(
    '\n',
  );
}
