/**
 * The one escaper of what the Markdown and CSV writers put in a cell (leaderboard.md/.csv,
 * leaderboard-compliance.*, epochs.md, gate-summary.md, the per-source and sensitivity tables).
 * A display name, a model id or a field name comes from outside (display_names.json, a response
 * file's name, a schema) and lands in a pull-request comment or a spreadsheet, so a text cell is
 * made inert:
 *
 * - Markdown (`mdCell`): `|` would end the cell and a newline the row; `<`, `>` and `&` would be
 *   raw HTML in a rendered comment; `` ` ``, `*`, `_`, `[`, `]`, `~` and `\` would be emphasis,
 *   code or links. Each is escaped (HTML as entities, the rest with a backslash, a line break as
 *   a space), so a renderer shows the name as written, character for character. Only text cells are
 *   escaped (`nameCell`: the model column); the writer's own numbers are left as they are.
 * - CSV (`csvText`, used through `csvTable`): a text cell beginning with `=`, `+`, `-`, `@`, a tab
 *   or a carriage return is a formula to a spreadsheet (OWASP's CSV-injection rule): it gets a
 *   leading `'`. Numbers are written as numbers (-0.5 stays -0.5); only text cells are guarded.
 */
import { stringify } from 'csv-stringify/sync';

const MD_HTML: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;' };

/** A Markdown table cell showing `s` as written: no cell or row break, no HTML, no markup. */
export function mdCell(s: string): string {
  return (
    s
      .replace(/\r\n|[\r\n\u2028\u2029]/g, ' ')
      .replace(/[<>&]/g, (c) => MD_HTML[c])
      .replace(/[\\`*[\]|~]/g, (c) => `\\${c}`)
      // `_` inside a word (`baseline_gold`) is never emphasis; at a word's edge it is escaped.
      .replace(/_/g, (c, at: number, all: string) =>
        WORD.test(all[at - 1] ?? '') && WORD.test(all[at + 1] ?? '') ? c : '\\_',
      )
  );
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * A table row's cell: the model (display name) column, the second, through `mdCell`; the others
 * are the writer's own numbers and intervals (`0.750 [0.500, 0.900]`), kept as they are.
 */
export function nameCell(c: string, column: number): string {
  return column === 1 ? mdCell(c) : c;
}

/**
 * A Markdown table cell showing `s` as code (a field name): inside a code span nothing is markup
 * or HTML, so only a cell or row break is escaped; a name holding a backtick is an `mdCell`.
 */
export function mdCode(s: string): string {
  if (s === '' || s.includes('`')) return mdCell(s);
  return `\`${s.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ').replaceAll('|', '\\|')}\``;
}

/** A CSV text cell a spreadsheet reads as text: a leading formula character gets a `'` before it. */
export function csvText(s: string): string {
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}

/**
 * CSV text of `rows` (csv-stringify, quoting as RFC 4180 asks): every string cell through
 * `csvText`, numbers as numbers. `header`: the keys of the first row as a first line.
 */
export function csvTable(rows: Record<string, unknown>[] | unknown[][], header = false): string {
  return stringify(rows as Record<string, unknown>[], { header, cast: { string: csvText } });
}
