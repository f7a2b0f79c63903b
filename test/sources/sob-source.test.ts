/**
 * issue 9 item 1: SOB rows keep their source. Rows without `metadata.source` take it from
 * `--source`, the config, the file name (as the SOB reference reads it) or a `source_pdf` field;
 * when none tells, the build refuses with one line naming --source and writes nothing. The
 * "records written" and "benchmark now holds" lines always agree (or say why not).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sobIn } from '../kit/cli.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const SOB_IMAGES = sharedData('sob/images_responses');
const dir = mkdtempSync(join(tmpdir(), 'sob-source-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `sob <args>` in this process (test/kit/cli.ts). */
async function sob(...args: string[]) {
  const r = await sobIn(args, { cwd: ROOT });
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

const SCHEMA = {
  type: 'object',
  properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'string' } },
};

/** `n` rows in the flat shape, none with a source. */
function rows(n: number, extra: Record<string, unknown> = {}): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      record_id: `r${i}`,
      context: `Alpha ${i} and the number ${i} and gamma.`,
      question: 'What are a, b and c?',
      json_schema: SCHEMA,
      ground_truth: { a: `Alpha ${i}`, b: i, c: 'gamma' },
      schema_complexity: 'easy',
      ...extra,
    }),
  )
    .join('\n')
    .concat('\n');
}

function manifest(out: string) {
  return JSON.parse(readFileSync(join(out, '..', 'manifest.json'), 'utf8'));
}

describe('sob build sob: every record has a known source', { skip: needsData('sob') }, () => {
  test('rows with no source in a neutral file: exit 2, one line naming --source, nothing written', async () => {
    const input = join(dir, 'rows.jsonl');
    writeFileSync(input, rows(7));
    const out = join(dir, 'refused', 'records.jsonl');
    const r = await sob('build', 'sob', input, '--out', out);
    assert.equal(r.status, 2);
    const errLines = r.stderr.split('\n').filter((l) => l.startsWith('sob: '));
    assert.equal(errLines.length, 1);
    assert.match(errLines[0], /7 of 7 rows have no known source .*: pass --source text\|image\|audio$/);
    assert.equal(r.stdout, '');
    assert.equal(existsSync(out), false);
    assert.equal(existsSync(join(dir, 'refused', 'manifest.json')), false);
  });

  test('--source image labels every row; written and held agree (7 = 7) and the manifest counts them', async () => {
    const input = join(dir, 'rows.jsonl');
    const out = join(dir, 'forced', 'records.jsonl');
    const r = await sob('build', 'sob', input, '--source', 'image', '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^7 records written, 0 rejected/);
    assert.match(
      r.stdout,
      /\nbenchmark now holds 7 records: text 0 \(weight 0\), image 7 \(weight 7\), audio 0/,
    );
    assert.match(r.stderr, /source of each record: 7 from --source/);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines.length, 7);
    assert.deepEqual(new Set(lines.map((l) => JSON.parse(l).metadata.source)), new Set(['image']));
    assert.deepEqual(manifest(out).sources.image, { records: 7, weight: 7 });
    assert.equal(manifest(out).records, 7);
  });

  test('--source replaces a row that says otherwise, and says how many', async () => {
    const input = join(dir, 'mixed.jsonl');
    writeFileSync(input, rows(3, { source: 'text' }));
    const out = join(dir, 'override', 'records.jsonl');
    const r = await sob('build', 'sob', input, '--source', 'audio', '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /--source audio replaced a different metadata\.source on 3 rows/);
    assert.deepEqual(manifest(out).sources.audio, { records: 3, weight: 3 });
  });

  test('the file name as the reference reads it: response_<model>_audio.jsonl -> audio', async () => {
    const input = join(dir, 'response_tiny_audio.jsonl');
    writeFileSync(input, rows(4));
    const out = join(dir, 'byname', 'records.jsonl');
    const r = await sob('build', 'sob', input, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /source of each record: 4 from file name/);
    assert.match(
      r.stdout,
      /benchmark now holds 4 records: text 0 \(weight 0\), image 0 \(weight 0\), audio 4/,
    );
  });

  test('released SOB image rows without metadata.source: image by their file name, refused under a neutral name', async () => {
    const text = readFileSync(join(SOB_IMAGES, 'response_openai-gpt-5-4_image.jsonl'), 'utf8');
    const lines = text.trim().split('\n');
    assert.equal(lines.length, 209);
    assert.ok(
      lines.every((l) => JSON.parse(l).metadata.source === undefined && !JSON.parse(l).metadata.source_pdf),
    );
    mkdirSync(join(dir, 'released'));
    const named = join(dir, 'released', 'response_openai-gpt-5-4_image.jsonl');
    writeFileSync(named, text);
    const out = join(dir, 'released', 'bench', 'records.jsonl');
    const r = await sob('build', 'sob', named, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    // 209 rows, each labelled image; one fails the record checks (the "208 records written").
    assert.match(r.stderr, /source of each record: 209 from file name/);
    assert.match(r.stdout, /^208 records written, 1 rejected/);
    assert.match(r.stdout, /\nbenchmark now holds 208 records: text 0 \(weight 0\), image 208 /);
    assert.equal(manifest(out).sources.image.records, 208);
    assert.equal(manifest(out).records, 208);

    // The reproduction: the same rows in a file whose name says nothing.
    const neutral = join(dir, 'released', 'rows.jsonl');
    writeFileSync(neutral, text);
    const refused = await sob('build', 'sob', neutral, '--out', join(dir, 'released', 'n', 'records.jsonl'));
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /sob: .*rows\.jsonl: 209 of 209 rows have no known source/);
    assert.equal(existsSync(join(dir, 'released', 'n', 'records.jsonl')), false);
  });

  test('rows carrying source_pdf (the other released image files) are image under any name', async () => {
    const text = readFileSync(join(SOB_IMAGES, 'response_phi-4_image.jsonl'), 'utf8');
    const input = join(dir, 'phi.jsonl');
    writeFileSync(input, text);
    const out = join(dir, 'phi', 'records.jsonl');
    const r = await sob('build', 'sob', input, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /source of each record: 209 from source_pdf/);
    assert.match(r.stdout, /^208 records written, 1 rejected/);
    assert.equal(manifest(out).sources.image.records, 208);
  });

  test('--append to a file holding foreign lines: held = before + written, and the uncounted lines are named', async () => {
    const out = join(dir, 'append', 'records.jsonl');
    mkdirSync(join(dir, 'append'));
    // A line without a source and a torn, non-JSON line, left by something else.
    writeFileSync(out, `${rows(1, { record_id: 'foreign' })}{"metadata": \n`);
    const input = join(dir, 'rows.jsonl');
    const r = await sob('build', 'sob', input, '--source', 'text', '--out', out, '--append');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^7 records written/);
    assert.match(r.stdout, /benchmark now holds 7 records \(0 before \+ 7 written\): text 7/);
    assert.match(r.stdout, /2 other lines of .* are not counted: 1 without a known source, 1 not JSON/);
    assert.deepEqual(manifest(out).uncounted_lines, { not_json: 1, no_source: 1, no_complexity: 0 });
  });
});
