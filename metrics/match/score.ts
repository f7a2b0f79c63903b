/**
 * Lenient scoring of one record: ground truth and candidate are walked together, each array is
 * aligned by its rule, each leaf pair is decided by its matcher. Pure: no I/O.
 *
 * Definitions (per record; G = ground-truth leaves, P = predicted leaves, both as SOB flattens
 * them, so |G| and |P| are the counts Value Accuracy and Structure Coverage use):
 * - accepted: ground-truth leaves whose aligned prediction a matcher accepted;
 * - lenient Value Accuracy = accepted / |G| x hardening x coverage gate (the same gates as SOB's
 *   Value Accuracy, so the two compare like for like; 1 before gates when |G| = 0);
 * - lenient Faithfulness = mean over G of (1 when accepted, else SOB's token F1 of the aligned
 *   pair, a missing prediction read as null) x hardening x gate;
 * - field recall = accepted / |G|; field precision = predicted leaves that back an accepted leaf
 *   / |P| (inventions and wrong values both count against it; 0 when nothing was predicted but
 *   something was expected); field F1 their harmonic mean. Not gated: they describe content.
 * - A leaf the judge could not answer (`unscored`: its answer was unreadable) counts as not
 *   accepted in every lenient metric, as a pending one does: an unreadable judge never raises a
 *   score (issue 21: "Sorry, I cannot help." lifted lenient Value Accuracy 0.5 -> 1.0).
 *
 * Guarantee: with `auto` alignment (the default), an array's alignment is kept only when it
 * accepts at least as many leaves as the positional pairing (SOB's), else the positional pairing
 * is used; every matcher accepts what Python equality accepts; so lenient Value Accuracy >=
 * Value Accuracy for every record (induction over the tree: a pair's accepted count is >= its
 * positional exact count). A record whose keys contain `.` or `[` (so SOB's dotted paths are
 * ambiguous) is scored positionally by those paths, as SOB does.
 */
import { compareCodePoints, isStructured, type PyObject, type PyValue } from '../../src/core/pyjson.ts';
import type { Modality } from '../../src/core/record.ts';
import { flattenLeaves } from '../paths.ts';
import { coverageGate } from '../record.ts';
import { tokenF1 } from '../values.ts';
import { type Assignment, assign, MAX_ASSIGN_SIDE } from './assign.ts';
import { type JudgeVerdict, judgePairHash, type UnsettledPair, valueText } from './judge.ts';
import { type LeafMatcher, type LeafOutcome, matcherFor, matchLeaf } from './matchers.ts';
import { type AlignName, type AlignSpec, PathInfo, type Policy, type Source } from './policy.ts';

export interface LenientOptions {
  policy: Policy;
  /** For the coverage gate when `gates` is not given. */
  modality?: Modality;
  /**
   * The exact scorer's gates for this record (`hardening` = its JSON Pass, `coverage_gate` from
   * its raw path-set F1). Without them: hardening = the candidate is an object or array (schema
   * validity is not checked here), and the gate is computed from the leaves.
   */
  gates?: { hardening: number; coverage_gate: number };
  /** Judge verdicts by pair hash (from `src/scoring/judge-matcher.ts`). */
  verdicts?: ReadonlyMap<string, JudgeVerdict>;
  /** Per-leaf rows: every ground-truth leaf (`all`, default), only those not exactly equal, or none. */
  detail?: 'all' | 'errors' | 'none';
  /** Pair evaluations allowed per record before `auto` falls back to positional (default 2,000,000). */
  budget?: number;
  /** The record's `metadata.field_policy` (comparators declared by data path, `sob build extractbench`). */
  fieldPolicy?: unknown;
}

export type LeafVerdict = 'match' | 'no_match' | 'missing' | 'unsettled' | 'unscored' | 'needs_judge';

