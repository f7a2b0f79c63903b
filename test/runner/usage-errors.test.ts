/**
 * A mistyped model id or a batch option without `--batch` is a usage error: exit 2 with one line,
 * before anything is asked or written (DESIGN: 2 on a usage error), in `sob run`, `sob eval` and
 * `sob judge`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let bench: string;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-usage-'));
  server = await startProtocolServer();
  bench = writeBenchmark(join(tmp, 'records.jsonl'), ['u1', 'u2']);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-usage', GEMINI_API_KEY: 'gm-usage' };
const errLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('sob: '));

for (const [model, message] of [
  [
    'foo:bar',
    'sob: --model foo:bar: unknown provider "foo": use one of openai:, gemini:, anthropic:, local:, replay:, baseline:',
  ],
  [
    'gpt-4.1-mini',
    'sob: --model gpt-4.1-mini: unknown provider "gpt-4.1-mini": use one of openai:, gemini:, anthropic:, local:, replay:, baseline:',
  ],
  [
    'baseline:golden',
    'sob: --model baseline:golden: unknown baseline "golden": use baseline:gold, baseline:skeleton or baseline:instance',
  ],
  ['openai:', 'sob: --model openai:: no model name after "openai:" (e.g. openai:gpt-4.1-mini)'],
  ['gemini:', 'sob: --model gemini:: no model name after "gemini:" (e.g. gemini:gemini-2.5-flash)'],
  ['replay:', 'sob: --model replay:: no model name after "replay:" (e.g. replay:responses.jsonl)'],
]) {
  test(`--model ${model}: exit 2, one line, nothing asked`, async () => {
    const before = server.total;
    const dir = join(tmp, `run-${model.replace(/\W/g, '_')}`);
    const run = await sob(['run', '--model', model, '--benchmark', bench, '--run-dir', dir], {
      cwd: tmp,
      env,
    }).done;
    assert.equal(run.code, 2, run.stderr);
    assert.deepEqual(errLines(run.stderr), [message]);
    assert.equal(existsSync(join(dir, 'responses.jsonl')), false);
    const ev = await sob(
      [
        'eval',
        '--model',
        model,
        '--benchmark',
        bench,
        '--eval-dir',
        join(tmp, `eval-${model.replace(/\W/g, '_')}`),
      ],
      { cwd: tmp, env },
    ).done;
    assert.equal(ev.code, 2, ev.stderr);
    assert.deepEqual(errLines(ev.stderr), [message]);
    assert.equal(server.total, before);
  });
}

test('gemini with two --base-url: exit 2, one line', async () => {
  const r = await sob(
    [
      'run',
      '--model',
      'gemini:gemini-2.5-flash',
      '--base-url',
      server.geminiBaseUrl,
      '--base-url',
      server.geminiBaseUrl,
      '--benchmark',
      bench,
      '--run-dir',
      join(tmp, 'g2'),
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r.stderr), ['sob: gemini takes one --base-url']);
});

test('sob judge --judge foo:bar: exit 2', async () => {
  const r = await sob(['judge', bench, '--judge', 'foo:bar', '--out', join(tmp, 'judged')], { cwd: tmp, env })
    .done;
  assert.equal(r.code, 2, r.stderr);
  assert.match(errLines(r.stderr).join('\n'), /^sob: unknown provider "foo" in "foo:bar"/);
});

test('--batch-fallback / --batch-poll-ms / --batch-max-requests without --batch: exit 2 naming them, nothing asked online', async () => {
  const before = server.total;
  const dir = join(tmp, 'nobatch');
  let r = await sob(
    [
      'run',
      '--model',
      'openai:gpt-4.1-mini',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--run-dir',
      dir,
      '--batch-fallback',
      'online',
      '--batch-max-requests',
      '10',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r.stderr), [
    'sob: --batch-fallback, --batch-max-requests only apply with --batch',
  ]);
  assert.equal(existsSync(join(dir, 'responses.jsonl')), false);
  r = await sob(
    [
      'eval',
      '--model',
      'openai:gpt-4.1-mini',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      join(tmp, 'nobatch-eval'),
      '--batch-poll-ms',
      '50',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r.stderr), ['sob: --batch-poll-ms only applies with --batch']);
  assert.equal(server.total, before);
  // The defaults alone (no --batch-* given) are no error: the run goes online as asked.
  r = await sob(
    [
      'run',
      '--model',
      'openai:gpt-4.1-mini',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--run-dir',
      dir,
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.total, before + 2);
});
