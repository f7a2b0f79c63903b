/**
 * Issue 9 item 5: duplicates never inflate scores. Repeated record ids are counted
 * (`data_quality.duplicate_record_id_count`, `distinct_record_ids`); the strict profile keeps the
 * first row of each id. With a known benchmark (`--benchmark`, a run directory's manifest, `sob
 * eval`) ground truths and schemas come from it, and ids on either side without a partner are
 * reported.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { readOut, sobInProcess as sob } from './cli.ts';

const SOURCE = sharedData('sob/images_responses/response_Qwen3-30B-A3B-Instruct-2507_image.jsonl');
const tmp = mkdtempSync(join(tmpdir(), 'sob-dups-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SKIP = needsData('sob');
const lines = SKIP ? [] : readFileSync(SOURCE, 'utf8').trim().split('\n');
let best: string[] = [];
const padded = join(tmp, 'padded', 'response_padded_image.jsonl');
const distinct = join(tmp, 'distinct', 'response_padded_image.jsonl');
const bench = join(tmp, 'bench', 'records.jsonl');

before(async () => {
  if (SKIP) return;
  // The 22 best answers (strict Value Accuracy) of one SOB model, then repeated to 209 lines.
  const out = join(tmp, 'all');
  const r = await sob(
    ['score', SOURCE, '--out', out, '--profile', 'strict', '--bootstrap-samples', '0'],
    tmp,
  );
  assert.equal(r.code, 0, r.stderr);
  const rows = readOut(out, 'image', 'Qwen3-30B-A3B-Instruct-2507').rows;
  const order = rows
    .map((row, i) => ({ i, va: row.leaf_value_em as number }))
    .sort((a, b) => b.va - a.va || a.i - b.i)
    .slice(0, 22)
    .map((x) => x.i)
    .sort((a, b) => a - b);
  best = order.map((i) => lines[i]);
  mkdirSync(join(tmp, 'padded'));
  mkdirSync(join(tmp, 'distinct'));
  mkdirSync(join(tmp, 'bench'));
  writeFileSync(padded, `${Array.from({ length: 209 }, (_, i) => best[i % 22]).join('\n')}\n`);
  writeFileSync(distinct, `${best.join('\n')}\n`);
  // The benchmark these answers belong to: every record, without the answers.
  writeFileSync(
    bench,
    `${lines
      .map((l) => {
        const rec = JSON.parse(l) as { output: { candidate_response?: unknown }; eval_info?: unknown };
        delete rec.output.candidate_response;
        delete rec.eval_info;
        return JSON.stringify(rec);
      })
      .join('\n')}\n`,
  );
});

const metric = (s: ReturnType<typeof readOut>['summary'], k: string, w = false) =>
  (w ? s.summary.overall_weighted : s.summary.overall).metrics[k].mean;

test('the padded file (22 best answers repeated to 209 lines): duplicates reported, strict scores the 22', {
  skip: SKIP,
}, async () => {
  const ref = join(tmp, 'out-distinct');
  assert.equal(
    (await sob(['score', distinct, '--out', ref, '--profile', 'strict', '--bootstrap-samples', '0'], tmp))
      .code,
    0,
  );
  const expected = readOut(ref, 'image', 'padded').summary;

  const out = join(tmp, 'out-strict');
  const r = await sob(
    ['score', padded, '--out', out, '--profile', 'strict', '--bootstrap-samples', '0'],
    tmp,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /187 rows repeat an earlier record id \(22 distinct\).*strict profile: only the first row of each id is scored/,
  );
  const { rows, summary } = readOut(out, 'image', 'padded');
  assert.equal(rows.length, 22);
  assert.equal(summary.num_records, 22);
  assert.equal(summary.data_quality.duplicate_record_id_count, 187);
  assert.equal(summary.data_quality.distinct_record_ids, 22);
  for (const k of ['leaf_value_em', 'value_token_f1', 'schema_compliance', 'strict_json_em']) {
    assert.equal(metric(summary, k), metric(expected, k), k);
    assert.equal(metric(summary, k, true), metric(expected, k, true), `${k} weighted`);
  }
  assert.ok(metric(summary, 'leaf_value_em') > 0.5);
});

test('the sob profile scores every line, as the reference does, and counts the repeats', {
  skip: SKIP,
}, async () => {
  const out = join(tmp, 'out-sob');
  const r = await sob(['score', padded, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /187 rows repeat an earlier record id \(22 distinct\).*sob profile: every row is scored/,
  );
  const { summary } = readOut(out, 'image', 'padded');
  assert.equal(summary.num_records, 209);
  assert.equal(summary.data_quality.duplicate_record_id_count, 187);
  assert.equal(summary.data_quality.distinct_record_ids, 22);
});

test('--benchmark: records without an answer and answers the benchmark lacks are reported', {
  skip: SKIP,
}, async () => {
  const out = join(tmp, 'out-bench');
  const extra = join(tmp, 'padded', 'response_extra_image.jsonl');
  const stranger = best[0].replace(/"record_id": "[^"]*"/, '"record_id": "not-in-the-benchmark"');
  writeFileSync(extra, `${best.join('\n')}\n${stranger}\n`);
  const r = await sob(
    // The SOB image set holds one record whose ground truth fails its own schema: kept, as the reference does.
    [
      'score',
      extra,
      '--out',
      out,
      '--profile',
      'strict',
      '--bootstrap-samples',
      '0',
      '--benchmark',
      bench,
      '--allow-invalid-ground-truth',
    ],
    tmp,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /187 of the benchmark's 209 image records have no answer .*; 1 answers are not in the benchmark \(not-in-the-benchmark; not scored\)/,
  );
  const { rows, summary } = readOut(out, 'image', 'extra');
  assert.equal(rows.length, 22);
  assert.deepEqual(
    { ...summary.benchmark, sha256: undefined },
    { path: bench, sha256: undefined, records: 209, missing_ids: 187, unknown_ids: 1 },
  );
  assert.match(String(summary.benchmark?.sha256), /^[0-9a-f]{64}$/);
  const ids = JSON.parse(readFileSync(join(out, 'image/extra/benchmark_ids.json'), 'utf8')) as {
    missing_ids: string[];
    unknown_ids: string[];
  };
  assert.equal(ids.missing_ids.length, 187);
  assert.deepEqual(ids.unknown_ids, ['not-in-the-benchmark']);
});

test('--benchmark: the ground truth comes from the benchmark, not from the response file', {
  skip: SKIP,
}, async () => {
  // The first 30 answers (good and bad), each "ground truth" replaced by the answer itself.
  const first = lines.slice(0, 30);
  const honestFile = join(tmp, 'distinct', 'response_first_image.jsonl');
  writeFileSync(honestFile, `${first.join('\n')}\n`);
  const forged = join(tmp, 'padded', 'response_forged_image.jsonl');
  writeFileSync(
    forged,
    `${first
      .map((l) => {
        const rec = JSON.parse(l) as { output: { ground_truth: unknown; candidate_response: unknown } };
        rec.output.ground_truth = rec.output.candidate_response;
        return JSON.stringify(rec);
      })
      .join('\n')}\n`,
  );
  const args = ['--profile', 'strict', '--bootstrap-samples', '0'];
  const alone = join(tmp, 'out-forged');
  assert.equal((await sob(['score', forged, '--out', alone, ...args], tmp)).code, 0);
  const withBench = join(tmp, 'out-forged-bench');
  assert.equal(
    (
      await sob(
        ['score', forged, '--out', withBench, ...args, '--benchmark', bench, '--allow-invalid-ground-truth'],
        tmp,
      )
    ).code,
    0,
  );
  const honest = join(tmp, 'out-honest');
  assert.equal((await sob(['score', honestFile, '--out', honest, ...args], tmp)).code, 0);
  const va = (o: string, m: string) => metric(readOut(o, 'image', m).summary, 'leaf_value_em');
  // (not 1.000: answers that are not JSON fail the parse gate whatever the ground truth)
  assert.ok(
    va(alone, 'forged') > va(honest, 'first') + 0.1,
    `${va(alone, 'forged')} vs ${va(honest, 'first')}`,
  );
  assert.equal(va(withBench, 'forged'), va(honest, 'first'));
});

test('a run directory: its manifest names the benchmark; a missing answer is reported', {
  skip: SKIP,
}, async () => {
  const b = join(tmp, 'small', 'records.jsonl');
  mkdirSync(join(tmp, 'small'));
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  writeFileSync(
    b,
    `${[1, 2, 3, 4]
      .map((n) =>
        JSON.stringify({
          metadata: { record_id: `r${n}`, source: 'text', schema_complexity: 'easy' },
          input: { context: `n is ${n}`, question: 'n?', json_schema: schema },
          output: { ground_truth: { n } },
        }),
      )
      .join('\n')}\n`,
  );
  const run = join(tmp, 'run');
  const r = await sob(
    ['run', '--model', 'baseline:gold', '--benchmark', b, '--run-dir', run, '--limit', '3'],
    tmp,
  );
  assert.equal(r.code, 0, r.stderr);
  const scored = await sob(['score', run, '--bootstrap-samples', '0'], tmp);
  assert.equal(scored.code, 0, scored.stderr);
  let s = readOut(join(run, 'evaluation'), 'text', 'baseline_gold').summary;
  assert.equal(s.profile, 'strict');
  assert.deepEqual(
    { ...s.benchmark, sha256: undefined, path: undefined },
    {
      path: undefined,
      sha256: undefined,
      records: 3,
      missing_ids: 0,
      unknown_ids: 0,
    },
  );
  // One answer lost: reported on stderr and in the summary.
  const responses = join(run, 'responses.jsonl');
  const kept = readFileSync(responses, 'utf8').trim().split('\n').slice(0, 2);
  unlinkSync(responses);
  writeFileSync(responses, `${kept.join('\n')}\n`);
  const again = await sob(['score', run, '--bootstrap-samples', '0'], tmp);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /1 of the benchmark's 3 text records have no answer \(r3\)/);
  s = readOut(join(run, 'evaluation'), 'text', 'baseline_gold').summary;
  assert.equal(s.benchmark?.missing_ids, 1);
  assert.equal(s.num_records, 2);
});
