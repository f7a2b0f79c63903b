/**
 * Issue 21 finding 1: a response file's name gives its model folder; `response_..jsonl` gave `.`
 * and `response_...jsonl` gave `..`, and the swap of new results then replaced `<out>/text` or
 * `<out>` itself (other models' results and an unrelated file deleted, exit 0). Such a name is
 * now refused with one line, and nothing under --out is touched.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-folder-names-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

for (const [name, folder] of [
  ['response_..jsonl', '.'],
  ['response_...jsonl', '..'],
  ['response_.._image.jsonl', '..'],
] as const) {
  test(`${name} (model folder ${JSON.stringify(folder)}) is refused with one line; nothing under --out is touched`, () => {
    const dir = mkdtempSync(join(tmp, 'case-'));
    const file = join(dir, name);
    writeFileSync(file, `${responseLine('a', { name: 'x', n: 1 })}\n`);
    const out = join(dir, 'out');
    mkdirSync(join(out, 'text', 'other-model'), { recursive: true });
    mkdirSync(join(out, 'image', 'other-model'), { recursive: true });
    writeFileSync(join(out, 'keep.txt'), 'unrelated');
    writeFileSync(join(out, 'text', 'other-model', 'eval_summary.json'), '{"n": 1}');
    writeFileSync(join(out, 'image', 'other-model', 'eval_summary.json'), '{"n": 2}');
    const r = sob(['score', file, '--out', out, '--bootstrap-samples', '0'], dir);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('sob: '));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      new RegExp(`folder name "${folder.replaceAll('.', '\\.')}", which is not a plain folder name`),
    );
    assert.equal(readFileSync(join(out, 'keep.txt'), 'utf8'), 'unrelated');
    assert.equal(readFileSync(join(out, 'text', 'other-model', 'eval_summary.json'), 'utf8'), '{"n": 1}');
    assert.equal(readFileSync(join(out, 'image', 'other-model', 'eval_summary.json'), 'utf8'), '{"n": 2}');
    assert.deepEqual(readdirSync(out).sort(), ['image', 'keep.txt', 'text']);
    assert.equal(existsSync(join(out, 'text', 'eval_summary.json')), false);
  });
}

test('a file name with a newline is refused as a folder name, and the line on stderr shows it escaped', () => {
  const dir = mkdtempSync(join(tmp, 'nl-'));
  const file = join(dir, 'response_a\nb.jsonl');
  writeFileSync(file, `${responseLine('a', { name: 'x', n: 1 })}\n`);
  const r = sob(['score', file, '--out', join(dir, 'out'), '--bootstrap-samples', '0'], dir);
  assert.equal(r.code, 1, r.stderr);
  const line = r.stderr.split('\n').find((l) => l.startsWith('sob: '));
  assert.ok(line?.includes('response_a\\nb.jsonl'), r.stderr);
});