export interface LeafRow {
  path: string;
  pred_path: string | null;
  /** The configured matcher (`default`, `text`, `number`, ...). */
  matcher: string;
  /** The matcher that accepted it (`exact`, `text`, `number`, `date`, ..., `judge`), or null. */
  accepted_by: string | null;
  verdict: LeafVerdict;
  similarity: number;
  /**
   * `type`: the right value in the wrong JSON type, accepted (a number or boolean written as a
   * string: `"1,000"` for 1000). A schema that asks for a number fails such an answer, so the
   * hardening gate holds it at 0 under both the exact and lenient scores: named, so it is not
   * read as a wrong value.
   */
  slip?: 'type';
}

export interface AlignedPair {
  gold: number;
  pred: number;
  similarity: number;
  /** similarity minus the best similarity of this gold item to any other prediction (null: none
   * was computed: an exact pair in place, or a single candidate). */
  margin: number | null;
  how: 'exact' | 'assigned' | 'ordered' | 'key' | 'set';
}

export interface AlignmentRow {
  path: string;
  pred_path: string;
  rule: AlignName;
  source: Source;
  /** Why `auto` used the positional pairing instead (`ordered_better`, `matrix_cap`, `budget`). */
  fallback?: string;
  pairs: AlignedPair[];
  /** Ground-truth item indices left unmatched, and predicted item indices nothing matched. */
  missed: number[];
  invented: number[];
}

export interface LenientScore {
  lenient_value_accuracy: number;
  lenient_faithfulness: number;
  field_precision: number;
  field_recall: number;
  field_f1: number;
  raw_value_accuracy: number;
  raw_faithfulness: number;
  hardening: number;
  coverage_gate: number;
  gold_leaves: number;
  pred_leaves: number;
  accepted_leaves: number;
  /** Ground-truth leaves with no predicted counterpart; predicted leaves paired with nothing. */
  missed_leaves: number;
  invented_leaves: number;
  /** Leaves waiting for the judge (counted as not accepted) and leaves it could not answer. */
  pending_leaves: number;
  /** Accepted leaves of the wrong JSON type (`"1,000"` for a number): see `LeafRow.slip`. */
  type_slip_leaves: number;
  unscored_leaves: number;
  /** Leaves of a declared LLM comparator (`string_semantic`, `array_llm`) scored without a judge: not accepted. */
  needs_judge_leaves?: number;
  matcher_counts: Record<string, number>;
  leaves: LeafRow[];
  alignments: AlignmentRow[];
  unsettled: UnsettledPair[];
  notes: string[];
}

// -- Counting leaves --------------------------------------------------------------------------------

/** Per container: its scalar leaves, and whether a key makes SOB's dotted paths ambiguous. */
const shapes = new WeakMap<object, { leaves: number; ambiguous: boolean }>();

function shapeOf(v: PyObject | PyValue[]): { leaves: number; ambiguous: boolean } {
  const hit = shapes.get(v);
  if (hit !== undefined) return hit;
  let leaves = 0;
  let ambiguous = false;
  const visit = (c: PyValue) => {
    if (c instanceof Map || Array.isArray(c)) {
      const s = shapeOf(c);
      leaves += s.leaves;
      ambiguous ||= s.ambiguous;
    } else leaves++;
  };
  if (Array.isArray(v)) for (const c of v) visit(c);
  else {
    for (const [k, c] of v) {
      if (k === '' || k.includes('.') || k.includes('[') || k.includes(']')) ambiguous = true;
      visit(c);
    }
  }
  const s = { leaves, ambiguous };
  shapes.set(v, s);
  return s;
}

/** Scalar leaves under a value (a scalar is one leaf here: it sits at a non-empty path). */
function leavesOf(v: PyValue | undefined): number {
  if (v === undefined) return 0;
  if (!(v instanceof Map || Array.isArray(v))) return 1;
  return shapeOf(v).leaves;
}

// -- Pair scores (numbers only, memoised) -----------------------------------------------------------

