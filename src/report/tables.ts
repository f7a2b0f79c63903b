/**
 * Leaderboard rendering: a terminal table, Markdown, CSV (csv-stringify) and JSON. Markdown and
 * CSV cells go through the one escaper (./cells.ts): a display name is shown as written, inert.
 */

import type { LeaderboardRow, SourceTotals } from '../../metrics/leaderboard.ts';
import type { SourceRow } from '../../metrics/ranks.ts';
import type { Usage } from '../../metrics/usage.ts';
import { leaderboardJsonText } from '../core/formats/leaderboard.ts';
import { MODALITIES } from '../core/record.ts';
import { csvTable, nameCell } from './cells.ts';
import { fieldTableMarkdown, fieldTableOfRows } from './fields.ts';
import {
  hasLenient,
  LENIENT_HEADER,
  lenientCells,
  lenientCsv,
  lenientFooter,
  sourceLenientCells,
  sourceLenientHeader,
} from './lenient.ts';

const COLUMNS: [keyof LeaderboardRow, string][] = [
  ['overall', 'Overall'],
  ['value_accuracy', 'Val.Acc.'],
  ['faithfulness', 'Faithful.'],
  ['json_pass', 'JSON Pass'],
  ['path_recall', 'Path Rec.'],
  ['structure_coverage', 'Str.Cov.'],
  ['type_safety', 'Type Saf.'],
  ['perfect', 'Perfect'],
  ['coverage', 'Coverage'],
];

function fmt(v: unknown, digits = 3): string {
  return typeof v === 'number' ? v.toFixed(digits) : '-';
}

// -- Cost and speed (eval_info of the answers), after the accuracy columns ---------------------

export const USAGE_CSV_KEYS = [
  'answers',
  'input_tokens',
  'output_tokens',
  'cost',
  'latency_ms_p50',
  'latency_ms_p95',
  'ttft_ms_p50',
  'ttft_ms_p95',
] as const;

export const USAGE_HEADER = ['Tok. in', 'Tok. out', 'Cost', 'Latency p50/p95 ms', 'TTFT p50/p95 ms'];

function hasUsage(rows: LeaderboardRow[]): boolean {
  return rows.some((r) => r.usage);
}

function money(v: number | null | undefined): string {
  return typeof v === 'number' ? `$${v.toFixed(v < 1 ? 4 : 2)}` : '-';
}

function ms(v: number | null | undefined): string {
  return typeof v === 'number' ? String(Math.round(v)) : '-';
}

function pair(p: { p50: number | null; p95: number | null } | undefined): string {
  return p && p.p50 !== null ? `${ms(p.p50)}/${ms(p.p95)}` : '-';
}

export function usageCellsOf(u: Usage | undefined): string[] {
  if (!u) return USAGE_HEADER.map(() => '-');
  const int = (v: number | null) => (v === null ? '-' : String(Math.round(v)));
  return [int(u.input_tokens), int(u.output_tokens), money(u.cost), pair(u.latency_ms), pair(u.ttft_ms)];
}

/** CSV columns of the usage (empty where not recorded). */
export function usageCsvOf(u: Usage | undefined): Record<(typeof USAGE_CSV_KEYS)[number], string | number> {
  const v = (x: number | null | undefined) => (typeof x === 'number' ? x : '');
  return {
    answers: v(u?.answers),
    input_tokens: v(u?.input_tokens),
    output_tokens: v(u?.output_tokens),
    cost: v(u?.cost),
    latency_ms_p50: v(u?.latency_ms.p50),
    latency_ms_p95: v(u?.latency_ms.p95),
    ttft_ms_p50: v(u?.ttft_ms.p50),
    ttft_ms_p95: v(u?.ttft_ms.p95),
  };
}

// -- Scorers of your own (`--scorer`): a column each, after the seven metrics ----------------

/** The custom score names over the rows, in first-seen order. */
export function customNames(rows: LeaderboardRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) for (const k of Object.keys(r.custom ?? {})) if (!out.includes(k)) out.push(k);
  return out;
}

