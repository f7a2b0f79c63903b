/**
 * A benchmark known to `sob score` (a run directory's manifest names it, `sob eval` passes it,
 * `--benchmark <records.jsonl>` gives it): the answers are matched to its records by id, each
 * record's ground truth, schema and weight come from the benchmark (not from the response file),
 * and ids on either side without a partner are reported.
 *
 * The selection is the runner's: records of `source` (a record without a source takes it), the
 * first occurrence of each id, at most `limit`.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { deriveComplexity, isObj } from '../core/complexity.ts';
import { UserError } from '../core/errors.ts';
import { HashLines, idHash } from '../core/id-hash.ts';
import { assertReadableFile, type JsonlLine, parseLine, pyStrip, readLinesSync } from '../core/jsonl.ts';
import type { PyObject } from '../core/pyjson.ts';
import { isSource, type Modality, SOURCES, type Source } from '../core/record.ts';

export { HashLines, idHash };

/** The side file listing a folder's unanswered and unknown ids, when a benchmark is known. */
export const BENCHMARK_IDS = 'benchmark_ids.json';

export interface BenchmarkRef {
  path: string;
  /** The run's `sob run --source`. */
  source?: Source;
  /** The run's `sob run --limit`. */
  limit?: number;
  /** Lines the benchmark check rejected (src/core/benchmark-records.ts): left out, as the run left them. */
  exclude?: number[];
  /** The main thread's index of this selection, handed to a worker (shared memory). */
  share?: IndexShare;
}

/** What the scorer takes from a benchmark record. */
export interface BenchmarkRecord {
  /** Its `metadata.source` (or the run's `--source`): a modality or `schema` (a schema record,
   * scored on the compliance track); unset when it names none. */
  modality?: Source;
  schemaText?: string;
  groundTruthText?: string;
  /** The record's weight fields and source, put over the answer's metadata. */
  schemaComplexity?: unknown;
  difficulty?: unknown;
  /** `metadata.accepted_alternatives` (sob review --apply): right in lenient scoring only. */
  acceptedAlternatives?: unknown;
  /** `metadata.gold_version` (sob review --apply). */
  goldVersion?: unknown;
}

/** Looks a record up by id (the benchmark's index: a line read from the file on demand). */
export interface BenchmarkLookup {
  get(id: string): BenchmarkRecord | undefined;
}

/** What the scorer asks of a benchmark's selection (`BenchmarkIndex`, or the in-memory reference). */
export interface BenchmarkRecords extends BenchmarkLookup {
  unanswered(
    fallback: Modality,
    answered: (m: Source, lo: number, hi: number) => boolean,
  ): Map<Source, { count: number; missing: string[] }>;
  /** How many records `slotOf` numbers (0: none, the reference loader). */
  readonly slots: number;
  /**
   * The record whose id has this 64-bit hash (0 .. slots - 1), -1 when none: by hash alone, as
   * the scorer's id tables compare ids.
   */
  slotOf(lo: number, hi: number): number;
  /** The selected records an answer file's folder `m` scores (those naming no source go with `fallback`). */
  countOf(m: Source, fallback: Modality): number;
  /** What a worker is handed (undefined: it reads the file itself). */
  share(): IndexShare | undefined;
  close(): void;
}

export interface Benchmark {
  path: string;
  /** Computed on first use (`benchmarkSha256`): the workers never need it. */
  sha256?: string;
  /** The selected records, by id: a compact index of the file (`BenchmarkIndex`). */
  records: BenchmarkRecords;
}

const SPANS: ReadonlySet<string> = new Set(['input.json_schema', 'output.ground_truth']);
const SKIP: ReadonlySet<string> = new Set([
  'input.context',
  'input.question',
  'input.json_schema',
  'output.ground_truth',
]);

/** A growable SharedArrayBuffer (ES2024: Node 20's V8 has it, this TypeScript lib not yet). */
type Growable = SharedArrayBuffer & { grow(bytes: number): void };
const GrowableShared = SharedArrayBuffer as unknown as new (
  bytes: number,
  opts: { maxByteLength: number },
) => Growable;

/** Modality codes of the index: 0 a record that names no source, then SOURCES in order. */
const CODES: readonly (Source | '')[] = ['', ...SOURCES];

