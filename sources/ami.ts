/**
 * AMI meetings as speaker-labelled transcripts, one per meeting (the SOB paper's audio source).
 *
 * Two inputs:
 * - the NXT stand-off XML of the AMI manual annotations: `words/<meeting>.<agent>.words.xml`
 *   (`<w>` with start/end times; `<vocalsound>`, `<disfmarker>`, `<gap>`, ... are non-speech
 *   marks and are dropped), `segments/<meeting>.<agent>.segments.xml` (one `<segment>` per
 *   utterance, its words given by `nite:child` hrefs over word ids, `#id(a)..id(b)`), and
 *   `corpusResources/meetings.xml` (agent letter -> global speaker id such as MEE068, and role);
 * - flat per-utterance rows, CSV (with a header) or JSONL: meeting id, speaker id, begin, end, text.
 *
 * A transcript line is `[m:ss] SPEAKER: text`: minutes:seconds from the meeting start (minutes
 * may pass 59), the global speaker id, the words with punctuation attached to the word before.
 * Utterances are sorted by the start time of their first timed word (the segment's
 * transcriber_start when no word is timed).
 *
 * Token counts use `countTokens` (tokenizer "ws-punct-v1": a run of letters/digits, with
 * apostrophes inside it, is one token; every other non-space character is one token). It is a
 * documented, dependency-free estimate, not a model's tokenizer.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import { storeAttachmentFile } from '../src/core/attachments.ts';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { readCsv } from './csv.ts';
import type { ItemLoader, LoadResult, Problem, SourceItem } from './types.ts';

export const TOKENIZER_NAME = 'ws-punct-v1';
const TOKEN_RE = /[\p{L}\p{N}]+(?:['\u2019][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;

/** Tokens under "ws-punct-v1" (see the file comment). */
export function countTokens(text: string): number {
  let n = 0;
  TOKEN_RE.lastIndex = 0;
  while (TOKEN_RE.exec(text) !== null) n++;
  return n;
}

export interface Utterance {
  /** Seconds from the meeting start. */
  start: number;
  end: number;
  speaker: string;
  /** NXT agent letter (A-E), when the input had one. */
  agent?: string;
  role?: string;
  text: string;
}

export interface Speaker {
  id: string;
  agent?: string;
  role?: string;
}

export interface Transcript {
  meetingId: string;
  utterances: Utterance[];
  speakers: Speaker[];
}

export interface TranscriptOptions {
  /** The paper's style: the spoken text in upper case. */
  upper?: boolean;
}

/** `[m:ss]` from seconds (floored). */
export function formatTime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function transcriptLines(t: Transcript, opts: TranscriptOptions = {}): string[] {
  return t.utterances.map(
    (u) => `[${formatTime(u.start)}] ${u.speaker}: ${opts.upper ? u.text.toUpperCase() : u.text}`,
  );
}

export function transcriptText(t: Transcript, opts: TranscriptOptions = {}): string {
  return transcriptLines(t, opts).join('\n');
}

