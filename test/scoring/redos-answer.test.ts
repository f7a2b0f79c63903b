/**
 * Issue 21 finding 2: a time-out is remembered only for what depends on the schema alone. One
 * model's catastrophic-backtracking answer (`pattern: ^(a+)+$`, answer `"aaa...ab"`) ran over the
 * record budget while being validated, "this schema ran over" was remembered for the run, and
 * another model's exact answers to that schema then scored 0.000. Now only the slow answer's
 * record is reported; the exact answers score 1.000, in both profiles.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-redos-answer-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const schema = {
  type: 'object',
  properties: { code: { type: 'string', pattern: '^(a+)+$' } },
  required: ['code'],
};
const gt = { code: 'aaaa' };

for (const profile of ['sob', 'strict']) {
  test(`a catastrophic-backtracking answer beside exact ones: the exact ones score 1.000 (${profile} profile)`, () => {
    const dir = join(tmp, profile);
    mkdirSync(join(dir, 'in'), { recursive: true });
    // File names sort the slow answer first: its time-out comes before the exact answers.
    writeFileSync(
      join(dir, 'in', 'response_a-evil.jsonl'),
      `${responseLine('r1', { code: `${'a'.repeat(40)}b` }, { schema, gt })}\n`,
    );
    writeFileSync(
      join(dir, 'in', 'response_b-exact.jsonl'),
      `${responseLine('r1', gt, { schema, gt })}\n${responseLine('r2', gt, { schema, gt })}\n`,
    );
    const out = join(dir, 'out');
    const r = sob(
      [
        'score',
        join(dir, 'in'),
        '--out',
        out,
        '--bootstrap-samples',
        '0',
        '--profile',
        profile,
        '--jobs',
        '1',
        '--record-timeout-ms',
        '3000',
      ],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /response_a-evil\.jsonl:1 \(record r1\): scoring exceeded 3000 ms/);
    assert.doesNotMatch(r.stderr, /ran over the time budget earlier/);
    const evil = readOut(out, 'text', 'a-evil');
    assert.equal(evil.rows.length, 1);
    assert.equal(evil.rows[0].leaf_value_em, 0);
    const exact = readOut(out, 'text', 'b-exact');
    assert.deepEqual(
      exact.rows.map((x) => [x.record_id, x.schema_compliance, x.leaf_value_em]),
      [
        ['r1', 1, 1],
        ['r2', 1, 1],
      ],
    );
    assert.equal(exact.summary.data_quality.scoring_error_count, undefined);
  });
}
