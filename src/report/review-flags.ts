/**
 * What deserves a person's look (`sob review`, docs/review.md): the flagged leaves of an
 * evaluation, each with its reasons. Pure: records and answers in, flags out; no I/O.
 *
 * Reasons, per (record, leaf):
 * - `models_agree`: at least `agreeShare` of the models that answered the record (and at least
 *   `minAgree` of them) give the same value at a gold leaf, and that value is not the gold's
 *   (compared after light normalisation: strings case-folded, NFKC, whitespace collapsed;
 *   numbers by value). A likely gold error.
 * - `exact_lenient`: a model's value is not exactly the gold's but the lenient matcher (the
 *   default match policy, no judge) accepts it.
 * - `ungrounded`: a gold string not found in the context (the check `sob build` runs).
 * - `gold_schema`: the gold fails its own schema (at the leaf ajv names, else the whole record).
 * - `judge_flag` / `judge_unscored`: from `sob judge`'s judgments (reviewer issues at a path, or
 *   a judge that gave no valid answer) and leaves the lenient judge left unscored.
 */
import { defaultPolicy, scoreLenient, withoutJudge } from '../../metrics/match/index.ts';
import { flattenLeaves } from '../../metrics/paths.ts';
import { pyEquals } from '../../metrics/values.ts';
import { dumpsPy, type PyValue, pyStr, toPlain } from '../core/pyjson.ts';

const show = (v: PyValue): string => dumpsPy(v, { ensureAscii: false, separators: [',', ':'] });

import { ungroundedPaths } from '../core/record-checks.ts';
import { validateInstance } from '../core/schema.ts';

export const FLAG_KINDS = [
  'models_agree',
  'exact_lenient',
  'ungrounded',
  'gold_schema',
  'judge_flag',
  'judge_unscored',
] as const;
export type FlagKind = (typeof FLAG_KINDS)[number];

/** The default share of answering models that must agree on one non-gold value. */
export const DEFAULT_AGREE_SHARE = 0.6;
/** ... and at least this many of them. */
export const DEFAULT_MIN_AGREE = 2;

export interface ReviewAnswer {
  model: string;
  /** The parsed answer (lossless), or undefined when the model gave none that parsed. */
  candidate: PyValue | undefined;
}

export interface ReviewRecord {
  id: string;
  context: string;
  question: string;
  schema: unknown;
  gold: PyValue;
  answers: ReviewAnswer[];
}

export interface ExternalFlag {
  record_id: string;
  /** A leaf path, or '' for the whole record. */
  path: string;
  kind: 'judge_flag' | 'judge_unscored';
  detail: string;
}

export interface FlagReason {
  kind: FlagKind;
  detail: string;
  /** `models_agree`: the value the models agree on, and who. */
  value?: PyValue;
  models?: string[];
}

export interface FlagItem {
  record_id: string;
  /** A gold leaf path, or '' for a record-level flag. */
  path: string;
  reasons: FlagReason[];
}

export interface FlagOptions {
  agreeShare?: number;
  minAgree?: number;
}

/** The key two values agree under: strings folded, numbers by value, others by type. */
export function agreementKey(v: PyValue): string {
  if (typeof v === 'string') return `s:${v.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase()}`;
  if (typeof v === 'bigint') return `n:${Number(v)}`;
  if (typeof v === 'number') return `n:${v}`;
  if (typeof v === 'boolean') return `b:${v}`;
  if (v === null) return 'null';
  return `o:${pyStr(v)}`;
}

/** `/a/0/b` (ajv's instance path) as a SOB leaf path `a[0].b`. */
export function pointerToLeafPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const tok = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(tok)) out += `[${tok}]`;
    else out += out ? `.${tok}` : tok;
  }
  return out;
}

/** Leaves where most answering models agree on one value that is not the gold's. */
export function modelsAgreeAgainstGold(r: ReviewRecord, o: FlagOptions = {}): FlagItem[] {
  const share = o.agreeShare ?? DEFAULT_AGREE_SHARE;
  const minAgree = o.minAgree ?? DEFAULT_MIN_AGREE;
  const answered = r.answers.filter((a) => a.candidate !== undefined);
  if (answered.length === 0) return [];
  const leaves = answered.map((a) => flattenLeaves(a.candidate));
  const out: FlagItem[] = [];
  for (const [path, g] of flattenLeaves(r.gold)) {
    const groups = new Map<string, { value: PyValue; models: string[] }>();
    for (const [i, l] of leaves.entries()) {
      const v = l.get(path);
      if (v === undefined) continue;
      const k = agreementKey(v);
      const grp = groups.get(k);
      if (grp) grp.models.push(answered[i].model);
      else groups.set(k, { value: v, models: [answered[i].model] });
    }
    const goldKey = agreementKey(g);
    let best: { value: PyValue; models: string[] } | undefined;
    for (const [k, grp] of groups)
      if (k !== goldKey && (!best || grp.models.length > best.models.length)) best = grp;
    if (!best) continue;
    const n = best.models.length;
    if (n >= minAgree && n / answered.length >= share)
      out.push({
        record_id: r.id,
        path,
        reasons: [
          {
            kind: 'models_agree',
            detail: `${n} of ${answered.length} models agree on ${show(best.value)}, the gold says ${show(g)}`,
            value: best.value,
            models: best.models,
          },
        ],
      });
  }
  return out;
}

