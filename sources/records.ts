/**
 * `sob build records <file>`: a user's own data as benchmark records (docs/records.md).
 *
 * The file is JSONL (one object a line), a JSON array, or CSV (a header row). A row is flat,
 * `{id, context, question, schema, ground_truth}` (also `record_id`, `json_schema`, and optionally
 * `source`, `schema_complexity`, `difficulty`; any other column goes into the metadata), or already
 * a record (`metadata`, `input`, `output`). `--map context=passage,ground_truth=answer` names the
 * user's column for each of our fields, as inspect_ai's FieldSpec does. `schema` and
 * `ground_truth` may be JSON text (a CSV cell always is). Every record then goes through the
 * build's checks like any other kind's.
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { type Attachment, mimeOfFile, storeAttachmentFile } from '../src/core/attachments.ts';
import { errorMessage, UserError } from '../src/core/errors.ts';
import type { PyValue } from '../src/core/pyjson.ts';
import { didYouMean } from '../src/core/record-checks.ts';
import { readCsv } from './csv.ts';
import {
  type RawRow,
  readSobFile,
  rowNumberText,
  sobRowLossless,
  sobRowToRecord,
  streamJsonlRows,
} from './sob-rows.ts';
import type { Attach, Candidate, Problem, RecordLoader } from './types.ts';

/** Our fields, each with the names it is also found under. */
export const RECORD_FIELDS: Record<string, readonly string[]> = {
  record_id: ['id', 'record_id'],
  context: ['context'],
  question: ['question'],
  json_schema: ['schema', 'json_schema'],
  ground_truth: ['ground_truth'],
  source: ['source'],
  schema_complexity: ['schema_complexity'],
  difficulty: ['difficulty'],
  attachments: ['attachments'],
};
const REQUIRED = ['record_id', 'context', 'question', 'json_schema', 'ground_truth'];

/** `--map context=passage,ground_truth=answer` as {our field: their column}; a usage error when malformed. */
export function parseFieldMap(spec: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!spec) return out;
  for (const part of spec.split(',')) {
    const m = /^\s*([^=\s]+)\s*=\s*(.+?)\s*$/.exec(part);
    if (!m) throw new UserError(`--map: "${part}" is not field=column (e.g. --map context=passage)`, 2);
    const field = canonicalField(m[1]);
    if (!field) {
      const hint = didYouMean(m[1], Object.values(RECORD_FIELDS).flat());
      throw new UserError(
        `--map: unknown field "${m[1]}"${hint ? `; did you mean "${hint}"?` : ''} (fields: id, context, question, schema, ground_truth, source, schema_complexity, difficulty, attachments)`,
        2,
      );
    }
    out[field] = m[2];
  }
  return out;
}

