/**
 * The bootstrap's inner loop in WebAssembly (pure: a module built from the bytes below, no I/O).
 *
 * For one resample, the sum of every summary's terms over the drawn rows, as Python 3.12's
 * `sum` adds them (`floatSum` in src/core/pysum.ts, the reference this kernel is tested
 * against): each lane of an f64x2 keeps a running sum `s` and a compensation `c`, and for each
 * drawn row's term x
 *   t = s + x;  z = t - s;  c += (s - (t - z)) + (x - z);  s = t
 * (Knuth's TwoSum: the exact rounding error of `s + x`, branch-free). CPython's branch
 * (`(s - t) + x` when |s| >= |x|, else `(x - t) + s`, Fast2Sum) is exact too, so both add the
 * same double to `c` whenever `t` is finite; when it is not, both make `c` non-finite, and a
 * non-finite `c` stays so and is left out at the end. Starting from s = c = 0 the first term
 * gives t = 0 + x with no error, as CPython's `0 + item`. The kernel writes each lane's `s` and
 * `c`; `run` ends as CPython does (`s + c` unless `c` is 0 or not finite). Eight summaries at a
 * time (four f64x2 pairs, independent chains), no bounds checks.
 *
 * Memory layout (bytes, chosen by the caller): terms (rows of `stride` doubles, `stride` a
 * multiple of LANES, padding lanes 0), the drawn indices (u32), the sums then the compensations
 * (`stride` doubles each).
 */