interface Tally {
  /** Ground-truth leaves accepted. */
  acc: number;
  /** Sum of leaf similarities over ground-truth leaves that have a predicted counterpart. */
  sim: number;
  g: number;
  p: number;
  /** Leaves left unsettled (for the judge). */
  uns: number;
}

interface Plan {
  rule: AlignName;
  source: Source;
  pairs: AlignedPair[];
  fallback?: string;
}

interface PairResult extends Tally {
  plan?: Plan;
}

const MISSING_LEAF: Readonly<PairResult> = { acc: 0, sim: 0, g: 1, p: 0, uns: 0 };
const ACCEPTED_LEAF: Readonly<PairResult> = { acc: 1, sim: 1, g: 1, p: 1, uns: 0 };

function itemSimilarity(t: Tally): number {
  return t.g + t.p === 0 ? 1 : (2 * t.sim) / (t.g + t.p);
}

function perfect(t: Tally): boolean {
  return t.acc === t.g && t.p === t.g && t.uns === 0;
}

class Scorer {
  private readonly memo = new Map<object, Map<object, PairResult>>();
  work = 0;
  readonly notes = new Set<string>();

  constructor(
    readonly policy: Policy,
    readonly budget: number,
  ) {}

  /** The matcher of the last `leaf` call. */
  lastMatcher!: LeafMatcher;

  leaf(info: PathInfo, g: PyValue, p: PyValue): LeafOutcome {
    this.work++;
    const m = matcherFor(info, g);
    if (info.warning) this.notes.add(info.warning);
    this.lastMatcher = m;
    return matchLeaf(m, g, p);
  }

  pair(g: PyValue, p: PyValue | undefined, info: PathInfo): PairResult {
    const gIsMap = g instanceof Map;
    const gIsArr = Array.isArray(g);
    if (!gIsMap && !gIsArr) {
      if (p === undefined) return MISSING_LEAF;
      if (p instanceof Map || Array.isArray(p)) return { acc: 0, sim: 0, g: 1, p: leavesOf(p), uns: 0 };
      const out = this.leaf(info, g, p);
      if (out.verdict === 'match') return ACCEPTED_LEAF;
      return {
        acc: 0,
        sim: out.similarity,
        g: 1,
        p: 1,
        uns: out.verdict === 'unsettled' ? 1 : 0,
      };
    }
    if ((gIsMap && !(p instanceof Map)) || (gIsArr && !Array.isArray(p))) {
      return { acc: 0, sim: 0, g: leavesOf(g), p: leavesOf(p), uns: 0 };
    }
    const pc = p as PyObject | PyValue[];
    let inner = this.memo.get(g as object);
    const hit = inner?.get(pc);
    if (hit) return hit;
    const r = gIsMap
      ? this.objectPair(g as PyObject, pc as PyObject, info)
      : this.arrayPair(g as PyValue[], pc as PyValue[], info);
    if (!inner) this.memo.set(g as object, (inner = new Map()));
    inner.set(pc, r);
    return r;
  }

  private objectPair(g: PyObject, p: PyObject, info: PathInfo): PairResult {
    const t: PairResult = { acc: 0, sim: 0, g: 0, p: 0, uns: 0 };
    for (const [k, gc] of g) add(t, this.pair(gc, p.get(k), info.child(k)));
    for (const [k, pc] of p) if (!g.has(k)) t.p += leavesOf(pc);
    return t;
  }

  private arrayPair(g: PyValue[], p: PyValue[], info: PathInfo): PairResult {
    const { spec, source } = info.resolveAlign();
    const plan = this.align(g, p, info, spec, source);
    const t: PairResult = { acc: 0, sim: 0, g: 0, p: 0, uns: 0, plan };
    for (const x of g) t.g += leavesOf(x);
    for (const x of p) t.p += leavesOf(x);
    const item = info.item();
    for (const pr of plan.pairs) {
      const r = this.pair(g[pr.gold], p[pr.pred], item);
      t.acc += r.acc;
      t.sim += r.sim;
      t.uns += r.uns;
    }
    return t;
  }

