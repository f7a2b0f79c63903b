/**
 * What `sob review` reads of an evaluation folder (docs/review.md): the benchmark records, every
 * model's answers, the judge's flags; and the reviewers' decisions log
 * `<eval-dir>/review/decisions.jsonl`, appended durably (fsync before the caller hears "saved").
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { flattenLeaves, splitPath } from '../../metrics/paths.ts';
import { UserError, withPath } from '../core/errors.ts';
import { openNoFollow, truncateNoFollow } from '../core/files.ts';
import { readLinesSync } from '../core/jsonl.ts';
import { modalityFromPath, modelDirName } from '../core/modality.ts';
import { dumpsPy, isStructured, type PyObject, type PyValue, parsePyJson, toPlain } from '../core/pyjson.ts';
import type { ExternalFlag, ReviewRecord } from '../report/review-flags.ts';

export const DECISIONS = ['gold_right', 'alternative', 'gold_wrong', 'drop'] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/** One line of `review/decisions.jsonl`. */
export interface Decision {
  format_version: 1;
  id: string;
  reviewer: string;
  time: string;
  record_id: string;
  /** The gold leaf path ('' for the whole record). */
  path: string;
  decision: DecisionKind | 'undo';
  /** The gold value at the path when decided. */
  before: PyValue | null;
  /** gold_right: the gold; alternative: the accepted answer; gold_wrong: the typed value; drop/undo: null. */
  after: PyValue | null;
  /** Why the leaf was flagged. */
  reason: string;
  note: string;
  /** alternative: whose answer was accepted. */
  model?: string;
  /** undo: the id of the decision taken back. */
  undoes?: string;
}

export interface Attachment {
  kind: string;
  path: string;
  sha256?: string;
  mime?: string;
}

export interface LoadedRecord extends ReviewRecord {
  /** The record's line in the benchmark (or response file) it came from. */
  line: number;
  attachments: Attachment[];
}

export interface ReviewData {
  evalDir: string;
  /** The benchmark records file, when one is known (needed by --apply). */
  benchmark?: string;
  models: string[];
  records: LoadedRecord[];
  external: ExternalFlag[];
}

const plainObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseRecordLine(text: string, where: string): PyObject {
  let v: PyValue;
  try {
    v = parsePyJson(text);
  } catch (e) {
    throw new UserError(`${where}: not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!(v instanceof Map)) throw new UserError(`${where}: not a record (a JSON object)`);
  return v;
}

const get = (v: PyValue | undefined, k: string): PyValue | undefined =>
  v instanceof Map ? v.get(k) : undefined;

/** The answers' files: `runs/<model>/responses.jsonl` (sob eval), else every `*.jsonl` in the folder. */
function answerFiles(evalDir: string): { model: string; file: string; benchmark?: string }[] {
  const runs = join(evalDir, 'runs');
  if (existsSync(runs) && statSync(runs).isDirectory()) {
    const out: { model: string; file: string; benchmark?: string }[] = [];
    for (const d of readdirSync(runs).sort()) {
      const file = join(runs, d, 'responses.jsonl');
      if (!existsSync(file)) continue;
      // The run's folder name is the model's name in the evaluation folder (replay_m1, openai_gpt-4.1).
      const model = d;
      let benchmark: string | undefined;
      try {
        const m = JSON.parse(readFileSync(join(runs, d, 'manifest.json'), 'utf8')) as {
          benchmark?: { path?: string };
        };
        if (typeof m.benchmark?.path === 'string') benchmark = resolve(join(runs, d), m.benchmark.path);
      } catch {
        // a run without a readable manifest: its folder names the model
      }
      out.push({ model, file, benchmark });
    }
    return out;
  }
  return readdirSync(evalDir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => ({ model: modelDirName(f, modalityFromPath(f)), file: join(evalDir, f) }));
}

function recordOf(v: PyObject, line: number, where: string): LoadedRecord {
  const md = get(v, 'metadata');
  const id = get(md, 'record_id');
  if (typeof id !== 'string' || id === '')
    throw new UserError(`${where}: metadata.record_id must be a string`);
  const input = get(v, 'input');
  const context = get(input, 'context');
  const question = get(input, 'question');
  const schema = get(input, 'json_schema');
  const gold = get(get(v, 'output'), 'ground_truth');
  const atts = toPlain(get(input, 'attachments') ?? null);
  const attachments: Attachment[] = Array.isArray(atts)
    ? atts
        .filter((a): a is Record<string, unknown> => plainObj(a) && typeof a.path === 'string')
        .map((a) => ({
          kind: String(a.kind ?? ''),
          path: a.path as string,
          sha256: typeof a.sha256 === 'string' ? a.sha256 : undefined,
          mime: typeof a.mime === 'string' ? a.mime : undefined,
        }))
    : [];
  return {
    id,
    line,
    context: typeof context === 'string' ? context : '',
    question: typeof question === 'string' ? question : '',
    schema: schema === undefined ? null : toPlain(schema),
    gold: gold ?? null,
    answers: [],
    attachments,
  };
}

/** A model's answer as the scorer reads it: an object or array, else none. */
function candidateOf(v: PyObject): PyValue | undefined {
  const c = get(get(v, 'output'), 'candidate_response');
  if (isStructured(c)) return c;
  if (typeof c === 'string') {
    try {
      const p = parsePyJson(c.trim());
      if (isStructured(p)) return p;
    } catch {
      // not JSON: no answer to compare
    }
  }
  return undefined;
}

/** The judge's flags: `judgments.jsonl` (sob judge) in `<eval-dir>/judge/` or the folder itself. */
function judgeFlags(evalDir: string): ExternalFlag[] {
  const out: ExternalFlag[] = [];
  for (const file of [join(evalDir, 'judge', 'judgments.jsonl'), join(evalDir, 'judgments.jsonl')]) {
    if (!existsSync(file)) continue;
    for (const l of readLinesSync(file)) {
      let j: unknown;
      try {
        j = JSON.parse(l.text);
      } catch {
        continue;
      }
      if (!plainObj(j) || typeof j.record_id !== 'string') continue;
      const judge = String(j.judge ?? 'judge');
      if (typeof j.judge_error === 'string')
        out.push({
          record_id: j.record_id,
          path: '',
          kind: 'judge_unscored',
          detail: `${judge} could not score it: ${j.judge_error}`,
        });
      if (Array.isArray(j.issues))
        for (const i of j.issues)
          if (plainObj(i))
            out.push({
              record_id: j.record_id,
              path: typeof i.path === 'string' ? i.path.replace(/^\$\.?/, '') : '',
              kind: 'judge_flag',
              detail: `${judge}: ${String(i.kind ?? 'issue')}: ${String(i.reason ?? '')}`,
            });
    }
  }
  return out;
}

/** Reads an evaluation folder: the records (from the benchmark when known) and every answer. */
export function loadReviewData(evalDirArg: string, opts: { benchmark?: string } = {}): ReviewData {
  const evalDir = resolve(evalDirArg);
  if (!existsSync(evalDir) || !statSync(evalDir).isDirectory())
    throw new UserError(`not an evaluation folder: ${evalDirArg}`);
  const files = answerFiles(evalDir);
  if (files.length === 0)
    throw new UserError(`${evalDirArg}: no answers (no runs/<model>/responses.jsonl and no *.jsonl)`);
  const named = [...new Set(files.map((f) => f.benchmark).filter((b): b is string => b !== undefined))];
  let benchmark = opts.benchmark ? resolve(opts.benchmark) : named[0];
  if (!opts.benchmark && named.length > 1)
    throw new UserError(
      `${evalDirArg}: the runs answer different benchmarks (${named.join(', ')}): give --benchmark`,
    );
  if (!benchmark && existsSync(join(evalDir, 'benchmark', 'records.jsonl')))
    benchmark = join(evalDir, 'benchmark', 'records.jsonl');
  const records = new Map<string, LoadedRecord>();
  if (benchmark) {
    if (!existsSync(benchmark)) throw new UserError(`no such benchmark: ${benchmark}`);
    for (const l of readLinesSync(benchmark)) {
      if (l.text.trim() === '') continue;
      const where = `${benchmark}:${l.line}`;
      const r = recordOf(parseRecordLine(l.text, where), l.line, where);
      if (!records.has(r.id)) records.set(r.id, r);
    }
  }
  const models = files.map((f) => f.model);
  const answers = new Map<string, Map<string, PyValue | undefined>>();
  for (const f of files) {
    for (const l of readLinesSync(f.file)) {
      if (l.text.trim() === '') continue;
      let v: PyObject;
      try {
        v = parseRecordLine(l.text, `${f.file}:${l.line}`);
      } catch {
        continue; // a torn or malformed answer line: the scorer counts it; nothing to show
      }
      const id = get(get(v, 'metadata'), 'record_id');
      if (typeof id !== 'string') continue;
      if (!benchmark && !records.has(id)) records.set(id, recordOf(v, l.line, `${f.file}:${l.line}`));
      let per = answers.get(id);
      if (!per) answers.set(id, (per = new Map()));
      if (!per.has(f.model)) per.set(f.model, candidateOf(v));
    }
  }
  for (const r of records.values()) {
    const per = answers.get(r.id);
    r.answers = models.filter((m) => per?.has(m)).map((m) => ({ model: m, candidate: per!.get(m) }));
  }
  return { evalDir, benchmark, models, records: [...records.values()], external: judgeFlags(evalDir) };
}

// ---------------------------------------------------------------------------------------------
// Leaves

/** The value at a SOB leaf path ('' is the whole value). */
export function valueAt(root: PyValue, path: string): PyValue | undefined {
  if (path === '') return root;
  return flattenLeaves(root).get(path);
}

/** A copy of `root` with the leaf at `path` set to `value` ('' replaces the whole value). */
export function withLeaf(root: PyValue, path: string, value: PyValue): PyValue {
  if (path === '') return value;
  const steps = splitPath(path);
  if (!steps || steps.length === 0) throw new UserError(`not a leaf path: ${path}`);
  const set = (node: PyValue, i: number): PyValue => {
    const step = steps[i];
    const last = i === steps.length - 1;
    if ('key' in step) {
      if (!(node instanceof Map) || !node.has(step.key)) throw new UserError(`no leaf at ${path}`);
      const copy = new Map(node);
      copy.set(step.key, last ? value : set(node.get(step.key)!, i + 1));
      return copy;
    }
    if (!Array.isArray(node) || step.index >= node.length) throw new UserError(`no leaf at ${path}`);
    const copy = [...node];
    copy[step.index] = last ? value : set(node[step.index], i + 1);
    return copy;
  };
  return set(root, 0);
}

/** A value as the page and the log show it: JSON, numbers with their lexeme, non-ASCII kept. */
export function jsonText(v: PyValue | undefined): string {
  if (v === undefined) return '';
  return dumpsPy(v, { ensureAscii: false, separators: [',', ':'] });
}

// ---------------------------------------------------------------------------------------------
// The decisions log

export function decisionsFile(evalDir: string): string {
  return join(evalDir, 'review', 'decisions.jsonl');
}

/** Every decision in the log, in order; a torn last line (a write cut by a crash) is skipped. */
export function readDecisions(evalDir: string): Decision[] {
  const file = decisionsFile(evalDir);
  if (!existsSync(file)) return [];
  const out: Decision[] = [];
  for (const l of readLinesSync(file)) {
    if (l.text.trim() === '') continue;
    let v: PyValue;
    try {
      v = parsePyJson(l.text);
    } catch {
      continue;
    }
    if (!(v instanceof Map)) continue;
    const plain = toPlain(v) as Record<string, unknown>;
    if (typeof plain.id !== 'string' || typeof plain.record_id !== 'string') continue;
    out.push({
      ...(plain as unknown as Decision),
      before: v.get('before') ?? null,
      after: v.get('after') ?? null,
    });
  }
  return out;
}

/** Cuts a torn last line (no newline: the write that a kill interrupted, never acknowledged). */
export function repairDecisions(evalDir: string): void {
  const file = decisionsFile(evalDir);
  if (!existsSync(file)) return;
  const buf = readFileSync(file);
  if (buf.length === 0 || buf[buf.length - 1] === 0x0a) return;
  truncateNoFollow(file, buf.lastIndexOf(0x0a) + 1);
}

/** Appends one decision and fsyncs it (and, the first time, the folder) before returning. */
export function appendDecision(
  evalDir: string,
  d: Omit<Decision, 'id' | 'time' | 'format_version'>,
): Decision {
  const file = decisionsFile(evalDir);
  const dir = dirname(file);
  const fresh = !existsSync(file);
  mkdirSync(dir, { recursive: true });
  const full: Decision = { format_version: 1, id: randomUUID(), time: new Date().toISOString(), ...d };
  const { format_version: _v, before, after, ...rest } = full;
  // dumpsPy writes a JS number as a float: the version is an int lexeme.
  const line = `${dumpsPy({ format_version: 1n, ...rest, before, after } as unknown as PyValue, { ensureAscii: false, separators: [',', ':'] })}\n`;
  const fd = openNoFollow(file, 'a');
  try {
    // One write of the whole line on an O_APPEND descriptor: two reviewers' servers never interleave.
    writeSync(fd, line);
    fsyncSync(fd);
  } catch (e) {
    throw withPath(e, file);
  } finally {
    closeSync(fd);
  }
  if (fresh) {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  }
  return full;
}

/** The decisions still standing (undone ones removed), in log order. */
export function activeDecisions(all: readonly Decision[]): Decision[] {
  const undone = new Set(all.filter((d) => d.decision === 'undo').map((d) => d.undoes));
  return all.filter((d) => d.decision !== 'undo' && !undone.has(d.id));
}

/** Per reviewer and (record, path): the last standing decision. */
export function currentDecisions(all: readonly Decision[]): Map<string, Map<string, Decision>> {
  const out = new Map<string, Map<string, Decision>>();
  for (const d of activeDecisions(all)) {
    let per = out.get(d.reviewer);
    if (!per) out.set(d.reviewer, (per = new Map()));
    per.set(leafKey(d.record_id, d.path), d);
  }
  return out;
}

export function leafKey(recordId: string, path: string): string {
  return `${recordId}\u0000${path}`;
}

/** sha256 of a file, hex. */
export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
