/**
 * Which fields to trust, from the `fields.jsonl` of evaluation folders (docs/formats.md "fields.jsonl"): the
 * per-field table of the leaderboard and the report, the field flips of `sob compare`, and the
 * cells the field gates check. Files are streamed: memory grows with distinct fields, not rows.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  type FieldStat,
  FieldTally,
  FlipTally,
  fieldVerdict,
  leafKey,
  worstFirst,
} from '../../metrics/field-table.ts';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { UserError } from '../core/errors.ts';
import { FIELDS_FILE, type FieldRow, readFieldRow } from '../core/formats/field-row.ts';
import { readLines } from '../core/jsonl.ts';
import { MODALITIES } from '../core/record.ts';
import { mdCell, mdCode } from './cells.ts';
import { attachCorrectFields } from './usage.ts';

/** Each row of one `fields.jsonl` (a line that is not JSON stops with file and line). */
export async function* fieldRows(file: string): AsyncGenerator<FieldRow> {
  for await (const l of readLines(file)) {
    if (l.text.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch (e) {
      throw new UserError(`${file}:${l.line}: not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    const r = readFieldRow(v, `${file}:${l.line}`);
    if (r) yield r;
  }
}

/** The `fields.jsonl` files of an evaluation folder, by model folder name (`<source>/<model>` when a model has several sources). */
export function fieldFiles(evalDir: string): { model: string; source: string; file: string }[] {
  const out: { model: string; source: string; file: string }[] = [];
  for (const source of MODALITIES) {
    const sdir = join(evalDir, source);
    if (!isDir(sdir)) continue;
    for (const child of readdirSorted(sdir)) {
      if (child.startsWith('.')) continue;
      const file = join(sdir, child, FIELDS_FILE);
      if (existsSync(file)) out.push({ model: child, source, file });
    }
  }
  return out;
}

/**
 * The SOB model folders (`eval_records.jsonl` in them) of an evaluation folder, or the folders
 * given, that have no `fields.jsonl`: scored with `--no-fields`, or before the file existed.
 */
export function foldersWithoutFields(evalDirOrFolders: string | string[]): string[] {
  const folders =
    typeof evalDirOrFolders === 'string'
      ? MODALITIES.flatMap((source) => {
          const sdir = join(evalDirOrFolders, source);
          return isDir(sdir)
            ? readdirSorted(sdir)
                .filter((c) => !c.startsWith('.'))
                .map((c) => join(sdir, c))
            : [];
        })
      : evalDirOrFolders;
  return folders.filter(
    (d) => existsSync(join(d, 'eval_records.jsonl')) && !existsSync(join(d, FIELDS_FILE)),
  );
}

/** What is said of a folder without `fields.jsonl` where one is needed (`what`: for what). */
export function noFieldsLine(folder: string, what: string): string {
  return `${folder} has no ${FIELDS_FILE} (scored with --no-fields, or before ${FIELDS_FILE} existed): ${what}; score it again without --no-fields`;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readdirSorted(d: string): string[] {
  return readdirSync(d).sort();
}

/** The per-field table of an evaluation folder; null when no folder has a `fields.jsonl`. */
export async function fieldTable(evalDir: string): Promise<FieldTable | null> {
  return fieldTableOf(fieldFiles(evalDir));
}

export interface FieldTable {
  stats: FieldStat[];
  perSchema: boolean;
  models: string[];
  /** Per schema: schemas left out because one record alone has them. */
  singleRecordSchemas: number;
  /** Per model (all its sources): leaves with a verdict, and those answered right. */
  correct: Map<string, { right: number; n: number }>;
}

/** The per-field table of the given `fields.jsonl` files (each under its model's name); null: none. */
export async function fieldTableOf(files: { model: string; file: string }[]): Promise<FieldTable | null> {
  if (files.length === 0) return null;
  const tally = new FieldTally();
  for (const f of files) for await (const r of fieldRows(f.file)) tally.add(f.model, r);
  return {
    stats: tally.stats(),
    perSchema: tally.perSchema,
    models: [...new Set(files.map((f) => f.model))],
    singleRecordSchemas: tally.singleRecordSchemas,
    correct: tally.perModel,
  };
}

/** The `fields.jsonl` beside a model folder or its `eval_records.jsonl`; undefined when absent. */
export function fieldsFileOf(folderOrRows: string): string | undefined {
  const dir = folderOrRows.endsWith('.jsonl') ? dirname(folderOrRows) : folderOrRows;
  const f = join(dir, FIELDS_FILE);
  return existsSync(f) ? f : undefined;
}

/** Field flips of B against A (leaves both scored), or null when either has no `fields.jsonl`. */
export async function fieldFlips(a: string, b: string): Promise<ReturnType<FlipTally['flips']> | null> {
  const fa = fieldsFileOf(a);
  const fb = fieldsFileOf(b);
  if (!fa || !fb) return null;
  const verdicts = new Map<string, boolean | null>();
  for await (const r of fieldRows(fa)) verdicts.set(leafKey(r), fieldVerdict(r));
  const t = new FlipTally(verdicts);
  for await (const r of fieldRows(fb)) t.addB(r);
  return t.flips();
}

const pct = (x: number) => x.toFixed(3);

/** How many rows the Markdown and text tables show by default (the JSON has all). */
export const FIELD_ROWS_SHOWN = 25;

/** The per-field table as Markdown (worst `limit` first; 0: all). */
export function fieldTableMarkdown(
  t: { stats: FieldStat[]; perSchema: boolean },
  limit = FIELD_ROWS_SHOWN,
): string {
  const rows = limit > 0 ? t.stats.slice(0, limit) : t.stats;
  const head = [
    'Field',
    ...(t.perSchema ? ['Schema'] : []),
    'Model',
    'Accuracy [95% CI]',
    'n',
    'By',
    'Exact',
  ];
  const out = [
    '## Which fields to trust (worst first)',
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < (t.perSchema ? 3 : 2) ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  for (const s of rows)
    out.push(
      `| ${mdCode(s.field)} | ${t.perSchema ? `${mdCell(s.schema ?? '')} | ` : ''}${mdCell(s.model)} | ${pct(s.accuracy)} [${pct(s.ci95_low)}, ${pct(s.ci95_high)}] | ${s.n} | ${s.by} | ${pct(s.exact_accuracy)} |`,
    );
  if (rows.length < t.stats.length)
    out.push(
      '',
      `${rows.length} of ${t.stats.length} field rows shown (the worst); \`--format json\` has them all.`,
    );
  return out.join('\n');
}

/** The per-field table as plain text (the terminal's `--format table`). */
export function fieldTableText(
  t: { stats: FieldStat[]; perSchema: boolean },
  limit = FIELD_ROWS_SHOWN,
): string {
  const rows = limit > 0 ? t.stats.slice(0, limit) : t.stats;
  const head = [
    'field',
    ...(t.perSchema ? ['schema'] : []),
    'model',
    'accuracy',
    '95% CI',
    'n',
    'by',
    'exact',
  ];
  const body = rows.map((s) => [
    s.field,
    ...(t.perSchema ? [s.schema ?? ''] : []),
    s.model,
    pct(s.accuracy),
    `[${pct(s.ci95_low)}, ${pct(s.ci95_high)}]`,
    String(s.n),
    s.by,
    pct(s.exact_accuracy),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [
    'Which fields to trust (worst first)',
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
  ];
  if (rows.length < t.stats.length) out.push(`${rows.length} of ${t.stats.length} field rows shown`);
  return out.join('\n');
}

/** The field flips as text lines (most flips first; fields without a flip left out). */
export function fieldFlipsText(
  flips: NonNullable<Awaited<ReturnType<typeof fieldFlips>>>,
  a: string,
  b: string,
  limit = 25,
): string {
  const moved = flips.filter((f) => f.lost + f.gained > 0);
  const lost = moved.reduce((s, f) => s + f.lost, 0);
  const gained = moved.reduce((s, f) => s + f.gained, 0);
  const n = flips.reduce((s, f) => s + f.n, 0);
  const out = [
    `field flips (${n} leaves both scored): ${lost} right in ${basename(a)} and wrong in ${basename(b)}, ${gained} the reverse`,
  ];
  if (moved.length === 0) return out.join('\n');
  const head = ['field', 'n', `right in A, wrong in B`, 'wrong in A, right in B'];
  const body = moved.slice(0, limit).map((f) => [f.field, String(f.n), String(f.lost), String(f.gained)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  out.push(line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line));
  if (moved.length > limit)
    out.push(`${limit} of ${moved.length} fields with flips shown (--format json has them all)`);
  return out.join('\n');
}

/** Puts each model's cells on its leaderboard row (`fields`, worst first); the table, or null. */
export async function attachFields(rows: LeaderboardRow[], evalDir: string): Promise<FieldTable | null> {
  const t = await fieldTable(evalDir);
  attachCorrectFields(rows, t?.correct);
  if (!t) return null;
  for (const r of rows) {
    const mine = t.stats.filter((s) => s.model === r.model).map(({ model: _, ...rest }) => rest);
    if (mine.length > 0) r.fields = mine;
  }
  return t;
}

/** The table back from leaderboard rows (every row's cells, worst first), or null when none has any. */
export function fieldTableOfRows(rows: LeaderboardRow[]): { stats: FieldStat[]; perSchema: boolean } | null {
  const stats = rows.flatMap((r) => (r.fields ?? []).map((f) => ({ model: r.model, ...f })));
  if (stats.length === 0) return null;
  return { stats: stats.sort(worstFirst), perSchema: stats.some((s) => s.schema !== null) };
}
