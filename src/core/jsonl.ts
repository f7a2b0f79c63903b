/**
 * Streaming JSONL: one line at a time, never the whole file. A line is reported with its
 * 1-based number so a bad one can be named as `file:line`.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, createReadStream, existsSync, openSync, readSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { UserError } from './errors.ts';
import { JsonSyntaxError, type PyValue, parsePyJson } from './pyjson.ts';

export interface JsonlLine {
  /** 1-based line number in the file. */
  line: number;
  text: string;
}

export type ParsedLine =
  | { line: number; ok: true; value: PyValue; spans?: Map<string, string>; text?: string }
  | { line: number; ok: false; error: string };

/** Python's str.strip(): its whitespace includes \x1c-\x1f and \x85 (not \ufeff). */
const PY_WS = /[\s\x1c-\x1f\x85]/;
function isPyWs(ch: string): boolean {
  return ch !== '\ufeff' && PY_WS.test(ch);
}
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPyWs(s[a])) a++;
  while (b > a && isPyWs(s[b - 1])) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

export function assertReadableFile(file: string): void {
  if (!existsSync(file)) throw new UserError(`no such file: ${file}`);
  if (!statSync(file).isFile()) throw new UserError(`not a file: ${file}`);
}

/** Yields the non-blank lines of a file, stripped as Python's `line.strip()` would. */
export async function* readLines(file: string, startLine = 1): AsyncGenerator<JsonlLine> {
  assertReadableFile(file);
  const rl = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const raw of rl) {
    n++;
    if (n < startLine) continue;
    let text = n === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    text = pyStrip(text);
    if (text.length === 0) continue;
    yield { line: n, text: ownString(text) };
  }
}

/**
 * `s` as a string of its own. A line from a stream is a slice of the 64 KB chunk it was read in,
 * and every value parsed out of it a slice of that chunk again: a report that keeps one id or
 * context of each of 300,000 lines kept every chunk of the file (150 MB for 7,500 records). The
 * copy costs one pass over the line, which its parse makes anyway. Short strings (V8 copies them
 * below 13 characters) are returned as they are.
 */
export function ownString(s: string): string {
  return s.length < 13 ? s : ` ${s}`.slice(1);
}

/**
 * The same lines as `readLines`, read synchronously in 1 MB chunks (no per-line promise: the
 * scorer's hot loop). Lines end at `\n`, `\r\n` or a lone `\r`, as Python's universal newlines.
 */
