/**
 * Where the `sob` profile's known quirks (docs/scoring.md, docs/profiles.md) decided a leaf's score, so a
 * record row can say so (`explanation.sob_quirks`): each note names the leaf, the quirk and what
 * the `strict` profile does there. Computed only on the leaves a quirk can touch (a type mismatch,
 * a missing leaf, a value equal across types, a Perfect Response missed), so scoring stays fast.
 * Pure.
 */
import { type PyValue, pyStr } from '../src/core/pyjson.ts';
import { splitPath } from './paths.ts';
import { strictLeafTypeOk } from './schema-types.ts';
import { literalLeafSchema } from './types.ts';

export interface SobQuirk {
  path: string;
  quirk:
    | 'type_list'
    | 'integral_float'
    | 'schema_walk'
    | 'bool_equals_number'
    | 'missing_is_null'
    | 'dotted_key_collision'
    | 'negative_zero'
    | 'int_float_lexeme'
    | 'truncated';
  note: string;
}

/** At most this many notes a row (the last says how many more there were). */
const MAX_QUIRKS = 50;

/** A leaf as JSON shows it (`null`, `true`, `1.0`, `"text"`), cut short. */
function preview(v: PyValue | undefined): string {
  if (v === undefined) return 'missing';
  const s =
    typeof v === 'string'
      ? JSON.stringify(v)
      : v === null || typeof v === 'boolean'
        ? String(v)
        : typeof v === 'object'
          ? 'a container'
          : pyStr(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** Collects a record's notes, capped. */
export class QuirkNotes {
  readonly list: SobQuirk[] = [];
  private dropped = 0;
  add(path: string, quirk: SobQuirk['quirk'], note: string): void {
    if (this.list.length < MAX_QUIRKS) this.list.push({ path, quirk, note });
    else this.dropped++;
  }
  done(): SobQuirk[] | undefined {
    if (this.list.length === 0) return undefined;
    if (this.dropped > 0)
      this.list.push({ path: '', quirk: 'truncated', note: `${this.dropped} more leaves not listed` });
    return this.list;
  }
}

/** Strict verdicts of mismatched leaves, per schema object (the same paths recur across models). */
const strictMemo = new WeakMap<object, Map<string, boolean>>();

/**
 * A Type Safety mismatch of the literal walk: a quirk when the strict walk accepts the value
 * (a type list with "null", an integral float, `$ref`/`anyOf`/a container type list on the way).
 */
export function typeQuirk(
  notes: QuirkNotes,
  schema: unknown,
  path: string,
  value: PyValue,
  expected: string | null,
): void {
  if (schema === null || typeof schema !== 'object') return;
  const kind = value === null ? 'null' : typeof value;
  const key = `${kind}\u0000${typeof value === 'number' && Number.isInteger(value) ? 'i' : ''}\u0000${path}`;
  let memo = strictMemo.get(schema);
  if (!memo) strictMemo.set(schema, (memo = new Map()));
  let ok = memo.get(key);
  if (ok === undefined) {
    const steps = splitPath(path);
    ok =
      steps !== null &&
      strictLeafTypeOk(
        schema,
        steps.map((s) => ('key' in s ? s.key : s.index)),
        value,
      );
    if (memo.size < 100_000) memo.set(key, ok);
  }
  if (!ok) return;
  const leaf = literalLeafSchema(schema, path);
  const t = leaf && Object.hasOwn(leaf, 'type') ? leaf.type : undefined;
  if (Array.isArray(t)) {
    notes.add(
      path,
      'type_list',
      `Type Safety: the type list ${JSON.stringify(t)} is read as one type (the reference drops "null" and finds no type in a list of several), so ${preview(value)} counts as a mismatch; strict: type-safe`,
    );
  } else if (expected === 'integer' && typeof value === 'number') {
    notes.add(
      path,
      'integral_float',
      `Type Safety: ${preview(value)} is a float lexeme, which "integer" does not accept in the reference; strict: an integral float is an integer`,
    );
  } else {
    notes.add(
      path,
      'schema_walk',
      "Type Safety: the reference's literal schema walk finds no type here ($ref, anyOf/oneOf/allOf, a type list on a container, additionalProperties or tuple items); strict resolves the schema and accepts the value",
    );
  }
}

/** Value Accuracy: `True == 1` in Python. */
export function boolNumberQuirk(notes: QuirkNotes, path: string, gt: PyValue, pred: PyValue): void {
  notes.add(
    path,
    'bool_equals_number',
    `Value Accuracy: ${preview(pred)} equals the ground truth ${preview(gt)} in Python (True == 1); strict: a wrong value`,
  );
}

/** Faithfulness: a missing leaf is read as null. */
export function missingQuirk(notes: QuirkNotes, path: string, gt: PyValue, f1: number): void {
  notes.add(
    path,
    'missing_is_null',
    `Faithfulness: the missing leaf is read as null and scores ${f1} against the ground truth ${preview(gt)}; strict: 0`,
  );
}

export function collisionQuirk(notes: QuirkNotes, path: string, which: 'ground truth' | 'answer'): void {
  notes.add(
    path,
    'dotted_key_collision',
    `Paths: in the ${which}, a key holding "." or "[i]" spells the same path as a nested key and the later value overwrites the earlier; strict: JSON Pointers keep both`,
  );
}

/**
 * Perfect Response missed only because equal numbers are written differently (`1` vs `1.0`,
 * `-0.0` vs `0.0`), which the reference's canonical JSON text tells apart: the first such leaf.
 */
export function perfectQuirk(notes: QuirkNotes, candidate: PyValue, gt: PyValue): void {
  let first: { path: string; c: PyValue; g: PyValue } | undefined;
  const work: [PyValue, PyValue, string][] = [[candidate, gt, '']];
  while (work.length > 0) {
    const [c, g, path] = work.pop()!;
    const cn = typeof c === 'number' || typeof c === 'bigint';
    const gn = typeof g === 'number' || typeof g === 'bigint';
    if (cn || gn) {
      if (!cn || !gn) return;
      // biome-ignore lint/suspicious/noDoubleEquals: int and float compare by value here
      if (!(c == g)) return;
      if (typeof c !== typeof g || Object.is(c, -0) !== Object.is(g, -0)) first ??= { path, c, g };
      continue;
    }
    if (Array.isArray(c)) {
      if (!Array.isArray(g) || g.length !== c.length) return;
      for (let i = 0; i < c.length; i++) work.push([c[i], g[i], `${path}[${i}]`]);
      continue;
    }
    if (c instanceof Map) {
      if (!(g instanceof Map) || g.size !== c.size) return;
      for (const [k, v] of c) {
        if (!g.has(k)) return;
        work.push([v, g.get(k)!, path ? `${path}.${k}` : k]);
      }
      continue;
    }
    if (c !== g) return;
  }
  if (!first) return;
  const negZero = typeof first.c === 'number' && typeof first.g === 'number';
  notes.add(
    first.path,
    negZero ? 'negative_zero' : 'int_float_lexeme',
    `Perfect Response: ${preview(first.c)} and the ground truth ${preview(first.g)} are the same number written differently, and the reference compares JSON text; strict: a Perfect Response`,
  );
}
