/**
 * (The table's layout and the main thread's side; the worker's is src/scoring/validators.ts.)
 *
 * Each distinct schema text compiled once per `sob score`, whatever the number of workers.
 *
 * Compiling a schema (ajv's code generation) is the largest cost of scoring a file the first time
 * its schemas are met, and every worker meets every schema. So the workers share a table of claims
 * in shared memory, one slot per schema text (by a 64-bit hash of it):
 *   FREE -> CLAIMED (one worker compiles it) -> READY (its standalone code reached every worker).
 * A worker that needs a schema another is compiling defers that record (scores the next ones)
 * and comes back to it when the code has arrived. The main thread relays the code from the worker
 * that compiled it to the others, then marks the slot READY; when a worker dies, the slots it had
 * claimed become ABANDONED, and the next worker that needs one claims it again.
 */
import type { MessagePort } from 'node:worker_threads';

/** Slots in the table (a power of two); a schema that finds none free is compiled locally. */
export const CLAIM_SLOTS = 8192;
export const FIELDS = 4; // [hash a, hash b, state, owner]
export const STATE = { FREE: 0, CLAIMED: 1, READY: 2, ABANDONED: 3 } as const;

/** The table's memory (shared by the main thread and every worker). */
export function claimsBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * FIELDS * CLAIM_SLOTS);
}

/** What the compiling worker sends (and the main thread relays): code, or why it cannot compile. */
export interface CompiledSchema {
  slot: number;
  code?: string;
  error?: string;
}

// -- Main thread -------------------------------------------------------------------------------

/** Relays compiled code between workers and releases the claims of workers that die. */
export class ClaimsRelay {
  readonly table: Int32Array;
  private readonly compiled: CompiledSchema[] = [];
  private readonly ports = new Map<number, MessagePort>();

  constructor(readonly buffer: SharedArrayBuffer) {
    this.table = new Int32Array(buffer);
  }

  /** A new worker's port: it gets every code compiled so far. */
  attach(owner: number, port: MessagePort): void {
    this.ports.set(owner, port);
    for (const c of this.compiled) port.postMessage(c);
  }

  /** Code from `owner`: to every other worker, then the slot is READY. */
  publish(owner: number, c: CompiledSchema): void {
    this.compiled.push(c);
    for (const [o, port] of this.ports) if (o !== owner) port.postMessage(c);
    const at = c.slot * FIELDS + 2;
    Atomics.store(this.table, at, STATE.READY);
    Atomics.notify(this.table, at);
  }

  /** A worker is gone: what it was compiling is up for grabs again. */
  release(owner: number): void {
    this.ports.get(owner)?.close();
    this.ports.delete(owner);
    for (let s = 0; s < CLAIM_SLOTS; s++) {
      const base = s * FIELDS;
      if (
        Atomics.load(this.table, base + 2) === STATE.CLAIMED &&
        Atomics.load(this.table, base + 3) === owner
      ) {
        Atomics.store(this.table, base + 2, STATE.ABANDONED);
        Atomics.notify(this.table, base + 2);
      }
    }
  }
}
