/**
 * Untrusted schemas cannot stall `baseline:skeleton` (issue 9, item 9): `minItems: 1e8`,
 * `minProperties: 3e5`, `minLength: 1e9` and a `$ref` that doubles at every level are built up
 * to a cap, so `sob run` answers every record quickly, in bounded memory, and still hears
 * SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SKELETON_LIMITS } from '../../src/providers/baseline.ts';
import { readLines, rows, sob, until } from '../runner/sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-skeleton-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const HOSTILE: Record<string, Record<string, unknown>> = {
  items1e8: {
    type: 'object',
    properties: {
      rows: {
        type: 'array',
        minItems: 1e8,
        items: { type: 'object', properties: { a: { type: 'string' } } },
      },
    },
  },
  props3e5: { type: 'object', minProperties: 3e5, additionalProperties: { type: 'integer' } },
  length1e9: { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } } },
  doubling: {
    type: 'object',
    properties: { l: { $ref: '#' }, r: { $ref: '#' }, v: { type: 'number' } },
  },
  // Parsed, so "__proto__" is an own key (a literal would set the prototype instead).
  proto: JSON.parse(
    '{"type": "object", "properties": {"__proto__": {"type": "string"}, "constructor": {"type": "integer"}}, "required": ["__proto__"]}',
  ),
};

function benchmark(file: string, copies: number): string[] {
  const ids: string[] = [];
  const lines: string[] = [];
  for (let c = 0; c < copies; c++) {
    for (const [name, schema] of Object.entries(HOSTILE)) {
      const id = `${name}-${c}`;
      ids.push(id);
      lines.push(
        JSON.stringify({
          metadata: { record_id: id, source: 'text', schema_complexity: 'hard' },
          input: { context: 'c', question: 'q', json_schema: schema },
          output: { ground_truth: {} },
        }),
      );
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return ids;
}

test('baseline:skeleton on minItems 1e8, minProperties 3e5, minLength 1e9 and a doubling $ref: every record answered fast, each answer capped', async () => {
  const bench = join(tmp, 'hostile.jsonl');
  const ids = benchmark(bench, 1);
  const dir = join(tmp, 'run');
  const t0 = Date.now();
  // The records' ground truths do not fit their hostile schemas (the skeleton never reads them):
  // asked anyway, as the loader allows with this flag.
  const run = sob(
    [
      'run',
      '--model',
      'baseline:skeleton',
      '--benchmark',
      bench,
      '--run-dir',
      dir,
      '--allow-invalid-ground-truth',
    ],
    { cwd: tmp },
  );
  const killer = setTimeout(() => run.child.kill('SIGKILL'), 120_000);
  const res = await run.done;
  clearTimeout(killer);
  const ms = Date.now() - t0;
  assert.equal(res.signal, null, `killed after ${ms} ms: the skeleton hung`);
  assert.equal(res.code, 0, res.stderr);
  const got = new Map(rows(join(dir, 'responses.jsonl')).map((r) => [r.metadata.record_id, r]));
  assert.deepEqual([...got.keys()].sort(), [...ids].sort());
  const raw = (id: string) => got.get(id).output.raw_response as string;
  const rowsArr = JSON.parse(raw('items1e8-0')).rows as unknown[];
  assert.equal(rowsArr.length, Math.floor(SKELETON_LIMITS.values / 2) - 1); // each item: the object and its one string
  assert.equal(Object.keys(JSON.parse(raw('props3e5-0'))).length, SKELETON_LIMITS.values - 1);
  assert.equal(JSON.parse(raw('length1e9-0')).s.length, SKELETON_LIMITS.chars);
  const doubling = raw('doubling-0');
  assert.ok(doubling.length < 4_000_000, `${doubling.length} chars`);
  // Keys named __proto__ and constructor are data, kept as keys.
  assert.deepEqual(Object.keys(JSON.parse(raw('proto-0'))).sort(), ['__proto__', 'constructor']);
  for (const id of ids) assert.ok(raw(id).length < 4_000_000, `${id}: ${raw(id).length} chars`);
  console.log(`hostile skeleton run: ${ids.length} records in ${ms} ms`);
});

test('SIGTERM during a skeleton run over hostile schemas stops it within seconds, status interrupted', async () => {
  const bench = join(tmp, 'hostile-many.jsonl');
  benchmark(bench, 200);
  const dir = join(tmp, 'run-term');
  // The records' ground truths do not fit their hostile schemas (the skeleton never reads them):
  // asked anyway, as the loader allows with this flag.
  const run = sob(
    [
      'run',
      '--model',
      'baseline:skeleton',
      '--benchmark',
      bench,
      '--run-dir',
      dir,
      '--allow-invalid-ground-truth',
    ],
    { cwd: tmp },
  );
  await until(() => readLines(join(dir, 'responses.jsonl')).length >= 5, 60_000, 'first answers');
  const t = Date.now();
  run.child.kill('SIGTERM');
  const killer = setTimeout(() => run.child.kill('SIGKILL'), 30_000);
  const res = await run.done;
  clearTimeout(killer);
  assert.equal(res.signal, null, 'did not stop on SIGTERM');
  assert.ok(Date.now() - t < 10_000, `${Date.now() - t} ms to stop`);
  const status = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status;
  assert.ok(status === 'interrupted' || status === 'complete', status);
  if (status === 'interrupted') assert.equal(res.code, 130, res.stderr);
});
