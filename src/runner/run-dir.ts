/**
 * The run directory (docs/design.md "Run directory"): manifest.json, responses.jsonl, errors.jsonl.
 * Each response line is written whole, by one write call, the moment it arrives; on resume a
 * torn last line (a crash mid-write) is cut off and every record already answered is known.
 */
import { closeSync, createReadStream, existsSync, readFileSync, statSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { withPath } from '../core/errors.ts';
import { openNoFollow, refuseSymlink, truncateNoFollow } from '../core/files.ts';
import { type RunManifest, readRunManifest } from '../core/formats/manifest.ts';
import { checkResponseLine, responseRecordId } from '../core/formats/response-line.ts';
import { IdSet } from '../core/id-hash.ts';

export { writeJsonAtomic } from '../core/files.ts';

export const MANIFEST = 'manifest.json';
export const RESPONSES = 'responses.jsonl';
export const ERRORS = 'errors.jsonl';

export interface ScanResult {
  /** Record ids with a response line. */
  ids: IdSet;
  /** Bytes cut off the end (a torn last line); 0 when the file was whole. */
  droppedBytes: number;
  /** Complete lines that are not a JSON response (left in place, their records asked again). */
  badLines: number[];
}

/**
 * Reads responses.jsonl line by line (bytes, not characters, so the cut is exact). A last line
 * without its newline, or one that is not JSON, is torn: the file is truncated before it.
 */
export async function scanResponses(file: string): Promise<ScanResult> {
  // Held as 64-bit hashes: a million answered ids in 12 MB, not their text.
  const ids = new IdSet();
  const badLines: number[] = [];
  // Repairs and appends never go through a link to a file outside the run directory.
  refuseSymlink(file, 'response log');
  if (!existsSync(file)) return { ids, droppedBytes: 0, badLines };
  let carry: Buffer = Buffer.alloc(0);
  let offset = 0; // file offset of carry[0]
  let goodEnd = 0; // end of the last complete, parsed line
  let lineNo = 0;
  let lastLineBad = false;
  const take = (line: Buffer, end: number) => {
    lineNo++;
    const text = line.toString('utf8').trim();
    if (text.length === 0) {
      goodEnd = end;
      lastLineBad = false;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      badLines.push(lineNo);
      lastLineBad = true;
      return;
    }
    // A line a newer sob-eval wrote stops the resume (exit 2) before anything is appended.
    checkResponseLine(value, `${file}:${lineNo}`);
    lastLineBad = false;
    const id = responseRecordId(value);
    if (id !== undefined) ids.add(id);
    goodEnd = end;
  };
  for await (const chunk of createReadStream(file)) {
    let buf = carry.length ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      take(buf.subarray(start, nl), offset + nl + 1);
      start = nl + 1;
    }
    offset += start;
    buf = buf.subarray(start);
    carry = Buffer.from(buf);
  }
  const size = statSync(file).size;
  // A final line without a newline is torn even if it parses: its write did not finish.
  let cutAt = size;
  if (carry.length > 0) cutAt = offset;
  if (lastLineBad && carry.length === 0) {
    cutAt = goodEnd;
    badLines.pop();
  }
  const droppedBytes = size - cutAt;
  if (droppedBytes > 0) truncateNoFollow(file, cutAt);
  return { ids, droppedBytes, badLines };
}

/** Cuts a log back to its last newline (errors.jsonl after a crash), so appends start a fresh line. */
export function repairTail(file: string): number {
  refuseSymlink(file, 'log');
  if (!existsSync(file)) return 0;
  const data = readFileSync(file);
  if (data.length === 0 || data[data.length - 1] === 0x0a) return 0;
  const keep = data.lastIndexOf(0x0a) + 1;
  truncateNoFollow(file, keep);
  return data.length - keep;
}

/** An append-only JSONL file: each line goes out in a single write call; a symlink is refused. */
export class AppendLog {
  private fd: number;
  constructor(readonly file: string) {
    this.fd = openNoFollow(file, 'a');
  }
  append(line: string): void {
    try {
      writeSync(this.fd, `${line}\n`);
    } catch (e) {
      throw withPath(e, this.file);
    }
  }
  close(): void {
    closeSync(this.fd);
  }
}

/**
 * A run directory's manifest (undefined when it has none); one line naming the file when it is
 * not a JSON object, and exit 2 when a newer sob-eval wrote it (`readRunManifest`).
 */
export function readManifest(dir: string): Partial<RunManifest> | undefined {
  const file = join(dir, MANIFEST);
  if (!existsSync(file)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    v = undefined;
  }
  return readRunManifest(v, file);
}

/** A model id as a folder name: `openai:gpt-4.1-mini` -> `openai_gpt-4.1-mini`. */
export function sanitizeModelId(id: string): string {
  let s = id;
  if (s.startsWith('replay:')) s = `replay_${basename(s.slice('replay:'.length)).replace(/\.jsonl$/i, '')}`;
  s = s
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .split('_')
    .filter((part) => !/^\.*$/.test(part))
    .join('_')
    .slice(0, 120);
  return s || 'model';
}

/**
 * What `sob score <run-dir>` scores: for a directory holding manifest.json and responses.jsonl,
 * its responses under `<dir>/evaluation`, in a folder named after the model; null otherwise.
 */
export function runDirTargets(dir: string): { file: string; modelDir: string; outDir: string }[] | null {
  if (!existsSync(join(dir, MANIFEST)) || !existsSync(join(dir, RESPONSES))) return null;
  if (!statSync(dir).isDirectory()) return null;
  const manifest = readManifest(dir);
  const model = typeof manifest?.model === 'string' ? manifest.model : basename(dir);
  return [{ file: join(dir, RESPONSES), modelDir: sanitizeModelId(model), outDir: join(dir, 'evaluation') }];
}
