/**
 * The `format` checks of JSONSchemaBench's validator: Python `jsonschema` 4.26's `FormatChecker()`
 * as the paper's harness builds it (docs/compliance-protocols.md, "Formats").
 *
 * - `FormatChecker()` with no argument holds every format jsonschema registered at class level,
 *   one function per name: the newest draft's meaning, except `time`, whose draft-3 check
 *   (`datetime.strptime(value, "%H:%M:%S")`) is registered last and so replaces RFC 3339 `time`.
 * - The harness then registers its own `ipv4`, `ipv6` and `uuid` checks, functions that return
 *   None: `FormatChecker.check` fails every value whose check returns a falsy result, and the
 *   exception a bad value raises is not one the check catches, so under the paper's protocol no
 *   value of any type satisfies these three formats (valid addresses and UUIDs included).
 * - The formats that need `jsonschema[format]`'s optional packages (`hostname`, `idn-hostname`,
 *   `uri`, `uri-reference`, `iri`, `iri-reference`, `uri-template`, `duration`, `color`) are
 *   checked with close equivalents, not the packages' exact grammars (the docs list how).
 * - Every other format name is not checked (Python ignores formats it does not know: `url`,
 *   `int32`, `binary`, ...).
 *
 * Pure functions of a value; no ajv here (src/core/validator.ts plugs them into its `format`).
 */
import { createRequire } from 'node:module';
import { pythonRegexError } from './pyregex.ts';

const requireCjs = createRequire(import.meta.url);
type FormatDef = RegExp | ((s: string) => boolean);
let ajvFormats: Record<string, FormatDef> | undefined;
/** ajv-formats' full-mode checks, for the formats of the optional packages. */
function ajvFormat(name: string): (s: string) => boolean {
  ajvFormats ??= (requireCjs('ajv-formats/dist/formats') as { fullFormats: Record<string, FormatDef> })
    .fullFormats;
  const f = ajvFormats[name];
  if (f instanceof RegExp) return (s) => f.test(s);
  if (typeof f === 'function') return f;
  return () => true;
}

/** Python's `str.isdigit` for one decimal digit character (`\d` in a `str` pattern: Unicode Nd). */
const ND = /^\p{Nd}$/u;

/**
 * The value of a Unicode decimal digit, as Python's `int()` reads it: digits come in runs of
 * ten from 0, so it is the character's place in its run.
 */
function digitValue(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30;
  let back = 0;
  while (back < 9 && ND.test(String.fromCodePoint(cp - back - 1))) back++;
  return back % 10;
}

function daysInMonth(year: number, month: number): number {
  return [
    31,
    (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ][month - 1];
}

// `rfc3339_validator.validate_rfc3339` on `value.upper()`: `re.match` with a trailing `$`, which
// also matches before one final newline; compiled with `re.ASCII`, so `\d` is 0-9 only.
const RFC3339 =
  /^(\d{4})-(0[1-9]|1[0-2])-(\d{2})T(?:[01]\d|2[0123]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0123]):[0-5]\d)\n?$/;

export function isDateTime(s: string): boolean {
  const m = RFC3339.exec(s.toUpperCase());
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year === 0) return false;
  return day >= 1 && day <= daysInMonth(year, month);
}

/** `re.fullmatch(r"^\d{4}-\d{2}-\d{2}$", value, re.ASCII)` and `date.fromisoformat(value)`. */
export function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

// `datetime.strptime(value, "%H:%M:%S")`: `re.match` of `_strptime`'s pattern (alternatives in
// its order, Unicode digits), and the match must cover the whole value.
const STRPTIME_HMS = /(2[0-3]|[0-1]\p{Nd}|\p{Nd}):([0-5]\p{Nd}|\p{Nd}):(6[0-1]|[0-5]\p{Nd}|\p{Nd})/uy;

export function isDraft3Time(s: string): boolean {
  STRPTIME_HMS.lastIndex = 0;
  const m = STRPTIME_HMS.exec(s);
  return m !== null && m[0].length === s.length;
}

/** `jsonpointer.JsonPointer(value)`: '' or '/'-led, every `~` followed by 0 or 1. */
export function isJsonPointer(s: string): boolean {
  if (/~[^01]|~$/.test(s)) return false;
  return s === '' || s.startsWith('/');
}

