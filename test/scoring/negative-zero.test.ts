/**
 * Issue 9 item 12: the reference compares canonical JSON text for Perfect Response, where Python
 * writes `-0.0` and `0.0` apart, so `-0.0` against a ground truth `0.0` is not a Perfect Response
 * (while Value Accuracy, which compares values, counts it equal).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-negzero-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] };

test('-0.0 against a ground truth 0.0 is not a Perfect Response in the sob profile (Value Accuracy 1)', () => {
  const f = join(tmp, 'response_negzero_image.jsonl');
  writeFileSync(
    f,
    [
      responseLine('neg', null, { schema: SCHEMA, gtText: '{"x": 0.0}', candText: '{"x": -0.0}' }),
      responseLine('same', null, { schema: SCHEMA, gtText: '{"x": 0.0}', candText: '{"x": 0.0}' }),
      responseLine('nested', null, {
        schema: { type: 'object' },
        gtText: '{"a": [1.5, {"b": -0.0}]}',
        candText: '{"a": [1.5, {"b": 0.0}]}',
      }),
    ].join('\n'),
  );
  const out = join(tmp, 'out');
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '0', '--profile', 'sob'], tmp);
  assert.equal(r.code, 0, r.stderr);
  const { rows, summary } = readOut(out, 'image', 'negzero');
  assert.deepEqual(
    rows.map((x) => [x.record_id, x.strict_json_em, x.leaf_value_em]),
    [
      ['neg', 0, 1],
      ['same', 1, 1],
      ['nested', 0, 1],
    ],
  );
  assert.equal(summary.summary.overall.metrics.strict_json_em.mean, 1 / 3);
});
