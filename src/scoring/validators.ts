/**
 * The worker's side of compiling each distinct schema text once per `sob score` (the table and
 * the main thread's side: src/scoring/claims.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { ValidateFunction } from 'ajv';
import {
  SchemaDeferred,
  type ValidatorSource,
  validatorCode,
  validatorCodeCache,
  validatorFromCode,
} from '../core/schema.ts';
import { CLAIM_SLOTS, type CompiledSchema, FIELDS, STATE } from './claims.ts';
import { schemaTextHash } from './verdicts.ts';

/** A cached validator's file: its code and V8 code cache (see `SharedValidators.fromCache`). */
export const CACHE_EXT = '.vc';

// -- Worker --------------------------------------------------------------------------------------

/**
 * The worker's side: a `ValidatorSource` (src/core/schema.ts) that claims, compiles and
 * publishes, or takes another worker's code, or defers.
 */
export class SharedValidators {
  private readonly table: Int32Array;
  private readonly received = new Map<number, CompiledSchema>();
  /** Validators whose V8 code cache is not on disk yet: written once they have run. */
  private readonly uncached: { v: ValidateFunction; file: string; code: string; fromCache: boolean }[] = [];

  constructor(
    buffer: SharedArrayBuffer,
    private readonly port: MessagePort,
    private readonly owner: number,
    private readonly send: (c: CompiledSchema) => void,
    /** Validators kept between runs (see `validatorCacheDir`), when there is one. */
    private readonly cacheDir?: string,
  ) {
    this.table = new Int32Array(buffer);
  }

  private cacheFile(key: string): string | undefined {
    return this.cacheDir
      ? join(this.cacheDir, `${createHash('sha256').update(key).digest('hex')}${CACHE_EXT}`)
      : undefined;
  }

  /**
   * A validator an earlier run compiled, when the cache has it: one file per schema text, its
   * standalone code and the V8 code cache of that code once it has run (`[u32 code bytes][code]
   * [V8 cache]`). A file cut short (a crash while writing) is removed and counts as a miss.
   */
  private fromCache(file: string | undefined): ValidateFunction | undefined {
    if (!file) return undefined;
    const got = this.read.get(file) ?? this.readCache(file);
    this.read.delete(file);
    if (!got) return undefined;
    const { code, data } = got;
    try {
      const v = validatorFromCode(code, data);
      this.uncached.push({ v, file, code, fromCache: data !== undefined });
      return v;
    } catch {
      rmSync(file, { force: true });
      return undefined;
    }
  }

  /** A cache file's code and V8 code cache; undefined when absent or cut short (then removed). */
  private readCache(file: string): { code: string; data?: Buffer } | undefined {
    let buf: Buffer;
    try {
      buf = readFileSync(file);
    } catch {
      return undefined;
    }
    const codeBytes = buf.length >= 4 ? buf.readUInt32LE(0) : -1;
    if (codeBytes <= 0 || 4 + codeBytes > buf.length) {
      rmSync(file, { force: true });
      return undefined;
    }
    const code = buf.toString('utf8', 4, 4 + codeBytes);
    return { code, data: buf.length > 4 + codeBytes ? buf.subarray(4 + codeBytes) : undefined };
  }

  /** Cache files read by `cached`, waiting for `source` to make their validator. */
  private readonly read = new Map<string, { code: string; data?: Buffer }>();

  /**
   * Whether the cache holds a validator for this schema text. Only a schema that passed the
   * draft-07 check gets a validator, so the check need not run again (nor ajv be loaded).
   */
  readonly cached = (key: string): boolean => {
    const file = this.cacheFile(key);
    const got = file ? this.readCache(file) : undefined;
    if (!got) return false;
    if (this.read.size >= 256) this.read.clear();
    this.read.set(file!, got);
    return true;
  };

  /** A validator from code; it goes to the cache once it has run (`flushCodeCache`). */
  private fromCode(code: string, file: string | undefined): ValidateFunction {
    const v = validatorFromCode(code);
    if (file) this.uncached.push({ v, file, code, fromCache: false });
    return v;
  }

