/**
 * JSONSchemaBench's empirical-coverage time limits (40 s to the first token for grammar
 * compilation, 40 s more for generation; `--compile-timeout-ms` / `--generation-timeout-ms`),
 * through the real `sob eval` against a local OpenAI-protocol server that streams: a record whose
 * first token comes too late is a schema the engine did not process (not declared), one whose
 * tokens run past the generation limit has no answer (declared, invalid), neither is retried.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Outcome, type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob } from './sob-cli.ts';

const S = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

let tmp: string;
let server: ProtocolServer;
let bench: string;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-coverage-limits-'));
  server = await startProtocolServer({
    script: (r): Outcome => {
      if (r.key === 'late-first')
        return {
          kind: 'answer',
          text: '{"n": 1}',
          stream: { pieces: ['{"n"', ': 1}'], firstMs: 1500, gapMs: 10 },
        };
      if (r.key === 'slow-generation')
        return {
          kind: 'answer',
          text: '{"n": 1}',
          stream: { pieces: ['{', '"n"', ':', ' ', '1', '}'], firstMs: 10, gapMs: 400 },
        };
      return {
        kind: 'answer',
        text: '{"n": 1}',
        stream: { pieces: ['{"n"', ': 1}'], firstMs: 10, gapMs: 10 },
      };
    },
  });
  const schemas = join(tmp, 'schemas.jsonl');
  writeFileSync(
    schemas,
    ['fast', 'late-first', 'slow-generation']
      .map((id) =>
        JSON.stringify({ id, category: 'D', question: `Give an instance. [rid:${id}]`, json_schema: S }),
      )
      .join('\n'),
  );
  bench = join(tmp, 'bench', 'records.jsonl');
  const b = await sob(['build', 'schemas', schemas, '--out', bench], { cwd: tmp }).done;
  assert.equal(b.code, 0, b.stderr);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('a late first token is a schema not processed, a slow generation an invalid answer; each asked once', async () => {
  const evalDir = join(tmp, 'eval');
  const r = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      evalDir,
      '--compile-timeout-ms',
      '600',
      '--generation-timeout-ms',
      '800',
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'sk-test' } },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  for (const id of ['fast', 'late-first', 'slow-generation']) assert.equal(server.counts.get(id), 1, id);
  const lines = readFileSync(join(evalDir, 'runs/openai_m/responses.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const info = new Map(lines.map((l) => [l.metadata.record_id, l.eval_info]));
  assert.equal(info.get('fast').coverage_timeout, undefined);
  assert.equal(info.get('late-first').coverage_timeout, 'compile');
  assert.equal(info.get('late-first').schema_rejected, true);
  assert.match(info.get('late-first').error, /no first token within 0\.6 s/);
  assert.equal(info.get('slow-generation').coverage_timeout, 'generation');
  assert.equal(info.get('slow-generation').schema_rejected, undefined);
  assert.match(info.get('slow-generation').error, /generation ran over 0\.8 s/);
  const s = JSON.parse(readFileSync(join(evalDir, 'evaluation/schema/openai_m/eval_summary.json'), 'utf8'));
  const o = s.compliance.overall;
  assert.deepEqual(
    [o.declared_coverage.count, o.empirical_coverage.count, o.compliance.count, o.compliance.of],
    [2, 1, 1, 2],
  );
});

test('without the limits (0) the slow records are answered and valid', async () => {
  const evalDir = join(tmp, 'eval-off');
  const r = await sob(
    [
      'eval',
      '--model',
      'openai:m2',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      evalDir,
      '--compile-timeout-ms',
      '0',
      '--generation-timeout-ms',
      '0',
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'sk-test' } },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(evalDir, 'evaluation/schema/openai_m2/eval_summary.json'), 'utf8'));
  assert.equal(s.compliance.overall.empirical_coverage.count, 3);
});
