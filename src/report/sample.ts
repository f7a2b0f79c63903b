/**
 * Which records a large report embeds. Up to `REPORT_MAX_RECORDS` records the page holds every
 * one; past that it holds the summaries, the per-source tables and a sample of records, chosen by
 * a stated rule (`sampleSizes`): per model, the `worst` records by Value Accuracy (the lowest
 * first, ties in file order), and a seeded random sample of `random` record ids (the ids with the smallest 32-bit
 * hash of seed and id: the same ids for every model and every run). Every other record stays in
 * the evaluation folder's `eval_records.jsonl`. The sample is found in one streamed pass over the
 * rows, holding only the candidates (bounded heaps), never the rows.
 */

import { readJsonl } from '../core/jsonl.ts';

/** Records a report embeds in full; more and it embeds a sample (docs/report.md). */
export const REPORT_MAX_RECORDS = 10_000;
export const SAMPLE_SEED = 42;

/**
 * The sample's sizes for a limit: per model, a quarter of it (the records with the lowest Value
 * Accuracy), and half of it at random (shared by every model): 2,500 and 5,000 at 10,000.
 */
export function sampleSizes(limit: number): { worst: number; random: number } {
  return { worst: Math.floor(limit / 4), random: Math.floor(limit / 2) };
}

export interface RecordSample {
  /** The ids embedded: the worst per model and the random ones. */
  keep: Set<string>;
  /** The random sample alone (the pairwise matrix is computed on it: an unbiased subset). */
  random: Set<string>;
  worst: number;
  randomSize: number;
  seed: number;
}

/** FNV-1a over the seed and the id's UTF-16 units, then murmur's finaliser: a 32-bit hash. */
export function idHash(id: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A bounded max-heap of (key, tiebreak, id): keeps the `cap` smallest keys. */
class Smallest {
  private readonly keys: number[] = [];
  private readonly ties: number[] = [];
  private readonly ids: string[] = [];
  readonly members = new Set<string>();
  constructor(private readonly cap: number) {}

  private greater(i: number, j: number): boolean {
    return this.keys[i] > this.keys[j] || (this.keys[i] === this.keys[j] && this.ties[i] > this.ties[j]);
  }
  private swap(i: number, j: number): void {
    [this.keys[i], this.keys[j]] = [this.keys[j], this.keys[i]];
    [this.ties[i], this.ties[j]] = [this.ties[j], this.ties[i]];
    [this.ids[i], this.ids[j]] = [this.ids[j], this.ids[i]];
  }

  offer(key: number, tie: number, id: string): void {
    if (this.cap <= 0 || this.members.has(id)) return;
    const n = this.keys.length;
    if (n < this.cap) {
      this.keys.push(key);
      this.ties.push(tie);
      this.ids.push(id);
      this.members.add(id);
      let i = n;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.greater(i, p)) break;
        this.swap(i, p);
        i = p;
      }
      return;
    }
    if (key > this.keys[0] || (key === this.keys[0] && tie >= this.ties[0])) return;
    this.members.delete(this.ids[0]);
    this.keys[0] = key;
    this.ties[0] = tie;
    this.ids[0] = id;
    this.members.add(id);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.greater(l, m)) m = l;
      if (r < n && this.greater(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
}

/** The sample of the rows in `files` (per model, its `eval_records.jsonl` files). */
export async function sampleRecords(
  files: { model: number; file: string }[],
  opts: { worst: number; random: number; seed?: number },
): Promise<RecordSample> {
  const worstN = opts.worst;
  const randomN = opts.random;
  const seed = opts.seed ?? SAMPLE_SEED;
  const random = new Smallest(randomN);
  const worst = new Map<number, Smallest>();
  let order = 0;
  for (const { model, file } of files) {
    let w = worst.get(model);
    if (!w) worst.set(model, (w = new Smallest(worstN)));
    for await (const l of readJsonl(file)) {
      if (!l.ok || !(l.value instanceof Map)) continue;
      const id = String(l.value.get('record_id') ?? '');
      const va = Number(l.value.get('leaf_value_em') ?? 0);
      const h = idHash(id, seed);
      w.offer(Number.isFinite(va) ? va : 0, order++, id);
      random.offer(h, 0, id);
    }
  }
  const keep = new Set<string>(random.members);
  for (const w of worst.values()) for (const id of w.members) keep.add(id);
  return {
    keep,
    random: random.members,
    worst: worstN,
    randomSize: randomN,
    seed,
  };
}
