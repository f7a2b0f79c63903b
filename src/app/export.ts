/**
 * `sob export <eval-dir> --format parquet` (docs/formats.md "Parquet export"): an evaluation's
 * per-record rows (`eval_records.jsonl`) and field rows (`fields.jsonl`) of every
 * `<source>/<model>` folder, as two Parquet files for a warehouse (DuckDB, pandas, Spark):
 * `records.parquet` and `fields.parquet`, each row led by its `source` and `model` (the folder's
 * names).
 *
 * Types kept: a column whose values are all JSON integers is INT64, numbers DOUBLE, booleans
 * BOOLEAN, strings STRING; null is null in any of them; a nested value (a list, an object) or a
 * column of mixed kinds is its JSON text (STRING). In `fields.parquet`, `gold` and `answer` are
 * the leaves as JSON text, as `fields.jsonl` writes them (`"1.0"` stays a float's text).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { type PyValue, parsePyJson, toPlain } from '../core/pyjson.ts';

export interface ExportSettings {
  evalDir: string;
  format: 'parquet';
  /** Where the files go (default `<eval-dir>/export`). */
  out?: string;
  log?: (line: string) => void;
}

export interface ExportResult {
  records: { file: string; rows: number; columns: string[] };
  fields: { file: string; rows: number; columns: string[] };
  folders: string[];
}

/** The `<source>/<model>` folders of an evaluation (its `evaluation/`, or the folder itself). */
export function modelFolders(evalDir: string): { source: string; model: string; dir: string }[] {
  if (!existsSync(evalDir) || !statSync(evalDir).isDirectory())
    throw new UserError(`${evalDir}: no such folder (an evaluation folder of sob eval or sob score)`, 2);
  const root = existsSync(join(evalDir, 'evaluation')) ? join(evalDir, 'evaluation') : evalDir;
  const out: { source: string; model: string; dir: string }[] = [];
  for (const source of readdirSync(root).sort()) {
    const sd = join(root, source);
    if (!statSync(sd).isDirectory()) continue;
    for (const model of readdirSync(sd).sort()) {
      const dir = join(sd, model);
      if (statSync(dir).isDirectory() && existsSync(join(dir, 'eval_records.jsonl')))
        out.push({ source, model, dir });
    }
  }
  if (out.length === 0)
    throw new UserError(
      `${evalDir}: no <source>/<model>/eval_records.jsonl in it (an evaluation folder of sob eval or sob score)`,
      2,
    );
  return out;
}

type Kind = 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'STRING' | 'JSON';

function kindOf(v: PyValue): Kind | null {
  if (v === null) return null;
  if (typeof v === 'bigint') return 'INT64';
  if (typeof v === 'number') return 'DOUBLE';
  if (typeof v === 'boolean') return 'BOOLEAN';
  if (typeof v === 'string') return 'STRING';
  return 'JSON';
}

/** One table: columns in first-seen order, each with the kind its values agree on. */
class Table {
  readonly columns = new Map<string, { kind: Kind | null; values: (PyValue | undefined)[] }>();
  rows = 0;

  /** `hints`: the kind of a column whose values may all be null (fields.jsonl's `lenient` without --match). */
  constructor(private readonly hints: Record<string, Kind> = {}) {}

  add(row: Map<string, PyValue>): void {
    for (const [k, v] of row) {
      let c = this.columns.get(k);
      if (!c) {
        c = { kind: null, values: new Array(this.rows).fill(undefined) };
        this.columns.set(k, c);
      }
      const kind = kindOf(v);
      if (kind !== null) {
        if (c.kind === null) c.kind = kind;
        else if (c.kind !== kind)
          c.kind =
            (c.kind === 'INT64' && kind === 'DOUBLE') || (c.kind === 'DOUBLE' && kind === 'INT64')
              ? 'DOUBLE'
              : 'JSON';
      }
      c.values.push(v);
    }
    this.rows++;
    for (const c of this.columns.values()) if (c.values.length < this.rows) c.values.push(undefined);
  }

  /** hyparquet-writer's column data: typed values, null for a missing or null one. */
  columnData(): { name: string; data: unknown[]; type: 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'STRING' }[] {
    return [...this.columns].map(([name, c]) => {
      const kind = c.kind ?? this.hints[name] ?? 'STRING';
      const data = c.values.map((v) => {
        if (v === undefined || v === null) return null;
        switch (kind) {
          case 'INT64':
            return v as bigint;
          case 'DOUBLE':
            return Number(v);
          case 'BOOLEAN':
            return v;
          case 'STRING':
            return v as string;
          default:
            return JSON.stringify(toPlain(v));
        }
      });
      return { name, data, type: kind === 'JSON' ? 'STRING' : kind };
    });
  }
}

function readRows(file: string, each: (row: Map<string, PyValue>, line: number) => void): void {
  if (!existsSync(file)) return;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      let v: PyValue;
      try {
        v = parsePyJson(text);
      } catch (e) {
        throw new UserError(`${file}:${i + 1}: not JSON (${(e as Error).message})`, 2);
      }
      if (!(v instanceof Map)) throw new UserError(`${file}:${i + 1}: not a JSON object`, 2);
      each(v, i + 1);
    });
}

export async function exportEvaluation(s: ExportSettings): Promise<ExportResult> {
  const log = s.log ?? (() => {});
  if (s.format !== 'parquet') throw new UserError(`--format ${s.format}: only parquet is written`, 2);
  const folders = modelFolders(s.evalDir);
  const out = resolve(s.out ?? join(s.evalDir, 'export'));
  mkdirSync(out, { recursive: true });
  const records = new Table();
  const fields = new Table({ lenient: 'BOOLEAN', exact: 'BOOLEAN', format_version: 'INT64' });
  let withoutFields = 0;
  for (const f of folders) {
    const lead = (row: Map<string, PyValue>) =>
      new Map<string, PyValue>([['source', f.source], ['model', f.model], ...row]);
    readRows(join(f.dir, 'eval_records.jsonl'), (row) => records.add(lead(row)));
    if (!existsSync(join(f.dir, 'fields.jsonl'))) withoutFields++;
    readRows(join(f.dir, 'fields.jsonl'), (row) => {
      // The record id as text (an int id stays readable beside string ones).
      const id = row.get('record_id');
      if (id !== undefined && typeof id !== 'string') row.set('record_id', JSON.stringify(toPlain(id)));
      fields.add(lead(row));
    });
  }
  if (withoutFields > 0)
    log(
      `${withoutFields} of ${folders.length} folders have no fields.jsonl (scored with --no-fields, or before it existed): their fields are not exported`,
    );
  const { parquetWriteFile } = await import('hyparquet-writer');
  const write = (name: string, t: Table) => {
    const file = join(out, name);
    const columnData = t.columnData();
    if (t.rows === 0) {
      // hyparquet-writer needs a type per column: an empty table keeps the names as strings.
      for (const c of columnData) c.type = 'STRING';
    }
    parquetWriteFile({ filename: file, columnData: columnData as never, createdBy: 'sob-eval' });
    return { file, rows: t.rows, columns: columnData.map((c) => c.name) };
  };
  const res = {
    records: write('records.parquet', records),
    fields: write('fields.parquet', fields),
    folders: folders.map((f) => `${f.source}/${f.model}`),
  };
  return res;
}
