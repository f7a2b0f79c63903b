/**
 * A benchmark that mixes schema records with SOB records (`sob build probes` then `sob build
 * hotpotqa --append`): `sob score` of a run directory counts each source's benchmark ids under
 * that source. Schema records are not text records without an answer, and the schema folder's
 * summary carries its own `benchmark` block (records, missing and unknown ids).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT, sob } from '../report/run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-mixed-bench-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const EXAMPLES = join(ROOT, 'sources/examples/text');

function benchmarkBlock(runDir: string, source: string) {
  const s = JSON.parse(
    readFileSync(join(runDir, 'evaluation', source, 'baseline_gold', 'eval_summary.json'), 'utf8'),
  );
  const { records, missing_ids, unknown_ids } = s.benchmark ?? {};
  return { records, missing_ids, unknown_ids };
}

test('schema records of a mixed benchmark count under schema, not as unanswered text records', () => {
  const records = join(tmp, 'bench', 'records.jsonl');
  let r = sob('build', 'probes', '--out', records);
  assert.equal(r.status, 0, r.stderr);
  r = sob(
    'build',
    'hotpotqa',
    join(EXAMPLES, 'passages.json'),
    '--annotations',
    join(EXAMPLES, 'annotations.jsonl'),
    '--out',
    records,
    '--append',
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(records, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const schemaIds = lines.filter((l) => l.metadata.source === 'schema').map((l) => l.metadata.record_id);
  const textIds = lines.filter((l) => l.metadata.source === 'text').map((l) => l.metadata.record_id);
  assert.equal(schemaIds.length, 48);
  assert.ok(textIds.length >= 2, `${textIds.length} text records`);

  const runDir = join(tmp, 'run');
  r = sob('run', '--model', 'baseline:gold', '--benchmark', records, '--run-dir', runDir);
  assert.equal(r.status, 0, r.stderr);

  // Every record answered: nothing missing on either side.
  r = sob('score', runDir);
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /have no answer|has an answer/);
  assert.deepEqual(benchmarkBlock(runDir, 'text'), {
    records: textIds.length,
    missing_ids: 0,
    unknown_ids: 0,
  });
  assert.deepEqual(benchmarkBlock(runDir, 'schema'), { records: 48, missing_ids: 0, unknown_ids: 0 });

  // Three schema answers and one text answer removed: each counted missing under its own source.
  const responses = join(runDir, 'responses.jsonl');
  const dropped = new Set([schemaIds[0], schemaIds[10], schemaIds[47], textIds[1]]);
  const kept = readFileSync(responses, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !dropped.has(JSON.parse(l).metadata.record_id));
  assert.equal(kept.length, 48 + textIds.length - 4);
  writeFileSync(responses, `${kept.join('\n')}\n`);
  r = sob('score', runDir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`1 of the benchmark's ${textIds.length} text records have no answer`));
  assert.match(r.stderr, /3 of the benchmark's 48 schema records have no answer/);
  assert.deepEqual(benchmarkBlock(runDir, 'text'), {
    records: textIds.length,
    missing_ids: 1,
    unknown_ids: 0,
  });
  assert.deepEqual(benchmarkBlock(runDir, 'schema'), { records: 48, missing_ids: 3, unknown_ids: 0 });
});