  /** The pairs of an array's items under its rule. */
  private align(g: PyValue[], p: PyValue[], info: PathInfo, spec: AlignSpec, source: Source): Plan {
    const item = info.item();
    const n = g.length;
    const m = p.length;
    const k = Math.min(n, m);
    const ordered = (): AlignedPair[] => {
      const out: AlignedPair[] = [];
      for (let i = 0; i < k; i++)
        out.push({
          gold: i,
          pred: i,
          similarity: itemSimilarity(this.pair(g[i], p[i], item)),
          margin: null,
          how: 'ordered',
        });
      return out;
    };
    switch (spec.align) {
      case 'ordered':
        return { rule: 'ordered', source, pairs: ordered() };
      case 'set':
      case 'multiset':
        return { rule: spec.align, source, pairs: this.equalItems(g, p, item, spec.align === 'set') };
      case 'match_by':
        return { rule: 'match_by', source, pairs: this.byKeys(g, p, item, spec.keys) };
      case 'auto':
        return this.auto(g, p, item, spec.floor ?? this.policy.floor, source, ordered);
    }
  }

  /** `set`: each gold item equal to some prediction (many to one); `multiset`: one to one. */
  private equalItems(g: PyValue[], p: PyValue[], item: PathInfo, many: boolean): AlignedPair[] {
    const used = new Uint8Array(p.length);
    const out: AlignedPair[] = [];
    for (let i = 0; i < g.length; i++) {
      for (const j of sameIndexFirst(i, p.length)) {
        if (this.work > this.budget) {
          this.notes.add(`${item.wild}: pair budget spent, remaining items unmatched`);
          return out;
        }
        if (!many && used[j]) continue;
        if (perfect(this.pair(g[i], p[j], item))) {
          used[j] = 1;
          out.push({ gold: i, pred: j, similarity: 1, margin: null, how: many ? 'set' : 'exact' });
          break;
        }
      }
    }
    return out;
  }

  /** `match_by`: items pair when every key leaf matches (one to one, same index first). */
  private byKeys(g: PyValue[], p: PyValue[], item: PathInfo, keys: string[]): AlignedPair[] {
    const keyOf = (v: PyValue): (PyValue | undefined)[] | null => {
      if (!(v instanceof Map)) return null;
      const vals = keys.map((kp) => dig(v, kp));
      return vals.some((x) => x === undefined || x instanceof Map || Array.isArray(x)) ? null : vals;
    };
    const gk = g.map(keyOf);
    const pk = p.map(keyOf);
    const infos = keys.map((kp) => item.descend(kp));
    const used = new Uint8Array(p.length);
    const out: AlignedPair[] = [];
    for (let i = 0; i < g.length; i++) {
      const a = gk[i];
      if (a === null) continue;
      for (const j of sameIndexFirst(i, p.length)) {
        const b = pk[j];
        if (used[j] || b === null) continue;
        if (a.every((x, q) => this.leaf(infos[q], x as PyValue, b[q] as PyValue).verdict === 'match')) {
          used[j] = 1;
          out.push({
            gold: i,
            pred: j,
            similarity: itemSimilarity(this.pair(g[i], p[j], item)),
            margin: null,
            how: 'key',
          });
          break;
        }
      }
    }
    return out;
  }