/** A custom cell: the value, and its 95% interval when the model has that score on one source. */
function customCell(r: LeaderboardRow, name: string): string {
  const c = r.custom && Object.hasOwn(r.custom, name) ? r.custom[name] : undefined;
  if (!c) return '-';
  const per = Object.values(c.per_modality);
  const one = per.length === 1 ? per[0] : undefined;
  return one && one.ci95_low !== null && one.ci95_high !== null
    ? `${c.value.toFixed(3)} [${one.ci95_low.toFixed(3)}, ${one.ci95_high.toFixed(3)}]`
    : c.value.toFixed(3);
}

/** CSV: each custom name's value, then per source its mean and interval. */
function customCsv(r: LeaderboardRow, names: string[]): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const k of names) {
    const c = r.custom && Object.hasOwn(r.custom, k) ? r.custom[k] : undefined;
    out[k] = c ? c.value : '';
    for (const m of MODALITIES) {
      const p = c?.per_modality[m];
      out[`${k}_${m}`] = p ? p.mean : '';
      out[`${k}_${m}_ci95_low`] = p?.ci95_low ?? '';
      out[`${k}_${m}_ci95_high`] = p?.ci95_high ?? '';
    }
  }
  return out;
}

// -- Cost per unit (the value track): the mode, pages, cost per record, page and correct field ----

export const UNIT_CSV_KEYS = [
  'input_mode',
  'pages',
  'correct_fields',
  'cost_per_record',
  'cost_per_page',
  'cost_per_correct_field',
  'input_tokens_per_record',
  'input_tokens_per_page',
] as const;

export const UNIT_HEADER = [
  'Input',
  'Pages',
  'Cost/record',
  'Cost/page',
  'Cost/correct field',
  'Tok. in/page',
];

function hasUnits(rows: LeaderboardRow[]): boolean {
  return rows.some((r) => r.usage?.pages !== undefined);
}

/** Money per unit: enough digits for a fraction of a cent. */
function unitMoney(v: number | null | undefined): string {
  if (typeof v !== 'number') return '-';
  return v >= 1 ? `$${v.toFixed(2)}` : `$${v.toPrecision(3)}`;
}

export function unitCellsOf(u: Usage | undefined): string[] {
  if (!u || u.pages === undefined) return UNIT_HEADER.map(() => '-');
  const tok = u.input_tokens_per_page;
  return [
    u.input_mode ?? '-',
    String(u.pages),
    unitMoney(u.cost_per_record),
    unitMoney(u.cost_per_page),
    unitMoney(u.cost_per_correct_field),
    typeof tok === 'number' ? String(Math.round(tok)) : '-',
  ];
}

export function unitCsvOf(u: Usage | undefined): Record<(typeof UNIT_CSV_KEYS)[number], string | number> {
  const v = (x: number | string | null | undefined) =>
    typeof x === 'number' || typeof x === 'string' ? x : '';
  return Object.fromEntries(UNIT_CSV_KEYS.map((k) => [k, v(u?.[k])])) as Record<
    (typeof UNIT_CSV_KEYS)[number],
    string | number
  >;
}

/** Under the Markdown table: what the per-unit columns count. */
export const UNIT_NOTE =
  "Per unit: Input is the mode the answers were asked in (--input); Pages the pages their records' documents show (a PDF's pages, else its page images); cost per answered record, per page and per ground-truth leaf answered right (fields.jsonl); Tok. in/page: input tokens as the provider reported them, per page.";

function cells(
  r: LeaderboardRow,
  rank: number,
  ranks?: RankMap,
  lenient = false,
  usage = false,
  custom: string[] = [],
): string[] {
  const out = [
    String(rank),
    r.display_name,
    ...COLUMNS.map(([k]) => fmt(r[k])),
    ...custom.map((k) => customCell(r, k)),
    r.modalities.join('+'),
  ];
  if (ranks) out.push(rankText(ranks.get(r.model)));
  if (usage) out.push(...usageCellsOf(r.usage));
  // Exact and lenient side by side: the lenient columns follow Val.Acc.
  if (lenient) out.splice(4, 0, ...lenientCells(r));
  return out;
}