/** What a worker is handed of the main thread's index (shared memory: no copy, no re-read). */
export interface IndexShare {
  path: string;
  n: number;
  /** Modality codes in the order they first appear in the file. */
  order: number[];
  offset: Float64Array;
  length: Uint32Array;
  line: Uint32Array;
  code: Uint8Array;
  lo: Uint32Array;
  hi: Uint32Array;
  /** Open addressing over the entries: entry index + 1, 0 empty. */
  table: Int32Array;
}

/**
 * A benchmark's selected records as a compact index: per record (in file order) its byte offset
 * and length in the file, its line, its modality code and its id's 64-bit hash, in typed arrays
 * (29 bytes a record plus the table's 8), and a hash table from id hash to record. A record's
 * ground truth, schema and weight are read from its line when asked (one positional read and a
 * parse), so memory does not grow with the records' text: the main thread builds it once and
 * its workers share it.
 */
export class BenchmarkIndex implements BenchmarkRecords {
  private fd: number | undefined;
  private buf = Buffer.allocUnsafe(1 << 16);
  private constructor(private readonly s: IndexShare) {}

  get path(): string {
    return this.s.path;
  }
  /** The selected records. */
  get size(): number {
    return this.s.n;
  }
  share(): IndexShare {
    return this.s;
  }
  static fromShare(s: IndexShare): BenchmarkIndex {
    return new BenchmarkIndex(s);
  }

  /** Reads a benchmark's selection (see `loadBenchmark`). */
  static build(ref: BenchmarkRef): BenchmarkIndex {
    const exclude = new Set(ref.exclude ?? []);
    // Each array in one growable shared buffer, reserved (not touched) for as many records as the
    // file could hold (a record's line is at least 16 bytes): grown in place, handed to the
    // workers as it is. Doubling into new arrays and copying them into shared memory at the end
    // held three generations of them at once (a start-of-scoring spike of ~50 MB at a million).
    // (A shared buffer holds 4 GiB at most: 2^29 offsets.)
    const most = Math.min(2 ** 29, Math.max(1024, Math.ceil(statSync(ref.path).size / 16) + 1));
    let cap = 1024;
    const growable = <T extends Float64Array | Uint32Array | Uint8Array>(C: {
      new (b: SharedArrayBuffer): T;
      BYTES_PER_ELEMENT: number;
    }): T =>
      new C(new GrowableShared(cap * C.BYTES_PER_ELEMENT, { maxByteLength: most * C.BYTES_PER_ELEMENT }));
    const offset = growable(Float64Array);
    const length = growable(Uint32Array);
    const line = growable(Uint32Array);
    const code = growable(Uint8Array);
    const lo = growable(Uint32Array);
    const hi = growable(Uint32Array);
    const arrays = [offset, length, line, code, lo, hi];
    const order: number[] = [];
    const seen = new HashLines();
    let n = 0;
    const probe = new BenchmarkIndex({
      path: ref.path,
      n: 0,
      order,
      offset,
      length,
      line,
      code,
      lo,
      hi,
      table: new Int32Array(0),
    });
    try {
      for (const l of linesWithOffsets(ref.path)) {
        if (ref.limit !== undefined && n >= ref.limit) break;
        if (exclude.has(l.line)) continue;
        const p = parseLine(l, SPANS, SKIP);
        if (!p.ok) throw new UserError(`${ref.path}:${l.line}: not JSON: ${p.error}`);
        const md = p.value instanceof Map ? p.value.get('metadata') : undefined;
        const id = md instanceof Map ? md.get('record_id') : undefined;
        if (typeof id !== 'string' || id === '')
          throw new UserError(
            `${ref.path}:${l.line}: not a benchmark record: metadata.record_id must be a string`,
          );
        const src = (md as PyObject).get('source');
        if (ref.source && src !== undefined && src !== ref.source) continue;
        const [a, b] = idHash(id);
        const first = seen.getHash(a, b);
        // The first occurrence of each id (a hash met again is checked against the id it had).
        if (first !== undefined && probe.idAt(first) === id) continue;
        if (n === cap) {
          if (cap === most)
            throw new UserError(`${ref.path}:${l.line}: more than ${most} records: split the benchmark`);
          // In place: the views track their buffer's length.
          cap = Math.min(cap * 2, most);
          for (const x of arrays) (x.buffer as unknown as Growable).grow(cap * x.BYTES_PER_ELEMENT);
        }
        const modality = isSource(src) ? src : ref.source;
        const c = CODES.indexOf(modality ?? '');
        if (!order.includes(c)) order.push(c);
        offset[n] = l.offset;
        length[n] = l.bytes;
        line[n] = l.line;
        code[n] = c;
        lo[n] = a;
        hi[n] = b;
        if (first === undefined) seen.setHash(a, b, n);
        n++;
      }
    } finally {
      probe.close();
    }
    seen.clear();
    // The records' part of each buffer (the workers read the same memory).
    const exact = <T extends Float64Array | Uint32Array | Uint8Array>(
      x: T,
      C: new (b: SharedArrayBuffer, at: number, len: number) => T,
    ): T => new C(x.buffer as SharedArrayBuffer, 0, n);
    let size = 1;
    while (size < n * 2) size *= 2;
    const table = new Int32Array(new SharedArrayBuffer(size * 4));
    const mask = size - 1;
    for (let i = 0; i < n; i++) {
      let j = (lo[i] ^ Math.imul(hi[i], 0x9e3779b1)) & mask;
      while (table[j] !== 0) j = (j + 1) & mask;
      table[j] = i + 1;
    }
    return new BenchmarkIndex({
      path: ref.path,
      n,
      order,
      offset: exact(offset, Float64Array),
      length: exact(length, Uint32Array),
      line: exact(line, Uint32Array),
      code: exact(code, Uint8Array),
      lo: exact(lo, Uint32Array),
      hi: exact(hi, Uint32Array),
      table,
    });
  }