  /**
   * `auto`: items equal in place first, then equal items anywhere, then the assignment that
   * maximises total item similarity among the rest (Hungarian), dropping pairs below the floor.
   * Kept only when it accepts at least as many leaves as the positional pairing.
   */
  private auto(
    g: PyValue[],
    p: PyValue[],
    item: PathInfo,
    floor: number,
    source: Source,
    ordered: () => AlignedPair[],
  ): Plan {
    const n = g.length;
    const m = p.length;
    const k = Math.min(n, m);
    const diag: PairResult[] = [];
    for (let i = 0; i < k; i++) diag.push(this.pair(g[i], p[i], item));
    const pairs: AlignedPair[] = [];
    const goldUsed = new Uint8Array(n);
    const predUsed = new Uint8Array(m);
    for (let i = 0; i < k; i++) {
      if (perfect(diag[i])) {
        pairs.push({ gold: i, pred: i, similarity: 1, margin: null, how: 'exact' });
        goldUsed[i] = 1;
        predUsed[i] = 1;
      }
    }
    const remG = [...g.keys()].filter((i) => !goldUsed[i]);
    const remP = [...p.keys()].filter((j) => !predUsed[j]);
    let fallback: string | undefined;
    let S: number[][] | undefined;
    if (remG.length > 0 && remP.length > 0) {
      if (remG.length > MAX_ASSIGN_SIDE || remP.length > MAX_ASSIGN_SIDE) fallback = 'matrix_cap';
      else if (this.work + remG.length * remP.length > this.budget) fallback = 'budget';
      else {
        S = remG.map(() => new Array<number>(remP.length));
        const T: PairResult[][] = remG.map(() => new Array<PairResult>(remP.length));
        for (let a = 0; a < remG.length && !fallback; a++) {
          for (let b = 0; b < remP.length; b++) {
            const r = this.pair(g[remG[a]], p[remP[b]], item);
            T[a][b] = r;
            S[a][b] = itemSimilarity(r);
            this.work++;
          }
          if (this.work > this.budget) fallback = 'budget';
        }
        if (!fallback) {
          const margin = (a: number, b: number): number | null => {
            if (remP.length < 2) return null;
            let best = Number.NEGATIVE_INFINITY;
            for (let c = 0; c < remP.length; c++) if (c !== b && S![a][c] > best) best = S![a][c];
            return S![a][b] - best;
          };
          // Equal items anywhere, in gold order, the first free prediction.
          const colUsed = new Uint8Array(remP.length);
          const rowUsed = new Uint8Array(remG.length);
          for (let a = 0; a < remG.length; a++) {
            for (let b = 0; b < remP.length; b++) {
              if (!colUsed[b] && perfect(T[a][b])) {
                colUsed[b] = 1;
                rowUsed[a] = 1;
                pairs.push({
                  gold: remG[a],
                  pred: remP[b],
                  similarity: 1,
                  margin: margin(a, b),
                  how: 'exact',
                });
                break;
              }
            }
          }
          const rows = [...remG.keys()].filter((a) => !rowUsed[a]);
          const cols = [...remP.keys()].filter((b) => !colUsed[b]);
          if (rows.length > 0 && cols.length > 0) {
            const w = rows.map((a) => cols.map((b) => (S![a][b] >= floor ? S![a][b] : 0)));
            for (const [x, y] of assign(w) as Assignment) {
              const a = rows[x];
              const b = cols[y];
              if (S[a][b] > 0 && S[a][b] >= floor)
                pairs.push({
                  gold: remG[a],
                  pred: remP[b],
                  similarity: S[a][b],
                  margin: margin(a, b),
                  how: 'assigned',
                });
            }
          }
          pairs.sort((x, y) => x.gold - y.gold);
          // The guarantee: never fewer accepted leaves than in place.
          let autoAcc = 0;
          for (const pr of pairs) autoAcc += this.pair(g[pr.gold], p[pr.pred], item).acc;
          let ordAcc = 0;
          for (const r of diag) ordAcc += r.acc;
          // Only strictly more accepted leaves: a tie keeps the floor's misses and inventions.
          if (ordAcc > autoAcc) {
            const out = ordered();
            const col = new Map(remP.map((j, b) => [j, b]));
            const row = new Map(remG.map((i, a) => [i, a]));
            for (const pr of out) {
              const a = row.get(pr.gold);
              const b = col.get(pr.pred);
              if (a !== undefined && b !== undefined) pr.margin = margin(a, b);
            }
            return { rule: 'auto', source, pairs: out, fallback: 'ordered_better' };
          }
          return { rule: 'auto', source, pairs };
        }
      }
    }
    if (fallback) {
      this.notes.add(`${item.wild}: auto alignment fell back to positional (${fallback})`);
      return { rule: 'auto', source, pairs: ordered(), fallback };
    }
    return { rule: 'auto', source, pairs };
  }
}

