/**
 * Lines of a byte stream with a cap on a line's length, for files a provider sends (batch
 * output and result files). `readline` builds each line as one string: a line longer than V8's
 * longest string (a 1,200 MB output file with no newline) ended the process with
 * `RangeError: Invalid string length`, and since a re-run downloads the same file, the run could
 * never finish. Here the stream is split on `\n` byte by byte; a line over the cap is never put
 * together: its bytes are counted and dropped, and it comes out as a bad line with its number,
 * so the caller logs it and goes on with the lines after it.
 */

/** The default cap: 64 MiB, far above any answer a provider returns (its own limits are lower). */
export const LINE_CAP_BYTES = 64 * 1024 * 1024;

/**
 * The cap in force: `SOB_MAX_LINE_BYTES` (a positive integer) when set, else `LINE_CAP_BYTES`.
 * A value that is not a positive integer is ignored.
 */
export function lineCapBytes(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.SOB_MAX_LINE_BYTES;
  if (v !== undefined && /^[1-9]\d*$/.test(v.trim())) return Number(v.trim());
  return LINE_CAP_BYTES;
}

export type CappedLine =
  /** A line (its `\r\n` or `\n` taken off), decoded as UTF-8. */
  | { n: number; text: string }
  /** A line longer than the cap: its length in bytes, never held. */
  | { n: number; tooLong: number };

/**
 * The lines of `input` (chunks of bytes), numbered from 1, each at most `cap` bytes held; a last
 * line without a newline counts. Memory holds at most one line of `cap` bytes and one chunk.
 */
export async function* cappedLines(
  input: AsyncIterable<Uint8Array | string>,
  cap: number = lineCapBytes(),
): AsyncGenerator<CappedLine> {
  let parts: Buffer[] = [];
  let held = 0;
  /** Bytes of the current line, dropped once it is over the cap (-1: not over it). */
  let over = -1;
  let n = 0;
  const end = (): CappedLine => {
    n++;
    if (over >= 0) {
      const tooLong = over;
      over = -1;
      return { n, tooLong };
    }
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, held);
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    parts = [];
    held = 0;
    return { n, text: buf.toString('utf8') };
  };
  const add = (piece: Buffer) => {
    if (piece.length === 0) return;
    if (over >= 0) {
      over += piece.length;
      return;
    }
    if (held + piece.length > cap) {
      over = held + piece.length;
      parts = [];
      held = 0;
      return;
    }
    parts.push(piece); // a stream's chunks are not reused: a view of it is enough
    held += piece.length;
  };
  for await (const chunk of input) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let at = 0;
    for (;;) {
      const nl = bytes.indexOf(0x0a, at);
      if (nl < 0) {
        add(bytes.subarray(at));
        break;
      }
      add(bytes.subarray(at, nl));
      yield end();
      at = nl + 1;
    }
  }
  if (held > 0 || over >= 0) yield end();
}

/** `1,258,291,200 bytes (1,200 MB)`: a length for a log line. */
export function bytesText(b: number): string {
  return `${b.toLocaleString('en-US')} bytes (${Math.round(b / 1024 / 1024).toLocaleString('en-US')} MB)`;
}
