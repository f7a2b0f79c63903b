/**
 * CPython 3.12's built-in `sum(iterable)` (start 0), ported from `builtin_sum_impl` in
 * `Python/bltinmodule.c` of the 3.12 branch. The reference evaluator pins Python 3.12, whose
 * `sum` adds floats with Neumaier's compensation rather than left to right, so every mean of the
 * `sob` profile sums through here to equal its released files bit for bit (docs/scoring.md,
 * "Summation").
 *
 * A Python int is a `bigint` (or a boolean: `True` is the int 1), a Python float a `number`, as
 * in `pyjson.ts`. The three loops of the C function, in its order:
 *
 * 1. **ints**: summed exactly in a C `long` (64 bits here) while every item is an int and the
 *    total fits; an int result stays an int (`bigint`).
 * 2. the first item that is not such an int is added to the total the generic way (`int +
 *    float` is a float: the int rounded to the nearest double, then one addition). If that gives
 *    a float, **floats**: `t = s + x`; the rounding error of that addition goes into a
 *    compensation `c` (`(s - t) + x` when |s| >= |x|, else `(x - t) + s`); an int item that fits
 *    a `long` is added to `s` *without* compensation (3.12's rule; 3.14 compensates it too). At
 *    the end `s + c`, except that a zero or non-finite `c` is left out (keeps the sign of a
 *    negative zero, and an infinite or overflowed sum is not turned into NaN by `inf - inf`).
 * 3. anything else (an int too large for a `long` in the float loop, an int that makes the int
 *    total overflow): the compensation is folded in and every further item is added with plain
 *    `+`, no compensation.
 */

/** A value Python's `sum` adds: a float (number), an int (bigint) or a bool. */
export type PyNumber = number | bigint | boolean;

const LONG_MAX = (1n << 63n) - 1n;
const LONG_MIN = -(1n << 63n);

function asInt(x: PyNumber): bigint | null {
  if (typeof x === 'bigint') return x;
  if (typeof x === 'boolean') return x ? 1n : 0n;
  return null;
}

/** `float(i)`: the nearest double (ties to even), or Python's OverflowError past the largest. */
function intToFloat(i: bigint): number {
  const f = Number(i);
  if (!Number.isFinite(f)) throw new RangeError('int too large to convert to float');
  return f;
}

/** Python's `a + b` for ints and floats (an int with a float: the int as a float first). */
function pyAdd(a: PyNumber, b: PyNumber): number | bigint {
  const ia = asInt(a);
  const ib = asInt(b);
  if (ia !== null && ib !== null) return ia + ib;
  const fa = ia !== null ? intToFloat(ia) : (a as number);
  const fb = ib !== null ? intToFloat(ib) : (b as number);
  return fa + fb;
}

/** CPython 3.12's `sum(items)`: a `bigint` when every item is an int or bool, else a float. */
export function pySum(items: Iterable<PyNumber>): number | bigint {
  const it = items[Symbol.iterator]();
  // 1. The int loop: the total in a C long (i_result), exact.
  let iResult = 0n;
  let result: number | bigint = 0n;
  for (;;) {
    const next = it.next();
    if (next.done) return iResult;
    const b = asInt(next.value);
    if (b !== null && b >= LONG_MIN && b <= LONG_MAX) {
      const total = iResult + b;
      if (total >= LONG_MIN && total <= LONG_MAX) {
        iResult = total;
        continue;
      }
    }
    // Overflowed or not an int: back to objects, `result = i_result + item`.
    result = pyAdd(iResult, next.value);
    break;
  }
  // 2. The float loop, when the total is now a float.
  if (typeof result === 'number') {
    let s = result;
    let c = 0;
    for (;;) {
      const next = it.next();
      if (next.done) {
        if (c !== 0 && Number.isFinite(c)) s += c;
        return s;
      }
      const x = next.value;
      if (typeof x === 'number') {
        const t = s + x;
        if (Math.abs(s) >= Math.abs(x)) c += s - t + x;
        else c += x - t + s;
        s = t;
        continue;
      }
      const i = asInt(x)!;
      if (i >= LONG_MIN && i <= LONG_MAX) {
        s += Number(i); // (double)value: no compensation in 3.12
        continue;
      }
      if (c !== 0 && Number.isFinite(c)) s += c;
      result = pyAdd(s, x);
      break;
    }
  }
  // 3. The generic loop: plain `+`.
  for (;;) {
    const next = it.next();
    if (next.done) return result;
    result = pyAdd(result, next.value);
  }
}

/**
 * `sum(values)` of floats only (`values[from..to)`), as `pySum` computes it: the first value is
 * `0 + x` (so -0.0 becomes 0.0), then Neumaier's loop. The one summation every mean, weighted
 * mean, category mean and bootstrap estimate of the summaries uses (the bootstrap's WebAssembly
 * kernel is tested against it).
 */
export function floatSum(values: ArrayLike<number>, from = 0, to = values.length): number {
  if (to <= from) return 0;
  let s = 0 + values[from];
  let c = 0;
  for (let i = from + 1; i < to; i++) {
    const x = values[i];
    const t = s + x;
    if (Math.abs(s) >= Math.abs(x)) c += s - t + x;
    else c += x - t + s;
    s = t;
  }
  return c !== 0 && Number.isFinite(c) ? s + c : s;
}

/**
 * `floatSum` of `term(0) .. term(n - 1)` without an array of them: the same additions in the same
 * order, so the same double (a weighted mean's `v w` terms, a category's per-record means).
 */
export function floatSumOf(n: number, term: (i: number) => number): number {
  if (n <= 0) return 0;
  let s = 0 + term(0);
  let c = 0;
  for (let i = 1; i < n; i++) {
    const x = term(i);
    const t = s + x;
    if (Math.abs(s) >= Math.abs(x)) c += s - t + x;
    else c += x - t + s;
    s = t;
  }
  return c !== 0 && Number.isFinite(c) ? s + c : s;
}
