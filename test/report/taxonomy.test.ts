/** The error taxonomy on a hand-made set of rows: each record in exactly one class. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, type TaxonomyRow, taxonomy } from '../../metrics/taxonomy.ts';

const ok: TaxonomyRow = {
  record_id: 'ok',
  json_root_structured: 1,
  schema_valid_input: 1,
  schema_compliance: 1,
  hier_path_recall: 1,
  type_precision: 1,
  leaf_value_em: 1,
};

test('each record falls in the first class that fits; counts and rates add up', () => {
  const rows: TaxonomyRow[] = [
    ok,
    { ...ok, record_id: 'parse', json_root_structured: 0, schema_compliance: 0 },
    { ...ok, record_id: 'schema', schema_compliance: 0, hier_path_recall: 0 },
    { ...ok, record_id: 'missing1', hier_path_recall: 0.5, leaf_value_em: 0.5, missing_gt_paths: ['a', 'b'] },
    { ...ok, record_id: 'missing2', hier_path_recall: 0.9, missing_gt_paths: ['a'] },
    { ...ok, record_id: 'type', type_precision: 0.8, leaf_value_em: 0.5 },
    { ...ok, record_id: 'value', leaf_value_em: 0.25 },
  ];
  assert.deepEqual(rows.map(classify), [
    'correct',
    'parse_failure',
    'schema_violation',
    'missing_paths',
    'missing_paths',
    'type_mismatch',
    'value_error',
  ]);
  const t = taxonomy(rows);
  assert.equal(t.n, 7);
  assert.equal(t.classes.missing_paths.count, 2);
  assert.equal(t.classes.missing_paths.rate, 2 / 7);
  assert.deepEqual(t.classes.missing_paths.examples, ['missing1', 'missing2']);
  assert.equal(
    Object.values(t.classes).reduce((s, c) => s + c.count, 0),
    7,
  );
  assert.deepEqual(t.topMissingPaths, [
    { path: 'a', count: 2 },
    { path: 'b', count: 1 },
  ]);
});

test('a record the coverage gate zeroed is filed under the gate that fired, not under missing paths', () => {
  const lostItem = { ...ok, record_id: 'inv', hier_path_recall: 11 / 14, leaf_value_em: 0, coverage_gate: 0 };
  assert.equal(classify(lostItem), 'coverage_gate');
  // The gate did not fire (image, F1 high enough): the missing paths name it.
  assert.equal(classify({ ...lostItem, leaf_value_em: 0.8, coverage_gate: 1 }), 'missing_paths');
  const t = taxonomy([lostItem, ok]);
  assert.equal(t.classes.coverage_gate.count, 1);
  assert.equal(t.classes.missing_paths.count, 0);
});
