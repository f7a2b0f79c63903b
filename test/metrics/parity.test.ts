/**
 * Parity with the SOB authors' evaluator on their released image set: 34 models x 209 records.
 * Every field of every eval_records.jsonl row and every value of every eval_summary.json
 * (bootstrap intervals included) must equal the reference's exactly: the same double (`===`),
 * an int where it has an int. A difference in the last bit fails, naming the field. That holds
 * because the sob profile sums as Python 3.12 does (src/core/pysum.ts): under a plain
 * left-to-right sum 2,926 of the 156,526 fields differ in their last one or two bits.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { scoreFiles } from '../../src/scoring/score-files.ts';
import { type Comparison, compareJsonText } from '../helpers/compare.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const SKIP = needsData('sob');
const DATA = sharedData('sob');
const RESPONSES = join(DATA, 'images_responses');
const REFERENCE = join(DATA, 'evaluation/image');
const files = (SKIP ? [] : readdirSync(RESPONSES)).filter((f) => f.endsWith('.jsonl')).sort();
let out: string;

before(async () => {
  if (SKIP) return;
  out = mkdtempSync(join(tmpdir(), 'sob-parity-'));
  const results = await scoreFiles(
    files.map((f) => ({ file: join(RESPONSES, f) })),
    { outDir: out, summary: { bootstrapSamples: 1000, seed: 42, topKErrors: 20 } },
  );
  for (const r of results) assert.equal(r.error, undefined, r.error);
});
after(() => out && rmSync(out, { recursive: true, force: true }));

test('the image set has 34 response files', { skip: SKIP }, () => {
  assert.equal(files.length, 34);
});

test('per-record rows equal the reference on all 34 x 209 image records', { skip: SKIP }, () => {
  const cmp: Comparison = { fields: 0, diffs: [] };
  let rows = 0;
  for (const f of files) {
    const model = f.replace(/^response_/, '').replace(/_image\.jsonl$/, '');
    const ref = readFileSync(join(REFERENCE, model, 'eval_records.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const ours = readFileSync(join(out, 'image', model, 'eval_records.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(ours.length, ref.length, `${model}: row count`);
    ref.forEach((line, i) => {
      compareJsonText(line, ours[i], `${model}[${i}]`, 0, cmp);
    });
    rows += ref.length;
  }
  console.log(
    `eval_records: ${rows} rows, ${cmp.fields} fields compared (${cmp.numbers} numbers), exactly: ${cmp.diffs.length} differ`,
  );
  assert.equal(rows, 34 * 209);
  assert.deepEqual(cmp.diffs.slice(0, 10), []);
});

test('summaries (means, bootstrap intervals, n, data_quality, error_analysis) equal the reference', {
  skip: SKIP,
}, () => {
  const cmp: Comparison = { fields: 0, diffs: [] };
  for (const f of files) {
    const model = f.replace(/^response_/, '').replace(/_image\.jsonl$/, '');
    const ref = readFileSync(join(REFERENCE, model, 'eval_summary.json'), 'utf8');
    const ours = readFileSync(join(out, 'image', model, 'eval_summary.json'), 'utf8');
    // response_file is the input path as given, which differs by where the data lives.
    compareJsonText(ref, ours, model, 0, cmp, new Set(['response_file']));
  }
  console.log(
    `eval_summary: ${files.length} files, ${cmp.fields} values compared (${cmp.numbers} numbers), exactly: ${cmp.diffs.length} differ`,
  );
  assert.ok(cmp.fields > 7000, `only ${cmp.fields} values compared`);
  assert.deepEqual(cmp.diffs.slice(0, 10), []);
});
