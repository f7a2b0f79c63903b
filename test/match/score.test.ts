/** Lenient scores of one record: the examples, the definitions, gates, judge verdicts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilePolicy, withoutJudge } from '../../metrics/match/policy.ts';
import { scoreLenient } from '../../metrics/match/score.ts';
import { flattenLeaves } from '../../metrics/paths.ts';
import type { PyValue } from '../../src/core/pyjson.ts';
import { exactRaw, J, lenient } from './helpers.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    nationality: { type: 'string' },
    total: { type: 'number' },
    date: { type: 'string' },
    line_items: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, amount: { type: 'number' } } },
    },
  },
};
const GOLD = `{"summary": "rely extensively on new knowledge created for specific situations",
  "nationality": "United States", "total": 1200, "date": "2024-03-05",
  "line_items": [{"sku": "A-1", "amount": 10.5}, {"sku": "B-2", "amount": 20}]}`;
const PRED = `{"summary": "Rely extensively on new knowledge created for specific situations",
  "nationality": "American", "total": "$1,200.00", "date": "March 5, 2024",
  "line_items": [{"sku": "B-2", "amount": 20}, {"sku": "A-1", "amount": 10.5}]}`;

test("the issue's examples: every one scores 0 exactly and 1 leniently", () => {
  assert.equal(exactRaw(J(GOLD), J(PRED)), 0);
  const r = lenient(GOLD, PRED, { schema: SCHEMA });
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(r.lenient_value_accuracy, 1); // hardening 1 (structured), gate 1 (same paths)
  assert.equal(r.lenient_faithfulness, 1);
  assert.equal(r.field_f1, 1);
  assert.deepEqual(r.matcher_counts, { date: 1, exact: 4, number: 1, synonyms: 1, text: 1 });
  assert.deepEqual(
    r.leaves.slice(0, 4).map((l) => [l.path, l.accepted_by]),
    [
      ['summary', 'text'],
      ['nationality', 'synonyms'],
      ['total', 'number'],
      ['date', 'date'],
    ],
  );
});

test('definitions on a hand-worked record: accuracy, faithfulness, precision, recall, F1', () => {
  // Gold leaves: a = "red car" (pred "red bus": wrong, token F1 0.5), b = 7 (pred 7.0: exact),
  // c = "x" (missing: token F1 vs null = 0). Predicted leaves: a, b, d (invented).
  const r = lenient('{"a": "red car", "b": 7, "c": "x"}', '{"a": "red bus", "b": 7.0, "d": 1}', {
    modality: 'image',
  });
  assert.equal(r.gold_leaves, 3);
  assert.equal(r.pred_leaves, 3);
  assert.equal(r.accepted_leaves, 1);
  assert.equal(r.missed_leaves, 1);
  assert.equal(r.invented_leaves, 1);
  assert.equal(r.raw_value_accuracy, 1 / 3);
  assert.equal(r.raw_faithfulness, (0.5 + 1 + 0) / 3);
  assert.equal(r.field_precision, 1 / 3);
  assert.equal(r.field_recall, 1 / 3);
  assert.equal(r.field_f1, 1 / 3);
  // Gate: path-set F1 = 2/3 (2 common paths of 3 and 3), image gate = ((2/3)/0.9)^2.
  const gate = (2 / 3 / 0.9) ** 2;
  assert.ok(Math.abs(r.coverage_gate - gate) < 1e-12);
  assert.ok(Math.abs(r.lenient_value_accuracy - gate / 3) < 1e-12);
  assert.deepEqual(
    r.leaves.map((l) => [l.path, l.pred_path, l.verdict, l.similarity]),
    [
      ['a', 'a', 'no_match', 0.5],
      ['b', 'b', 'match', 1],
      ['c', null, 'missing', 0],
    ],
  );
  // Text modality: the hard gate at 0.95 closes.
  assert.equal(
    lenient('{"a": "red car", "b": 7, "c": "x"}', '{"a": "red bus", "b": 7.0, "d": 1}', { modality: 'text' })
      .lenient_value_accuracy,
    0,
  );
});

test('gates come from the exact scorer when given, so the comparison is like for like', () => {
  const r = lenient('{"a": "X"}', '{"a": "x"}', { gates: { hardening: 0, coverage_gate: 1 } });
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(r.lenient_value_accuracy, 0);
  assert.equal(r.lenient_faithfulness, 0);
  assert.equal(r.field_f1, 1); // content measures are not gated
});

test('a candidate that is not JSON scores 0; empty ground truth scores 1', () => {
  const bad = scoreLenient(J('{"a": 1}'), 'not json', {}, { policy: compilePolicy({}), modality: 'image' });
  assert.equal(bad.hardening, 0);
  assert.equal(bad.lenient_value_accuracy, 0);
  assert.equal(bad.field_precision, 0);
  assert.equal(bad.field_recall, 0);
  assert.equal(bad.missed_leaves, 1);
  const empty = lenient('{}', '{}');
  assert.equal(empty.raw_value_accuracy, 1);
  assert.equal(empty.field_f1, 1);
});

test('judge pairs: pending until verdicts come back; a malformed answer is unscored, not a mismatch', () => {
  const policy = compilePolicy({ fields: { city: { match: 'judge', first: 'text' } } });
  const gold = J('{"city": "NYC", "zip": "10001", "other": "Big Apple"}');
  const pred = J('{"city": "New York City", "zip": "10001", "other": "big apple"}');
  const first = scoreLenient(gold, pred, {}, { policy, modality: 'image' });
  assert.equal(first.pending_leaves, 1);
  assert.equal(first.unsettled.length, 1);
  const u = first.unsettled[0];
  assert.deepEqual(
    { path: u.path, pred_path: u.pred_path, field: u.field, gold: u.gold, pred: u.pred },
    { path: 'city', pred_path: 'city', field: 'city', gold: '"NYC"', pred: '"New York City"' },
  );
  assert.match(u.hash, /^[0-9a-f]{64}$/);
  assert.equal(first.raw_value_accuracy, 2 / 3); // pending counts as not accepted
  // The same pair elsewhere has the same hash (stable across records and runs).
  const again = scoreLenient(
    J('{"city": "NYC"}'),
    J('{"city": "New York City"}'),
    {},
    { policy, modality: 'image' },
  );
  assert.equal(again.unsettled[0].hash, u.hash);

  const yes = scoreLenient(
    gold,
    pred,
    {},
    { policy, modality: 'image', verdicts: new Map([[u.hash, 'match']]) },
  );
  assert.equal(yes.raw_value_accuracy, 1);
  assert.equal(yes.leaves[0].accepted_by, 'judge');
  assert.equal(yes.matcher_counts.judge, 1);
  assert.deepEqual(yes.unsettled, []);
  const no = scoreLenient(
    gold,
    pred,
    {},
    { policy, modality: 'image', verdicts: new Map([[u.hash, 'no_match']]) },
  );
  assert.equal(no.raw_value_accuracy, 2 / 3);
  assert.equal(no.leaves[0].verdict, 'no_match');
  const unscored = scoreLenient(
    gold,
    pred,
    {},
    { policy, modality: 'image', verdicts: new Map([[u.hash, 'unscored']]) },
  );
  assert.equal(unscored.unscored_leaves, 1);
  assert.equal(unscored.raw_value_accuracy, 2 / 3); // not accepted, as no_match (issue 21 finding 4)
  assert.equal(unscored.field_precision, 2 / 3);
  assert.equal(unscored.leaves[0].verdict, 'unscored');
  // Lenient without judge: nothing unsettled.
  const noJudge = scoreLenient(gold, pred, {}, { policy: withoutJudge(policy), modality: 'image' });
  assert.deepEqual(noJudge.unsettled, []);
  assert.equal(noJudge.leaves[0].matcher, 'text');
});

test('keys with dots: scored on SOB dotted paths, so a collision counts as SOB counts it', () => {
  const gold = '{"a.b": "X", "c": "y"}';
  const pred = '{"a": {"b": "X"}, "c": "Y"}';
  assert.equal(exactRaw(J(gold), J(pred)), 0.5);
  const r = lenient(gold, pred);
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(r.gold_leaves, 2);
  assert.match(r.notes[0], /position by position/);
});

test('detail levels: all leaves, only those not exactly equal, none', () => {
  assert.equal(lenient(GOLD, PRED, { schema: SCHEMA, detail: 'all' }).leaves.length, 8);
  assert.equal(lenient(GOLD, PRED, { schema: SCHEMA, detail: 'errors' }).leaves.length, 4);
  assert.equal(lenient(GOLD, PRED, { schema: SCHEMA, detail: 'none' }).leaves.length, 0);
});

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValue(r: () => number, depth: number): PyValue {
  const x = r();
  if (depth > 2 || x < 0.45) {
    const words = ['a1', 'b2', 'c3', 'A1', 'd4 e5', '1,200', '1200'];
    if (x < 0.15) return BigInt(Math.floor(r() * 3));
    if (x < 0.2) return null;
    return words[Math.floor(r() * words.length)];
  }
  if (x < 0.7) {
    const m = new Map<string, PyValue>();
    for (const k of ['k', 'l', 'm']) if (r() < 0.7) m.set(k, randomValue(r, depth + 1));
    return m;
  }
  return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
}

/** Perturbs a value: shuffles arrays, drops and changes items, recases strings. */
function perturb(v: PyValue, r: () => number): PyValue {
  if (Array.isArray(v)) {
    const out = v.filter(() => r() > 0.15).map((x) => perturb(x, r));
    if (r() < 0.3) out.push(randomValue(r, 3));
    if (r() < 0.5) out.reverse();
    return out;
  }
  if (v instanceof Map) {
    const m = new Map<string, PyValue>();
    for (const [k, c] of v) if (r() > 0.1) m.set(k, perturb(c, r));
    return m;
  }
  if (typeof v === 'string' && r() < 0.3) return v.toUpperCase();
  if (r() < 0.15) return 'zz';
  return v;
}

test('lenient Value Accuracy >= exact on 2,000 random records (default policy)', () => {
  const r = rng(7);
  const policy = compilePolicy({});
  let better = 0;
  for (let i = 0; i < 2000; i++) {
    const gold = new Map<string, PyValue>([['root', randomValue(r, 0)]]);
    const pred = perturb(gold, r);
    const s = scoreLenient(gold, pred, {}, { policy, modality: 'image' });
    const exact = exactRaw(gold, pred);
    assert.ok(
      s.raw_value_accuracy >= exact - 1e-12,
      `record ${i}: lenient ${s.raw_value_accuracy} < exact ${exact}`,
    );
    assert.equal(s.gold_leaves, flattenLeaves(gold).size, `record ${i}: leaf count`);
    if (s.raw_value_accuracy > exact + 1e-12) better++;
  }
  assert.ok(better > 100, `only ${better} records improved`);
});
