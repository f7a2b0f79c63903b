/**
 * A reader that stops early (`sob ... | head -1`): the command must not die on EPIPE with a stack
 * trace; it exits 0 and writes its files as usual.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-pipe-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `sob args` with its stdout read until the first line, then closed, as `| head -1` does. */
function headOne(args: string[]): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { cwd: tmp });
    let first = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      if (first.includes('\n')) return;
      first += d.toString();
      // Read the first line, then stop reading: the next writes meet a closed pipe.
      if (first.includes('\n')) child.stdout.destroy();
    });
    child.on('close', (code) => resolve({ code, stderr, first: first.split('\n')[0] }));
  });
}

test('sob --help and sob score --help piped into a reader that stops after one line: exit 0, no EPIPE', async () => {
  for (const args of [['--help'], ['score', '--help']]) {
    const r = await headOne(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.first, /^Usage: sob/);
    assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/);
  }
});

test('sob score piped into a reader that stops after one line still writes every row', async () => {
  const line = (id: string, answer: unknown) =>
    JSON.stringify({
      metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy' },
      input: {
        context: 'c',
        question: 'q',
        json_schema: { type: 'object', properties: { a: { type: 'string' } } },
      },
      output: { ground_truth: { a: 'x' }, candidate_response: answer },
    });
  const files = ['one', 'two', 'three'].map((name) => {
    const f = join(tmp, `response_${name}.jsonl`);
    writeFileSync(f, `${line('r1', { a: 'x' })}\n${line('r2', { a: 'y' })}\n`);
    return f;
  });
  const out = join(tmp, 'out');
  const r = await headOne(['score', ...files, '--out', out, '--bootstrap-samples', '0']);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/);
  for (const name of ['one', 'two', 'three']) {
    const rows = readFileSync(join(out, 'text', name, 'eval_records.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.deepEqual(
      rows.map((x) => (JSON.parse(x) as { leaf_value_em: number }).leaf_value_em),
      [1, 0],
    );
  }
});
