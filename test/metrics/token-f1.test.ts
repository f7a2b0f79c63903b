/**
 * Faithfulness's token F1 takes shortcuts on the hot path (an ASCII answer compared word by word
 * in place, a long ground truth's token counts built once, fixed tokens for null and booleans).
 * Each must give exactly the F1 of the reference's definition: lowercase, punctuation to spaces,
 * articles dropped, split, multiset overlap. Checked against a counter written here, on answers
 * built to hit every branch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeTokens, tokenF1, tokenF1Known } from '../../metrics/values.ts';
import type { PyValue } from '../../src/core/pyjson.ts';

/** Multiset-overlap F1 by counting (SPEC: both empty 1, one empty 0). */
function referenceF1(g: string[], p: string[]): number {
  if (g.length === 0 && p.length === 0) return 1;
  if (g.length === 0 || p.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      overlap++;
      counts.set(t, c - 1);
    }
  }
  if (overlap === 0) return 0;
  const precision = overlap / p.length;
  const recall = overlap / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** A deterministic generator (no Math.random: a failure must reproduce). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = [
  'a',
  'A',
  'an',
  'AN',
  'The',
  'the',
  'then',
  'and',
  'Paris',
  'paris',
  'x_1',
  '42',
  'B2',
  'é',
  'naïve',
  'Ünïcode',
  'on',
  'of',
  'OF',
];
const SEPS = [' ', ', ', '-', '.', '  ', '\t', '/', '(', ')', "'", '"'];

function phrase(rand: () => number, words: number, asciiOnly: boolean): string {
  let out = '';
  for (let i = 0; i < words; i++) {
    let w = WORDS[Math.floor(rand() * WORDS.length)];
    if (asciiOnly && /[^\x00-\x7f]/.test(w)) w = 'word';
    out += (i > 0 ? SEPS[Math.floor(rand() * SEPS.length)] : '') + w;
  }
  return out;
}

test('token F1 of a string answer equals the counted multiset F1, short and long ground truths, ASCII or not', () => {
  const rand = lcg(7);
  let checked = 0;
  let longGt = 0;
  let nonAscii = 0;
  for (let i = 0; i < 4000; i++) {
    // Ground truths from 0 to ~80 words (past 32 tokens the counts path runs).
    const gt = phrase(rand, Math.floor(rand() ** 2 * 80), rand() < 0.7);
    const pred = phrase(rand, Math.floor(rand() * 40), rand() < 0.7);
    const g = normalizeTokens(gt);
    const expected = referenceF1(g, normalizeTokens(pred));
    assert.equal(
      tokenF1Known(gt, g, pred),
      expected,
      `gt ${JSON.stringify(gt)} pred ${JSON.stringify(pred)}`,
    );
    assert.equal(tokenF1(gt, pred), expected);
    checked++;
    if (g.length > 32) longGt++;
    if (/[^\x00-\x7f]/.test(pred)) nonAscii++;
  }
  assert.equal(checked, 4000);
  // Both shortcuts and the fallback really ran.
  assert.ok(longGt > 200, `long ground truths: ${longGt}`);
  assert.ok(nonAscii > 200, `non-ASCII answers: ${nonAscii}`);
});

test('a missing leaf reads as null; booleans as "true"/"false": the same F1 as their words', () => {
  const cases: [PyValue, PyValue | undefined, number][] = [
    ['null', undefined, 1], // the word "null" against a missing leaf (read as null)
    ['Null value', null, 2 / 3],
    ['true', true, 1],
    ['it is False', false, 0.5],
    ['yes', false, 0],
    [null, undefined, 1],
    [null, null, 1],
    [0, false, 0],
  ];
  for (const [gt, pred, f] of cases) {
    const got = tokenF1Known(gt, normalizeTokens(gt), pred);
    assert.ok(
      Math.abs(got - f) < 1e-12,
      `${JSON.stringify(gt)} vs ${JSON.stringify(pred)}: ${got}, want ${f}`,
    );
    assert.equal(got, tokenF1(gt, pred));
  }
});

test('repeated words count once per occurrence (multiset), also past 32 ground-truth tokens', () => {
  const gt = Array.from({ length: 40 }, (_, i) => `w${i % 5}`).join(' '); // 8 of each of w0..w4
  const g = normalizeTokens(gt);
  assert.equal(g.length, 40);
  // 10 x w0: 8 pair off. precision 8/10, recall 8/40.
  const f = tokenF1Known(gt, g, Array(10).fill('W0').join(' '));
  assert.ok(Math.abs(f - (2 * 0.8 * 0.2) / 1.0) < 1e-12, String(f));
  // Short ground truth: "a b b" vs "B b b" -> tokens [b, b] vs [b, b, b] ("a" is an article).
  assert.ok(Math.abs(tokenF1Known('a b b', normalizeTokens('a b b'), 'B b b') - 0.8) < 1e-12);
});
