/**
 * A map keyed by long texts (a record's schema, its ground truth) that the scorer looks up once
 * per record with a string it has just read: a fresh string, whose hash a `Map` computes from
 * every character (a 1.5 KB schema: ~2 us, on every record, for both texts). Here the key's
 * bucket comes from its length and 64 characters spread over it, and the key itself is then
 * compared (a native comparison, stopping at the first difference). A bucket that fills up with
 * texts alike in those characters becomes a plain `Map` (full hashes): no key pattern makes a
 * lookup slower than that.
 */
type Bucket<V> = { keys: string[]; values: V[] } | Map<string, V>;

/** Entries a bucket holds before it becomes a `Map`. */
const BUCKET_MAX = 8;
/** Characters sampled from a key for its bucket. */
const SAMPLES = 64;

export class TextMap<V> {
  private readonly buckets = new Map<number, Bucket<V>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  private static bucketOf(key: string): number {
    const n = key.length;
    let h = n | 0;
    if (n <= SAMPLES) {
      for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
      return h;
    }
    // Evenly spread, the last character included.
    const step = (n - 1) / (SAMPLES - 1);
    for (let s = 0; s < SAMPLES; s++) h = (Math.imul(h, 31) + key.charCodeAt(Math.floor(s * step))) | 0;
    return h;
  }

  get(key: string): V | undefined {
    const b = this.buckets.get(TextMap.bucketOf(key));
    if (b === undefined) return undefined;
    if (b instanceof Map) return b.get(key);
    const i = b.keys.indexOf(key);
    return i < 0 ? undefined : b.values[i];
  }

  has(key: string): boolean {
    const b = this.buckets.get(TextMap.bucketOf(key));
    if (b === undefined) return false;
    return b instanceof Map ? b.has(key) : b.keys.includes(key);
  }

  set(key: string, value: V): void {
    const h = TextMap.bucketOf(key);
    const b = this.buckets.get(h);
    if (b === undefined) {
      this.buckets.set(h, { keys: [key], values: [value] });
      this.count++;
      return;
    }
    if (b instanceof Map) {
      if (!b.has(key)) this.count++;
      b.set(key, value);
      return;
    }
    const i = b.keys.indexOf(key);
    if (i >= 0) {
      b.values[i] = value;
      return;
    }
    this.count++;
    if (b.keys.length < BUCKET_MAX) {
      b.keys.push(key);
      b.values.push(value);
      return;
    }
    const m = new Map<string, V>();
    for (let j = 0; j < b.keys.length; j++) m.set(b.keys[j], b.values[j]);
    m.set(key, value);
    this.buckets.set(h, m);
  }

  clear(): void {
    this.buckets.clear();
    this.count = 0;
  }
}
