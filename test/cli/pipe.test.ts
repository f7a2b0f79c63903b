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

/**
 * Runs `sob args` with one of its streams read until the first line, then closed, as `| head -1`
 * does (`2>&1 | head -1` for stderr); the other stream is kept.
 */
function headOne(
  args: string[],
  closed: 'stdout' | 'stderr' = 'stdout',
): Promise<{ code: number | null; kept: string; first: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { cwd: tmp });
    let first = '';
    let kept = '';
    child[closed === 'stdout' ? 'stderr' : 'stdout'].on('data', (d: Buffer) => {
      kept += d.toString();
    });
    const head = child[closed];
    head.on('data', (d: Buffer) => {
      if (first.includes('\n')) return;
      first += d.toString();
      // Read the first line, then stop reading: the next writes meet a closed pipe.
      if (first.includes('\n')) head.destroy();
    });
    child.on('close', (code) => resolve({ code, kept, first: first.split('\n')[0] }));
  });
}

test('sob --help and sob score --help piped into a reader that stops after one line: exit 0, no EPIPE', async () => {
  for (const args of [['--help'], ['score', '--help']]) {
    const r = await headOne(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.kept}`);
    assert.match(r.first, /^Usage: sob/);
    assert.doesNotMatch(r.kept, /EPIPE|Unhandled/);
  }
});

test('sob score with its progress (stderr) or its table (stdout) piped into a reader that stops after one line: exit 0, every row written', async () => {
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
  // Its progress lines (stderr) into `head -1`, then its table (stdout) into `head -1`.
  for (const closed of ['stderr', 'stdout'] as const) {
    const out = join(tmp, `out-${closed}`);
    const r = await headOne(['score', ...files, '--out', out, '--bootstrap-samples', '0'], closed);
    assert.equal(r.code, 0, `${closed}: ${r.kept}`);
    assert.match(r.first, closed === 'stderr' ? /^scoring 3 files/ : /^file +source/);
    assert.doesNotMatch(r.kept, /EPIPE|Unhandled/);
    for (const name of ['one', 'two', 'three']) {
      const rows = readFileSync(join(out, 'text', name, 'eval_records.jsonl'), 'utf8')
        .trim()
        .split('\n');
      assert.deepEqual(
        rows.map((x) => (JSON.parse(x) as { leaf_value_em: number }).leaf_value_em),
        [1, 0],
      );
    }
  }
});
