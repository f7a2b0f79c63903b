/**
 * Record ids as 64-bit hashes: what duplicate detection, resume and "answered?" need of a million
 * ids without holding their text (issue 35; docs/performance.md, "Scale").
 */

/** A record id's 64-bit hash, as two 32-bit halves (FNV-1a and a murmur-style mix of the UTF-16 units). */
export function idHash(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  b ^= b >>> 16;
  return [a >>> 0, b >>> 0];
}

/**
 * A set of 64-bit id hashes, each with a number (the line it was first seen on): what duplicate
 * detection and "answered?" need of a file's rows, 12 bytes a slot, never the ids themselves.
 * Two different ids share a hash with probability about n^2 / 2^65 (3e-8 at a million).
 */
export class HashLines {
  private lo = new Uint32Array(1024);
  private hi = new Uint32Array(1024);
  /** The number + 1 (0: an empty slot). */
  private val = new Uint32Array(1024);
  private mask = 1023;
  size = 0;

  private slot(a: number, b: number): number {
    let i = (a ^ Math.imul(b, 0x9e3779b1)) & this.mask;
    while (this.val[i] !== 0 && (this.lo[i] !== a || this.hi[i] !== b)) i = (i + 1) & this.mask;
    return i;
  }
  getHash(a: number, b: number): number | undefined {
    const i = this.slot(a, b);
    return this.val[i] === 0 ? undefined : this.val[i] - 1;
  }
  get(key: string): number | undefined {
    const [a, b] = idHash(key);
    return this.getHash(a, b);
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
  set(key: string, v: number): void {
    const [a, b] = idHash(key);
    this.setHash(a, b, v);
  }
  setHash(a: number, b: number, v: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const i = this.slot(a, b);
    if (this.val[i] === 0) this.size++;
    this.lo[i] = a;
    this.hi[i] = b;
    this.val[i] = v + 1;
  }
  /** Room for `n` hashes at under half load (a file's record count, known ahead): no growing on the way. */
  reserve(n: number): void {
    let cap = this.mask + 1;
    while ((n + 1) * 2 > cap) cap *= 2;
    if (cap > this.mask + 1) this.grow(cap);
  }
  private grow(cap = (this.mask + 1) * 2): void {
    const { lo, hi, val } = this;
    this.lo = new Uint32Array(cap);
    this.hi = new Uint32Array(cap);
    this.val = new Uint32Array(cap);
    this.mask = cap - 1;
    for (let i = 0; i < val.length; i++)
      if (val[i] !== 0) {
        const j = this.slot(lo[i], hi[i]);
        this.lo[j] = lo[i];
        this.hi[j] = hi[i];
        this.val[j] = val[i];
      }
  }
  clear(): void {
    this.lo = new Uint32Array(1024);
    this.hi = new Uint32Array(1024);
    this.val = new Uint32Array(1024);
    this.mask = 1023;
    this.size = 0;
  }
}

/** Where a known set of ids numbers each by its hash (a benchmark's index): -1 for an id it lacks. */
export interface IdSlots {
  readonly slots: number;
  slotOf(lo: number, hi: number): number;
}

/**
 * `HashLines` over ids a benchmark mostly knows: an id the benchmark's index numbers keeps its
 * line in that record's slot (4 bytes a benchmark record, not 24 a hash at half load); any other
 * id goes to a `HashLines`. The same answers as one `HashLines` of every id.
 */
export class SlotLines {
  private byRecord: Uint32Array;
  private readonly other = new HashLines();
  private known = 0;
  constructor(private readonly index?: IdSlots) {
    this.byRecord = new Uint32Array(index && index.slots > 0 ? index.slots : 0);
  }
  get size(): number {
    return this.known + this.other.size;
  }
  private slot(a: number, b: number): number {
    return this.byRecord.length > 0 ? this.index!.slotOf(a, b) : -1;
  }
  getHash(a: number, b: number): number | undefined {
    const e = this.slot(a, b);
    if (e < 0) return this.other.getHash(a, b);
    const v = this.byRecord[e];
    return v === 0 ? undefined : v - 1;
  }
  get(key: string): number | undefined {
    const [a, b] = idHash(key);
    return this.getHash(a, b);
  }
  set(key: string, v: number): void {
    const [a, b] = idHash(key);
    const e = this.slot(a, b);
    if (e < 0) {
      this.other.setHash(a, b, v);
      return;
    }
    if (this.byRecord[e] === 0) this.known++;
    this.byRecord[e] = v + 1;
  }
  /** Room for `n` ids the index lacks (with no index: all of them). */
  reserve(n: number): void {
    if (this.byRecord.length === 0) this.other.reserve(n);
  }
  clear(): void {
    this.byRecord = new Uint32Array(0);
    this.known = 0;
    this.other.clear();
  }
}

/** A set of record ids held as their 64-bit hashes (`HashLines`): has, add and size, no iteration. */
export class IdSet {
  private readonly h = new HashLines();
  /** Ids deleted (their slots stay, marked, so the table's probe chains hold). */
  private gone = 0;
  has(id: string): boolean {
    const v = this.h.get(id);
    return v !== undefined && v !== DELETED;
  }
  add(id: string): this {
    const v = this.h.get(id);
    if (v === DELETED) this.gone--;
    if (v === undefined || v === DELETED) this.h.set(id, 0);
    return this;
  }
  /** True when the id was there. */
  delete(id: string): boolean {
    if (!this.has(id)) return false;
    this.h.set(id, DELETED);
    this.gone++;
    return true;
  }
  get size(): number {
    return this.h.size - this.gone;
  }
}

/** An `IdSet` slot whose id was deleted. */
const DELETED = 0xfffffffe;

/** What a reader of answered ids needs: a `Set<string>` or an `IdSet`. */
export interface IdLookup {
  has(id: string): boolean;
}