/** LEB128 of an unsigned 32-bit value. */
function uleb(v: number): number[] {
  const out: number[] = [];
  do {
    let b = v & 0x7f;
    v >>>= 7;
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

function ascii(s: string): number[] {
  return [...s].map((c) => c.charCodeAt(0));
}

/** A section: its id, then its size and contents. */
function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

const I32 = 0x7f;
const V128 = 0x7b;
// Opcodes.
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const I32_CONST = 0x41;
const I32_ADD = 0x6a;
const I32_MUL = 0x6c;
const I32_SHL = 0x74;
const I32_GE_U = 0x4f;
const I32_LOAD = 0x28;
const BLOCK = 0x02;
const LOOP = 0x03;
const BR = 0x0c;
const BR_IF = 0x0d;
const END = 0x0b;
const EMPTY = 0x40;
const SIMD = 0xfd;
const V128_LOAD = [SIMD, 0x00];
const V128_STORE = [SIMD, 0x0b];
const V128_CONST_ZERO = [SIMD, 0x0c, ...new Array(16).fill(0)];
const F64X2_ADD = [SIMD, 0xf0, 0x01];
const F64X2_SUB = [SIMD, 0xf1, 0x01];

// Parameters: 0 terms, 1 idx, 2 n, 3 stride, 4 out; locals: 5 k, 6 p, 7 end, 8 row, then the
// v128s: 9-12 the sums s0-3, 13-16 the compensations c0-3, 17 x, 18 t, 19 z.
const [TERMS, IDX, N, STRIDE, OUT, K, P, E, ROW] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const SUM = [9, 10, 11, 12];
const COMP = [13, 14, 15, 16];
const [X, T, Z] = [17, 18, 19];
/** Summaries summed per pass over the drawn rows (two per accumulator). */
export const LANES = 8;

const get = (l: number) => [LOCAL_GET, l];
const set = (l: number) => [LOCAL_SET, l];

/** For each pair j: x = the f64x2 at row + 16 j; TwoSum of s_j and x into s_j, c_j. */
const addLanes = SUM.flatMap((s, j) => [
  ...get(ROW),
  ...V128_LOAD,
  3,
  16 * j,
  ...set(X),
  // t = s + x
  ...[...get(s), ...get(X), ...F64X2_ADD, ...set(T)],
  // z = t - s
  ...[...get(T), ...get(s), ...F64X2_SUB, ...set(Z)],
  // c += (s - (t - z)) + (x - z)
  ...get(COMP[j]),
  ...[...get(s), ...get(T), ...get(Z), ...F64X2_SUB, ...F64X2_SUB],
  ...[...get(X), ...get(Z), ...F64X2_SUB],
  ...F64X2_ADD,
  ...F64X2_ADD,
  ...set(COMP[j]),
  // s = t
  ...[...get(T), ...set(s)],
]);
/** For each pair j: s_j += the f64x2 at row + 16 j (plain additions: for sums known exact). */
const addLanesPlain = SUM.flatMap((s, j) => [
  ...[...get(s), ...get(ROW), ...V128_LOAD, 3, 16 * j],
  ...F64X2_ADD,
  ...set(s),
]);
/** out[k + 2 j ..] = s_j, then out[stride + k + 2 j ..] = c_j (row already at out + 8 k). */
const storeLanes = [
  ...SUM.flatMap((s, j) => [...get(ROW), ...get(s), ...V128_STORE, 3, 16 * j]),
  ...[...get(ROW), ...get(STRIDE), I32_CONST, 3, I32_SHL, I32_ADD, ...set(ROW)],
  ...COMP.flatMap((c, j) => [...get(ROW), ...get(c), ...V128_STORE, 3, 16 * j]),
];
/** s_j = c_j = 0. */
const zeroLanes = [...SUM, ...COMP].flatMap((l) => [...V128_CONST_ZERO, LOCAL_SET, l]);

/** The function's body: with TwoSum compensation, or plain additions. */
const body = (compensated: boolean): number[] => [
  // locals: 4 x i32 (k, p, end, row), 11 x v128 (the sums, the compensations, x, t, z); k starts at 0
  2,
  4,
  I32,
  11,
  V128,
  BLOCK,
  EMPTY,
  LOOP,
  EMPTY,
  // if (k >= stride) break
  ...[LOCAL_GET, K, LOCAL_GET, STRIDE, I32_GE_U, BR_IF, 1],
  ...zeroLanes,
  // p = idx; end = idx + n * 4
  ...[LOCAL_GET, IDX, LOCAL_SET, P],
  ...[LOCAL_GET, IDX, LOCAL_GET, N, I32_CONST, 2, I32_SHL, I32_ADD, LOCAL_SET, E],
  BLOCK,
  EMPTY,
  LOOP,
  EMPTY,
  // if (p >= end) break
  ...[LOCAL_GET, P, LOCAL_GET, E, I32_GE_U, BR_IF, 1],
  // row = terms + ((u32[p] * stride + k) << 3)
  ...[LOCAL_GET, TERMS, LOCAL_GET, P, I32_LOAD, 2, 0, LOCAL_GET, STRIDE, I32_MUL, LOCAL_GET, K, I32_ADD],
  ...[I32_CONST, 3, I32_SHL, I32_ADD, LOCAL_SET, ROW],
  ...(compensated ? addLanes : addLanesPlain),
  // p += 4
  ...[LOCAL_GET, P, I32_CONST, 4, I32_ADD, LOCAL_SET, P, BR, 0],
  END,
  END,
  // out[k .. k + 8] = the sums, out[stride + k ..] = the compensations
  ...[LOCAL_GET, OUT, LOCAL_GET, K, I32_CONST, 3, I32_SHL, I32_ADD, LOCAL_SET, ROW],
  ...storeLanes,
  // k += 8
  ...[LOCAL_GET, K, I32_CONST, LANES, I32_ADD, LOCAL_SET, K, BR, 0],
  END,
  END,
  END,
];

const BYTES = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  // type: (i32 x 5) -> ()
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
  // functions 0 and 1 of type 0
  ...section(3, [2, 0, 0]),
  // memory 0: at least 1 page
  ...section(5, [1, 0, 1]),
  // exports: "sums" (function 0, compensated), "plain" (function 1), "mem" (memory 0)
  ...section(7, [3, 4, ...ascii('sums'), 0, 0, 5, ...ascii('plain'), 0, 1, 3, ...ascii('mem'), 2, 0]),
  ...section(10, [2, ...[true, false].flatMap((c) => [...uleb(body(c).length), ...body(c)])]),
]);