/** Prediction indices to try for gold item i: i itself first, then the others in order. */
function sameIndexFirst(i: number, m: number): number[] {
  const out = i < m ? [i] : [];
  for (let j = 0; j < m; j++) if (j !== i) out.push(j);
  return out;
}

function add(t: Tally, r: Tally): void {
  t.acc += r.acc;
  t.sim += r.sim;
  t.g += r.g;
  t.p += r.p;
  t.uns += r.uns;
}

/** The value at a dotted key path inside an object (`meta.id`). */
function dig(v: PyValue, keyPath: string): PyValue | undefined {
  let cur: PyValue | undefined = v;
  for (const k of keyPath.split('.')) {
    if (!(cur instanceof Map)) return undefined;
    cur = cur.get(k);
  }
  return cur;
}

// -- Explaining the chosen pairing ------------------------------------------------------------------

class Explainer {
  leaves: LeafRow[] = [];
  alignments: AlignmentRow[] = [];
  unsettled = new Map<string, UnsettledPair>();
  counts: Record<string, number> = {};
  gold = 0;
  accepted = 0;
  unscored = 0;
  needsJudge = 0;
  pending = 0;
  /** Accepted leaves of the wrong JSON type (see `LeafRow.slip`). */
  typeSlips = 0;
  missed = 0;
  faith = 0;
  /** Predicted leaf paths compared with some gold leaf, and those backing an accepted one. */
  paired = new Set<string>();
  supporting = new Set<string>();

  constructor(
    readonly s: Scorer,
    readonly opts: LenientOptions,
  ) {}

  private row(r: LeafRow): void {
    const d = this.opts.detail ?? 'all';
    if (d === 'all' || (d === 'errors' && r.accepted_by !== 'exact')) this.leaves.push(r);
  }

  private missing(g: PyValue, path: string, info: PathInfo): void {
    this.gold++;
    this.missed++;
    this.faith += tokenF1(g, null);
    const m = matcherFor(info, g);
    this.row({
      path,
      pred_path: null,
      matcher: m.name,
      accepted_by: null,
      verdict: 'missing',
      similarity: 0,
    });
  }

  private missingAll(g: PyValue, path: string, info: PathInfo): void {
    if (g instanceof Map) {
      for (const [k, c] of g) this.missingAll(c, path ? `${path}.${k}` : k, info.child(k));
    } else if (Array.isArray(g)) {
      for (let i = 0; i < g.length; i++) this.missingAll(g[i], `${path}[${i}]`, info.item());
    } else if (path) this.missing(g, path, info);
  }

