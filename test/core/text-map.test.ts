/**
 * TextMap: the scorer's map keyed by long texts (schemas, ground truths), bucketed by a sample of
 * their characters. It must behave as a Map whatever the keys: texts alike in every sampled
 * character (one bucket, then a full Map), short and empty keys, overwrites, clear.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TextMap } from '../../src/core/text-map.ts';

test('texts that differ only between the sampled characters are told apart, past the bucket size too', () => {
  const base = 'x'.repeat(5000);
  const m = new TextMap<number>();
  const keys: string[] = [];
  // 40 texts of the same length, differing at one position the 64 samples do not hit.
  for (let i = 0; i < 40; i++) {
    const k = `${base.slice(0, 101)}${String.fromCharCode(65 + i)}${base.slice(102)}`;
    keys.push(k);
    m.set(k, i);
  }
  assert.equal(m.size, 40);
  keys.forEach((k, i) => {
    // A fresh copy of the text (another string object), as the scorer's reader gives.
    const copy = ` ${k}`.slice(1);
    assert.equal(m.get(copy), i);
    assert.equal(m.has(copy), true);
  });
  assert.equal(m.get(`${base.slice(0, 101)}!${base.slice(102)}`), undefined);
  assert.equal(m.has(base), false);
});

test('short and empty keys, overwrites and clear behave as in a Map', () => {
  const m = new TextMap<string>();
  const ref = new Map<string, string>();
  const keys = ['', 'a', 'ab', '{"type": "object"}', 'é', 'a'.repeat(64), 'a'.repeat(65), 'b'.repeat(65)];
  for (const [i, k] of keys.entries()) {
    m.set(k, `v${i}`);
    ref.set(k, `v${i}`);
  }
  m.set('a', 'again');
  ref.set('a', 'again');
  assert.equal(m.size, ref.size);
  for (const k of [...keys, 'zz', 'a'.repeat(66)]) assert.equal(m.get(k), ref.get(k), JSON.stringify(k));
  m.clear();
  assert.equal(m.size, 0);
  assert.equal(m.get('a'), undefined);
});