/** The little of WebAssembly's API used here (the project's type library has no DOM types). */
interface WasmMemory {
  buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const WASM = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

/** One bootstrap's sums kernel and its memory (one per bootstrap run), or null without wasm SIMD. */
export class SumsKernel {
  private readonly sumsFn: (terms: number, idx: number, n: number, stride: number, out: number) => void;
  private readonly plainFn: SumsKernel['sumsFn'];
  private readonly mem: WasmMemory;
  /** Rows of `stride` doubles (lanes past the summaries' count stay 0). */
  terms!: Float64Array;
  /** The drawn row indices. */
  idx!: Uint32Array;
  /** The sums of the last `run` (Python's `sum` of each lane's drawn terms). */
  sums!: Float64Array;
  /** What the kernel writes: each lane's running sum, then (from `maxStride`) its compensation. */
  private raw!: Float64Array;
  private termsAt = 0;
  private idxAt = 0;
  private sumsAt = 0;
  /** Room for rows of this many doubles (the summaries' count, rounded up to LANES). */
  readonly maxStride: number;

  static create(n: number, summaries: number): SumsKernel | null {
    if (compiled === undefined) {
      try {
        compiled = WASM ? new WASM.Module(BYTES) : null;
      } catch {
        compiled = null; // no WebAssembly SIMD here: the JavaScript loop
      }
    }
    if (!compiled) return null;
    return new SumsKernel(compiled, n, summaries);
  }

  private constructor(
    module: object,
    readonly n: number,
    summaries: number,
  ) {
    const ex = new WASM!.Instance(module).exports as {
      sums: SumsKernel['sumsFn'];
      plain: SumsKernel['sumsFn'];
      mem: WasmMemory;
    };
    this.sumsFn = ex.sums;
    this.plainFn = ex.plain;
    this.mem = ex.mem;
    this.maxStride = (summaries + LANES - 1) & -LANES;
    const termsBytes = n * this.maxStride * 8;
    const idxBytes = (n * 4 + 15) & ~15;
    this.termsAt = 0;
    this.idxAt = termsBytes;
    this.sumsAt = termsBytes + idxBytes;
    const need = this.sumsAt + 2 * this.maxStride * 8;
    const pages = Math.ceil(need / 65536);
    if (pages > 1) this.mem.grow(pages - 1);
    const buf = this.mem.buffer;
    this.terms = new Float64Array(buf, this.termsAt, n * this.maxStride);
    this.idx = new Uint32Array(buf, this.idxAt, n);
    this.raw = new Float64Array(buf, this.sumsAt, 2 * this.maxStride);
    this.sums = new Float64Array(this.maxStride);
  }

  /**
   * `sums[k]` = column k of `terms` (rows of `stride` doubles, `stride` a multiple of LANES and at
   * most `maxStride`) summed over the rows in `idx`, in their order, as Python's `sum` does.
   * `exact`: the caller knows every partial sum is exact (integer terms whose absolute values add
   * up to at most 2^53), so no addition rounds, the compensation stays 0 and plain additions give
   * the same bits, faster.
   */
  run(stride: number, exact = false): void {
    const raw = this.raw;
    const sums = this.sums;
    if (exact) {
      this.plainFn(this.termsAt, this.idxAt, this.n, stride, this.sumsAt);
      for (let k = 0; k < stride; k++) sums[k] = raw[k];
      return;
    }
    this.sumsFn(this.termsAt, this.idxAt, this.n, stride, this.sumsAt);
    for (let k = 0; k < stride; k++) {
      const c = raw[stride + k];
      // CPython's end of the float loop: `if (c && Py_IS_FINITE(c)) f_result += c;`
      sums[k] = c !== 0 && c - c === 0 ? raw[k] + c : raw[k];
    }
  }
}
