/**
 * The refused-schema contract (HELPERS.md): a record whose schema the provider refused is written
 * to responses.jsonl with `eval_info.schema_rejected: true` and no answer; the scorer leaves it out
 * of the rows and the metric means and counts it in `data_quality.schema_rejected_count`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, SCHEMA, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-rejected-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const rejected = (id: string) =>
  JSON.stringify({
    metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy', source: 'text' },
    input: { context: 'c', question: 'q', json_schema: SCHEMA },
    output: { ground_truth: { name: 'x', n: 1 }, candidate_response: null, raw_response: null },
    eval_info: { schema_rejected: true, error: 'Invalid schema for response_format' },
  });

for (const profile of ['sob', 'strict']) {
  test(`rows with a refused schema are left out of the means and counted (${profile} profile)`, () => {
    const f = join(tmp, `responses-${profile}.jsonl`);
    writeFileSync(
      f,
      [
        responseLine('a', { name: 'x', n: 1 }, { metadata: { source: 'text' } }),
        rejected('b'),
        responseLine('c', { name: 'x', n: 2 }, { metadata: { source: 'text' } }),
        rejected('d'),
      ].join('\n'),
    );
    const bench = join(tmp, `bench-${profile}.jsonl`);
    writeFileSync(
      bench,
      `${['a', 'b', 'c', 'd']
        .map((id) =>
          JSON.stringify({
            metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
            input: { context: 'c', question: 'q', json_schema: SCHEMA },
            output: { ground_truth: { name: 'x', n: 1 } },
          }),
        )
        .join('\n')}\n`,
    );
    const out = join(tmp, `out-${profile}`);
    const r = sob(
      ['score', f, '--out', out, '--bootstrap-samples', '0', '--profile', profile, '--benchmark', bench],
      tmp,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /2 records whose schema the provider refused \(eval_info\.schema_rejected\) are left out/,
    );
    const { rows, summary } = readOut(out, 'text', `responses-${profile}`);
    assert.deepEqual(
      rows.map((x) => x.record_id),
      ['a', 'c'],
    );
    assert.equal(summary.num_records, 2);
    assert.equal(summary.data_quality.schema_rejected_count, 2);
    assert.equal(summary.data_quality.distinct_record_ids, 2);
    // a: both leaves right; c: one of two (text gate open at path-set F1 1): mean 0.75, not 0.375.
    assert.equal(summary.summary.overall.metrics.leaf_value_em.mean, 0.75);
    assert.equal(summary.summary.overall.metrics.schema_compliance.mean, 1);
    // Refused records were asked: they are not missing from the answers.
    assert.equal(summary.benchmark?.missing_ids, 0);
  });
}
