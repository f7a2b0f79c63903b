/**
 * The summary's per-record columns (metrics/summary.ts): a 0/1 metric's held as bytes, read back
 * as the numbers pushed, turned into doubles by any other value; room reserved ahead; `take`
 * hands on shared memory without a copy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ByteColumn,
  CATEGORIES,
  Column,
  categoryColumns,
  SummaryAccumulator,
} from '../../metrics/summary.ts';

test('a 0/1 column is one byte a record, and reads back every value pushed', () => {
  const c = new ByteColumn();
  const pushed: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const x = (i * 7) % 3 === 0 ? 1 : 0;
    c.push(x);
    pushed.push(x);
  }
  const v = c.take();
  assert.ok(v instanceof Uint8Array);
  assert.ok(v.buffer instanceof SharedArrayBuffer);
  assert.equal(v.length, 1000);
  assert.deepEqual([...v], pushed);
});

test('a value other than 0 or 1 turns a byte column into doubles, the earlier values kept (-0.0 and NaN too)', () => {
  for (const odd of [0.5, -0, Number.NaN, 2]) {
    const c = new ByteColumn();
    c.reserve(10);
    for (let i = 0; i < 300; i++) c.push(i % 2);
    c.push(odd);
    c.push(1);
    const v = c.take();
    assert.ok(v instanceof Float64Array, `after ${odd}`);
    assert.equal(v.length, 302);
    for (let i = 0; i < 300; i++) assert.equal(v[i], i % 2);
    assert.ok(Object.is(v[300], odd), `${odd} read back as ${v[300]}`);
    assert.equal(v[301], 1);
  }
});

test('reserve makes room once; take returns the column itself (no copy), in shared memory', () => {
  const c = new Column();
  c.reserve(5000);
  const before = c.data.buffer;
  for (let i = 0; i < 5000; i++) c.push(i / 7);
  assert.equal(c.data.buffer, before, 'no growth past the reservation');
  const v = c.take();
  assert.equal(v.buffer, before, 'the same memory, not a copy');
  assert.equal(v.length, 5000);
  assert.equal(v[4999], 4999 / 7);
  // Past the reservation it grows.
  const d = new Column();
  d.reserve(3);
  for (let i = 0; i < 10; i++) d.push(i);
  assert.deepEqual([...d.take()], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test("the accumulator's five 0/1 metrics are byte columns and the other five doubles", () => {
  const acc = new SummaryAccumulator();
  const data = acc.data();
  const kinds = data.columns.map((c) => (c instanceof Uint8Array ? 'bytes' : 'doubles'));
  assert.deepEqual(kinds, [
    'bytes',
    'bytes',
    'bytes',
    'bytes',
    'doubles',
    'doubles',
    'doubles',
    'doubles',
    'doubles',
    'bytes',
  ]);
});

test('category columns written into the arrays of the last call give what new arrays give', () => {
  const n = 1000;
  const col = (k: number) => Float64Array.from({ length: n }, (_, i) => ((i * (k + 3)) % 11) / 10);
  const a = { columns: Array.from({ length: 10 }, (_, k) => col(k)) };
  const b = { columns: Array.from({ length: 10 }, (_, k) => col(k + 5)) };
  const reuse: Float64Array[] = [];
  const first = categoryColumns(a, reuse).map((c) => [...c]);
  assert.equal(reuse.length, CATEGORIES.length);
  const kept = [...reuse];
  const second = categoryColumns(b, reuse);
  // The same memory, now b's scores, equal to a fresh computation of b.
  for (const [i, c] of second.entries()) assert.equal(c, kept[i]);
  assert.deepEqual(
    second.map((c) => [...c]),
    categoryColumns(b).map((c) => [...c]),
  );
  assert.notDeepEqual(
    second.map((c) => [...c]),
    first,
  );
  // Another length: new arrays, kept for the next call.
  const short = categoryColumns({ columns: a.columns.map((c) => c.subarray(0, 10)) }, reuse);
  assert.equal(short[0].length, 10);
  assert.equal(reuse[0], short[0]);
});
