/** Array alignment rules on hand-worked cases: pairs, similarities, margins, misses, inventions. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactRaw, J, lenient } from './helpers.ts';

const ITEMS = '[{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]';
const SWAPPED = '[{"sku": "B", "qty": 2}, {"sku": "A", "qty": 1}]';

test('auto: line items in another order are paired item for item (exact pairs)', () => {
  const r = lenient(`{"items": ${ITEMS}}`, `{"items": ${SWAPPED}}`);
  assert.equal(exactRaw(J(`{"items": ${ITEMS}}`), J(`{"items": ${SWAPPED}}`)), 0);
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(r.field_precision, 1);
  assert.deepEqual(r.alignments, [
    {
      path: 'items',
      pred_path: 'items',
      rule: 'auto',
      source: 'default',
      pairs: [
        { gold: 0, pred: 1, similarity: 1, margin: 1, how: 'exact' },
        { gold: 1, pred: 0, similarity: 1, margin: 1, how: 'exact' },
      ],
      missed: [],
      invented: [],
    },
  ]);
  assert.deepEqual(
    r.leaves.map((l) => [l.path, l.pred_path, l.accepted_by]),
    [
      ['items[0].sku', 'items[1].sku', 'exact'],
      ['items[0].qty', 'items[1].qty', 'exact'],
      ['items[1].sku', 'items[0].sku', 'exact'],
      ['items[1].qty', 'items[0].qty', 'exact'],
    ],
  );
});

test('ordered: the same swap scores 0, as SOB does', () => {
  const r = lenient(`{"items": ${ITEMS}}`, `{"items": ${SWAPPED}}`, {
    policy: { fields: { items: 'ordered' } },
  });
  assert.equal(r.raw_value_accuracy, 0);
  assert.deepEqual(
    r.alignments[0].pairs.map((p) => [p.gold, p.pred, p.similarity, p.how]),
    [
      [0, 0, 0, 'ordered'],
      [1, 1, 0, 'ordered'],
    ],
  );
});

test('a missed item: unmatched gold item, recall drops, precision does not', () => {
  const r = lenient('["alpha", "beta", "gamma"]', '["alpha", "gamma"]');
  assert.deepEqual(r.alignments[0].missed, [1]);
  assert.deepEqual(r.alignments[0].invented, []);
  assert.equal(r.missed_leaves, 1);
  assert.equal(r.field_recall, 2 / 3);
  assert.equal(r.field_precision, 1);
  assert.equal(r.field_f1, 0.8); // 2 * 1 * 2/3 / (1 + 2/3)
  assert.equal(exactRaw(J('["alpha", "beta", "gamma"]'), J('["alpha", "gamma"]')), 1 / 3);
});

test('an invented item: unmatched prediction, precision drops, Value Accuracy does not', () => {
  const r = lenient(
    `{"items": ${ITEMS}}`,
    '{"items": [{"sku": "A", "qty": 1}, {"sku": "Z", "qty": 9}, {"sku": "B", "qty": 2}]}',
  );
  assert.deepEqual(r.alignments[0].invented, [1]);
  assert.equal(r.invented_leaves, 2);
  assert.equal(r.pred_leaves, 6);
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(r.field_precision, 4 / 6);
  assert.equal(r.field_f1, 0.8);
  // The coverage gate still sees the extra paths: path-set F1 = 2*(4/6)(1)/(4/6+1) = 0.8,
  // gate = (0.8/0.9)^2, the gate SOB applies to Value Accuracy.
  assert.ok(Math.abs(r.coverage_gate - (0.8 / 0.9) ** 2) < 1e-12);
  assert.ok(Math.abs(r.lenient_value_accuracy - (0.8 / 0.9) ** 2) < 1e-12);
});

test('auto near-tie: the assignment maximises total similarity, margins show how close it was', () => {
  // Token F1 (2 * overlap / (|g| + |p|)):
  //   g0 = "t1 t2 t3 t4" vs p0 = "t1 t2 t3 t4 q2 q3": 2*4/10 = 0.8;  vs p1 = "t1 t2 t3 q1": 2*3/8 = 0.75
  //   g1 = "t4 q2 q3 u1" vs p0: 2*3/10 = 0.6;  vs p1: 0
  // Greedy would give g0 -> p0 (0.8) and leave g1 alone (0 < floor): total 0.8.
  // Hungarian: g0 -> p1 (0.75) + g1 -> p0 (0.6) = 1.35.
  const r = lenient('["t1 t2 t3 t4", "t4 q2 q3 u1"]', '["t1 t2 t3 t4 q2 q3", "t1 t2 t3 q1"]');
  const pairs = r.alignments[0].pairs;
  assert.deepEqual(
    pairs.map((p) => [p.gold, p.pred, p.how]),
    [
      [0, 1, 'assigned'],
      [1, 0, 'assigned'],
    ],
  );
  assert.equal(pairs[0].similarity, 0.75);
  assert.ok(Math.abs(pairs[0].margin! - -0.05) < 1e-12); // 0.75 - 0.8: second best, for the total
  assert.equal(pairs[1].similarity, 0.6);
  assert.equal(pairs[1].margin, 0.6); // 0.6 - 0
  assert.equal(r.raw_value_accuracy, 0);
  assert.ok(Math.abs(r.raw_faithfulness - (0.75 + 0.6) / 2) < 1e-12);
});

test('auto floor: a pair below it is a miss and an invention, not a forced pair', () => {
  // "alpha beta" vs "alpha gamma delta": 2*1/5 = 0.4.
  const below = lenient('["alpha beta"]', '["alpha gamma delta"]');
  assert.deepEqual(below.alignments[0].pairs, []);
  assert.deepEqual(below.alignments[0].missed, [0]);
  assert.deepEqual(below.alignments[0].invented, [0]);
  assert.equal(below.invented_leaves, 1);
  const above = lenient('["alpha beta"]', '["alpha gamma delta"]', { policy: { floor: 0.3 } });
  assert.deepEqual(above.alignments[0].pairs, [
    { gold: 0, pred: 0, similarity: 0.4, margin: null, how: 'assigned' },
  ]);
  const perArray = lenient('{"a": ["alpha beta"]}', '{"a": ["alpha gamma delta"]}', {
    policy: { fields: { a: { align: 'auto', floor: 0.3 } } },
  });
  assert.equal(perArray.alignments[0].pairs.length, 1);
});

test('auto never loses an exact positional match: it falls back to the positional pairing', () => {
  // In place: item 0 shares its exact id (1 leaf accepted). The assignment prefers the swap by
  // similarity (0.444 + 0.333 > 0.5 + 0) but accepts nothing, so the positional pairing is kept.
  const gold = '[{"id": "1", "t": "a b c d"}, {"id": "2", "t": "x y"}]';
  const pred = '[{"id": "1", "t": "x"}, {"id": "9", "t": "a b c d e"}]';
  const r = lenient(gold, pred, { policy: { floor: 0.3 } });
  assert.equal(r.alignments[0].fallback, 'ordered_better');
  assert.deepEqual(
    r.alignments[0].pairs.map((p) => [p.gold, p.pred]),
    [
      [0, 0],
      [1, 1],
    ],
  );
  assert.equal(r.accepted_leaves, 1);
  assert.equal(r.raw_value_accuracy, exactRaw(J(gold), J(pred)));
});

test('set: every gold item found among the predictions (many to one); multiset: one to one', () => {
  const set = lenient('{"tags": ["a1", "b1", "b1"]}', '{"tags": ["b1", "a1", "c1"]}', {
    policy: { fields: { tags: 'set' } },
  });
  assert.deepEqual(
    set.alignments[0].pairs.map((p) => [p.gold, p.pred, p.how]),
    [
      [0, 1, 'set'],
      [1, 0, 'set'],
      [2, 0, 'set'],
    ],
  );
  assert.deepEqual(set.alignments[0].invented, [2]);
  assert.equal(set.raw_value_accuracy, 1);
  assert.equal(set.field_precision, 2 / 3); // "b1" and "a1" back accepted leaves, "c1" does not
  const multi = lenient('{"tags": ["a1", "b1", "b1"]}', '{"tags": ["b1", "a1", "c1"]}', {
    policy: { fields: { tags: 'multiset' } },
  });
  assert.deepEqual(multi.alignments[0].missed, [2]);
  assert.equal(multi.raw_value_accuracy, 2 / 3);
  // An item with one wrong field is not in the set: no partial credit.
  const objs = lenient(`{"items": ${ITEMS}}`, '{"items": [{"sku": "B", "qty": 3}, {"sku": "A", "qty": 1}]}', {
    policy: { fields: { items: 'set' } },
  });
  assert.equal(objs.raw_value_accuracy, 0.5);
  assert.deepEqual(objs.alignments[0].missed, [1]);
});

test('match_by: items pair by their key fields (under the key field matcher), one to one', () => {
  const r = lenient(`{"items": ${ITEMS}}`, '{"items": [{"sku": "b", "qty": 2}, {"sku": "A", "qty": 5}]}', {
    policy: { fields: { items: { align: 'match_by', keys: ['sku'] } } },
  });
  assert.deepEqual(
    r.alignments[0].pairs.map((p) => [p.gold, p.pred, p.how]),
    [
      [0, 1, 'key'],
      [1, 0, 'key'],
    ],
  );
  // sku A exact, qty 1 vs 5 wrong; sku B by text, qty 2 exact.
  assert.equal(r.accepted_leaves, 3);
  assert.deepEqual(r.matcher_counts, { exact: 2, text: 1 });
  // A prediction without the key is never paired.
  const nokey = lenient(`{"items": ${ITEMS}}`, '{"items": [{"qty": 1}]}', {
    policy: { fields: { items: { align: 'match_by', keys: ['sku'] } } },
  });
  assert.deepEqual(nokey.alignments[0].missed, [0, 1]);
  assert.deepEqual(nokey.alignments[0].invented, [0]);
});

test('nested arrays are aligned at every level', () => {
  const gold = '{"orders": [{"id": 1, "lines": ["x", "y"]}, {"id": 2, "lines": ["z"]}]}';
  const pred = '{"orders": [{"id": 2, "lines": ["z"]}, {"id": 1, "lines": ["y", "x"]}]}';
  const r = lenient(gold, pred);
  assert.equal(r.raw_value_accuracy, 1);
  assert.equal(exactRaw(J(gold), J(pred)), 0);
  assert.deepEqual(
    r.alignments.map((a) => [a.path, a.pred_path, a.pairs.map((p) => `${p.gold}->${p.pred}`).join(' ')]),
    [
      ['orders', 'orders', '0->1 1->0'],
      ['orders[0].lines', 'orders[1].lines', '0->1 1->0'],
      ['orders[1].lines', 'orders[0].lines', '0->0'],
    ],
  );
});

test('untrusted sizes: beyond the matrix cap or the pair budget, auto pairs by position and says so', () => {
  const n = 302; // reversed, so no item is in place
  const gold = JSON.stringify(Array.from({ length: n }, (_, i) => `g${i}`));
  const pred = JSON.stringify(Array.from({ length: n }, (_, i) => `g${n - 1 - i}`));
  const capped = lenient(gold, pred);
  assert.equal(capped.alignments[0].fallback, 'matrix_cap');
  assert.equal(capped.accepted_leaves, 0);
  assert.ok(capped.notes.some((x) => x.includes('matrix_cap')));
  const budget = lenient('["a b", "c d", "e f"]', '["c d", "e f", "a b"]', { budget: 4 });
  assert.equal(budget.alignments[0].fallback, 'budget');
  assert.equal(budget.accepted_leaves, 0);
});
