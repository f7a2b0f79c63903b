/**
 * Issue 9 item 11 (the scoring part): a response file whose modality falls back to the default
 * (text: no `metadata.source`, nothing telling in the file name) says so, once, on stderr.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, sob } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-modality-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const NOTE = /no source \(metadata\.source\) and the file name does not tell one/g;

function score(name: string, body: string, extra: string[] = []) {
  const f = join(tmp, name);
  writeFileSync(f, body);
  const out = join(tmp, `out-${name}`);
  const r = sob(['score', f, '--out', out, '--bootstrap-samples', '0', ...extra], tmp);
  assert.equal(r.code, 0, r.stderr);
  return { stderr: r.stderr, out };
}

const three = (metadata: Record<string, unknown> = {}) =>
  `${['a', 'b', 'c'].map((id) => responseLine(id, { name: 'x', n: 1 }, { metadata })).join('\n')}\n`;

test('a file that tells nothing of its modality is scored as text, and says so once', () => {
  const { stderr, out } = score('answers.jsonl', three());
  assert.equal(stderr.match(NOTE)?.length, 1, stderr);
  assert.match(stderr, /answers\.jsonl: 3 records name no source .*scored as text; --modality chooses/);
  assert.equal(readOut(out, 'text', 'answers').summary.num_records, 3);
});

test('no note when the file name, the records or --modality tell the modality', () => {
  assert.doesNotMatch(score('response_m_image.jsonl', three()).stderr, NOTE);
  assert.doesNotMatch(score('text_response_m.jsonl', three()).stderr, NOTE);
  assert.doesNotMatch(score('answers2.jsonl', three({ source: 'text' })).stderr, NOTE);
  assert.doesNotMatch(score('answers3.jsonl', three(), ['--modality', 'text']).stderr, NOTE);
  // Mixed: only the records without a source are counted.
  const mixed = `${responseLine('a', { name: 'x' }, { metadata: { source: 'image' } })}\n${responseLine('b', { name: 'x' })}\n`;
  const { stderr } = score('answers4.jsonl', mixed);
  assert.match(stderr, /answers4\.jsonl: 1 record names no source/);
});
