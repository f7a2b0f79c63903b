/**
 * No silent zeros: `sob score` says on stderr which rows it scored without being able to tell
 * them apart (no `metadata.record_id`) and which scored 0 because their schema is not a usable
 * JSON Schema (a string that is not JSON, an array), with line and record id, under both profiles.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-row-warnings-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const noId = (line: string) => {
  const rec = JSON.parse(line) as { metadata: Record<string, unknown> };
  delete rec.metadata.record_id;
  return JSON.stringify(rec);
};

const file = join(tmp, 'response_m.jsonl');
writeFileSync(
  file,
  `${[
    responseLine('a', { name: 'x', n: 1 }),
    noId(responseLine('b', { name: 'x', n: 1 })),
    responseLine('', { name: 'x', n: 1 }),
    responseLine('c', { name: 'x', n: 1 }, { schema: '{"type": "object", ' }),
    responseLine('d', { name: 'x', n: 1 }, { schema: ['not', 'a', 'schema'] }),
    responseLine('e', { name: 'x', n: 1 }),
  ].join('\n')}\n`,
);

for (const profile of ['sob', 'strict']) {
  test(`${profile} profile: rows without a record id and rows with an unusable schema are named with their lines`, () => {
    const out = join(tmp, `out-${profile}`);
    const r = sob(['score', file, '--out', out, '--profile', profile, '--bootstrap-samples', '0'], tmp);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\(text\): 2 rows name no metadata\.record_id \(lines 2, 3\)/);
    assert.match(
      r.stderr,
      /\(text\): 2 records have an input\.json_schema that is not a usable JSON Schema, so they score 0 \(data_quality\.invalid_schema_input_count\): line 4, "c": [^;]+; line 5, "d": /,
    );
    const { rows, summary } = readOut(out, 'text', 'm');
    assert.equal(rows.length, 6);
    assert.equal(summary.data_quality.invalid_schema_input_count, 2);
    assert.deepEqual(
      rows.map((x) => x.leaf_value_em),
      [1, 1, 1, 0, 0, 1],
    );
  });
}

test('a clean file says neither', () => {
  const clean = join(tmp, 'clean', 'response_m.jsonl');
  mkdirSync(join(tmp, 'clean'));
  writeFileSync(
    clean,
    `${responseLine('a', { name: 'x', n: 1 })}\n${responseLine('b', { name: 'y', n: 2 })}\n`,
  );
  const r = sob(['score', clean, '--out', join(tmp, 'out-clean'), '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /record_id|json_schema/);
});