const HEADER = ['#', 'Model', ...COLUMNS.map(([, h]) => h), 'Sources'];
/** With per-source ranks (`--ranks`): how each model's Value Accuracy rank shifts between sources. */
const RANKS_HEADER = 'Ranks t/i/a';

function header(ranks?: RankMap, lenient = false, usage = false, custom: string[] = []): string[] {
  const out = ranks ? [...HEADER, RANKS_HEADER] : [...HEADER];
  out.splice(2 + COLUMNS.length, 0, ...custom);
  if (usage) out.push(...USAGE_HEADER);
  if (lenient) out.splice(4, 0, ...LENIENT_HEADER);
  return out;
}

/** The benchmark totals the rows were computed with (the same for every row). */
function totalsOf(rows: LeaderboardRow[]): Record<string, SourceTotals> | undefined {
  return rows[0]?.benchmark_totals;
}

/** `text 5000 records, W 13054 (sob); ...`: the coverage denominators, source weights and their origin. */
export function totalsText(t: Record<string, SourceTotals>): string {
  return MODALITIES.map((m) => `${m} ${t[m].records} records, W ${t[m].weight} (${t[m].origin})`).join('; ');
}

/** Profiles per source, `text=strict image=sob`, or one word when every source agrees. */
function profileText(r: LeaderboardRow): string {
  const q = r.data_quality ?? {};
  const ps = MODALITIES.filter((m) => q[m]).map((m) => [m, q[m]!.profile] as const);
  if (ps.length === 0) return '';
  return new Set(ps.map(([, p]) => p)).size === 1 ? ps[0][1] : ps.map(([m, p]) => `${m}=${p}`).join(' ');
}

/** One line when the rows were scored with different profiles, else none. */
export function mixedProfileNote(rows: LeaderboardRow[]): string | null {
  const all = new Set<string>();
  for (const r of rows) for (const q of Object.values(r.data_quality ?? {})) if (q) all.add(q.profile);
  if (all.size < 2) return null;
  return `Warning: these rows were scored with different profiles (${[...all].sort().join(', ')}): their numbers do not compare.`;
}

/** What the coverage gate does to Value Accuracy and Faithfulness (metrics/record.ts `coverageGate`). */
export const COVERAGE_GATE_NOTE =
  "Coverage gate: Value Accuracy and Faithfulness are multiplied by a gate on Structure Coverage (the F1 of the answer's and the ground truth's path sets): text scores 0 below 0.95 (a text record that lost one line item, 11 of its 14 leaves right, path-set F1 0.88, scores 0), image and audio (F1 / 0.90)^2 below 0.90.";

/** `Parsed after recovery: m1 text 2; ...`: answers recovered from a code fence or text around them. */
function recoveredText(rows: LeaderboardRow[]): string | null {
  const parts: string[] = [];
  for (const r of rows)
    for (const m of MODALITIES) {
      const n = r.data_quality?.[m]?.lenient_parse_count;
      if (n) parts.push(`${r.display_name || r.model} ${m} ${n}`);
    }
  if (parts.length === 0) return null;
  return `Parsed after recovery (a code fence or text around the JSON removed; scored, not parse failures): ${parts.join('; ')}.`;
}

/** Lines under a table: where the totals came from, and a mixed-profile warning. */
function footer(rows: LeaderboardRow[]): string[] {
  const t = totalsOf(rows);
  const out: string[] = [];
  if (t) out.push(`Benchmark totals (coverage denominators, source weights W): ${totalsText(t)}`);
  const mixed = mixedProfileNote(rows);
  if (mixed) out.push(mixed);
  out.push(...lenientFooter(rows));
  out.push(COVERAGE_GATE_NOTE);
  const recovered = recoveredText(rows);
  if (recovered) out.push(recovered);
  if (hasUsage(rows))
    out.push(
      "Tokens and cost: totals over each model's answers (cost where the provider priced them); latency and TTFT (time to first token, streamed answers only): 50th/95th percentiles in ms, cached answers left out.",
    );
  return out;
}

