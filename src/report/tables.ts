/**
 * Leaderboard rendering: a terminal table, Markdown, CSV (csv-stringify) and JSON.
 */
import { stringify } from 'csv-stringify/sync';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';

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

function cells(r: LeaderboardRow, rank: number): string[] {
  return [String(rank), r.display_name, ...COLUMNS.map(([k]) => fmt(r[k])), r.modalities.join('+')];
}

const HEADER = ['#', 'Model', ...COLUMNS.map(([, h]) => h), 'Sources'];

export function leaderboardTable(rows: LeaderboardRow[]): string {
  const body = rows.map((r, i) => cells(r, i + 1));
  const widths = HEADER.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cs: string[]) =>
    cs.map((c, i) => (i <= 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function leaderboardMarkdown(rows: LeaderboardRow[]): string {
  const out = [
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map((_, i) => (i <= 1 ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  rows.forEach((r, i) => {
    out.push(`| ${cells(r, i + 1).join(' | ')} |`);
  });
  return out.join('\n');
}

export function leaderboardCsv(rows: LeaderboardRow[]): string {
  return stringify(
    rows.map((r, i) => ({
      rank: i + 1,
      model: r.model,
      display_name: r.display_name,
      ...Object.fromEntries(COLUMNS.map(([k]) => [k, r[k] ?? ''])),
      overall_raw: r.overall_raw,
      modalities: r.modalities.join('+'),
    })),
    { header: true },
  );
}

export function leaderboardJson(rows: LeaderboardRow[]): string {
  return JSON.stringify(rows, null, 2);
}