export function* readLinesSync(file: string, startLine = 1): Generator<JsonlLine> {
  assertReadableFile(file);
  const fd = openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 16);
  const decoder = new Utf8Chunks();
  let pending = '';
  let n = 0;
  // A chunk ended with \r: a \n starting the next chunk belongs to it.
  let sawCr = false;
  try {
    for (;;) {
      const got = readSync(fd, buf, decoder.carried, buf.length - decoder.carried, null);
      const chunk = got > 0 ? decoder.decode(buf, got) : decoder.end(buf);
      let start = 0;
      if (sawCr && chunk.charCodeAt(0) === 0x0a) start = 1;
      sawCr = false;
      // Native searches for the next \n and \r (a lone \r is rare: usually -1 for the chunk).
      let nl = chunk.indexOf('\n', start);
      let cr = chunk.indexOf('\r', start);
      while (nl >= 0 || cr >= 0) {
        const i = cr < 0 || (nl >= 0 && nl < cr) ? nl : cr;
        const raw = pending + chunk.slice(start, i);
        pending = '';
        n++;
        if (n >= startLine) {
          const text = pyStrip(n === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw);
          if (text.length > 0) yield { line: n, text };
        }
        let next = i + 1;
        if (i === cr) {
          if (next < chunk.length) {
            if (chunk.charCodeAt(next) === 0x0a) next++;
          } else sawCr = true;
        }
        start = next;
        if (nl >= 0 && nl < start) nl = chunk.indexOf('\n', start);
        if (cr >= 0 && cr < start) cr = chunk.indexOf('\r', start);
      }
      pending += chunk.slice(start);
      if (got <= 0) break;
    }
    if (pending.length > 0) {
      n++;
      if (n >= startLine) {
        const text = pyStrip(n === 1 && pending.charCodeAt(0) === 0xfeff ? pending.slice(1) : pending);
        if (text.length > 0) yield { line: n, text };
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * UTF-8 text of a file read in chunks into one buffer, as `TextDecoder`'s streaming mode gives it
 * (a leading byte order mark dropped, a sequence cut by the chunk's end completed by the next
 * chunk, invalid bytes replaced by U+FFFD), several times faster on valid text: a chunk that is
 * valid UTF-8 up to its last whole character is decoded natively (`Buffer#toString`, ~7x the
 * streaming `TextDecoder` on 64 KB chunks); only a chunk with invalid bytes goes through
 * `TextDecoder`. The bytes of a cut sequence are moved to the buffer's start and `carried`: the
 * next read goes after them.
 */
class Utf8Chunks {
  /** Bytes at the buffer's start left from the last chunk (an incomplete sequence, at most 3). */
  carried = 0;
  private first = true;
  private readonly fallback = new TextDecoder('utf-8');

  /** The text of `buf[0 .. carried + got)`, but for a sequence its end cuts (carried over). */
  decode(buf: Buffer, got: number): string {
    let start = 0;
    const len = this.carried + got;
    if (this.first) {
      this.first = false;
      if (len >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
    }
    const end = len - incompleteTail(buf, start, len);
    const text = this.text(buf, start, end);
    // The cut sequence's bytes to the front, for the next read to follow.
    buf.copy(buf, 0, end, len);
    this.carried = len - end;
    return text;
  }

  /** The text of what is left at the end of the file (a cut sequence: replaced, as at its end). */
  end(buf: Buffer): string {
    const text = this.carried > 0 ? this.fallback.decode(buf.subarray(0, this.carried)) : '';
    this.carried = 0;
    return text;
  }

  private text(buf: Buffer, start: number, end: number): string {
    const body = buf.subarray(start, end);
    return isUtf8(body) ? body.toString('utf8') : this.fallback.decode(body);
  }
}

/**
 * How many bytes at the end of `buf[start .. end)` begin a UTF-8 sequence that is not complete
 * there (0 when the text ends on a whole character, or on bytes no more bytes could complete).
 */
function incompleteTail(buf: Buffer, start: number, end: number): number {
  // The last lead byte among the last four bytes, and how long its sequence is.
  for (let i = end - 1; i >= start && i >= end - 4; i--) {
    const b = buf[i];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return end - i < need ? end - i : 0;
  }
  return 0;
}

/**
 * Parses one JSONL line losslessly; a syntax error is returned, not thrown. With `spanKeys`,
 * the raw text of those second-level values comes back too (see parsePyJson).
 */
export function parseLine(
  l: JsonlLine,
  spanKeys?: ReadonlySet<string>,
  skipKeys?: ReadonlySet<string>,
): ParsedLine {
  try {
    if (spanKeys) {
      const spans = new Map<string, string>();
      return {
        line: l.line,
        ok: true,
        value: parsePyJson(l.text, { keys: spanKeys, out: spans, skip: skipKeys }),
        spans,
      };
    }
    return { line: l.line, ok: true, value: parsePyJson(l.text), text: l.text };
  } catch (e) {
    const msg = e instanceof JsonSyntaxError ? e.message : String(e);
    return { line: l.line, ok: false, error: msg };
  }
}

/**
 * Lines that take every path of the lossless parser (empty and nested containers, negative,
 * fractional and exponent numbers, NaN and the infinities, escapes, skipped and spanned values
 * of each kind), as a scorer's lines do, one now and then.
 */
const PRIMING_LINES = [
  String.raw`{"metadata": {"record_id": "p", "n": -1.5e-3, "e": [], "o": {}, "t": true, "f": false, "z": null, "i": 12, "x": NaN, "y": Infinity, "w": -Infinity}, "input": {"context": "a \"b\" \u00e9\n \\ c", "question": "q", "json_schema": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"], "x": [[], {}, [1, {"b": []}]]}}, "output": {"candidate_response": {"a": [1, -2, 3.5, {}, [], "\t"]}, "ground_truth": {"a": [{"b": -0.0}, [], {}]}}}`,
  String.raw`{"metadata": {"record_id": "q"}, "input": {"context": [], "question": {}, "json_schema": "{\"type\": \"object\"}"}, "output": {"candidate_response": "[{\"a\": -1}]", "ground_truth": "{\"a\": []}"}}`,
  String.raw`{"metadata": {"record_id": "r"}, "input": {"context": {"k": [1, {"m": "\""}]}, "question": [[]], "json_schema": []}, "output": {"candidate_response": [], "ground_truth": [{}]}}`,
];

/**
 * Runs the parser over `PRIMING_LINES` (a scoring worker, before its first file): V8 compiles the
 * parser once a few hundred lines in, for the paths those lines took; a path first taken later
 * (the first empty array, say) threw that compiled code away and compiled it again, in every
 * worker. Pure: nothing is kept.
 */
export function primeLineParser(spanKeys: ReadonlySet<string>, skipKeys: ReadonlySet<string>): void {
  for (let round = 0; round < 2; round++)
    for (const text of PRIMING_LINES) {
      const parsed = parseLine({ line: 0, text }, spanKeys, skipKeys);
      if (!parsed.ok) throw new Error(`priming line does not parse: ${parsed.error}`);
      for (const span of parsed.spans?.values() ?? []) parseLine({ line: 0, text: span });
      parseLine({ line: 0, text });
    }
}

export async function* readJsonl(
  file: string,
  startLine = 1,
  spanKeys?: ReadonlySet<string>,
  skipKeys?: ReadonlySet<string>,
): AsyncGenerator<ParsedLine> {
  for await (const l of readLines(file, startLine)) yield parseLine(l, spanKeys, skipKeys);
}
