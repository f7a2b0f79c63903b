/**
 * CSV files a user brings (benchmark rows for `sob build records`, flat AMI transcripts), read
 * with csv-parse: RFC 4180 quoting, CRLF, LF or CR (mixed too; read as LF), a BOM dropped, empty lines skipped, stray quotes
 * inside a field kept as text. Each row carries the line it starts on, so a problem in a row
 * quoted over several lines is reported where the row is; an unclosed quote is one error naming
 * the file and the line.
 */
import { parse } from 'csv-parse/sync';
import { errorMessage, UserError } from '../src/core/errors.ts';

export interface CsvRow {
  /** The cells as written (rows may be shorter or longer than the header). */
  cells: string[];
  /** The 1-based line of the file the row starts on. */
  line: number;
}

interface Parsed {
  record: string[];
  raw: string;
  info: { lines: number };
}

/** The header and the rows of CSV text; `file` names it in errors. */
export function readCsv(text: string, file: string): { header: string[]; rows: CsvRow[] } {
  let parsed: Parsed[];
  try {
    // One line ending for the whole file (a file may mix them), so lines are counted once each.
    parsed = parse(text.replace(/\r\n?/g, '\n'), {
      bom: true,
      info: true,
      raw: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }) as unknown as Parsed[];
  } catch (e) {
    const { code, lines } = e as { code?: string; lines?: number };
    const why =
      code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted field is never closed (a `"` without its closing `"`)'
        : errorMessage(e).replace(/^[^:]*:\s*/, '');
    throw new UserError(`${file}${lines ? `:${lines}` : ''}: not valid CSV: ${why}`);
  }
  const rows = parsed.map((p) => ({
    cells: p.record,
    // info.lines is the line the row ends on; the raw text says how many line breaks it spans.
    line: p.info.lines - (p.raw.replace(/^\n+|\n+$/g, '').match(/\n/g)?.length ?? 0),
  }));
  const first = rows.shift();
  if (!first || first.cells.every((c) => c.trim() === ''))
    throw new UserError(`${file}: empty CSV (no header row)`);
  return { header: first.cells, rows };
}