// ---------------------------------------------------------------------------------------------
// XML helpers

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML's Char production: a code point a document may hold. */
function isXmlChar(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * XML entities and character references, decoded in one pass (so `&amp;#39;` stays `&#39;`).
 * A reference that is not one (`&#xZZ;`, `&#x110000;`, `&#0;`, an undefined `&name;`) throws,
 * naming it: the file holding it is broken, and its meeting is rejected, not the build. A bare
 * `&` that starts no reference is kept as it is.
 */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&([^\s&;<>"']{1,40});/g, (m, e: string) => {
    let cp: number | undefined;
    if (/^#x[0-9a-fA-F]{1,8}$/.test(e)) cp = Number.parseInt(e.slice(2), 16);
    else if (/^#[0-9]{1,10}$/.test(e)) cp = Number.parseInt(e.slice(1), 10);
    else if (e.startsWith('#')) throw new Error(`bad character reference "${m}"`);
    else if (Object.hasOwn(ENTITIES, e)) return ENTITIES[e];
    else throw new Error(`undefined entity "${m}"`);
    if (!isXmlChar(cp)) throw new Error(`character reference "${m}" is not an XML character`);
    return String.fromCodePoint(cp);
  });
}

/** Reads an XML file in the encoding its declaration names (AMI's are ISO-8859-1). */
function readXml(file: string): string {
  const buf = readFileSync(file);
  const head = buf.subarray(0, 200).toString('latin1');
  const enc = /encoding=["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  return enc && /^(iso-8859-1|latin-?1|windows-1252)$/.test(enc)
    ? buf.toString('latin1')
    : buf.toString('utf8');
}

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  trimValues: true,
});

function parseXml(file: string): OrderedNode[] {
  try {
    return parser.parse(readXml(file)) as OrderedNode[];
  } catch (e) {
    throw new UserError(`${file}: not valid XML: ${errorMessage(e)}`);
  }
}

function tagOf(node: OrderedNode): string | undefined {
  return Object.keys(node).find((k) => k !== ':@' && k !== '#text');
}

function children(node: OrderedNode): OrderedNode[] {
  const tag = tagOf(node);
  const c = tag ? node[tag] : undefined;
  return Array.isArray(c) ? (c as OrderedNode[]) : [];
}

function textOf(node: OrderedNode): string {
  return children(node)
    .map((c) => (typeof c['#text'] === 'string' ? c['#text'] : ''))
    .join('');
}

function rootElement(doc: OrderedNode[], file: string): OrderedNode {
  const root = doc.find((n) => {
    const t = tagOf(n);
    return t !== undefined && t !== '?xml';
  });
  if (!root) throw new UserError(`${file}: no root element`);
  return root;
}

// ---------------------------------------------------------------------------------------------
// NXT corpus

export interface MeetingInfo {
  meetingId: string;
  type?: string;
  speakers: Map<string, { global: string; role?: string }>;
}

/** `corpusResources/meetings.xml`: per meeting, agent letter -> global speaker id and role. */
function readMeetingsXml(file: string): Map<string, MeetingInfo> {
  const out = new Map<string, MeetingInfo>();
  const root = rootElement(parseXml(file), file);
  for (const m of children(root)) {
    if (tagOf(m) !== 'meeting') continue;
    const a = m[':@'] ?? {};
    const meetingId = a.observation;
    if (!meetingId) continue;
    const info: MeetingInfo = { meetingId, type: a.type, speakers: new Map() };
    for (const s of children(m)) {
      if (tagOf(s) !== 'speaker') continue;
      const sa = s[':@'] ?? {};
      if (sa.nxt_agent && sa.global_name)
        info.speakers.set(sa.nxt_agent, { global: sa.global_name, role: sa.role });
    }
    out.set(meetingId, info);
  }
  return out;
}

interface WordEl {
  id: string;
  tag: string;
  text: string;
  start?: number;
  end?: number;
  punc: boolean;
}

function num(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** The elements of a words file, in document order (words and non-speech marks share the id sequence). */
function readWordsFile(file: string): WordEl[] {
  const root = rootElement(parseXml(file), file);
  const out: WordEl[] = [];
  for (const n of children(root)) {
    const tag = tagOf(n);
    if (!tag) continue;
    const a = n[':@'] ?? {};
    let text: string;
    try {
      text = decodeEntities(textOf(n));
    } catch (e) {
      throw new UserError(`${file}: ${a['nite:id'] ? `${tag} ${a['nite:id']}: ` : ''}${errorMessage(e)}`);
    }
    out.push({
      id: a['nite:id'] ?? '',
      tag,
      text,
      start: num(a.starttime),
      end: num(a.endtime),
      punc: a.punc === 'true',
    });
  }
  return out;
}

const HREF_RE = /^([^#]+)#id\(([^)]+)\)(?:\.\.id\(([^)]+)\))?$/;

/** `file#id(a)..id(b)` -> its parts; undefined when the href is not of that form. */
function parseHref(href: string): { file: string; from: string; to: string } | undefined {
  const m = HREF_RE.exec(href.trim());
  if (!m) return undefined;
  return { file: m[1], from: m[2], to: m[3] ?? m[2] };
}

/** Words joined with spaces; punctuation attached to the word before (and dropped with no word before). */
function joinWords(words: { text: string; punc: boolean }[]): string {
  let s = '';
  for (const w of words) {
    const t = w.text.trim();
    if (t === '' || (s === '' && w.punc)) continue;
    if (s === '' || w.punc) s += t;
    else s += ` ${t}`;
  }
  return s;
}

/** Meeting ids that have words files under `<root>/words`. */
function listNxtMeetings(root: string): string[] {
  const dir = join(root, 'words');
  if (!existsSync(dir)) return [];
  const ids = new Set<string>();
  for (const f of readdirSync(dir)) {
    const m = /^([^.]+)\.([^.]+)\.words\.xml$/.exec(f);
    if (m) ids.add(m[1]);
  }
  return [...ids].sort();
}

/**
 * One meeting of an NXT corpus as a transcript. `meetings` is `corpusResources/meetings.xml`
 * (read when not given); without it a speaker is named by its agent letter.
 */
function loadNxtMeeting(root: string, meetingId: string, meetings?: Map<string, MeetingInfo>): Transcript {
  const wordsDir = join(root, 'words');
  const segDir = join(root, 'segments');
  const agents = readdirSync(wordsDir)
    .map(
      (f) =>
        new RegExp(`^${meetingId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.([^.]+)\\.words\\.xml$`).exec(
          f,
        )?.[1],
    )
    .filter((a): a is string => a !== undefined)
    .sort();
  if (agents.length === 0) throw new UserError(`${wordsDir}: no words files for meeting ${meetingId}`);
  const info = meetings?.get(meetingId);
  type Keyed = Utterance & { key: [number, number, string, number] };
  const utts: Keyed[] = [];
  const speakers: Speaker[] = [];
  for (const agent of agents) {
    const who = info?.speakers.get(agent);
    const speaker = who?.global ?? agent;
    speakers.push({ id: speaker, agent, role: who?.role });
    const wordsFile = join(wordsDir, `${meetingId}.${agent}.words.xml`);
    const words = readWordsFile(wordsFile);
    const index = new Map<string, number>();
    for (const [i, w] of words.entries()) index.set(w.id, i);
    const segFile = join(segDir, `${meetingId}.${agent}.segments.xml`);
    if (!existsSync(segFile))
      throw new UserError(`${segFile}: missing (every words file needs its segments file)`);
    const segRoot = rootElement(parseXml(segFile), segFile);
    let order = 0;
    for (const seg of children(segRoot)) {
      if (tagOf(seg) !== 'segment') continue;
      const a = seg[':@'] ?? {};
      const picked: WordEl[] = [];
      for (const c of children(seg)) {
        if (tagOf(c) !== 'nite:child') continue;
        const href = parseHref(c[':@']?.href ?? '');
        if (!href) continue;
        const from = index.get(href.from);
        const to = index.get(href.to);
        if (from === undefined || to === undefined) {
          throw new UserError(
            `${segFile}: segment ${a['nite:id'] ?? '?'} points at word ids not in ${basename(wordsFile)}`,
          );
        }
        for (let i = from; i <= to; i++) picked.push(words[i]);
      }
      const spoken = picked.filter((w) => w.tag === 'w');
      const text = joinWords(spoken);
      if (text === '') continue;
      const timed = spoken.filter((w) => w.start !== undefined);
      const tStart = num(a.transcriber_start);
      const start = timed[0]?.start ?? tStart ?? 0;
      const end = timed.at(-1)?.end ?? num(a.transcriber_end) ?? start;
      utts.push({
        start,
        end,
        speaker,
        agent,
        role: who?.role,
        text,
        key: [start, tStart ?? start, agent, order++],
      });
    }
  }
  utts.sort((x, y) => {
    for (let i = 0; i < 4; i++) {
      const a = x.key[i];
      const b = y.key[i];
      if (a < b) return -1;
      if (a > b) return 1;
    }
    return 0;
  });
  return { meetingId, utterances: utts.map(({ key: _key, ...u }) => u), speakers };
}

// ---------------------------------------------------------------------------------------------
// Flat rows

/** Non-speech marks written inline in flat text: `<vocalsound>`, `[gap]`, `{disfmarker}` ... */
const NON_SPEECH =
  /[<[{](?:vocalsound|disfmarker|gap|nonvocalsound|comment|pause|laugh|cough)[^>\]}]*[>\]}]/gi;

/** A row of the flat format; the usual column-name variants are accepted. */
const FlatRow = z
  .object({
    meeting_id: z.coerce.string().min(1),
    speaker_id: z.coerce.string().min(1),
    begin: z.coerce.number().finite(),
    end: z.coerce.number().finite(),
    text: z.string(),
  })
  .passthrough();

const ALIASES: Record<string, string[]> = {
  meeting_id: ['meeting_id', 'meeting', 'meetingid', 'observation'],
  speaker_id: ['speaker_id', 'speaker', 'speakerid', 'participant'],
  begin: ['begin', 'start', 'begin_time', 'start_time', 'starttime'],
  end: ['end', 'end_time', 'endtime', 'stop'],
  text: ['text', 'transcript', 'utterance', 'words'],
};

function canonicalRow(raw: Record<string, unknown>): Record<string, unknown> {
  const lower = new Map(Object.entries(raw).map(([k, v]) => [k.trim().toLowerCase(), v]));
  const out: Record<string, unknown> = {};
  for (const [canon, names] of Object.entries(ALIASES)) {
    for (const n of names) {
      if (lower.has(n)) {
        out[canon] = lower.get(n);
        break;
      }
    }
  }
  return out;
}

/** Flat rows (CSV or JSONL) grouped into one transcript per meeting; bad rows are reported. */
export function loadFlatRows(file: string): {
  transcripts: Transcript[];
  problems: { origin: string; reasons: string[] }[];
} {
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const raws: { origin: string; value: Record<string, unknown> | undefined; error?: string }[] = [];
  if (extname(file).toLowerCase() === '.csv') {
    const { header, rows } = readCsv(text, file);
    for (const { cells, line } of rows) {
      const obj: Record<string, unknown> = {};
      header.forEach((h, j) => {
        obj[h] = cells[j] ?? '';
      });
      raws.push({ origin: `${file}:${line}`, value: obj });
    }
  } else {
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        const v = JSON.parse(line) as unknown;
        if (v === null || typeof v !== 'object' || Array.isArray(v))
          raws.push({ origin: `${file}:${i + 1}`, value: undefined, error: 'not a JSON object' });
        else raws.push({ origin: `${file}:${i + 1}`, value: v as Record<string, unknown> });
      } catch (e) {
        raws.push({
          origin: `${file}:${i + 1}`,
          value: undefined,
          error: `not valid JSON: ${errorMessage(e)}`,
        });
      }
    });
  }
  const problems: { origin: string; reasons: string[] }[] = [];
  const byMeeting = new Map<string, (Utterance & { order: number })[]>();
  let order = 0;
  for (const r of raws) {
    if (!r.value) {
      problems.push({ origin: r.origin, reasons: [r.error ?? 'unreadable row'] });
      continue;
    }
    const parsed = FlatRow.safeParse(canonicalRow(r.value));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        origin: r.origin,
        reasons: [`not an utterance row: ${issue.path.join('.') || 'row'}: ${issue.message}`],
      });
      continue;
    }
    const row = parsed.data;
    const spoken = row.text
      .replace(NON_SPEECH, ' ')
      .replace(/\s+/g, ' ')
      .replace(/\s+([.,?!;:])/g, '$1')
      .trim();
    if (spoken === '') continue;
    let list = byMeeting.get(row.meeting_id);
    if (!list) byMeeting.set(row.meeting_id, (list = []));
    list.push({ start: row.begin, end: row.end, speaker: row.speaker_id, text: spoken, order: order++ });
  }
  const transcripts: Transcript[] = [];
  for (const [meetingId, list] of byMeeting) {
    list.sort((a, b) => a.start - b.start || a.order - b.order);
    const speakers: Speaker[] = [];
    for (const u of list) if (!speakers.some((s) => s.id === u.speaker)) speakers.push({ id: u.speaker });
    transcripts.push({ meetingId, utterances: list.map(({ order: _o, ...u }) => u), speakers });
  }
  return { transcripts, problems };
}

