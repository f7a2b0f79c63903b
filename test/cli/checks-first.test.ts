/**
 * Checks first (issue 32, item 7): a model id with no such provider (or no model name) is refused
 * at once, one line, exit 2, before anything is built; a context above `--context-warn-chars`
 * (default 200,000 characters) is said per record, with its estimated tokens, before any model
 * is asked. The real `sob` on rows the test writes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-checks-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
const ROWS = (big: number) =>
  [
    {
      id: 'small',
      context: 'The id is small.',
      question: 'Which id?',
      schema: SCHEMA,
      ground_truth: { id: 'small' },
    },
    {
      id: 'big',
      context: `The id is big. ${'x'.repeat(big)}`,
      question: 'Which id?',
      schema: SCHEMA,
      ground_truth: { id: 'big' },
    },
  ]
    .map((r) => JSON.stringify(r))
    .join('\n');

test('--model foo:bar is refused at once: one line, exit 2, nothing built', async () => {
  const rows = join(tmp, 'rows.jsonl');
  writeFileSync(rows, ROWS(10));
  for (const [model, why] of [
    ['foo:bar', /^sob: --model foo:bar: unknown provider "foo": use one of openai:, gemini:, anthropic:/],
    ['openai:', /^sob: --model openai:: no model name after "openai:" \(e\.g\. openai:gpt-4\.1-mini\)$/],
    ['baseline:golden', /^sob: --model baseline:golden: unknown baseline "golden"/],
  ] as const) {
    const dir = join(tmp, `ev-${model.replace(/\W/g, '_')}`);
    const r = await sobIn(['eval', rows, '--model', 'baseline:gold', '--model', model, '--eval-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trim(), why);
    assert.equal(existsSync(join(dir, 'benchmark')), false, 'nothing built');
    const run = await sobIn(['run', '--model', model, '--benchmark', rows, '--run-dir', join(tmp, 'run')]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.match(run.stderr.trim(), why);
  }
  assert.equal(existsSync(join(tmp, 'benchmarks')), false);
});

test('a context above --context-warn-chars is said per record, with its tokens, before any model is asked', async () => {
  const rows = join(tmp, 'big.jsonl');
  writeFileSync(rows, ROWS(300_000));
  const r = await sobIn([
    'eval',
    rows,
    '--model',
    'baseline:gold',
    '--eval-dir',
    join(tmp, 'big'),
    '--bootstrap-samples',
    '10',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split('\n');
  const warned = lines.filter((l) => /context of/.test(l));
  assert.equal(warned.length, 1, r.stderr);
  // 'The id is big. ' (15) + 300,000: 300,015 characters, about 75,004 tokens.
  assert.match(
    warned[0],
    /records\.jsonl:2: record "big": context of 300,015 characters \(about 75,004 tokens\), above --context-warn-chars 200,000: sent whole/,
  );
  const asked = lines.findIndex((l) => l.startsWith('baseline:gold:'));
  assert.ok(asked < 0 || lines.indexOf(warned[0]) < asked, 'said before asking');
  // Said once however many models; a higher limit says nothing.
  const two = await sobIn([
    'eval',
    rows,
    '--model',
    'baseline:gold',
    '--model',
    'baseline:skeleton',
    '--eval-dir',
    join(tmp, 'big2'),
    '--bootstrap-samples',
    '10',
    '--context-warn-chars',
    '400000',
  ]);
  assert.equal(two.code, 0, two.stderr);
  assert.doesNotMatch(two.stderr, /context of/);
  const once = await sobIn([
    'eval',
    rows,
    '--model',
    'baseline:gold',
    '--model',
    'baseline:skeleton',
    '--eval-dir',
    join(tmp, 'big3'),
    '--bootstrap-samples',
    '10',
  ]);
  assert.equal(once.stderr.split('\n').filter((l) => /context of/.test(l)).length, 1, once.stderr);
});
