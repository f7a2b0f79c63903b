import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  countTokens,
  formatTime,
  loadAmiTranscripts,
  loadFlatRows,
  TOKENIZER_NAME,
  transcriptLines,
  transcriptText,
} from '../../sources/ami.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const AMI = sharedData('ami');
const EXAMPLES = join(import.meta.dirname, '../../sources/examples');
const { transcripts } = needsData('ami')
  ? { transcripts: [] as ReturnType<typeof loadAmiTranscripts>['transcripts'] }
  : loadAmiTranscripts(AMI);
const byId = new Map(transcripts.map((t) => [t.meetingId, t]));

/** Independent reading of meetings.xml: agent letter -> global id for one meeting (regex, not our parser). */
function globalIds(meeting: string): Map<string, string> {
  const xml = readFileSync(join(AMI, 'corpusResources/meetings.xml'), 'latin1');
  const block = new RegExp(`<meeting[^>]*observation="${meeting}"[^>]*>([\\s\\S]*?)</meeting>`).exec(xml)![1];
  const out = new Map<string, string>();
  for (const m of block.matchAll(/<speaker[^>]*>/g)) {
    const agent = /nxt_agent="([^"]+)"/.exec(m[0])![1];
    const global = /global_name="([^"]+)"/.exec(m[0])![1];
    out.set(agent, global);
  }
  return out;
}

/** Independent reading of a meeting's words files: every `<w>` with its agent, time and text. */
function wordsOf(
  meeting: string,
): { agent: string; start: number | undefined; text: string; punc: boolean }[] {
  const out: { agent: string; start: number | undefined; text: string; punc: boolean }[] = [];
  for (const f of readdirSync(join(AMI, 'words')).filter((f) => f.startsWith(`${meeting}.`))) {
    const agent = f.split('.')[1];
    const xml = readFileSync(join(AMI, 'words', f), 'latin1');
    for (const m of xml.matchAll(/<w ([^>]*)>([^<]*)<\/w>/g)) {
      const start = /starttime="([^"]+)"/.exec(m[1])?.[1];
      out.push({
        agent,
        start: start === undefined ? undefined : Number(start),
        text: m[2].replace(/&#39;/g, "'"),
        punc: m[1].includes('punc="true"'),
      });
    }
  }
  return out;
}

const LINE = /^\[(\d+):(\d\d)\] (\S+): (.+)$/;

