/**
 * Lossless JSON, the way the SOB reference (Python's `json` module) sees it.
 *
 * docs/scoring.md "Numbers keep their lexeme": `1` is an int and `1.0` a float, and that shows in
 * Faithfulness and Perfect Response. So a value here is:
 *   null | boolean | string | number (a Python float) | bigint (a Python int)
 *   | PyValue[] | Map<string, PyValue> (a dict: insertion order, a repeated key keeps its
 *   first position and takes the last value, as Python's dict does).
 *
 * The parser is iterative (a 100,000-level answer does not overflow the stack) and, like
 * `json.loads`, accepts NaN, Infinity and -Infinity and rejects raw control characters in strings.
 */

export type PyValue = null | boolean | string | number | bigint | PyValue[] | PyObject;
export type PyObject = Map<string, PyValue>;

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const CONTROL_CHAR = /[\x00-\x1f]/;
/** Escape letters JSON allows after a backslash (`u` apart), by char code. */
const ESCAPE_OK = new Uint8Array(128);
for (const c of '"\\/bfnrt') ESCAPE_OK[c.charCodeAt(0)] = 1;
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * Whether a line has a control character or a backslash that starts no valid escape (escapes read
 * left to right, as in a string: `\\(` is an escaped backslash, then `(`); when not, its strings
 * need no check of their own (one scan of the line instead of one per string). A false alarm (a
 * tab between tokens) only sends the line down the per-string checks. One native scan for control
 * characters, then a look at each backslash: twice as fast on long lines as a regex trying both
 * at every character.
 */