  walk(g: PyValue, p: PyValue | undefined, info: PathInfo, gp: string, pp: string): void {
    if (g instanceof Map) {
      if (!(p instanceof Map)) {
        this.missingAll(g, gp, info);
        return;
      }
      for (const [k, c] of g)
        this.walk(c, p.get(k), info.child(k), gp ? `${gp}.${k}` : k, pp ? `${pp}.${k}` : k);
      return;
    }
    if (Array.isArray(g)) {
      if (!Array.isArray(p)) {
        this.missingAll(g, gp, info);
        return;
      }
      const plan = this.s.pair(g, p, info).plan!;
      const gUsed = new Uint8Array(g.length);
      const pUsed = new Uint8Array(p.length);
      for (const pr of plan.pairs) {
        gUsed[pr.gold] = 1;
        pUsed[pr.pred] = 1;
      }
      const row: AlignmentRow = {
        path: gp,
        pred_path: pp,
        rule: plan.rule,
        source: plan.source,
        pairs: plan.pairs,
        missed: [...g.keys()].filter((i) => !gUsed[i]),
        invented: [...p.keys()].filter((j) => !pUsed[j]),
      };
      if (plan.fallback) row.fallback = plan.fallback;
      if (g.length > 0 || p.length > 0) this.alignments.push(row);
      const item = info.item();
      for (const pr of plan.pairs)
        this.walk(g[pr.gold], p[pr.pred], item, `${gp}[${pr.gold}]`, `${pp}[${pr.pred}]`);
      for (const i of row.missed) this.missingAll(g[i], `${gp}[${i}]`, item);
      return;
    }
    if (!gp) return; // a scalar root is no leaf
    if (p === undefined || p instanceof Map || Array.isArray(p)) this.missing(g, gp, info);
    else this.leafPair(g, p, info, gp, pp);
  }

  leafPair(g: PyValue, p: PyValue, info: PathInfo, gp: string, pp: string): void {
    this.gold++;
    this.paired.add(pp);
    const out = this.s.leaf(info, g, p);
    const m = this.s.lastMatcher;
    let verdict: LeafVerdict = out.verdict;
    let by = out.by;
    let similarity = out.similarity;
    if (out.verdict === 'unsettled') {
      const hash = pairHash(m, info, g, p);
      const v = this.opts.verdicts?.get(hash);
      if (v === 'match') {
        verdict = 'match';
        by = 'judge';
        similarity = 1;
      } else if (v === 'no_match') verdict = 'no_match';
      else if (v === 'unscored') verdict = 'unscored';
      else {
        this.pending++;
        if (!this.unsettled.has(hash)) {
          const u: UnsettledPair = {
            hash,
            path: gp,
            pred_path: pp,
            field: info.wild,
            gold: valueText(g),
            pred: valueText(p),
          };
          if (info.hints.description) u.description = info.hints.description;
          this.unsettled.set(hash, u);
        }
      }
    }
    if (verdict === 'unscored') this.unscored++;
    if (verdict === 'needs_judge') this.needsJudge++;
    if (verdict === 'match') {
      this.accepted++;
      this.faith += 1;
      this.supporting.add(pp);
      this.counts[by!] = (this.counts[by!] ?? 0) + 1;
    } else this.faith += tokenF1(g, p);
    const row: LeafRow = { path: gp, pred_path: pp, matcher: m.name, accepted_by: by, verdict, similarity };
    if (verdict === 'match' && isTypeSlip(g, p)) {
      row.slip = 'type';
      this.typeSlips++;
    }
    this.row(row);
  }
}

/** A number or boolean in the ground truth answered as a string (`"1,000"`, `"true"`). */
function isTypeSlip(g: PyValue, p: PyValue): boolean {
  return typeof p === 'string' && (typeof g === 'number' || typeof g === 'bigint' || typeof g === 'boolean');
}

function pairHash(m: LeafMatcher, info: PathInfo, g: PyValue, p: PyValue): string {
  return judgePairHash(m.key, info.wild, info.hints.description, g, p);
}

// -- Ambiguous paths --------------------------------------------------------------------------------

function hasAmbiguousKeys(v: PyValue | undefined): boolean {
  return (v instanceof Map || Array.isArray(v)) && shapeOf(v).ambiguous;
}

/** The PathInfo for a dotted SOB path, read naively (only for records with ambiguous keys). */
function infoForPath(root: PathInfo, path: string): PathInfo {
  let cur = root;
  for (const m of path.matchAll(/\[\d+\]|[^.[\]]+/g))
    cur = m[0].startsWith('[') ? cur.item() : cur.child(m[0]);
  return cur;
}

// -- The record -------------------------------------------------------------------------------------

