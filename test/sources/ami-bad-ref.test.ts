/**
 * issue 9 item 9 (AMI): one bad character reference in an AMI file rejects that meeting, named
 * with its file and the reason, and the other meetings are built.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decodeEntities, loadAmiTranscripts } from '../../sources/ami.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const AMI = sharedData('ami');
const dir = mkdtempSync(join(tmpdir(), 'sob-ami-bad-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SKIP = needsData('ami');
const corpus = join(dir, 'ami');
if (!SKIP)
  for (const sub of ['words', 'segments', 'corpusResources'])
    cpSync(join(AMI, sub), join(corpus, sub), { recursive: true });

/** Replaces the text of the n-th `<w>` of a words file with `text` (raw XML). */
function plant(file: string, n: number, text: string): string {
  const xml = readFileSync(file, 'latin1');
  let i = 0;
  let id = '';
  const out = xml.replace(/(<w [^>]*nite:id="([^"]+)"[^>]*>)([^<]*)(<\/w>)/g, (m, open, wid, _t, close) => {
    if (i++ !== n) return m;
    id = wid;
    return `${open}${text}${close}`;
  });
  writeFileSync(file, out, 'latin1');
  return id;
}

const badHex = SKIP ? '' : plant(join(corpus, 'words/ES2002b.A.words.xml'), 40, 'go&#xZZ;od');
const badName = SKIP ? '' : plant(join(corpus, 'words/IS1009a.C.words.xml'), 7, 'fine&bogus;');
const badRange = SKIP ? '' : plant(join(corpus, 'words/TS3003a.B.words.xml'), 3, '&#x110000;');

describe('AMI: a bad character reference costs its meeting, not the build', {
  skip: needsData('ami'),
}, () => {
  test('decodeEntities: valid references decode, bad ones throw naming the reference', () => {
    assert.equal(decodeEntities('let&#39;s &amp;#39; &#x263A; &lt;&gt; AT&T'), "let's &#39; \u263a <> AT&T");
    assert.throws(() => decodeEntities('x&#xZZ;y'), /bad character reference "&#xZZ;"/);
    assert.throws(() => decodeEntities('&nbsp;'), /undefined entity "&nbsp;"/);
    assert.throws(() => decodeEntities('&#x110000;'), /"&#x110000;" is not an XML character/);
    assert.throws(() => decodeEntities('&#0;'), /"&#0;" is not an XML character/);
    assert.throws(() => decodeEntities('&#xD800;'), /not an XML character/);
  });

  test('the loader: 5 of 8 meetings load, each broken one is a problem naming file, word and reason', () => {
    const { transcripts, problems } = loadAmiTranscripts(corpus);
    assert.deepEqual(
      transcripts.map((t) => t.meetingId),
      ['EN2001a', 'ES2002a', 'ES2002c', 'ES2002d', 'ES2008a'],
    );
    assert.equal(problems.length, 3);
    const byId = new Map(problems.map((p) => [p.source_id, p]));
    assert.equal(byId.get('ES2002b')!.origin, join(corpus, 'words/ES2002b.A.words.xml'));
    assert.deepEqual(byId.get('ES2002b')!.reasons, [
      `meeting ES2002b rejected: w ${badHex}: bad character reference "&#xZZ;"`,
    ]);
    assert.deepEqual(byId.get('IS1009a')!.reasons, [
      `meeting IS1009a rejected: w ${badName}: undefined entity "&bogus;"`,
    ]);
    assert.deepEqual(byId.get('TS3003a')!.reasons, [
      `meeting TS3003a rejected: w ${badRange}: character reference "&#x110000;" is not an XML character`,
    ]);
  });

  test('sob build ami: the good meetings are written, the broken ones and their annotations rejected, exit 0', () => {
    const schema = {
      type: 'object',
      properties: { meeting: { type: 'string' }, kind: { type: 'string' }, topic: { type: 'string' } },
      required: ['meeting', 'kind', 'topic'],
    };
    const ann = ['ES2002a', 'ES2002b', 'IS1009a', 'ES2008a']
      .map((id) =>
        JSON.stringify({
          source_id: id,
          question: 'Which meeting is this, of what kind, about what?',
          json_schema: schema,
          ground_truth: { meeting: id, kind: 'design', topic: 'remote control' },
        }),
      )
      .join('\n');
    writeFileSync(join(dir, 'ann.jsonl'), `${ann}\n`);
    const out = join(dir, 'bench', 'records.jsonl');
    const r = spawnSync(
      process.execPath,
      [
        join(ROOT, 'bin/sob.js'),
        'build',
        'ami',
        corpus,
        '--annotations',
        join(dir, 'ann.jsonl'),
        '--out',
        out,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    // ES2002a and ES2008a written; ES2002b and IS1009a: the meeting and its annotation.
    assert.match(r.stdout, /^2 records written, 4 rejected/);
    assert.match(
      r.stderr,
      new RegExp(
        `rejected .*ES2002b\\.A\\.words\\.xml: meeting ES2002b rejected: w ${badHex.replaceAll('.', '\\.')}: bad character reference "&#xZZ;"`,
      ),
    );
    assert.match(r.stderr, /rejected ami-ES2002b-1: ami source item "ES2002b" was rejected/);
    const written = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).metadata.meeting_id);
    assert.deepEqual(written, ['ES2002a', 'ES2008a']);
    const rejected = readFileSync(join(dir, 'bench', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(rejected.length, 4);
    const manifest = JSON.parse(readFileSync(join(dir, 'bench', 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.sources.audio, { records: 2, weight: 2 });
  });
});