  /**
   * Writes the validators used since the last call to the cache (after a file: they have run, so
   * what V8 compiled on their first call is in their code cache), one file each, written once
   * (file creation is what costs here: no temp name, no second file). A run that reads them back
   * compiles no validator code at all.
   */
  flushCodeCache(): void {
    for (const { v, file, code, fromCache } of this.uncached.splice(0)) {
      // Another worker wrote it already (the usual case for a validator it compiled): no code
      // cache to build for nothing.
      if (!fromCache && existsSync(file)) continue;
      let data: Buffer | undefined;
      try {
        data = validatorCodeCache(v, fromCache);
      } catch {
        data = undefined;
      }
      if (!data) continue; // already cached whole
      const codeBuf = Buffer.from(code, 'utf8');
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32LE(codeBuf.length, 0);
      try {
        // A file whose code cache V8 rejected (another V8) is written again.
        if (fromCache) rmSync(file, { force: true });
        writeFileSync(file, Buffer.concat([head, codeBuf, data]), { flag: 'wx' });
      } catch {
        // another worker wrote it first, or no room: the next run reads theirs or compiles
      }
    }
  }

  /** The slot for a schema text's hash (found or taken), or -1 when the table is full. */
  private slotOf(a: number, b: number): { slot: number; mine: boolean } {
    const ka = a === 0 ? 1 : a; // 0 marks an empty slot
    let s = (ka ^ Math.imul(b, 0x9e3779b1)) & (CLAIM_SLOTS - 1);
    for (let probe = 0; probe < CLAIM_SLOTS; probe++, s = (s + 1) & (CLAIM_SLOTS - 1)) {
      const base = s * FIELDS;
      let cur = Atomics.load(this.table, base);
      if (cur === 0) {
        cur = Atomics.compareExchange(this.table, base, 0, ka);
        if (cur === 0) {
          Atomics.store(this.table, base + 1, b);
          Atomics.store(this.table, base + 3, this.owner);
          Atomics.store(this.table, base + 2, STATE.CLAIMED);
          return { slot: s, mine: true };
        }
      }
      if (cur !== ka) continue;
      // Same first word: wait (briefly) for its claimer to write the second.
      while (Atomics.load(this.table, base + 2) === STATE.FREE) {}
      if (Atomics.load(this.table, base + 1) === b) return { slot: s, mine: false };
    }
    return { slot: -1, mine: false };
  }

  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      const c = m.message as CompiledSchema;
      this.received.set(c.slot, c);
    }
  }

  private compileAndPublish(
    slot: number,
    compile: () => ValidateFunction | string,
    file?: string,
  ): ValidateFunction | string {
    let v = compile();
    let c: CompiledSchema;
    try {
      c = typeof v === 'string' ? { slot, error: v } : { slot, code: validatorCode(v) };
      // The standalone code's function (the one the others and later runs use), so it can be
      // cached with its V8 code cache.
      if (c.code && file) v = this.fromCode(c.code, file);
    } catch (e) {
      // No standalone code for it: the others compile it themselves.
      c = { slot, error: `\u0000${e instanceof Error ? e.message : String(e)}` };
    }
    this.send(c);
    return v;
  }

  readonly source: ValidatorSource = (key, compile) => {
    const file = this.cacheFile(key);
    const cached = this.fromCache(file);
    if (cached) return cached;
    const [a, b] = schemaTextHash(key);
    const { slot, mine } = this.slotOf(a, b);
    if (slot < 0) return compile();
    if (mine) return this.compileAndPublish(slot, compile, file);
    const at = slot * FIELDS + 2;
    const state = Atomics.load(this.table, at);
    if (
      state === STATE.ABANDONED &&
      Atomics.compareExchange(this.table, at, STATE.ABANDONED, STATE.CLAIMED) === STATE.ABANDONED
    ) {
      Atomics.store(this.table, slot * FIELDS + 3, this.owner);
      return this.compileAndPublish(slot, compile, file);
    }
    if (state !== STATE.READY) throw new SchemaDeferred(slot);
    this.drain();
    const c = this.received.get(slot);
    if (!c || (c.error?.startsWith('\u0000') ?? false)) return compile();
    if (c.error !== undefined) return c.error;
    try {
      return this.fromCode(c.code!, file);
    } catch {
      return compile();
    }
  };

  /** Whether a deferred record's schema can be had now (ready, or free to claim). */
  ready(slot: number): boolean {
    const state = Atomics.load(this.table, slot * FIELDS + 2);
    return state === STATE.READY || state === STATE.ABANDONED;
  }

  /** Waits (at most `ms`) for a slot to leave CLAIMED. */
  wait(slot: number, ms: number): void {
    Atomics.wait(this.table, slot * FIELDS + 2, STATE.CLAIMED, ms);
  }
}
