/**
 * `sob build pdf --min-ocr-pass`: pages whose transcript passes too few of their olmOCR-bench
 * tests are dropped (the paper kept pages at >= 50%), with the measured rate as the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sharedOcrCache } from '../kit/ocr-cache.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const BENCH = sharedData('olmocr-bench');
const tmp = mkdtempSync(join(tmpdir(), 'sob-gate-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const schema = {
  type: 'object',
  properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
};
const ann = (source: string, id: string) =>
  JSON.stringify({
    source_id: source,
    record_id: id,
    question: 'q',
    json_schema: schema,
    ground_truth: { a: 'x', b: 'y', c: 'z' },
  });

function build(extra: string[]) {
  return spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'build',
      'pdf',
      join(tmp, 'pdfs'),
      '--annotations',
      join(tmp, 'ann.jsonl'),
      ...extra,
    ],
    { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: sharedOcrCache().home }, timeout: 300_000 },
  );
}

test('a handwritten page below --min-ocr-pass 0.5 is dropped with its rate; a clean page is kept', {
  skip: needsData('olmocr-bench'),
}, () => {
  mkdirSync(join(tmp, 'pdfs'));
  for (const f of ['earnings.pdf', 'mattsnotes.pdf'])
    copyFileSync(join(BENCH, 'pdfs', f), join(tmp, 'pdfs', f));
  writeFileSync(join(tmp, 'ann.jsonl'), `${ann('earnings_pg1', 'keep')}\n${ann('mattsnotes_pg1', 'drop')}\n`);
  const out = join(tmp, 'out', 'records.jsonl');
  const r = build(['--out', out, '--min-ocr-pass', '0.5', '--ocr-tests', join(BENCH, 'dataset.jsonl')]);
  assert.equal(r.status, 0, r.stderr);
  const ids = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { metadata: { record_id: string } }).metadata.record_id);
  assert.deepEqual(ids, ['keep']);
  const rejected = readFileSync(join(tmp, 'out', 'rejected.jsonl'), 'utf8');
  assert.match(
    rejected,
    /"origin":"mattsnotes_pg1".*OCR pass rate 0\.00 on 3 tests is below --min-ocr-pass 0\.5/,
  );
});

test('--min-ocr-pass without --ocr-tests is a usage error', { skip: needsData('olmocr-bench') }, () => {
  const r = build(['--out', join(tmp, 'o2', 'records.jsonl'), '--min-ocr-pass', '0.5']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--min-ocr-pass needs --ocr-tests/);
});