// ---------------------------------------------------------------------------------------------
// As source items

function isNxtCorpus(input: string): boolean {
  return existsSync(input) && statSync(input).isDirectory() && existsSync(join(input, 'words'));
}

function transcriptSourceItem(t: Transcript, opts: TranscriptOptions = {}): SourceItem {
  const context = transcriptText(t, opts);
  return {
    id: t.meetingId,
    context,
    metadata: {
      dataset: 'ami',
      source_id: t.meetingId,
      meeting_id: t.meetingId,
      speakers: t.speakers.map((s) => s.id),
      utterances: t.utterances.length,
      context_tokens: countTokens(context),
      tokenizer: TOKENIZER_NAME,
    },
  };
}

/**
 * Transcripts of an AMI input: an NXT corpus folder (all its meetings, or only `only`), or a
 * flat CSV/JSONL file.
 */
export function loadAmiTranscripts(
  input: string,
  only?: ReadonlySet<string>,
): { transcripts: Transcript[]; problems: Problem[] } {
  if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
  if (isNxtCorpus(input)) {
    const meetingsFile = join(input, 'corpusResources', 'meetings.xml');
    const meetings = existsSync(meetingsFile) ? readMeetingsXml(meetingsFile) : undefined;
    const ids = listNxtMeetings(input).filter((id) => !only || only.has(id));
    const transcripts: Transcript[] = [];
    const problems: Problem[] = [];
    for (const id of ids) {
      // One broken file (a bad character reference, malformed XML, a dangling word id) costs
      // its meeting, named with the file and the reason; the other meetings are built.
      try {
        transcripts.push(loadNxtMeeting(input, id, meetings));
      } catch (e) {
        const msg = errorMessage(e);
        const file = /^(.+?\.xml): /.exec(msg)?.[1];
        problems.push({
          origin: file ?? join(input, 'words'),
          source_id: id,
          reasons: [`meeting ${id} rejected: ${file ? msg.slice(file.length + 2) : msg}`],
        });
      }
    }
    return { transcripts, problems };
  }
  if (statSync(input).isDirectory()) {
    throw new UserError(`${input}: not an AMI NXT corpus folder (no words/ in it) and not a CSV/JSONL file`);
  }
  const flat = loadFlatRows(input);
  return {
    transcripts: flat.transcripts.filter((t) => !only || only.has(t.meetingId)),
    problems: flat.problems,
  };
}