describe('AMI NXT meetings from ../shared/data/ami', { skip: needsData('ami') }, () => {
  test('all 8 meetings become transcripts with lines', () => {
    assert.deepEqual([...byId.keys()].sort(), [
      'EN2001a',
      'ES2002a',
      'ES2002b',
      'ES2002c',
      'ES2002d',
      'ES2008a',
      'IS1009a',
      'TS3003a',
    ]);
    for (const t of transcripts) {
      assert.ok(t.utterances.length > 100, `${t.meetingId} has ${t.utterances.length} utterances`);
      for (const line of transcriptLines(t)) assert.match(line, LINE);
    }
  });

  test('ES2002a: lines in time order, each speaker named by its global id from meetings.xml', () => {
    const t = byId.get('ES2002a')!;
    const ids = globalIds('ES2002a');
    assert.deepEqual(Object.fromEntries(ids), { A: 'MEE006', B: 'FEE005', C: 'MEE007', D: 'MEE008' });
    let prev = -1;
    for (const u of t.utterances) {
      assert.ok(u.start >= prev, `utterance at ${u.start} after one at ${prev}`);
      prev = u.start;
      assert.equal(u.speaker, ids.get(u.agent!));
    }
    const lines = transcriptLines(t);
    let prevSec = -1;
    for (const line of lines) {
      const m = LINE.exec(line)!;
      const sec = Number(m[1]) * 60 + Number(m[2]);
      assert.ok(sec >= prevSec, line);
      prevSec = sec;
    }
    assert.deepEqual(
      new Set(lines.map((l) => LINE.exec(l)![3])),
      new Set(['FEE005', 'MEE006', 'MEE007', 'MEE008']),
    );
    assert.equal(lines.length, 236);
  });

  test("ES2002a's first line is the meeting's first word-timed utterance (checked against the words files)", () => {
    const words = wordsOf('ES2002a').filter((w) => w.start !== undefined && !w.punc);
    const first = words.reduce((a, b) => (b.start! < a.start! ? b : a));
    const ids = globalIds('ES2002a');
    const line = transcriptLines(byId.get('ES2002a')!)[0];
    const m = LINE.exec(line)!;
    assert.equal(Number(m[1]) * 60 + Number(m[2]), Math.floor(first.start!));
    assert.equal(m[3], ids.get(first.agent));
    assert.equal(m[4].split(' ')[0].replace(/[.,?!]$/, ''), first.text);
    assert.equal(line, '[0:50] FEE005: Okay.');
  });

  test('every spoken word appears once; non-speech marks are dropped and punctuation attached', () => {
    for (const meeting of ['ES2002a', 'EN2001a']) {
      const spoken = wordsOf(meeting).filter((w) => !w.punc).length;
      const t = byId.get(meeting)!;
      const inLines = t.utterances.reduce((n, u) => n + u.text.split(' ').length, 0);
      assert.equal(inLines, spoken, meeting);
      const text = transcriptText(t);
      assert.doesNotMatch(text, / [.,?!]/);
      assert.doesNotMatch(text, /vocalsound|disfmarker|<gap|&#39;/);
    }
    assert.equal(wordsOf('ES2002a').filter((w) => !w.punc).length, 2600);
  });

  test('EN2001a has five speakers, with the paper example line', () => {
    const t = byId.get('EN2001a')!;
    assert.equal(t.speakers.length, 5);
    const speakers = new Set(transcriptLines(t).map((l) => LINE.exec(l)![3]));
    assert.deepEqual(speakers, new Set(['MEE068', 'FEO066', 'FEO065', 'MEE067', 'MEO069']));
    const upper = transcriptLines(t, { upper: true });
    assert.ok(
      upper.includes("[0:11] MEE068: DOES ANYONE WANT TO SEE UH STEVE'S FEEDBACK FROM THE SPECIFICATION?"),
    );
    assert.equal(upper.length, 944);
  });

  test(`context lengths in tokens (${TOKENIZER_NAME})`, () => {
    const tokens = Object.fromEntries(transcripts.map((t) => [t.meetingId, countTokens(transcriptText(t))]));
    assert.deepEqual(tokens, {
      EN2001a: 25551,
      ES2002a: 4837,
      ES2002b: 11407,
      ES2002c: 12541,
      ES2002d: 14871,
      ES2008a: 4168,
      IS1009a: 3834,
      TS3003a: 4753,
    });
  });
});

describe('AMI helpers', { skip: needsData('ami') }, () => {
  test('the ws-punct-v1 tokenizer counts words and punctuation marks', () => {
    assert.equal(countTokens("[0:11] MEE068: I'm here, okay?"), 12);
    assert.equal(countTokens(''), 0);
  });

  test('times are minutes:seconds, floored, minutes past 59', () => {
    assert.equal(formatTime(0), '0:00');
    assert.equal(formatTime(71.9), '1:11');
    assert.equal(formatTime(5250.2), '87:30');
  });
});

describe('AMI flat rows (the bundled example SOB02a)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-ami-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('CSV rows become one time-ordered transcript, non-speech marks and empty rows dropped', () => {
    const { transcripts: ts, problems } = loadFlatRows(join(EXAMPLES, 'ami-rows/SOB02a.csv'));
    assert.equal(problems.length, 0);
    assert.equal(ts.length, 1);
    const lines = transcriptLines(ts[0]);
    assert.equal(lines.length, 11);
    assert.equal(lines[1], '[0:08] MEX202: I checked the hall. It is free on Saturday the twelfth of April.');
    assert.equal(lines[2], '[0:14] FEX203: That works for me. How many people do we expect?');
    assert.equal(
      lines[3],
      "[0:19] FEX201: Last year we had about eighty visitors, so let's plan for one hundred.",
    );
    assert.equal(lines[10], '[0:56] MEX202: Agreed. See you all next week.');
    assert.deepEqual(
      ts[0].speakers.map((s) => s.id),
      ['FEX201', 'MEX202', 'FEX203'],
    );
  });

  test('the same rows as JSONL give the same transcript; a bad row is reported, not fatal', () => {
    const csv = loadFlatRows(join(EXAMPLES, 'ami-rows/SOB02a.csv')).transcripts[0];
    const file = join(dir, 'rows.jsonl');
    const rows = csv.utterances.map((u) =>
      JSON.stringify({ meeting: 'SOB02a', speaker: u.speaker, start: u.start, end: u.end, text: u.text }),
    );
    writeFileSync(file, [...rows.reverse(), '{"meeting": "SOB02a", "speaker": "X"}', 'not json'].join('\n'));
    const { transcripts: ts, problems } = loadFlatRows(file);
    assert.equal(transcriptText(ts[0]), transcriptText(csv));
    assert.equal(problems.length, 2);
    assert.match(problems[0].origin, /rows\.jsonl:12$/);
  });

  test('the NXT example SOB01a: speakers from its meetings.xml, vocal sounds and a sound-only segment dropped', () => {
    const { transcripts: ts } = loadAmiTranscripts(join(EXAMPLES, 'ami'));
    assert.equal(ts.length, 1);
    const lines = transcriptLines(ts[0]);
    assert.equal(lines.length, 18);
    assert.equal(
      lines[0],
      "[0:02] FEX101: Okay, let's start. This is the second design meeting for the Lumen solar garden lamp.",
    );
    assert.equal(lines[1], '[0:09] FEX102: Before we start, I finished the casing sketches.');
    assert.equal(lines[4], "[0:29] FEX102: Um, that's more than the nickel one, right?");
    assert.equal(lines[15], '[1:26] MEX103: Nothing else from me.');
    assert.equal(countTokens(transcriptText(ts[0])), 337);
  });
});
