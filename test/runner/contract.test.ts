/**
 * The contract "Refused schemas and timings in responses.jsonl" (HELPERS.md), through `sob run
 * --constrained` against a local server that refuses, as OpenAI's strict mode does, the schemas
 * that leave a property optional.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  openaiStrictProblems,
  type ProtocolServer,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { rows, sobHere as sob } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-contract-'));
  server = await startProtocolServer({
    script: (r) => {
      const rf = r.body.response_format as { json_schema?: { schema?: unknown } } | undefined;
      const problems = rf?.json_schema ? openaiStrictProblems(rf.json_schema.schema) : [];
      if (problems.length > 0)
        return {
          kind: 'status',
          status: 400,
          message: `Invalid schema for response_format 'answer': ${problems[0]}`,
        };
      return { kind: 'answer', text: JSON.stringify({ id: r.key }), usage: { input: 40, output: 5 } };
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const STRICT = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
  additionalProperties: false,
};
const LOOSE = { type: 'object', properties: { id: { type: 'string' }, note: { type: 'string' } } };

test('--constrained: a refused schema is written once with null answers and schema_rejected, never retried; every line carries the timing and usage fields', async () => {
  const ids = ['ok1', 'ok2', 'ok3', 'no1', 'no2'];
  const bench = join(tmp, 'b.jsonl');
  writeFileSync(
    bench,
    ids
      .map(
        (id) =>
          `${JSON.stringify({
            metadata: { record_id: id, source: 'text' },
            input: {
              context: `[rid:${id}]`,
              question: 'q',
              json_schema: id.startsWith('ok') ? STRICT : LOOSE,
            },
            output: { ground_truth: { id } },
          })}\n`,
      )
      .join(''),
  );
  const dir = join(tmp, 'run');
  const args = [
    'run',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--run-dir',
    dir,
    '--constrained',
  ];
  const res = await sob(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-c' } }).done;
  assert.equal(res.code, 0, res.stderr);
  const lines = rows(join(dir, 'responses.jsonl'));
  assert.equal(lines.length, 5);
  const byId = new Map(lines.map((l) => [l.metadata.record_id, l]));
  for (const id of ['no1', 'no2']) {
    const l = byId.get(id);
    assert.equal(l.output.candidate_response, null);
    assert.equal(l.output.raw_response, null);
    assert.equal(l.eval_info.schema_rejected, true);
    assert.match(
      l.eval_info.error,
      /Invalid schema for response_format 'answer': \(root\): "id" is not in required/,
    );
    assert.equal(server.counts.get(id), 1);
  }
  for (const id of ['ok1', 'ok2', 'ok3']) {
    const info = byId.get(id).eval_info;
    assert.equal(info.schema_rejected, undefined);
    for (const k of ['latency_ms', 'input_tokens', 'output_tokens', 'attempts', 'finish_reason'])
      assert.ok(k in info, `${id}: no ${k}`);
    assert.equal(Object.keys(info)[0], 'latency_ms');
    assert.equal(typeof info.latency_ms, 'number');
    assert.deepEqual(
      [info.input_tokens, info.output_tokens, info.attempts, info.finish_reason],
      [40, 5, 1, 'stop'],
    );
  }
  assert.deepEqual(
    rows(join(dir, 'errors.jsonl'))
      .map((e) => `${e.record_id}:${e.error_class}:${e.outcome}`)
      .sort(),
    ['no1:schema_rejected:recorded', 'no2:schema_rejected:recorded'],
  );
  // A re-run asks nothing: the refused records are answered (by the refusal).
  const before = server.total;
  const again = await sob(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-c' } }).done;
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total, before);
  assert.equal(readFileSync(join(dir, 'responses.jsonl'), 'utf8').split('\n').filter(Boolean).length, 5);
});
