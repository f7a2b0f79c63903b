/**
 * Issue 20, item 5: labels that tell the reason. A right value in the wrong JSON type ("1,000"
 * for a number) is a type slip, not a wrong value; the lenient summary says how much of the
 * exact loss the hardening gate holds (so the formatting share is not understated unseen); a
 * record the coverage gate took down is labelled by that gate, not "value error".
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { classify } from '../../metrics/taxonomy.ts';
import { lenient } from '../match/helpers.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-labels-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = {
  type: 'object',
  properties: { item: { type: 'string' }, qty: { type: 'integer' }, price: { type: 'number' } },
};

test('"1,000" for a number is accepted as a type slip (named on the leaf and counted), "1,000.5" for 1000 is not', () => {
  const r = lenient(
    '{"item": "bolt", "qty": 1000, "price": 2.5}',
    '{"item": "bolt", "qty": "1,000", "price": "2.5"}',
    {
      schema: SCHEMA,
    },
  );
  assert.equal(r.type_slip_leaves, 2);
  assert.deepEqual(
    r.leaves.filter((l) => l.slip === 'type').map((l) => [l.path, l.accepted_by]),
    [
      ['qty', 'number'],
      ['price', 'number'],
    ],
  );
  const wrong = lenient(
    '{"item": "bolt", "qty": 1000, "price": 2.5}',
    '{"item": "bolt", "qty": "1,000.5", "price": 2.5}',
    {
      schema: SCHEMA,
    },
  );
  assert.equal(wrong.type_slip_leaves, 0);
});

test('the lenient summary states the share of the exact loss held by the hardening gate, and counts type slips', async () => {
  const line = (id: string, candidate: unknown) =>
    JSON.stringify({
      metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy', source: 'text' },
      input: { context: 'c', question: 'q', json_schema: SCHEMA },
      output: { ground_truth: { item: 'bolt', qty: 1000, price: 2.5 }, candidate_response: candidate },
    });
  const file = join(tmp, 'response_m.jsonl');
  writeFileSync(
    file,
    `${[
      line('right', { item: 'bolt', qty: 1000, price: 2.5 }),
      // The right values, but qty as a string: the schema fails, so exact and lenient VA are 0.
      line('slip', { item: 'bolt', qty: '1,000', price: 2.5 }),
      // Case only: exact misses item, lenient accepts it (formatting, the gap).
      line('case', { item: 'BOLT', qty: 1000, price: 2.5 }),
      // A wrong value.
      line('wrong', { item: 'nut', qty: 1000, price: 2.5 }),
    ].join('\n')}\n`,
  );
  const out = join(tmp, 'out');
  const r = await sob(['score', file, '--match', 'default', '--out', out, '--bootstrap-samples', '0'], {
    cwd: tmp,
  }).done;
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'text/m/eval_summary.json'), 'utf8'));
  // Exact VA: 1, 0, 2/3, 2/3 -> mean 7/12; loss 5/12. Gap: case 1/3. Held: slip's 1 (its three
  // values accepted, held at 0 by hardening). Rest: wrong's 1/3.
  const loss = s.lenient.loss;
  const near = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);
  near(loss.exact_loss, 5 / 12);
  near(loss.formatting, 1 / 12);
  near(loss.held_by_hardening, 1 / 4);
  near(loss.rest, 1 / 12);
  near(loss.formatting_share, 1 / 5);
  near(loss.held_by_hardening_share, 3 / 5);
  assert.equal(loss.type_slip_leaves, 1);
  near(s.lenient.summary.overall.metrics.held_by_hardening.mean, 1 / 4);
  // The leaf in lenient_records.jsonl says why.
  const side = readFileSync(join(out, 'text/m/lenient_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const slip = side.find((x) => x.record_id === 'slip');
  assert.deepEqual(slip.type_slips, ['qty']);
});

test('a record the coverage gate took down is labelled coverage_gate, never value error', () => {
  const row = {
    record_id: 'extra',
    json_root_structured: 1,
    schema_valid_input: 1,
    schema_compliance: 1,
    hier_path_recall: 1,
    type_precision: 0.75, // the extra keys have no type in the schema (sob profile)
    leaf_value_em: 0, // every value right, zeroed by the text gate (path-set F1 0.86 < 0.95)
  };
  assert.equal(classify({ ...row, coverage_gate: 0 }), 'coverage_gate');
  // The gate did not fire: a wrong value is still a value error, a wrong type a type mismatch.
  assert.equal(classify({ ...row, coverage_gate: 1, type_precision: 1, leaf_value_em: 0.5 }), 'value_error');
  assert.equal(classify({ ...row, coverage_gate: 1 }), 'type_mismatch');
  // An answer that adds a key the schema forbids fails its schema: the hardening gate names it.
  assert.equal(classify({ ...row, schema_compliance: 0, leaf_value_em: 0 }), 'schema_violation');
});