let lenientPolicy: ReturnType<typeof defaultPolicy> | undefined;

/** Leaves where a model's value is exactly wrong but leniently right (the default policy, no judge). */
export function exactLenientDisagreements(r: ReviewRecord): FlagItem[] {
  lenientPolicy ??= withoutJudge(defaultPolicy());
  const by = new Map<string, string[]>();
  for (const a of r.answers) {
    if (a.candidate === undefined) continue;
    const s = scoreLenient(r.gold, a.candidate, r.schema, {
      policy: lenientPolicy,
      gates: { hardening: 1, coverage_gate: 1 },
      detail: 'errors',
    });
    for (const leaf of s.leaves)
      if (leaf.verdict === 'match' && leaf.accepted_by !== 'exact')
        by.set(leaf.path, [...(by.get(leaf.path) ?? []), `${a.model} (${leaf.accepted_by})`]);
  }
  return [...by].map(([path, models]) => ({
    record_id: r.id,
    path,
    reasons: [
      {
        kind: 'exact_lenient' as const,
        detail: `exact says wrong, lenient says right: ${models.join(', ')}`,
      },
    ],
  }));
}

/** Gold strings not found in the context. */
export function ungroundedGold(r: ReviewRecord): FlagItem[] {
  if (r.context === '') return [];
  return ungroundedPaths(toPlain(r.gold), r.context).map((path) => ({
    record_id: r.id,
    path,
    reasons: [{ kind: 'ungrounded' as const, detail: 'the gold value is not found in the context' }],
  }));
}

/** The gold against its own schema: the leaf ajv names, or the record. */
export function goldSchemaFailure(r: ReviewRecord): FlagItem[] {
  if (r.schema === null || typeof r.schema !== 'object') return [];
  const check = validateInstance(r.schema as object, toPlain(r.gold));
  if (check.valid) return [];
  const pointer = check.reason.split(' ')[0];
  const path = pointer.startsWith('/') ? pointerToLeafPath(pointer) : '';
  const leaves = flattenLeaves(r.gold);
  return [
    {
      record_id: r.id,
      path: leaves.has(path) ? path : '',
      reasons: [{ kind: 'gold_schema', detail: `the gold fails its schema: ${check.reason}` }],
    },
  ];
}

/**
 * Every flag of every record, merged per (record, leaf): records in the order given, a
 * record-level flag first, then leaves in gold order.
 */
export function flagRecords(
  records: readonly ReviewRecord[],
  external: readonly ExternalFlag[] = [],
  o: FlagOptions = {},
): FlagItem[] {
  const ext = new Map<string, ExternalFlag[]>();
  for (const e of external) ext.set(e.record_id, [...(ext.get(e.record_id) ?? []), e]);
  const out: FlagItem[] = [];
  for (const r of records) {
    const merged = new Map<string, FlagItem>();
    const add = (items: FlagItem[]) => {
      for (const it of items) {
        const had = merged.get(it.path);
        if (had) had.reasons.push(...it.reasons);
        else merged.set(it.path, { ...it, reasons: [...it.reasons] });
      }
    };
    add(goldSchemaFailure(r));
    add(modelsAgreeAgainstGold(r, o));
    add(exactLenientDisagreements(r));
    add(ungroundedGold(r));
    add(
      (ext.get(r.id) ?? []).map((e) => ({
        record_id: r.id,
        path: e.path,
        reasons: [{ kind: e.kind, detail: e.detail }],
      })),
    );
    const order = ['', ...flattenLeaves(r.gold).keys()];
    const rank = new Map(order.map((p, i) => [p, i]));
    out.push(
      ...[...merged.values()].sort(
        (a, b) => (rank.get(a.path) ?? order.length) - (rank.get(b.path) ?? order.length),
      ),
    );
  }
  return out;
}

/** Whether two leaf values are the same for the page's "differs" mark (Python equality). */
export function sameLeaf(a: PyValue | undefined, b: PyValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return pyEquals(a, b);
}