function isSuspect(text: string): boolean {
  if (CONTROL_CHAR.test(text)) return true;
  for (let i = text.indexOf('\\'); i >= 0; i = text.indexOf('\\', i + 1)) {
    const c = text.charCodeAt(i + 1);
    if (c === 0x5c) {
      i++; // an escaped backslash: what follows it is a plain character
      continue;
    }
    if (c < 128 && ESCAPE_OK[c] === 1) continue;
    if (
      c === 0x75 &&
      isHex(text.charCodeAt(i + 2)) &&
      isHex(text.charCodeAt(i + 3)) &&
      isHex(text.charCodeAt(i + 4)) &&
      isHex(text.charCodeAt(i + 5))
    )
      continue;
    return true;
  }
  return false;
}
/** What JSON forbids inside a string: a bad escape or a raw control character. */
const BAD_STRING = /(?<!\\)(?:\\\\)*\\(?!["\\/bfnrt]|u[0-9a-fA-F]{4})|[\x00-\x1f]/;
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

type Frame = { kind: 'array'; value: PyValue[] } | { kind: 'object'; value: PyObject; key: string };

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Parses one JSON text into a PyValue. Throws JsonSyntaxError with the offending offset.
 *
 * `spans`, when given, receives the raw source text of the second-level values it names as
 * `block.key` (e.g. `input.json_schema`, `output.candidate_response`): a cache key for a schema
 * seen before, and a fast native `JSON.parse` of the plain form for ajv. A first-level value is
 * named by its key alone (`id`: a numeric id as written, `1.0` not `1`).
 */
export function parsePyJson(
  text: string,
  spans?: { keys: ReadonlySet<string>; out: Map<string, string>; skip?: ReadonlySet<string> },
  // (a skipped object or array comes back as null; its raw text is in `out` when its key is in `keys`)
): PyValue {
  const n = text.length;
  let pos = 0;
  const clean = !isSuspect(text);
  const stack: Frame[] = [];
  // Start offset of the value being read under a span key (depth 2), or -1.
  let spanStart = -1;
  let spanKey = '';
  let spanDepth = -1;
  // The next value is not built: a string is checked but not decoded (a context the caller never
  // reads); an object or array is only measured (its raw text is what the caller wants), and the
  // caller must check that text itself (see `skippedContainer`).
  let skipNext = false;

  const skipWs = () => {
    while (pos < n && isWs(text.charCodeAt(pos))) pos++;
  };
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at column ${pos + 1}`, pos);
  };

  const readString = (validateOnly = false): string => {
    // pos is at the opening quote.
    const start = pos + 1;
    let i = start;
    let hasEscape = false;
    for (;;) {
      const q = text.indexOf('"', i);
      if (q < 0) {
        pos = start - 1;
        return fail('Unterminated string');
      }
      // Count backslashes before the quote.
      let b = q - 1;
      while (b >= start && text.charCodeAt(b) === 0x5c) b--;
      const slashes = q - 1 - b;
      if (slashes > 0) hasEscape = true;
      if (slashes % 2 === 0) {
        pos = q + 1;
        if (validateOnly && clean) return '';
        const raw = text.slice(start, q);
        if (!hasEscape && raw.indexOf('\\') < 0) {
          if (!clean && CONTROL_CHAR.test(raw)) {
            pos = start;
            return fail('Invalid control character in string');
          }
          return raw;
        }
        if (validateOnly) {
          if (BAD_STRING.test(raw)) {
            pos = start;
            return fail('Invalid string escape or control character');
          }
          return '';
        }
        try {
          return JSON.parse(text.slice(start - 1, q + 1)) as string;
        } catch {
          pos = start;
          return fail('Invalid string escape or control character');
        }
      }
      i = q + 1;
    }
  };

  /**
   * Moves past a whole object or array without building it: brackets are counted, strings jumped
   * over (their escapes checked). Grammar inside is not checked here; the value comes back as
   * null and the caller validates the raw text (it parses it anyway when it is new).
   */
  const skipContainer = (): PyValue => {
    let depth = 0;
    for (;;) {
      if (pos >= n) return fail('Unterminated object or array');
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        readString(true);
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) {
          pos++;
          return null;
        }
      }
      pos++;
    }
  };

  const readScalarOrOpen = (): PyValue | Frame => {
    const c = text.charCodeAt(pos);
    const skip = skipNext;
    skipNext = false;
    switch (c) {
      case 0x22: // "
        return readString(skip);
      case 0x7b: // {
        if (skip) return skipContainer();
        pos++;
        return { kind: 'object', value: new Map(), key: '' };
      case 0x5b: // [
        if (skip) return skipContainer();
        pos++;
        return { kind: 'array', value: [] };
      case 0x74: // t
        if (text.startsWith('true', pos)) {
          pos += 4;
          return true;
        }
        break;
      case 0x66: // f
        if (text.startsWith('false', pos)) {
          pos += 5;
          return false;
        }
        break;
      case 0x6e: // n
        if (text.startsWith('null', pos)) {
          pos += 4;
          return null;
        }
        break;
      case 0x4e: // N
        if (text.startsWith('NaN', pos)) {
          pos += 3;
          return Number.NaN;
        }
        break;
      case 0x49: // I
        if (text.startsWith('Infinity', pos)) {
          pos += 8;
          return Number.POSITIVE_INFINITY;
        }
        break;
      default: {
        if (c === 0x2d && text.startsWith('-Infinity', pos)) {
          pos += 9;
          return Number.NEGATIVE_INFINITY;
        }
        NUMBER_RE.lastIndex = pos;
        const m = NUMBER_RE.exec(text);
        if (m) {
          pos += m[0].length;
          if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]);
          return Number(m[0]);
        }
      }
    }
    return fail('Expecting value');
  };

  const isFrame = (v: PyValue | Frame): v is Frame =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Map);

  /**
   * Reads `"key":` into an object frame; a first- or second-level key named in `spans` starts a span (its
   * value's raw text is kept) or marks the value to be skipped.
   */
  const readKey = (frame: Frame & { kind: 'object' }): void => {
    if (text.charCodeAt(pos) !== 0x22) fail('Expecting property name enclosed in double quotes');
    frame.key = readString();
    skipWs();
    if (text.charCodeAt(pos) !== 0x3a) fail("Expecting ':' delimiter");
    pos++;
    skipWs();
    if (spans && (stack.length === 2 || stack.length === 1)) {
      const name = stack.length === 1 ? frame.key : `${(stack[0] as { key: string }).key}.${frame.key}`;
      if (spans.skip?.has(name)) skipNext = true;
      if (spans.keys.has(name)) {
        spanStart = pos;
        spanKey = name;
        spanDepth = stack.length;
      }
    }
  };

  let result: PyValue | undefined;
  skipWs();
  if (pos >= n) fail('Expecting value');

  // `pending` is a value just completed that must be attached to the top frame.
  let next = readScalarOrOpen();
  for (;;) {
    if (isFrame(next)) {
      stack.push(next);
      skipWs();
      // Empty container?
      const c = text.charCodeAt(pos);
      if (next.kind === 'array' && c === 0x5d) {
        pos++;
        stack.pop();
        next = next.value;
        continue;
      }
      if (next.kind === 'object') {
        if (c === 0x7d) {
          pos++;
          stack.pop();
          next = next.value;
          continue;
        }
        readKey(next);
      }
      if (pos >= n) fail('Expecting value');
      next = readScalarOrOpen();
      continue;
    }
    // A complete value: attach it.
    const top = stack[stack.length - 1];
    if (top === undefined) {
      result = next;
      break;
    }
    if (spanStart >= 0 && stack.length === spanDepth) {
      spans!.out.set(spanKey, text.slice(spanStart, pos));
      spanStart = -1;
    }
    if (top.kind === 'array') top.value.push(next);
    else top.value.set(top.key, next);
    skipWs();
    const c = text.charCodeAt(pos);
    if (c === 0x2c) {
      pos++;
      skipWs();
      if (top.kind === 'object') readKey(top);
      if (pos >= n) fail('Expecting value');
      next = readScalarOrOpen();
      continue;
    }
    if (top.kind === 'array' && c === 0x5d) {
      pos++;
      stack.pop();
      next = top.value;
      continue;
    }
    if (top.kind === 'object' && c === 0x7d) {
      pos++;
      stack.pop();
      next = top.value;
      continue;
    }
    fail("Expecting ',' delimiter");
  }
  skipWs();
  if (pos < n) fail('Extra data');
  return result as PyValue;
}

// ---------------------------------------------------------------------------------------------
// Python's float repr and json.dumps

/** Python's repr(float): shortest round-trip digits, `.0` on integral values, exponent form when
 * the decimal exponent is < -4 or >= 16 (`1e-05`, `1e+16`). */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const neg = x < 0;
  const e = Math.abs(x).toExponential(); // shortest digits: "d.ddde+N"
  const ePos = e.indexOf('e');
  const digits = e.slice(0, ePos).replace('.', '');
  const exp = Number(e.slice(ePos + 1));
  let out: string;
  if (exp < -4 || exp >= 16) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ae = Math.abs(exp);
    out = `${mant}e${exp < 0 ? '-' : '+'}${ae < 10 ? `0${ae}` : ae}`;
  } else if (exp >= 0) {
    const intLen = exp + 1;
    if (digits.length <= intLen) out = `${digits}${'0'.repeat(intLen - digits.length)}.0`;
    else out = `${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
  } else {
    out = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return neg ? `-${out}` : out;
}

/** Python's str() of a JSON scalar, as the reference's tokenizer uses it. */
export function pyStr(value: PyValue): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return pyFloatRepr(value);
  return dumpsPy(value);
}

export interface DumpOptions {
  /** Python's `indent`; undefined means one line. */
  indent?: number;
  /** Python's ensure_ascii (default true, as json.dumps). */
  ensureAscii?: boolean;
  sortKeys?: boolean;
  /** [item separator, key separator]; defaults as json.dumps: [', ', ': '] or [',', ': '] with indent. */
  separators?: [string, string];
}

const ESC: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function hex4(c: number): string {
  return `\\u${c.toString(16).padStart(4, '0')}`;
}

const NEEDS_ESCAPE_ASCII = /["\\\x00-\x1f\u007f-\uffff]/;
const NEEDS_ESCAPE = /["\\\x00-\x1f]/;

/** json.dumps of a string (ensure_ascii escapes every non-ASCII code unit, lowercase hex). */
export function pyJsonString(s: string, ensureAscii = true): string {
  if (!(ensureAscii ? NEEDS_ESCAPE_ASCII : NEEDS_ESCAPE).test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    const e = ESC[ch];
    if (e !== undefined) out += e;
    else if (c < 0x20) out += hex4(c);
    else if (ensureAscii && c > 0x7e) out += c === 0x7f ? ch : hex4(c);
    else out += ch;
  }
  return `${out}"`;
}

/** Compares strings by code point, as Python sorts str. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // A surrogate unit stands for a code point above every BMP unit (0xE000-0xFFFF included).
      const kx = x >= 0xd800 && x <= 0xdfff ? x + 0x2000 : x >= 0xe000 ? x - 0x800 : x;
      const ky = y >= 0xd800 && y <= 0xdfff ? y + 0x2000 : y >= 0xe000 ? y - 0x800 : y;
      return kx - ky;
    }
  }
  return a.length - b.length;
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * Sorts strings by code point, in place, as Python's `sorted` does. Without surrogates (every
 * character in the Basic Multilingual Plane) code-unit order is code-point order, and the engine's
 * own string comparison sorts them (several times faster than `compareCodePoints` called per pair).
 */
export function sortCodePoints(xs: string[]): string[] {
  for (const x of xs) if (SURROGATE.test(x)) return xs.sort(compareCodePoints);
  return xs.sort();
}

type Dumpable = PyValue | { [k: string]: unknown } | readonly unknown[] | undefined;

/** json.dumps of a float (NaN and the infinities as Python writes them). */
export function floatJson(x: number): string {
  if (x === 0 && !Object.is(x, -0)) return '0.0';
  if (x === 1) return '1.0';
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  return pyFloatRepr(x);
}

/**
 * Python's json.dumps for PyValues and plain objects (a JS number is a float, a bigint an int).
 * Iterative over containers is not needed here: outputs we write are shallow; deep candidate
 * values never go through this function.
 */
export function dumpsPy(value: Dumpable, opts: DumpOptions = {}): string {
  const ensureAscii = opts.ensureAscii ?? true;
  const indent = opts.indent;
  const [itemSep, keySep] = opts.separators ?? (indent === undefined ? [', ', ': '] : [',', ': ']);
  const rec = (v: unknown, level: number): string => {
    if (v === null || v === undefined) return 'null';
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'string':
        return pyJsonString(v, ensureAscii);
      case 'bigint':
        return v.toString();
      case 'number':
        return floatJson(v);
      default:
        break;
    }
    let entries: [string, unknown][] | null = null;
    let items: unknown[] | null = null;
    if (Array.isArray(v)) items = v;
    else if (v instanceof Map) entries = [...(v as Map<string, unknown>).entries()];
    else entries = Object.entries(v as object);
    if (entries && opts.sortKeys) entries.sort((a, b) => compareCodePoints(a[0], b[0]));
    const parts = items
      ? items.map((x) => rec(x, level + 1))
      : entries!.map(([k, x]) => pyJsonString(k, ensureAscii) + keySep + rec(x, level + 1));
    const [open, close] = items ? ['[', ']'] : ['{', '}'];
    if (parts.length === 0) return open + close;
    if (indent === undefined) return open + parts.join(itemSep) + close;
    const pad = '\n' + ' '.repeat(indent * (level + 1));
    const endPad = '\n' + ' '.repeat(indent * level);
    return open + pad + parts.join(itemSep + pad) + endPad + close;
  };
  return rec(value, 0);
}

// ---------------------------------------------------------------------------------------------
// Conversions

export function isStructured(v: PyValue | undefined): v is PyObject | PyValue[] {
  return v instanceof Map || Array.isArray(v);
}

/**
 * A PyValue as a plain JSON-like JS value (for ajv and zod): Maps become objects, ints numbers.
 * Iterative, so depth does not matter. `__proto__` keys stay own data properties.
 */
export function toPlain(root: PyValue): unknown {
  const convertScalar = (v: PyValue): unknown => (typeof v === 'bigint' ? Number(v) : v);
  if (!isStructured(root)) return convertScalar(root);
  const makeShell = (v: PyObject | PyValue[]): unknown[] | Record<string, unknown> =>
    Array.isArray(v) ? new Array(v.length) : {};
  const rootOut = makeShell(root);
  const work: [PyObject | PyValue[], unknown[] | Record<string, unknown>][] = [[root, rootOut]];
  while (work.length > 0) {
    const [src, dst] = work.pop()!;
    if (Array.isArray(src)) {
      const arr = dst as unknown[];
      for (let i = 0; i < src.length; i++) {
        const c = src[i];
        if (isStructured(c)) {
          const shell = makeShell(c);
          arr[i] = shell;
          work.push([c, shell]);
        } else arr[i] = convertScalar(c);
      }
    } else {
      const obj = dst as Record<string, unknown>;
      for (const [k, c] of src) {
        let out: unknown;
        if (isStructured(c)) {
          out = makeShell(c);
          work.push([c, out as Record<string, unknown>]);
        } else out = convertScalar(c);
        if (k === '__proto__')
          Object.defineProperty(obj, k, { value: out, enumerable: true, writable: true, configurable: true });
        else obj[k] = out;
      }
    }
  }
  return rootOut;
}

/** Field access on a PyValue that may not be a dict (`record.get(key)`). */
export function getField(v: PyValue | undefined, key: string): PyValue | undefined {
  return v instanceof Map ? v.get(key) : undefined;
}
