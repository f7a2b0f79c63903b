/**
 * A ground truth keeps its number lexemes through `sob build`: `17.0` stays a float, `3` an int,
 * as the scorer (which reads numbers the way Python does) needs for Faithfulness and Perfect.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-lossless-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('sob build writes the ground truth as the annotation wrote it (17.0 stays 17.0)', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'string' }, c: { type: 'integer' } },
  };
  const line = `{"source_id": "5a8b57f25542995d1e6f1371", "record_id": "f1", "question": "q", "json_schema": ${JSON.stringify(schema)}, "ground_truth": {"a": 17.0, "b": "é", "c": 3}}`;
  for (const [name, text] of [
    ['ann.jsonl', `${line}\n`],
    ['ann.json', `[${line}]`],
  ]) {
    writeFileSync(join(tmp, name), text);
    const out = join(tmp, name.replace('.', '-'), 'records.jsonl');
    const r = spawnSync(
      process.execPath,
      [
        join(ROOT, 'bin/sob.js'),
        'build',
        'hotpotqa',
        join(ROOT, '../shared/data/hotpotqa/hotpot_dev_distractor_v1.first53.json'),
        '--annotations',
        join(tmp, name),
        '--out',
        out,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(readFileSync(out, 'utf8'), /"ground_truth":\{"a":17\.0,"b":"é","c":3\}/, name);
  }
});
