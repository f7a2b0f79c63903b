/**
 * A ground truth keeps its number lexemes through `sob build`: `17.0` stays a float, `3` an int,
 * as the scorer (which reads numbers the way Python does) needs for Faithfulness and Perfect.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-lossless-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('sob build writes the ground truth as the annotation wrote it (17.0 stays 17.0)', {
  skip: needsData('hotpotqa'),
}, () => {
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
        sharedData('hotpotqa/hotpot_dev_distractor_v1.first53.json'),
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

test("sob build sob keeps the rows' lexemes, so scoring against the benchmark matches scoring the file itself", () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, credits: { type: 'number' }, n: { type: 'integer' } },
  };
  const gt = '{"name": "Physics 1", "credits": 1.0, "n": 3}';
  const dir = join(tmp, 'sob-rows');
  rmSync(dir, { recursive: true, force: true });
  const rows = [
    // the record shape, as SOB's response files and JSONL exports have it
    `{"metadata": {"record_id": "r1", "source": "image", "schema_complexity": "easy"}, "input": {"context": "Physics 1, 1.0 credits, 3 parts", "question": "q", "json_schema": ${JSON.stringify(schema)}}, "output": {"ground_truth": ${gt}}}`,
    // the flat shape with JSON text fields, as the dataset's Parquet has them
    JSON.stringify({
      record_id: 'r2',
      source: 'image',
      schema_complexity: 'easy',
      context: 'Physics 1, 1.0 credits, 3 parts',
      question: 'q',
      json_schema: JSON.stringify(schema),
      ground_truth: gt,
    }),
  ];
  const input = join(tmp, 'rows.jsonl');
  writeFileSync(input, `${rows.join('\n')}\n`);
  const bench = join(dir, 'bench', 'records.jsonl');
  const b = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'build', 'sob', input, '--out', bench], {
    encoding: 'utf8',
  });
  assert.equal(b.status, 0, b.stderr);
  const written = readFileSync(bench, 'utf8').trim().split('\n');
  assert.equal(written.length, 2);
  for (const line of written)
    assert.match(line, /"ground_truth":\{"name":"Physics 1","credits":1\.0,"n":3\}/);

  // A model that answered exactly the ground truth (1.0 as the rows have it).
  const answers = join(dir, 'answers', 'response_m_image.jsonl');
  mkdirSync(join(dir, 'answers'), { recursive: true });
  writeFileSync(
    answers,
    ['r1', 'r2']
      .map(
        (id) =>
          `{"metadata": {"record_id": "${id}"}, "input": {"context": "", "question": "q", "json_schema": ${JSON.stringify(schema)}}, "output": {"ground_truth": ${gt}, "candidate_response": ${gt}}}`,
      )
      .join('\n')
      .concat('\n'),
  );
  const out = join(dir, 'eval');
  const s = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/sob.js'), 'score', answers, '--benchmark', bench, '--profile', 'sob', '--out', out],
    { encoding: 'utf8' },
  );
  assert.equal(s.status, 0, s.stderr);
  const recs = readFileSync(join(out, 'image', 'm', 'eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(recs.length, 2);
  for (const r of recs) {
    // Before: the benchmark held `1`, so "1.0" lost a token (F1 0.8) and Perfect (canonical JSON) was 0.
    assert.equal(r.value_token_f1, 1, r.record_id);
    assert.equal(r.strict_json_em, 1, r.record_id);
    assert.equal(r.leaf_value_em, 1, r.record_id);
  }
});
