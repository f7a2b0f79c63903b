/**
 * Untrusted schemas cannot crash a run (issue 9, item 9): a benchmark record whose schema is
 * nested 3,000 levels deep (JSON.stringify runs out of stack building its prompt) fails alone,
 * logged as `bad_request`; the other records are asked and answered.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readLines, sob } from './sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-hostile-rec-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a 3,000-level schema is rejected by the benchmark check before anything is asked (exit 2, one line); with --skip-invalid the other 2 are answered', async () => {
  const deep = `${'{"type":"object","properties":{"x":'.repeat(3000)}{"type":"string"}${'}}'.repeat(3000)}`;
  const plain =
    '{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}';
  const line = (id: string, schema: string) =>
    `{"metadata": {"record_id": "${id}", "source": "text", "schema_complexity": "easy"}, "input": {"context": "a b c", "question": "q", "json_schema": ${schema}}, "output": {"ground_truth": {"a": "a", "b": "b", "c": "c"}}}`;
  const bench = join(tmp, 'records.jsonl');
  writeFileSync(bench, `${[line('r1', plain), line('deep', deep), line('r3', plain)].join('\n')}\n`);
  const dir = join(tmp, 'run');
  // Before: "sob: Maximum call stack size exceeded", exit 1, and no record after it was asked.
  // Then: asked, failed alone as bad_request. Now the loader's check rejects it: nothing asked.
  const r = await sob(['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', dir], {
    cwd: tmp,
  }).done;
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^rejected .*records\.jsonl:2 \(record deep\): invalid draft-07 schema: /m);
  assert.equal(
    r.stderr.trim().split('\n').at(-1),
    `sob: ${bench}: 1 record rejected (listed above): nothing was asked; fix it, or pass --skip-invalid to go on without it`,
  );
  assert.equal(existsSync(join(dir, 'responses.jsonl')), false);
  const skip = await sob(
    ['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', dir, '--skip-invalid'],
    { cwd: tmp },
  ).done;
  assert.equal(skip.code, 0, skip.stderr);
  const answered = readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l).metadata.record_id);
  assert.deepEqual(answered.sort(), ['r1', 'r3']);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.deepEqual(
    manifest.benchmark.rejected.map((x: { line: number; record_id: string }) => [x.line, x.record_id]),
    [[2, 'deep']],
  );
});

test('a benchmark line repeating an earlier record id is named on stderr, not skipped silently; each id is asked once', async () => {
  const schema =
    '{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}';
  const line = (id: string, a: string) =>
    `{"metadata": {"record_id": "${id}", "source": "text", "schema_complexity": "easy"}, "input": {"context": "a b c", "question": "q", "json_schema": ${schema}}, "output": {"ground_truth": {"a": "${a}", "b": "b", "c": "c"}}}`;
  const bench = join(tmp, 'dups.jsonl');
  writeFileSync(
    bench,
    `${[line('r1', 'a'), line('r2', 'a'), line('r1', 'other'), line('r3', 'a')].join('\n')}\n`,
  );
  const dir = join(tmp, 'dups-run');
  const r = await sob(['run', '--model', 'baseline:gold', '--benchmark', bench, '--run-dir', dir], {
    cwd: tmp,
  }).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /dups\.jsonl: 1 line repeats an earlier record id, skipped \(each id is asked once, for its first line\): "r1" \(line 3, first at line 1\)/,
  );
  const answered = readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l));
  assert.deepEqual(
    answered.map((x) => x.metadata.record_id),
    ['r1', 'r2', 'r3'],
  );
  // The gold answer is the first line's.
  assert.equal(answered[0].output.candidate_response.a, 'a');
});