/** jsonschema's `is_relative_json_pointer`, step by step. */
export function isRelativeJsonPointer(s: string): boolean {
  if (s === '') return false;
  const chars = [...s];
  let digits = 0;
  let rest = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (ND.test(ch)) {
      if (i > 0 && digitValue(chars[i - 1]) === 0) return false;
      digits++;
      continue;
    }
    if (digits === 0) return false;
    rest = chars.slice(i).join('');
    break;
  }
  return rest === '#' || isJsonPointer(rest);
}

/** `fqdn.FQDN(value, min_labels=1).is_valid`: labels of letters, digits and inner hyphens, 253 at most. */
export function isHostname(s: string): boolean {
  if (s === '') return false;
  const rel = s.endsWith('.') ? s.slice(0, -1) : s;
  if (rel.length === 0 || rel.length > 253) return false;
  return rel.split('.').every((l) => /^(?!-)[-A-Za-z0-9]{1,63}(?<!-)$/.test(l));
}

/** `idna.encode(value)`, approximately: labels of letters, marks, digits and inner hyphens. */
export function isIdnHostname(s: string): boolean {
  if (s === '' || s.length > 253) return false;
  const labels = (s.endsWith('.') ? s.slice(0, -1) : s).split('.');
  return labels.every(
    (l) =>
      l.length > 0 &&
      l.length <= 63 &&
      !l.startsWith('-') &&
      !l.endsWith('-') &&
      !(l.slice(2, 4) === '--' && !/^xn--/i.test(l)) &&
      /^[\p{L}\p{M}\p{Nd}-]+$/u.test(l),
  );
}

/** An IRI as the URI it maps to (non-ASCII characters percent-encoded, RFC 3987 section 3.1). */
function iriAsUri(s: string): string {
  return s.replace(/[^\x00-\x7f]+/gu, (m) => encodeURIComponent(m));
}

const CSS_HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** The format names the protocol checks, each with its check (a string value only, but see `ALWAYS_FAILS`). */
export const JSONSCHEMABENCH_FORMATS: Readonly<Record<string, (s: string) => boolean>> = {
  date: isDate,
  'date-time': isDateTime,
  time: isDraft3Time,
  email: (s) => s.includes('@'),
  'idn-email': (s) => s.includes('@'),
  regex: (s) => pythonRegexError(s) === null,
  'json-pointer': isJsonPointer,
  'relative-json-pointer': isRelativeJsonPointer,
  // jsonschema[format]'s optional packages (fqdn, idna, rfc3987, uri-template, isoduration,
  // webcolors): close equivalents.
  hostname: isHostname,
  'idn-hostname': isIdnHostname,
  uri: (s) => ajvFormat('uri')(s),
  'uri-reference': (s) => ajvFormat('uri-reference')(s),
  iri: (s) => ajvFormat('uri')(iriAsUri(s)),
  'iri-reference': (s) => ajvFormat('uri-reference')(iriAsUri(s)),
  'uri-template': (s) => ajvFormat('uri-template')(s),
  duration: (s) => ajvFormat('duration')(s) && /[DMYWHS]$/.test(s),
  // webcolors: a colour name (not checked against its list here) or a 3- or 6-digit hex code.
  color: (s) => CSS_HEX.test(s) || /^[A-Za-z]+$/.test(s),
};

/** The harness's own checks: they return None, so every value fails them, whatever its type. */
export const ALWAYS_FAILS: ReadonlySet<string> = new Set(['ipv4', 'ipv6', 'uuid']);

/** Whether `value` satisfies `format` under JSONSchemaBench's checker (unknown formats: yes). */
export function jsonschemabenchFormat(format: string, value: unknown): boolean {
  if (ALWAYS_FAILS.has(format)) return false;
  if (typeof value !== 'string') return true;
  const check = Object.hasOwn(JSONSCHEMABENCH_FORMATS, format) ? JSONSCHEMABENCH_FORMATS[format] : undefined;
  return check ? check(value) : true;
}

/**
 * The formats `check_schema` asserts on a schema (Draft 2020-12's own checker: the meta-schema
 * uses `regex`, `uri` and `uri-reference`).
 */
export function metaSchemaFormat(format: string, value: unknown): boolean {
  if (typeof value !== 'string') return true;
  if (format === 'regex') return pythonRegexError(value) === null;
  if (format === 'uri') return ajvFormat('uri')(value);
  if (format === 'uri-reference') return ajvFormat('uri-reference')(value);
  return true;
}