export function leaderboardTable(rows: LeaderboardRow[], ranks?: RankMap): string {
  const len = hasLenient(rows);
  const use = hasUsage(rows);
  const custom = customNames(rows);
  const HEADER = header(ranks, len, use, custom);
  const body = rows.map((r, i) => cells(r, i + 1, ranks, len, use, custom));
  const widths = HEADER.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cs: string[]) =>
    cs.map((c, i) => (i <= 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const foot = footer(rows);
  return [
    line(HEADER),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
    ...(foot.length > 0 ? ['', ...foot] : []),
  ].join('\n');
}

export function leaderboardMarkdown(rows: LeaderboardRow[], ranks?: RankMap): string {
  const len = hasLenient(rows);
  const use = hasUsage(rows);
  const custom = customNames(rows);
  const units = hasUnits(rows);
  const HEADER = [...header(ranks, len, use, custom), ...(units ? UNIT_HEADER : [])];
  const out = [
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map((_, i) => (i <= 1 ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  rows.forEach((r, i) => {
    out.push(
      `| ${[...cells(r, i + 1, ranks, len, use, custom), ...(units ? unitCellsOf(r.usage) : [])]
        .map(nameCell)
        .join(' | ')} |`,
    );
  });
  for (const f of footer(rows)) out.push('', f);
  if (units) out.push('', UNIT_NOTE);
  const fields = fieldTableOfRows(rows);
  if (fields) out.push('', fieldTableMarkdown(fields));
  return out.join('\n');
}

export function leaderboardCsv(rows: LeaderboardRow[], ranks?: RankMap): string {
  const custom = customNames(rows);
  return csvTable(
    rows.map((r, i) => ({
      rank: i + 1,
      model: r.model,
      display_name: r.display_name,
      // The input mode and prompt of the row, when rows differ in them (src/report/row-settings.ts).
      ...(rows.some((x) => x.input !== undefined) ? { input: r.input ?? '' } : {}),
      ...(rows.some((x) => x.prompt !== undefined) ? { prompt: r.prompt ?? '' } : {}),
      ...Object.fromEntries(COLUMNS.map(([k]) => [k, r[k] ?? ''])),
      ...customCsv(r, custom),
      overall_raw: r.overall_raw,
      modalities: r.modalities.join('+'),
      profile: profileText(r),
      benchmark_records: MODALITIES.reduce((n, m) => n + r.benchmark_totals[m].records, 0),
      benchmark_totals: totalsText(r.benchmark_totals),
      ...(ranks
        ? Object.fromEntries(MODALITIES.map((m) => [`rank_${m}`, ranks.get(r.model)?.[m] ?? '']))
        : {}),
      ...(hasLenient(rows) ? lenientCsv(r) : {}),
      ...(hasUsage(rows) ? usageCsvOf(r.usage) : {}),
      ...(hasUnits(rows) ? unitCsvOf(r.usage) : {}),
    })),
    true,
  );
}

/** `leaderboard.json` (and `--format json`): the rows, each stamped with the format's version. */
export function leaderboardJson(rows: LeaderboardRow[], ranks?: RankMap): string {
  return leaderboardJsonText(
    ranks ? rows.map((r, i) => ({ ...r, rank: i + 1, source_ranks: ranks.get(r.model) ?? {} })) : rows,
  );
}

// -- Per-source tables (the paper's Tables 4-6) ------------------------------------------------

/** The `--match` columns of a per-source row (src/report/lenient.ts shows them). */
const LENIENT_KEYS = new Set([
  'lenient_value_accuracy',
  'lenient_faithfulness',
  'field_f1',
  'value_accuracy_gap',
]);

/** The leaderboard's metric columns, without the overall score and the coverage. */
const SOURCE_COLUMNS: [string, string][] = COLUMNS.filter(([k]) => k !== 'overall' && k !== 'coverage');

function withCi(m: SourceRow['metrics'][string]): string {
  if (m.mean === null) return '-';
  return m.ci95_low === null || m.ci95_high === null
    ? m.mean.toFixed(3)
    : `${m.mean.toFixed(3)} [${m.ci95_low.toFixed(3)}, ${m.ci95_high.toFixed(3)}]`;
}

/** Rank shifts: the model's rank on each source, e.g. `t3 i12 a7`. */
export type RankMap = Map<string, Partial<Record<'text' | 'image' | 'audio', number>>>;

export function sourceTableText(
  rows: SourceRow[],
  ranks: RankMap,
  format: 'table' | 'md' | 'csv' | 'json',
): string {
  if (format === 'json')
    return JSON.stringify(
      rows.map((r) => ({ ...r, ranks: ranks.get(r.model) ?? {} })),
      null,
      2,
    );
  if (format === 'csv') {
    return csvTable(
      rows.map((r) => ({
        rank: r.rank,
        model: r.model,
        display_name: r.display_name,
        n: r.n,
        ...Object.fromEntries(
          SOURCE_COLUMNS.flatMap(([k]) => [
            [k, r.metrics[k].mean ?? ''],
            [`${k}_ci95_low`, r.metrics[k].ci95_low ?? ''],
            [`${k}_ci95_high`, r.metrics[k].ci95_high ?? ''],
          ]),
        ),
        ranks: rankText(ranks.get(r.model)),
        ...Object.fromEntries(
          Object.entries(r.metrics)
            .filter(([k]) => !SOURCE_COLUMNS.some(([c]) => c === k))
            .flatMap(([k, v]) => [
              [k, v.mean ?? ''],
              [`${k}_ci95_low`, v.ci95_low ?? ''],
              [`${k}_ci95_high`, v.ci95_high ?? ''],
            ]),
        ),
      })),
      true,
    );
  }
  const lenientCellsOf = sourceLenientCells(rows);
  const custom: string[] = [];
  for (const r of rows)
    for (const k of Object.keys(r.metrics))
      if (!custom.includes(k) && !SOURCE_COLUMNS.some(([c]) => c === k) && !LENIENT_KEYS.has(k))
        custom.push(k);
  const header = ['#', 'Model', 'n', ...SOURCE_COLUMNS.map(([, h]) => h), ...custom, 'Ranks t/i/a'];
  header.splice(4, 0, ...sourceLenientHeader(rows));
  const body = rows.map((r) => [
    String(r.rank),
    r.display_name,
    String(r.n),
    ...SOURCE_COLUMNS.map(([k], i) =>
      i < 3 ? withCi(r.metrics[k]) : (r.metrics[k].mean?.toFixed(3) ?? '-'),
    ),
    ...custom.map((k) => (Object.hasOwn(r.metrics, k) ? withCi(r.metrics[k]) : '-')),
    rankText(ranks.get(r.model)),
  ]);
  body.forEach((b, i) => {
    b.splice(4, 0, ...lenientCellsOf(rows[i]));
  });
  if (format === 'md') {
    return [
      `| ${header.join(' | ')} |`,
      `|${header.map((_, i) => (i === 1 ? ' --- ' : ' ---: ')).join('|')}|`,
      ...body.map((b) => `| ${b.map(nameCell).join(' | ')} |`),
    ].join('\n');
  }
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cs: string[]) =>
    cs.map((c, i) => (i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function rankText(r: Partial<Record<'text' | 'image' | 'audio', number>> | undefined): string {
  if (!r) return '-';
  return (['text', 'image', 'audio'] as const)
    .map((m) => (r[m] === undefined ? '-' : String(r[m])))
    .join('/');
}