function canonicalField(name: string): string | undefined {
  return Object.keys(RECORD_FIELDS).find((f) => RECORD_FIELDS[f].includes(name));
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A flat row under our field names (the mapped columns renamed, aliases resolved). */
function renameRow(
  row: Record<string, unknown>,
  map: Record<string, string>,
): { flat: Record<string, unknown>; from: Map<string, string> } {
  const flat: Record<string, unknown> = {};
  const from = new Map<string, string>(); // our field -> the column it came from
  const taken = new Set<string>();
  for (const field of Object.keys(RECORD_FIELDS)) {
    const names = map[field] !== undefined ? [map[field]] : RECORD_FIELDS[field];
    const col = names.find((n) => n in row);
    if (col === undefined) continue;
    flat[field] = row[col];
    from.set(field, col);
    taken.add(col);
  }
  // Every other column is kept in the metadata (a category, a note): nothing is dropped.
  for (const [k, v] of Object.entries(row)) if (!taken.has(k) && !(k in flat)) flat[k] = v;
  return { flat, from };
}

/** What a missing required field most likely is: a column one or two edits from its name. */
function missingReasons(flat: Record<string, unknown>, map: Record<string, string>): string[] {
  const out: string[] = [];
  const spare = Object.keys(flat).filter((k) => !(k in RECORD_FIELDS));
  for (const field of REQUIRED) {
    const v = flat[field];
    if (v !== undefined && v !== '') continue;
    const names = map[field] !== undefined ? [map[field]] : RECORD_FIELDS[field];
    const near = spare.find((c) => names.some((n) => didYouMean(c, [n]) !== undefined));
    out.push(
      near
        ? `unknown column \`${near}\`; did you mean \`${names[0]}\`? (or --map ${field === 'record_id' ? 'id' : field === 'json_schema' ? 'schema' : field}=${near})`
        : `no \`${names.join('` or `')}\` value${map[field] ? ` (--map ${field}=${map[field]})` : ''}`,
    );
  }
  return out;
}

/** The rows of a CSV file as objects keyed by its header (empty cells left out). */
function readCsvRows(file: string): RawRow[] {
  const { header, rows } = readCsv(readFileSync(file, 'utf8'), file);
  return rows.map(({ cells, line }) => {
    const row: Record<string, unknown> = {};
    header.forEach((h, j) => {
      if ((cells[j] ?? '') !== '') row[h.trim()] = cells[j];
    });
    return { origin: `${file}:${line}`, row };
  });
}

/** A row read losslessly, renamed the same way (so `1.0` in a ground truth stays `1.0`). */
function renameLossless(lossless: PyValue | undefined, from: Map<string, string>): PyValue | undefined {
  if (!(lossless instanceof Map)) return undefined;
  const out = new Map<string, PyValue>();
  for (const [field, col] of from) {
    const v = lossless.get(col);
    if (v !== undefined) out.set(field, v);
  }
  return out;
}

/** The extensions an attachment file may have (its kind and MIME type are read from it). */
const ATTACHMENT_EXTENSIONS = 'png, jpg, jpeg, webp, gif (image), pdf, wav, mp3, flac, m4a, ogg (audio)';

/**
 * A row's attachments cell as file names: a list (a JSON row's array, or a cell holding a JSON
 * array of strings) or one text of names separated by `;`. A reason when it is neither.
 */
export function attachmentNames(cell: unknown): string[] | { bad: string } {
  let v = cell;
  if (typeof v === 'string' && v.trim().startsWith('[')) {
    try {
      v = JSON.parse(v);
    } catch (e) {
      return {
        bad: `attachments: a cell starting with [ must be a JSON list of file names (${e instanceof Error ? e.message : e})`,
      };
    }
  }
  if (typeof v === 'string')
    return v
      .split(';')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
    return v.map((x) => x.trim()).filter((x) => x !== '');
  return { bad: 'attachments: expected file names (a JSON list of strings, or names separated by ;)' };
}

/**
 * The files a row names, checked now (each there and of a known kind, paths relative to the
 * rows file), and the function that stores them into the benchmark folder once the record has
 * passed; or the reasons the row is rejected, each naming the path.
 */
function rowAttachments(cell: unknown, baseDir: string): { attach?: Attach } | { reasons: string[] } {
  const names = attachmentNames(cell);
  if ('bad' in names) return { reasons: [names.bad] };
  const files: { name: string; path: string; kind: Attachment['kind']; mime: string }[] = [];
  const reasons: string[] = [];
  for (const name of names) {
    const path = resolve(baseDir, name);
    const type = mimeOfFile(name);
    if (!type) {
      reasons.push(
        `attachment ${JSON.stringify(name)}: not a kind of file a record carries (by its extension: ${ATTACHMENT_EXTENSIONS})`,
      );
      continue;
    }
    let isFile = false;
    try {
      isFile = statSync(path).isFile();
    } catch {}
    if (!isFile) {
      reasons.push(`attachment ${JSON.stringify(name)}: no such file ${path}`);
      continue;
    }
    files.push({ name, path, ...type });
  }
  if (reasons.length > 0) return { reasons };
  if (files.length === 0) return {};
  return {
    attach: async (dir) => {
      const out: Attachment[] = [];
      for (const f of files) {
        let pages: number[] | undefined;
        if (f.kind === 'pdf') {
          // Its pages (cost per page, the provider's page limits): all of them.
          const { PDFDocument } = await import('pdf-lib');
          try {
            const doc = await PDFDocument.load(readFileSync(f.path), {
              ignoreEncryption: true,
              updateMetadata: false,
            });
            pages = Array.from({ length: doc.getPageCount() }, (_, i) => i + 1);
          } catch (e) {
            throw new Error(
              `attachment ${JSON.stringify(f.name)}: ${f.path} is not a PDF that can be read (${errorMessage(e).split('\n')[0]})`,
            );
          }
        }
        out.push(await storeAttachmentFile(dir, f.path, f.kind, f.mime, pages));
      }
      return out;
    },
  };
}

export function recordCandidates(
  rows: RawRow[],
  map: Record<string, string>,
  defaultSource: string,
  /** The folder attachment paths are relative to (the rows file's). */
  baseDir = '.',
): { candidates: Candidate[]; problems: Problem[] } {
  const candidates: Candidate[] = [];
  const problems: Problem[] = [];
  for (const raw of rows) {
    const { origin, row } = raw;
    const parseError = (row as { __parseError?: string } | null)?.__parseError;
    if (parseError) {
      problems.push({ origin, reasons: [`not valid JSON: ${parseError}`] });
      continue;
    }
    if (!isObj(row)) {
      problems.push({ origin, reasons: ['a row must be an object'] });
      continue;
    }
    const nested = 'input' in row || 'output' in row || 'metadata' in row;
    let flatRow = row;
    let lossless = raw.lossless;
    if (!nested) {
      const { flat, from } = renameRow(row, map);
      // A numeric id as written (not through a double): 12345678901234567891 stays itself.
      const idCol = from.get('record_id');
      if (idCol !== undefined && typeof flat.record_id === 'number')
        flat.record_id = rowNumberText(raw, idCol) ?? String(flat.record_id);
      const missing = missingReasons(flat, map);
      const id =
        typeof flat.record_id === 'string' || typeof flat.record_id === 'number'
          ? String(flat.record_id)
          : undefined;
      if (missing.length > 0) {
        problems.push({ origin, record_id: id, reasons: missing, record: row });
        continue;
      }
      flat.source ??= defaultSource;
      flatRow = flat;
      lossless = renameLossless(raw.lossless, from);
    }
    let attach: Attach | undefined;
    if (!nested && flatRow.attachments !== undefined) {
      const cell = flatRow.attachments;
      const { attachments: _, ...rest } = flatRow;
      flatRow = rest;
      const got = rowAttachments(cell, baseDir);
      if ('reasons' in got) {
        const id = flatRow.record_id;
        problems.push({
          origin,
          record_id: id === undefined ? undefined : String(id),
          reasons: got.reasons,
          record: row,
        });
        continue;
      }
      attach = got.attach;
    }
    try {
      const record = sobRowToRecord(flatRow, undefined, (key) => rowNumberText(raw, key));
      const md = record.metadata as Record<string, unknown>;
      md.source ??= defaultSource;
      if (!nested)
        for (const [k, v] of Object.entries(flatRow))
          if (!(k in RECORD_FIELDS) && !(k in md) && v !== undefined) md[k] = v;
      candidates.push({
        origin,
        record,
        lossless: sobRowLossless({ origin, row: flatRow, lossless }),
        ...(attach ? { attach } : {}),
      });
    } catch (e) {
      problems.push({ origin, reasons: [e instanceof Error ? e.message : String(e)], record: row });
    }
  }
  return { candidates, problems };
}

/**
 * A `--map` naming a column that no row has is the user's typo, not every row's fault: one usage
 * line (exit 2) naming the nearest column, before any row is read into a record.
 */
function checkMappedColumns(file: string, rows: Iterable<RawRow>, map: Record<string, string>): void {
  const columns = new Set<string>();
  let any = false;
  for (const { row } of rows) {
    any = true;
    if (row !== null && typeof row === 'object') for (const k of Object.keys(row)) columns.add(k);
  }
  if (!any) return;
  for (const [field, col] of Object.entries(map)) {
    if (columns.has(col)) continue;
    const near = didYouMean(col, [...columns]);
    throw new UserError(
      `--map ${field}=${col}: no column \`${col}\` in ${file}${near ? `; did you mean \`${near}\`?` : ''} (columns: ${[...columns].join(', ')})`,
      2,
    );
  }
}

/** The columns of a JSONL file's rows, read as a stream (for `checkMappedColumns`). */
async function jsonlColumns(file: string, maxRows?: number): Promise<RawRow[]> {
  const columns = new Set<string>();
  let n = 0;
  for await (const { row } of streamJsonlRows(file)) {
    if (maxRows !== undefined && ++n > maxRows) break;
    if (row !== null && typeof row === 'object' && !('__parseError' in row))
      for (const k of Object.keys(row)) columns.add(k);
  }
  return columns.size === 0
    ? []
    : [{ origin: file, row: Object.fromEntries([...columns].map((c) => [c, 1])) }];
}

/** `recordCandidates` one JSONL row at a time. */
async function* streamRecordCandidates(
  input: string,
  map: Record<string, string>,
  source: string,
  log: (line: string) => void,
): AsyncGenerator<{ candidate: Candidate } | { problem: Problem }> {
  // The column checks need every row's columns: a streamed pass of their own (the first 10,000
  // rows for the required fields when no --map is given: enough to tell rows under other names).
  const mapped = Object.keys(map).length > 0;
  const columns = await jsonlColumns(input, mapped ? undefined : 10_000);
  if (mapped) checkMappedColumns(input, columns, map);
  checkRequiredColumns(input, columns, map);
  let n = 0;
  for await (const raw of streamJsonlRows(input)) {
    n++;
    const { candidates, problems } = recordCandidates([raw], map, source, dirname(input));
    for (const problem of problems) yield { problem };
    for (const candidate of candidates) yield { candidate };
  }
  log(
    `read ${n} rows from ${input}${
      Object.keys(map).length
        ? ` (mapped: ${Object.entries(map)
            .map(([f, c]) => `${f}=${c}`)
            .join(', ')})`
        : ''
    }; a row without a source is ${source}`,
  );
}

/** A required field's name as a user writes it (and as `--map` takes it). */
function userName(field: string): string {
  return field === 'record_id' ? 'id' : field === 'json_schema' ? 'schema' : field;
}

/**
 * Rows under other column names (`doc_id`, `passage`, ...): when no row has any name a required
 * field is found under, every row would be rejected for the same reason. One usage line instead
 * (exit 2), naming the columns there are and the `--map` that would read them, with a guess per
 * field where a column's name holds the field's (`doc_id` for `id`).
 */
export function checkRequiredColumns(file: string, rows: RawRow[], map: Record<string, string>): void {
  const columns: string[] = [];
  for (const { row } of rows) {
    if (!isObj(row) || (row as { __parseError?: string }).__parseError) continue;
    // A nested record among the rows carries its own fields: nothing to guess.
    if ('input' in row || 'output' in row || 'metadata' in row) return;
    for (const k of Object.keys(row)) if (!columns.includes(k)) columns.push(k);
  }
  if (columns.length === 0) return;
  const known = new Set(Object.values(RECORD_FIELDS).flat());
  const missing = REQUIRED.filter(
    (f) => map[f] === undefined && !RECORD_FIELDS[f].some((n) => columns.includes(n)),
  );
  if (missing.length === 0) return;
  const spare = columns.filter((c) => !known.has(c) && !Object.values(map).includes(c));
  // A misspelt column (`ground_truht`) is each row's did-you-mean, naming file and line.
  if (missing.every((f) => spare.some((c) => RECORD_FIELDS[f].some((n) => didYouMean(c, [n]) !== undefined))))
    return;
  const taken = new Set<string>();
  const lower = (c: string) => c.toLowerCase();
  const guessed = missing.map((f) => {
    const names = RECORD_FIELDS[f];
    const guess =
      spare.find((c) => !taken.has(c) && names.some((n) => lower(c) === n)) ??
      spare.find((c) => !taken.has(c) && names.some((n) => lower(c).includes(n))) ??
      spare.find((c) => !taken.has(c) && didYouMean(c, names) !== undefined);
    if (guess) taken.add(guess);
    return guess;
  });
  // As many columns left as fields: read in order (rows are mostly written id, context, ...).
  const rest = spare.filter((c) => !taken.has(c));
  const open = guessed.filter((g) => g === undefined).length;
  let next = 0;
  const guesses = missing.map((f, i) => {
    const guess = guessed[i] ?? (rest.length === open ? rest[next++] : undefined);
    return `${userName(f)}=${guess ?? '<column>'}`;
  });
  const shown = columns.length > 8 ? [...columns.slice(0, 8), '...'] : columns;
  throw new UserError(
    `${file}: none of your columns (${shown.join(', ')}) is ${missing.map((f) => `\`${userName(f)}\``).join(', ')}; use --map ${guesses.join(',')}`,
    2,
  );
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'records',
  loadRecords: async (input, ctx) => {
    if (input === undefined) throw new UserError('records needs an <input>: a JSONL, JSON or CSV file', 2);
    const ext = extname(input).toLowerCase();
    const map = ctx.options.map ?? {};
    const source = ctx.options.source ?? 'text';
    // JSON lines are read as a stream, a row at a time: the build never holds them all.
    if (ext !== '.csv' && ext !== '.json' && ext !== '.parquet')
      return { candidates: [], problems: [], stream: streamRecordCandidates(input, map, source, ctx.log) };
    const rows = ext === '.csv' ? readCsvRows(input) : await readSobFile(input);
    checkMappedColumns(input, rows, map);
    checkRequiredColumns(input, rows, map);
    const out = recordCandidates(rows, map, source, dirname(input));
    ctx.log(
      `read ${rows.length} rows from ${input}${
        Object.keys(map).length
          ? ` (mapped: ${Object.entries(map)
              .map(([f, c]) => `${f}=${c}`)
              .join(', ')})`
          : ''
      }; a row without a source is ${source}`,
    );
    return out;
  },
};
