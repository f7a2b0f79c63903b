/**
 * `pySum` and `floatSum` (src/core/pysum.ts) against CPython 3.12's built-in `sum()`.
 *
 * Where the expected values come from: this machine has Python 3.11 only, whose `sum()` adds
 * floats left to right (not compensated), so they are NOT from a Python 3.12. They are the output
 * of `python3 bench/py312-sum.py`, a line-by-line Python port of 3.12's `builtin_sum_impl`
 * (Python/bltinmodule.c, 3.12 branch: the int loop in a C long, the float loop with Neumaier's
 * compensation and ints added without it, the generic loop), run under Python 3.11; the same
 * script prints the left-to-right sum and `math.fsum` beside each, and those are the second
 * literals below, to show which cases tell a compensated sum from the others.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floatSum, floatSumOf, type PyNumber, pySum } from '../../src/core/pysum.ts';

/** [case, items, 3.12's sum (from bench/py312-sum.py), the left-to-right sum]. */
const FLOAT_CASES: [string, number[], number, number][] = [
  ['many small floats after a large one', [1e16, ...Array(10).fill(1)], 1.000000000000001e16, 1e16],
  [
    'a thousand tenths between 1e100 and -1e100 (Neumaier, not fsum: fsum gives 100.0)',
    [1e100, ...Array(1000).fill(0.1), -1e100],
    99.9999999999986,
    0,
  ],
  ['ten tenths', Array(10).fill(0.1), 1.0, 0.9999999999999999],
  ['cancelling terms', [1e16, 1, -1e16], 1.0, 0],
  ['cancelling terms after small ones', [0.1, 0.2, 0.3, 1e16, -1e16], 0.6, 0],
  ['an overflowed sum stays infinite (c = -inf is left out)', [1e308, 1e308, -1e308], Infinity, Infinity],
  ['inf', [1, Infinity, 2], Infinity, Infinity],
  ['-inf', [1e308, -Infinity, 5], -Infinity, -Infinity],
  ['inf + -inf', [Infinity, -Infinity], Number.NaN, Number.NaN],
  ['nan', [1, Number.NaN, 2], Number.NaN, Number.NaN],
  ['negative zeros (0 + -0.0 is 0.0)', [-0, -0], 0, 0],
];

test('floats: pySum and floatSum give CPython 3.12 sum() on each case, and differ from a left-to-right sum where 3.12 does', () => {
  let differs = 0;
  for (const [name, xs, expected, leftToRight] of FLOAT_CASES) {
    assert.ok(Object.is(pySum(xs), expected), `${name}: pySum ${pySum(xs)}, expected ${expected}`);
    assert.ok(Object.is(floatSum(xs), expected), `${name}: floatSum ${floatSum(xs)}, expected ${expected}`);
    assert.ok(Object.is(floatSum(Float64Array.from(xs)), expected), `${name}: floatSum of a Float64Array`);
    assert.ok(
      Object.is(
        floatSumOf(xs.length, (i) => xs[i]),
        expected,
      ),
      `${name}: floatSumOf`,
    );
    let plain = 0;
    for (const x of xs) plain += x;
    assert.ok(Object.is(plain, leftToRight), `${name}: the left-to-right literal`);
    if (!Object.is(plain, expected)) differs++;
  }
  assert.equal(differs, 5);
});

test('floatSum on a slice sums values[from..to) only', () => {
  const xs = Float64Array.from([5, 1e16, 1, 1, -1e16, 7]);
  assert.equal(floatSum(xs, 1, 5), 2);
  assert.equal(floatSum(xs, 3, 3), 0);
});

test('an empty sum is the int 0', () => {
  assert.equal(pySum([]), 0n);
  assert.equal(floatSum([]), 0);
});

test('ints: exact in a C long and past it, an int result stays an int; bools count as ints', () => {
  // bench/py312-sum.py: ints 9223372036854775809, ints_overflow_long 9223372036854775810, true_false_ints 5
  assert.equal(pySum([1n, 2n, 3n, 2n ** 62n, 2n ** 62n, -5n]), 9223372036854775809n);
  assert.equal(pySum([2n ** 63n - 1n, 1n, 2n]), 9223372036854775810n);
  assert.equal(pySum([true, true, false, 3n]), 5n);
});

test('ints then floats, floats then ints, as CPython 3.12 mixes them', () => {
  const cases: [string, PyNumber[], number][] = [
    // ints_then_floats: the ints summed exactly, then 3 + 0.1 and the compensated float loop
    ['ints then floats', [1n, 2n, 0.1, 0.2, 0.3], 3.6],
    // float_then_int: an int inside the float loop is added without compensation (3.12)...
    ['an int among floats', [0.1, 0.2, 3n, 0.3], 3.5999999999999996],
    // ...where the same value as a float is compensated: float_then_int_as_float
    ['the same value as a float', [0.1, 0.2, 3, 0.3], 3.6],
    // big_int_then_float: 2**70 overflows the long: the generic loop from there on
    ['an int past a long, then floats', [2n ** 70n, 0.5, 0.1], 1.1805916207174113e21],
    // float_then_big_int: the compensation folded in, then plain additions
    ['floats, then an int past a long', [0.1, 0.2, 2n ** 64n, 0.3], 1.8446744073709552e19],
  ];
  for (const [name, xs, expected] of cases) {
    const got = pySum(xs);
    assert.ok(Object.is(got, expected), `${name}: ${String(got)}, expected ${expected}`);
  }
});

test("an int too large for a float raises, as Python's OverflowError", () => {
  assert.throws(() => pySum([0.5, 10n ** 400n]), /int too large to convert to float/);
});

test('floatSumOf gives floatSum of the terms it is handed, bit for bit (products of a weighted mean, 100,000 of them)', () => {
  // A deterministic generator: values over 20 orders of magnitude, both signs.
  let x = 12345;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
  const n = 100_000;
  const v = Float64Array.from({ length: n }, () => (next() - 0.3) * 10 ** Math.floor(next() * 20 - 10));
  const w = Float64Array.from({ length: n }, () => next() * 7);
  const terms = v.map((a, i) => a * w[i]);
  assert.ok(
    Object.is(
      floatSumOf(n, (i) => v[i] * w[i]),
      floatSum(terms),
    ),
  );
  assert.ok(
    Object.is(
      floatSumOf(n, (i) => v[i]),
      floatSum(v),
    ),
  );
  assert.equal(
    floatSumOf(0, () => 1),
    0,
  );
  // And it is not a left-to-right sum on these terms (the compensation is there).
  let plain = 0;
  for (const t of terms) plain += t;
  assert.notEqual(plain, floatSum(terms));
});
