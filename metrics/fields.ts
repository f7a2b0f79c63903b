/**
 * Field-level rows (`fields.jsonl`, docs/formats.md "fields.jsonl"): one per ground-truth leaf of a scored record,
 * from what the scorer already has: the leaves SOB flattens, the profile's exact comparison in
 * place, and with `--match` the lenient verdict and the comparator that decided. Pure: text in
 * memory, no I/O. The row's format is owned by src/core/formats/field-row.ts.
 */
import { FIELD_ROW, type FieldGate } from '../src/core/formats/field-row.ts';
import { dumpsPy, floatJson, type PyValue } from '../src/core/pyjson.ts';
import type { LenientScore } from './match/score.ts';
import { flattenLeaves, type Leaves } from './paths.ts';
import { answerLeaves, type RecordScore } from './record.ts';

/** `line_items[3].amount` -> `line_items[].amount` (SOB's dotted path, indices collapsed). */
export function collapsePath(path: string): string {
  return path.includes('[') ? path.replace(/\[\d+\]/g, '[]') : path;
}

/** A leaf value as JSON text (ints as ints, floats in Python's repr so `1.0` stays `1.0`). */
export function leafJson(v: PyValue): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return floatJson(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      return v === null ? 'null' : dumpsPy(v);
  }
}

/** The gate that held a record's Value Accuracy down (the first that applies), or null. */
export function gateOf(s: RecordScore): FieldGate | null {
  if (s.explanation.scoring_error !== undefined) return 'scoring_error';
  if (!s.rootStructured) return 'not_structured';
  if (!s.schemaValidInput) return 'schema_invalid';
  if (!s.jsonPass) return 'json_pass';
  if (s.explanation.coverage_gate !== undefined && s.explanation.coverage_gate < 1) return 'coverage_gate';
  return null;
}

/**
 * Per ground truth object: each leaf's constant part of its row (`"path": .., "field": ..`) and its
 * value as the row quotes it (`"gold"`'s, and `"answer"`'s when the answer's leaf is the same).
 */
interface GoldParts {
  leaves: Leaves;
  parts: string[];
  quoted: string[];
}
const goldMemo = new WeakMap<object, GoldParts>();
/** Collapsed paths by path (`line_items[3].amount` recurs in every record of a schema). */
const collapsed = new Map<string, string>();
function collapsedJson(path: string): string {
  let c = collapsed.get(path);
  if (c === undefined) {
    c = JSON.stringify(collapsePath(path));
    if (collapsed.size >= 65_536) collapsed.clear();
    collapsed.set(path, c);
  }
  return c;
}
function goldParts(gold: PyValue | undefined): GoldParts {
  const key = gold instanceof Map || Array.isArray(gold) ? gold : undefined;
  let m = key ? goldMemo.get(key) : undefined;
  if (!m) {
    const leaves = flattenLeaves(gold);
    const parts: string[] = [];
    const quoted: string[] = [];
    for (const [path, g] of leaves) {
      parts.push(`"path":${JSON.stringify(path)},"field":${collapsedJson(path)}`);
      quoted.push(JSON.stringify(leafJson(g)));
    }
    m = { leaves, parts, quoted };
    if (key) goldMemo.set(key, m);
  }
  return m;
}

export interface FieldInput {
  score: RecordScore;
  /** Short hash of the schema text (rows of one schema share it). */
  schema: string;
  gold: PyValue | undefined;
  /** The answer as the profile scored it (null when it is not an object or array). */
  candidate: PyValue | null;
  /** The profile's exact comparison (`pyEquals` for sob, `strictEquals` for strict). */
  equals: (a: PyValue, b: PyValue) => boolean;
  /** With `--match`: the record's lenient scores (their per-leaf rows). */
  lenient?: LenientScore | null;
}

/**
 * The record's `fields.jsonl` lines (joined by `\n`; '' when the ground truth has no leaf): one per
 * ground-truth leaf, in the ground truth's order.
 */
export function fieldLines(inp: FieldInput): string {
  const { score, equals } = inp;
  const { leaves, parts, quoted } = goldParts(inp.gold);
  if (parts.length === 0) return '';
  const pred = inp.candidate === null ? undefined : answerLeaves(inp.candidate);
  const gate = gateOf(score);
  const head = `{"format_version":${FIELD_ROW.version},"record_id":${idJson(score.recordId)},"model_id":${idJson(score.modelId)},"schema":${JSON.stringify(inp.schema)},`;
  const tail = `,"gate":${gate === null ? 'null' : JSON.stringify(gate)}}`;
  const byPath = inp.lenient ? lenientByPath(inp.lenient) : undefined;
  const out: string[] = [];
  let i = 0;
  for (const [path, g] of leaves) {
    const p = pred?.get(path);
    const exact = p !== undefined && equals(g, p);
    let len = ',"lenient":null,"lenient_verdict":null,"comparator":null';
    const l = byPath?.get(path);
    if (l) {
      const accepted =
        l.verdict === 'match'
          ? 'true'
          : l.verdict === 'unsettled' || l.verdict === 'unscored' || l.verdict === 'needs_judge'
            ? 'null'
            : 'false';
      len = `,"lenient":${accepted},"lenient_verdict":"${l.verdict}","comparator":${JSON.stringify(l.accepted_by ?? l.matcher)}`;
      if (l.pred_path !== path)
        len += `,"pred_path":${l.pred_path === null ? 'null' : JSON.stringify(l.pred_path)}`;
    }
    // An exact string, boolean or null answer is spelled as its gold is (a number may not be: 1 and 1.0).
    const answer =
      p === undefined
        ? 'null'
        : exact && typeof p === typeof g && typeof p !== 'number' && typeof p !== 'object'
          ? quoted[i]
          : JSON.stringify(leafJson(p));
    out.push(`${head}${parts[i]},"gold":${quoted[i]},"answer":${answer},"exact":${exact}${len}${tail}`);
    i++;
  }
  return out.join('\n');
}

function idJson(v: PyValue): string {
  return typeof v === 'string' ? JSON.stringify(v) : dumpsPy(v);
}

function lenientByPath(s: LenientScore): Map<string, LenientScore['leaves'][number]> {
  const m = new Map<string, LenientScore['leaves'][number]>();
  for (const l of s.leaves) m.set(l.path, l);
  return m;
}