function loadAmi(input: string, opts: TranscriptOptions & { only?: ReadonlySet<string> } = {}): LoadResult {
  const { transcripts, problems } = loadAmiTranscripts(input, opts.only);
  return { items: transcripts.map((t) => transcriptSourceItem(t, opts)), problems };
}

/** The name AMI publishes a meeting's headset mix under. */
export function amiAudioName(meetingId: string): string {
  return `${meetingId}.Mix-Headset.wav`;
}

/**
 * A meeting's recording in the folder `--audio` names: `<meeting>.Mix-Headset.wav` in it, or in
 * `<meeting>/audio/` (the layout of AMI's own download); undefined when neither is there.
 */
export function findAmiAudio(dir: string, meetingId: string): string | undefined {
  const name = amiAudioName(meetingId);
  for (const file of [join(dir, name), join(dir, meetingId, 'audio', name)])
    if (existsSync(file) && statSync(file).isFile()) return file;
  return undefined;
}

/**
 * `--audio <dir>`: each meeting's recording as its records' attachment (kind `audio`,
 * `audio/wav`, copied into the benchmark folder by content hash once a record passes); a
 * meeting without one is a warning, its records built from the transcript alone.
 */
function attachAudio(items: SourceItem[], dir: string): { id: string; warning: string }[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(
      `--audio ${dir}: no such folder (the folder of the AMI recordings, <meeting>.Mix-Headset.wav)`,
      2,
    );
  const warnings: { id: string; warning: string }[] = [];
  for (const it of items) {
    const file = findAmiAudio(dir, it.id);
    if (!file) {
      warnings.push({
        id: it.id,
        warning: `no recording ${amiAudioName(it.id)} in ${dir} (nor in ${join(dir, it.id, 'audio')}): its records carry the transcript only`,
      });
      continue;
    }
    it.attach = async (benchmarkDir) => [await storeAttachmentFile(benchmarkDir, file, 'audio', 'audio/wav')];
  }
  return warnings;
}

export const loader: ItemLoader = {
  produces: 'items',
  source: 'audio',
  loadItems: async (input, ctx) => {
    const loaded = loadAmi(input, { upper: ctx.options.upper, only: ctx.only });
    for (const it of loaded.items)
      ctx.log(
        `${it.id}: ${it.metadata.utterances} utterances, ${it.metadata.context_tokens} tokens (${TOKENIZER_NAME})`,
      );
    if (ctx.options.audio !== undefined) loaded.warnings = attachAudio(loaded.items, ctx.options.audio);
    return loaded;
  },
};