  /** Entry i's line, read from the file (as `readLinesSync` gives it: stripped, no byte order mark). */
  lineAt(i: number): JsonlLine {
    const len = this.s.length[i];
    if (this.buf.length < len) this.buf = Buffer.allocUnsafe(Math.max(len, this.buf.length * 2));
    this.fd ??= openSync(this.s.path, 'r');
    let got = 0;
    while (got < len) {
      const r = readSync(this.fd, this.buf, got, len - got, this.s.offset[i] + got);
      if (r <= 0) throw new UserError(`${this.s.path}: changed while it was scored (line ${this.s.line[i]})`);
      got += r;
    }
    let text = this.buf.toString('utf8', 0, len);
    if (this.s.offset[i] === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { line: this.s.line[i], text: pyStrip(text) };
  }

  private parsedAt(i: number): { meta: PyObject; spans?: Map<string, string> } {
    const l = this.lineAt(i);
    const p = parseLine(l, SPANS, SKIP);
    if (!p.ok) throw new UserError(`${this.s.path}:${l.line}: not JSON: ${p.error}`);
    const md = p.value instanceof Map ? p.value.get('metadata') : undefined;
    return { meta: (md instanceof Map ? md : new Map()) as PyObject, spans: p.spans };
  }

  /** Entry i's record id. */
  idAt(i: number): string {
    return String(this.parsedAt(i).meta.get('record_id'));
  }

  get slots(): number {
    return this.s.n;
  }
  slotOf(a: number, b: number): number {
    return this.entryOf(a, b, () => true);
  }

  /** The entry of an id, or -1. */
  find(id: string): number {
    const [a, b] = idHash(id);
    return this.entryOf(a, b, (e) => this.idAt(e) === id);
  }

  /** The first entry with hash (a, b) that `ok` accepts, in the table's probe order; -1 when none. */
  private entryOf(a: number, b: number, ok: (e: number) => boolean): number {
    const { table, lo, hi } = this.s;
    const mask = table.length - 1;
    let j = (a ^ Math.imul(b, 0x9e3779b1)) & mask;
    for (;;) {
      const e = table[j] - 1;
      if (e < 0) return -1;
      if (lo[e] === a && hi[e] === b && ok(e)) return e;
      j = (j + 1) & mask;
    }
  }

  get(id: string): BenchmarkRecord | undefined {
    const i = this.find(id);
    if (i < 0) return undefined;
    const { meta, spans } = this.parsedAt(i);
    const schemaText = spans?.get('input.json_schema');
    const m = CODES[this.s.code[i]];
    return {
      modality: m === '' ? undefined : m,
      schemaText,
      groundTruthText: spans?.get('output.ground_truth'),
      schemaComplexity: meta.get('schema_complexity') ?? derivedComplexity(schemaText),
      difficulty: meta.get('difficulty'),
      acceptedAlternatives: meta.get('accepted_alternatives'),
      goldVersion: meta.get('gold_version'),
    };
  }

  /**
   * The selected records per modality, for an answer file whose records that name no source go
   * with `fallback`: each modality (in the order the file first names it) with its count and the
   * ids of the records `answered` says have no answer, in file order.
   */
  unanswered(
    fallback: Modality,
    answered: (m: Source, lo: number, hi: number) => boolean,
  ): Map<Source, { count: number; missing: string[] }> {
    const out = new Map<Source, { count: number; missing: string[] }>();
    const { code, lo, hi, n } = this.s;
    for (const c of this.s.order) {
      const m = CODES[c];
      const key = m === '' ? fallback : m;
      let e = out.get(key);
      if (!e) out.set(key, (e = { count: 0, missing: [] }));
      for (let i = 0; i < n; i++) {
        if (code[i] !== c) continue;
        e.count++;
        if (!answered(key, lo[i], hi[i])) e.missing.push(this.idAt(i));
      }
    }
    return out;
  }

  private perCode?: Uint32Array;
  countOf(m: Source, fallback: Modality): number {
    if (!this.perCode) {
      const per = new Uint32Array(CODES.length);
      const { code, n } = this.s;
      for (let i = 0; i < n; i++) per[code[i]]++;
      this.perCode = per;
    }
    const c = CODES.indexOf(m);
    return (c > 0 ? this.perCode[c] : 0) + (m === fallback ? this.perCode[0] : 0);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * The non-blank lines of a file with where each starts and how many bytes it has: the lines
 * `readLinesSync` yields (ends at \n, \r\n or a lone \r; stripped as Python strips), so a line
 * read back from its offset is the text the index was built from.
 */
export function* linesWithOffsets(file: string): Generator<JsonlLine & { offset: number; bytes: number }> {
  assertReadableFile(file);
  const fd = openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  let carry: Buffer[] = [];
  let carryStart = 0;
  let pos = 0;
  let n = 0;
  let sawCr = false;
  const emit = (bytes: Buffer, start: number) => {
    n++;
    let text = bytes.toString('utf8');
    if (start === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    text = pyStrip(text);
    return text.length > 0 ? { line: n, text, offset: start, bytes: bytes.length } : undefined;
  };
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got <= 0) break;
      let start = 0;
      if (sawCr && buf[0] === 0x0a) {
        start = 1;
        carryStart = pos + 1;
      }
      sawCr = false;
      for (let i = start; i < got; i++) {
        const ch = buf[i];
        if (ch !== 0x0a && ch !== 0x0d) continue;
        const part = buf.subarray(start, i);
        const bytes = carry.length > 0 ? Buffer.concat([...carry, part]) : part;
        const lineStart = carry.length > 0 ? carryStart : pos + start;
        carry = [];
        const l = emit(bytes, lineStart);
        if (l) yield l;
        let next = i + 1;
        if (ch === 0x0d) {
          if (next < got) {
            if (buf[next] === 0x0a) next++;
          } else sawCr = true;
        }
        start = next;
        i = next - 1;
        carryStart = pos + start;
      }
      if (start < got) {
        if (carry.length === 0) carryStart = pos + start;
        carry.push(Buffer.from(buf.subarray(start, got)));
      }
      pos += got;
    }
    if (carry.length > 0) {
      const l = emit(Buffer.concat(carry), carryStart);
      if (l) yield l;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The reference the index is tested against (SOB_BENCHMARK_REFERENCE=memory; test/scoring/
 * benchmark-index.test.ts): the loader as it was before the index, every selected record's
 * schema and ground-truth text held in a Map, its ids in lists, read by every worker.
 */
export class InMemoryBenchmark implements BenchmarkRecords {
  private constructor(
    private readonly records: Map<string, BenchmarkRecord>,
    private readonly ids: Map<Source | '', string[]>,
  ) {}
  static load(ref: BenchmarkRef): InMemoryBenchmark {
    const exclude = new Set(ref.exclude ?? []);
    const records = new Map<string, BenchmarkRecord>();
    const ids = new Map<Source | '', string[]>();
    for (const l of readLinesSync(ref.path)) {
      if (ref.limit !== undefined && records.size >= ref.limit) break;
      if (exclude.has(l.line)) continue;
      const p = parseLine(l, SPANS, SKIP);
      if (!p.ok) throw new UserError(`${ref.path}:${l.line}: not JSON: ${p.error}`);
      const md = p.value instanceof Map ? p.value.get('metadata') : undefined;
      const id = md instanceof Map ? md.get('record_id') : undefined;
      if (typeof id !== 'string' || id === '')
        throw new UserError(
          `${ref.path}:${l.line}: not a benchmark record: metadata.record_id must be a string`,
        );
      const meta = md as PyObject;
      const src = meta.get('source');
      if (ref.source && src !== undefined && src !== ref.source) continue;
      if (records.has(id)) continue;
      const modality = isSource(src) ? src : ref.source;
      const schemaText = p.spans?.get('input.json_schema');
      records.set(id, {
        modality,
        schemaText,
        groundTruthText: p.spans?.get('output.ground_truth'),
        schemaComplexity: meta.get('schema_complexity') ?? derivedComplexity(schemaText),
        difficulty: meta.get('difficulty'),
        acceptedAlternatives: meta.get('accepted_alternatives'),
        goldVersion: meta.get('gold_version'),
      });
      const list = ids.get(modality ?? '');
      if (list) list.push(id);
      else ids.set(modality ?? '', [id]);
    }
    return new InMemoryBenchmark(records, ids);
  }
  get(id: string): BenchmarkRecord | undefined {
    return this.records.get(id);
  }
  readonly slots = 0;
  slotOf(): number {
    return -1;
  }
  countOf(m: Source, fallback: Modality): number {
    return (this.ids.get(m)?.length ?? 0) + (m === fallback ? (this.ids.get('')?.length ?? 0) : 0);
  }
  unanswered(
    fallback: Modality,
    answered: (m: Source, lo: number, hi: number) => boolean,
  ): Map<Source, { count: number; missing: string[] }> {
    const out = new Map<Source, { count: number; missing: string[] }>();
    for (const [m, list] of this.ids) {
      const key = m === '' ? fallback : m;
      let e = out.get(key);
      if (!e) out.set(key, (e = { count: 0, missing: [] }));
      e.count += list.length;
      for (const id of list) {
        const [lo, hi] = idHash(id);
        if (!answered(key, lo, hi)) e.missing.push(id);
      }
    }
    return out;
  }
  share(): undefined {
    return undefined;
  }
  close(): void {}
}

const cache = new Map<string, Benchmark>();

/** Reads (once per file version and selection) a benchmark's selected records: its index. */
export function loadBenchmark(ref: BenchmarkRef): Benchmark {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(ref.path);
  } catch {
    throw new UserError(`no such benchmark: ${ref.path}`);
  }
  if (!st.isFile()) throw new UserError(`not a benchmark file: ${ref.path}`);
  const key = `${ref.path}\0${st.size}\0${st.mtimeMs}\0${ref.source ?? ''}\0${ref.limit ?? ''}\0${ref.exclude?.join(',') ?? ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const records = ref.share
    ? BenchmarkIndex.fromShare(ref.share)
    : process.env.SOB_BENCHMARK_REFERENCE === 'memory'
      ? InMemoryBenchmark.load(ref)
      : BenchmarkIndex.build(ref);
  const b: Benchmark = { path: ref.path, records };
  if (cache.size >= 4) {
    for (const old of cache.values()) old.records.close();
    cache.clear();
  }
  cache.set(key, b);
  return b;
}

/** A record without `schema_complexity` weighs what its schema's shape gives, as `sob build` derives it. */
function derivedComplexity(schemaText: string | undefined): string | undefined {
  if (schemaText === undefined) return undefined;
  try {
    const schema: unknown = JSON.parse(schemaText);
    return isObj(schema) ? deriveComplexity(schema) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A file's SHA-256 (to check a run's benchmark is still the one it answered), read in 1 MB chunks:
 * a million-record benchmark is hundreds of MB, and read whole it was a run's largest allocation.
 * Kept per path, size, mtime and inode: the run's check and each folder's summary ask for the
 * same file's hash.
 */
export function fileSha256(path: string): string {
  const st = statSync(path);
  const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const known = SHA_CACHE.get(path);
  if (known && known.key === key) return known.hex;
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null))
      hash.update(n === buf.length ? buf : buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  const hex = hash.digest('hex');
  SHA_CACHE.set(path, { key, hex });
  return hex;
}
const SHA_CACHE = new Map<string, { key: string; hex: string }>();

export function benchmarkSha256(b: Benchmark): string {
  b.sha256 ??= fileSha256(b.path);
  return b.sha256;
}

/** At most `n` ids for a one-line message, then how many more. */
export function someIds(ids: string[], n = 5): string {
  const shown = ids.slice(0, n).join(', ');
  return ids.length > n ? `${shown}, ... (${ids.length - n} more)` : shown;
}
