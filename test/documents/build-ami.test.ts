/**
 * `sob build ami --audio <dir>`: each meeting's recording (AMI's `<meeting>.Mix-Headset.wav`, in
 * the folder or in `<meeting>/audio/` as AMI's download lays it out) is its records' attachment,
 * copied into the benchmark folder by content hash; a meeting without one is a warning and its
 * records keep the transcript alone. The test writes its own audio (a WAV tone). The real
 * `sob run --input document` against the local OpenAI protocol server sends exactly that file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sha256Hex } from '../../src/core/attachments.ts';
import { checkBenchmark } from '../../src/core/benchmark-records.ts';
import {
  documentsOf,
  type ProtocolServer,
  ROOT,
  rows,
  runDocumentMode,
  sobIn,
  startProtocolServer,
  tempDir,
  wavOf,
} from '../kit/index.ts';

const EX = join(ROOT, 'sources/examples');
const dir = tempDir('sob-build-ami-');
let server: ProtocolServer;
const wav = wavOf(300, 5);

/** The example's annotations, each question tagged `[rid:<record id>]` for the protocol server. */
function tagged(file: string): string {
  const out = join(dir, `${file.replaceAll('/', '-')}`);
  const lines = readFileSync(join(EX, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const a = JSON.parse(l);
      return JSON.stringify({ ...a, question: `${a.question} [rid:${a.record_id}]` });
    });
  writeFileSync(out, `${lines.join('\n')}\n`);
  return out;
}

before(async () => {
  server = await startProtocolServer();
  mkdirSync(join(dir, 'flat'), { recursive: true });
  writeFileSync(join(dir, 'flat', 'SOB01a.Mix-Headset.wav'), wav);
  mkdirSync(join(dir, 'amicorpus', 'SOB01a', 'audio'), { recursive: true });
  writeFileSync(join(dir, 'amicorpus', 'SOB01a', 'audio', 'SOB01a.Mix-Headset.wav'), wav);
});
after(() => server.close());

function build(input: string, annotations: string, out: string, extra: string[]) {
  return sobIn(['build', 'ami', input, '--annotations', annotations, '--out', out, ...extra]);
}

test("a meeting's recording is its records' audio attachment; a meeting without one is a warning", async () => {
  const out = join(dir, 'bench/records.jsonl');
  const a = await build(join(EX, 'ami'), tagged('ami/annotations.jsonl'), out, [
    '--audio',
    join(dir, 'flat'),
  ]);
  assert.equal(a.code, 0, a.stderr);
  // The meeting of the flat rows has no recording in the folder: a warning, its records built.
  const b = await build(join(EX, 'ami-rows/SOB02a.csv'), tagged('ami-rows/annotations.jsonl'), out, [
    '--audio',
    join(dir, 'flat'),
    '--append',
  ]);
  assert.equal(b.code, 0, b.stderr);
  assert.match(
    b.stderr,
    new RegExp(
      `warning: SOB02a: no recording SOB02a\\.Mix-Headset\\.wav in ${join(dir, 'flat').replaceAll('/', '\\/')}`,
    ),
  );
  assert.match(b.stdout, /2 records written, 0 rejected, 1 warnings/);

  const recs = rows(out);
  assert.equal(recs.length, 4);
  for (const r of recs) {
    if (r.metadata.meeting_id === 'SOB02a') {
      assert.equal(r.input.attachments, undefined);
      continue;
    }
    assert.equal(r.metadata.meeting_id, 'SOB01a');
    assert.deepEqual(r.input.attachments, [
      { kind: 'audio', path: `attachments/${sha256Hex(wav)}.wav`, sha256: sha256Hex(wav), mime: 'audio/wav' },
    ]);
    // The transcript is still the record's context.
    assert.match(r.input.context, /^\[0:02\] FEX101: Okay/);
  }
  const stored = readdirSync(join(dir, 'bench/attachments'));
  assert.deepEqual(stored, [`${sha256Hex(wav)}.wav`]);
  assert.ok(readFileSync(join(dir, 'bench/attachments', stored[0])).equals(wav));
  const check = await checkBenchmark(out, {});
  assert.equal(check.rejected.length, 0);
  assert.deepEqual(check.attachments, { records: 2, files: 2, pages: 0 });
  assert.deepEqual(
    check.withoutAttachments.map((x) => x.id),
    recs.filter((r) => r.metadata.meeting_id === 'SOB02a').map((r) => r.metadata.record_id),
  );
});

test("AMI's download layout (<meeting>/audio/) is found; a folder that is not there is a usage error", async () => {
  const out = join(dir, 'bench2/records.jsonl');
  const r = await build(join(EX, 'ami'), tagged('ami/annotations.jsonl'), out, [
    '--audio',
    join(dir, 'amicorpus'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /warning: SOB01a/);
  for (const rec of rows(out)) assert.equal(rec.input.attachments[0].sha256, sha256Hex(wav));

  const bad = await build(
    join(EX, 'ami'),
    tagged('ami/annotations.jsonl'),
    join(dir, 'bench3/records.jsonl'),
    ['--audio', join(dir, 'nowhere')],
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--audio .*nowhere: no such folder/);
  const wrong = await sobIn([
    'build',
    'hotpotqa',
    'x.json',
    '--annotations',
    'a',
    '--out',
    'o',
    '--audio',
    dir,
  ]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--audio is for ami inputs only/);
});

test('sob run --input document sends exactly the recording', async () => {
  const bench = join(dir, 'bench2');
  const from = server.requests.length;
  const r = await runDocumentMode(server.openaiBaseUrl, bench, join(dir, 'run'));
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  assert.equal(seen.length, 2);
  for (const s of seen) {
    const docs = documentsOf(s);
    assert.equal(docs.length, 1);
    assert.equal(docs[0].part, 'input_audio');
    assert.equal(sha256Hex(docs[0].data), sha256Hex(wav));
  }
});