function pathSetF1(g: Map<string, PyValue>, p: Map<string, PyValue>): number {
  if (g.size === 0 || p.size === 0) return 0;
  let overlap = 0;
  for (const k of g.keys()) if (p.has(k)) overlap++;
  if (overlap === 0) return 0;
  const precision = overlap / p.size;
  const recall = overlap / g.size;
  return (2 * precision * recall) / (precision + recall);
}

const DEFAULT_BUDGET = 2_000_000;

/**
 * Lenient scores of one record: ground truth and candidate (already parsed, lossless values),
 * the record's JSON schema (plain), and a compiled policy. Returns a plain JSON-able object.
 */
export function scoreLenient(
  groundTruth: PyValue | undefined,
  candidate: PyValue | undefined,
  schema: unknown,
  opts: LenientOptions,
): LenientScore {
  const policy = opts.policy;
  const notes: string[] = [];
  const gold = isStructured(groundTruth) ? groundTruth : undefined;
  const pred = isStructured(candidate) ? candidate : undefined;
  const root = PathInfo.root(policy, schema, opts.fieldPolicy);
  if (root.warning) notes.push(root.warning);
  const scorer = new Scorer(policy, opts.budget ?? DEFAULT_BUDGET);
  const ex = new Explainer(scorer, opts);
  let predLeaves: number;

  if (hasAmbiguousKeys(gold) || hasAmbiguousKeys(pred)) {
    // SOB's dotted paths collide or cannot be split: score position by position on those paths.
    notes.push('keys contain "." or "[" or are empty: scored position by position on dotted paths');
    const gl = flattenLeaves(gold);
    const pl = flattenLeaves(pred);
    predLeaves = pl.size;
    for (const [path, g] of gl) {
      const info = infoForPath(root, path);
      const p = pl.get(path);
      if (p === undefined) ex.walk(g, undefined, info, path, path);
      else ex.leafPair(g, p, info, path, path);
    }
  } else {
    predLeaves = pred === undefined ? 0 : leavesOf(pred);
    if (gold !== undefined) ex.walk(gold, pred, root, '', '');
  }
  notes.push(...scorer.notes);

  let hardening: number;
  let gate: number;
  if (opts.gates) {
    hardening = opts.gates.hardening;
    gate = opts.gates.coverage_gate;
  } else {
    hardening = pred === undefined ? 0 : 1;
    gate = coverageGate(opts.modality ?? 'text', pathSetF1(flattenLeaves(gold), flattenLeaves(pred)));
  }

  const gEff = ex.gold;
  const pEff = predLeaves;
  const recall = gEff === 0 ? 1 : ex.accepted / gEff;
  const rawFaith = gEff === 0 ? 1 : ex.faith / gEff;
  const precision = pEff === 0 ? (gEff === 0 ? 1 : 0) : ex.supporting.size / pEff;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const counts: Record<string, number> = {};
  for (const k of Object.keys(ex.counts).sort(compareCodePoints)) counts[k] = ex.counts[k];

  return {
    lenient_value_accuracy: recall * hardening * gate,
    lenient_faithfulness: rawFaith * hardening * gate,
    field_precision: precision,
    field_recall: recall,
    field_f1: f1,
    raw_value_accuracy: recall,
    raw_faithfulness: rawFaith,
    hardening,
    coverage_gate: gate,
    gold_leaves: ex.gold,
    pred_leaves: predLeaves,
    accepted_leaves: ex.accepted,
    missed_leaves: ex.missed,
    invented_leaves: predLeaves - ex.paired.size,
    pending_leaves: ex.pending,
    type_slip_leaves: ex.typeSlips,
    unscored_leaves: ex.unscored,
    ...(ex.needsJudge > 0 ? { needs_judge_leaves: ex.needsJudge } : {}),
    matcher_counts: counts,
    leaves: ex.leaves,
    alignments: ex.alignments,
    unsettled: [...ex.unsettled.values()],
    notes,
  };
}
