"""CPython 3.12's built-in sum(), reimplemented in Python, for machines without Python 3.12.

Python 3.11's sum() adds floats left to right; 3.12's compensates them (Neumaier). This is a line
by line port of builtin_sum_impl in Python/bltinmodule.c (3.12 branch): the int loop in a C long,
the float loop with its compensation `c` (ints that fit a long added to the sum without it), the
generic loop. It prints the repr of sum() for the cases test/core/pysum.test.ts asserts, which is
where that test's expected literals come from:

    python3 bench/py312-sum.py
"""
import math
import struct

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


def c_double(x):
    """A Python float as the C double it is (identity; kept for reading alongside the C)."""
    return struct.unpack("<d", struct.pack("<d", x))[0]


def sum312(iterable, start=0):
    it = iter(iterable)
    result = start
    # int fast path
    if type(result) is int and LONG_MIN <= result <= LONG_MAX:
        i_result = result
        result = None
        while result is None:
            try:
                item = next(it)
            except StopIteration:
                return i_result
            if type(item) is int or type(item) is bool:
                b = int(item)
                if LONG_MIN <= b <= LONG_MAX and LONG_MIN <= i_result + b <= LONG_MAX:
                    i_result += b
                    continue
            result = i_result + item
    # float fast path
    if type(result) is float:
        f_result = c_double(result)
        c = 0.0
        result = None
        while result is None:
            try:
                item = next(it)
            except StopIteration:
                if c and math.isfinite(c):
                    f_result += c
                return f_result
            if type(item) is float:
                x = item
                t = f_result + x
                if abs(f_result) >= abs(x):
                    c += (f_result - t) + x
                else:
                    c += (x - t) + f_result
                f_result = t
                continue
            if isinstance(item, int):
                if LONG_MIN <= item <= LONG_MAX:
                    f_result += float(item)
                    continue
            if c and math.isfinite(c):
                f_result += c
            result = f_result + item
    # generic loop
    for item in it:
        result = result + item
    return result


CASES = {
    "empty": [],
    "ints": [1, 2, 3, 2**62, 2**62, -5],
    "ints_overflow_long": [2**63 - 1, 1, 2],
    "true_false_ints": [True, True, False, 3],
    "large_then_small": [1e16] + [1.0] * 10,
    "large_then_many_tenths": [1e100] + [0.1] * 1000 + [-1e100],
    "tenths": [0.1] * 10,
    "cancel": [1e16, 1.0, -1e16],
    "cancel_order": [0.1, 0.2, 0.3, 1e16, -1e16],
    "ints_then_floats": [1, 2, 0.1, 0.2, 0.3],
    "float_then_int": [0.1, 0.2, 3, 0.3],
    "float_then_int_as_float": [0.1, 0.2, 3.0, 0.3],
    "big_int_then_float": [2**70, 0.5, 0.1],
    "float_then_big_int": [0.1, 0.2, 2**64, 0.3],
    "inf": [1.0, math.inf, 2.0],
    "inf_minus_inf": [math.inf, -math.inf],
    "minus_inf": [1e308, -math.inf, 5.0],
    "nan": [1.0, math.nan, 2.0],
    "overflow": [1e308, 1e308, -1e308],
    "negative_zeros": [-0.0, -0.0],
    "scores": [0.5866861030126336, 0.25, 1.0 / 3.0, 0.7, 0.9, 0.1, 2.0 / 7.0],
}

if __name__ == "__main__":
    for name, values in CASES.items():
        r = sum312(values)
        plain = 0
        for v in values:
            plain = plain + v
        try:
            exact = repr(math.fsum(values))
        except (ValueError, OverflowError) as e:
            exact = f"({e})"
        print(f"{name}: sum312 {r!r} ({type(r).__name__}); left-to-right {plain!r}; fsum {exact}")
