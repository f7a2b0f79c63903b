/**
 * `sob score --match`: lenient matching beside the profile's exact metrics, on the scoring
 * worker. Per record, after the exact scores: `scoreLenient` (metrics/match) under the exact
 * scorer's own gates (hardening = JSON Pass, the coverage gate), so both compare like for like.
 * The row gains the lenient fields (the exact ones are untouched); the audit detail (leaves not
 * accepted by exact comparison in place, alignments that moved something) goes to the folder's
 * side file `lenient_records.jsonl`, one line per row.
 *
 * The judge: pairs the deterministic matchers leave unsettled are handed to the parent (which
 * owns the provider, the on-disk cache and asks each pair once across workers and reruns), a
 * batch of records at a time; those records are scored again with the verdicts before their
 * rows leave the worker, so rows stay in file order. The worker's time budget covers scoring
 * only: the heartbeat is idle while the worker waits for verdicts, and each rescoring is one
 * budgeted item again.
 *
 * Scored without verdicts, a judge matcher's unsettled leaf counts exactly as the matcher
 * without judge would (not accepted, token F1 in Faithfulness), so the first scoring of every
 * record is also its "lenient without judge" score, kept for the summary and `--sensitivity`.
 */

import { goldWithAlternatives } from '../../metrics/match/alternatives.ts';
import type { JudgeVerdict, UnsettledPair } from '../../metrics/match/judge.ts';
import { type Policy, withoutJudge } from '../../metrics/match/policy.ts';
import { type LenientScore, scoreLenient } from '../../metrics/match/score.ts';
import { type RecordScore, schemaSourceOf } from '../../metrics/record.ts';
import { parseAnswer } from '../../metrics/strict.ts';
import { dumpsPy, type PyValue, toPlain } from '../core/pyjson.ts';
import type { Modality, ScoringView } from '../core/record.ts';
import type { FieldsOf, LenientRowPart, MatchJob, Profile } from './line-types.ts';
import { loadPolicy } from './policy-file.ts';

export type { LenientRowPart, MatchJob } from './line-types.ts';

/**
 * The policy a run uses. With a judge, the built-in default also sends string leaves its
 * deterministic matchers do not settle to the judge (`types.string: {match: judge, first:
 * default}`); a policy file uses the judge where it says `judge`. Without a judge every judge
 * matcher acts as its `first` matcher.
 */
export function matchPolicy(spec: string, withJudge: boolean): Policy {
  const p = loadPolicy(spec);
  if (!withJudge) return withoutJudge(p);
  if (spec !== 'default' && spec !== '') return p;
  return {
    ...p,
    types: { ...p.types, string: p.types.string ?? { match: 'judge', first: { match: 'default' } } },
    roots: new WeakMap(),
    noSchemaRoot: undefined,
  };
}

/** Whether a policy names the judge anywhere it can be seen before scoring (fields, types). */
export function policyNamesJudge(p: Policy): boolean {
  return (
    p.rules.some((r) => r.entry.match?.match === 'judge') ||
    Object.values(p.types).some((s) => s?.match === 'judge')
  );
}

/** The row's lenient fields (appended after the reference's; ints as ints). */
function rowFields(s: LenientScore): Record<string, unknown> {
  const counts: Record<string, bigint> = {};
  for (const [k, n] of Object.entries(s.matcher_counts)) counts[k] = BigInt(n);
  return {
    lenient_value_accuracy: s.lenient_value_accuracy,
    lenient_faithfulness: s.lenient_faithfulness,
    field_precision: s.field_precision,
    field_recall: s.field_recall,
    field_f1: s.field_f1,
    matcher_counts: counts,
    lenient_leaves: {
      gold: BigInt(s.gold_leaves),
      accepted: BigInt(s.accepted_leaves),
      missed: BigInt(s.missed_leaves),
      invented: BigInt(s.invented_leaves),
      pending: BigInt(s.pending_leaves),
      unscored: BigInt(s.unscored_leaves),
      // Only when there are some: rows without declared LLM comparators stay as they were.
      ...(s.needs_judge_leaves ? { needs_judge: BigInt(s.needs_judge_leaves) } : {}),
    },
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/**
 * The side file's line: every leaf not accepted by exact comparison in place (its matcher, who
 * accepted it, the verdict, the similarity), and the alignments that paired anything but item
 * i with item i exactly (pairs as [gold, pred, similarity, margin, how]).
 */
function sideLine(recordId: PyValue, line: number, s: LenientScore | null): string {
  const out: Record<string, unknown> = { line };
  if (s) {
    const leaves = s.leaves
      .filter((l) => l.accepted_by !== 'exact' || l.pred_path !== l.path)
      .map((l) => [l.path, l.pred_path, l.matcher, l.accepted_by, l.verdict, round(l.similarity)]);
    if (leaves.length > 0) out.leaves = leaves;
    // Right values in the wrong JSON type ("1,000" for a number): the hardening gate holds them.
    const slips = s.leaves.filter((l) => l.slip === 'type').map((l) => l.path);
    if (slips.length > 0) out.type_slips = slips;
    const moved = s.alignments.filter(
      (a) =>
        a.missed.length > 0 ||
        a.invented.length > 0 ||
        a.fallback !== undefined ||
        a.pairs.some((p) => p.gold !== p.pred || p.how !== 'exact'),
    );
    if (moved.length > 0)
      out.alignments = moved.map((a) => ({
        path: a.path,
        pred_path: a.pred_path,
        rule: a.rule,
        source: a.source,
        ...(a.fallback ? { fallback: a.fallback } : {}),
        pairs: a.pairs.map((p) => [
          p.gold,
          p.pred,
          round(p.similarity),
          p.margin === null ? null : round(p.margin),
          p.how,
        ]),
        missed: a.missed,
        invented: a.invented,
      }));
    if (s.notes.length > 0) out.notes = s.notes;
  }
  // The record id as the rows write it (an int stays an int); the rest is plain JSON.
  return `{"record_id": ${dumpsPy(recordId, { ensureAscii: false })}, ${JSON.stringify(out).slice(1)}`;
}

function partOf(s: LenientScore, exactVa: number): Omit<LenientRowPart, 'side'> {
  return {
    values: [
      s.lenient_value_accuracy,
      s.lenient_faithfulness,
      s.field_precision,
      s.field_recall,
      s.field_f1,
      s.lenient_value_accuracy - exactVa,
      // What lenient matching accepts in an answer the hardening gate holds at 0.
      (1 - s.hardening) * s.raw_value_accuracy * s.coverage_gate,
    ],
    counts: [
      s.gold_leaves,
      s.accepted_leaves,
      s.missed_leaves,
      s.invented_leaves,
      s.pending_leaves,
      s.unscored_leaves,
    ],
    matchers: { ...s.matcher_counts },
    typeSlips: s.type_slip_leaves,
  };
}

/** The lenient scores of a record that could not be scored at all: every number 0. */
const UNSCORED: LenientScore = {
  lenient_value_accuracy: 0,
  lenient_faithfulness: 0,
  field_precision: 0,
  field_recall: 0,
  field_f1: 0,
  raw_value_accuracy: 0,
  raw_faithfulness: 0,
  hardening: 0,
  coverage_gate: 0,
  gold_leaves: 0,
  pred_leaves: 0,
  accepted_leaves: 0,
  missed_leaves: 0,
  invented_leaves: 0,
  pending_leaves: 0,
  type_slip_leaves: 0,
  unscored_leaves: 0,
  matcher_counts: {},
  leaves: [],
  alignments: [],
  unsettled: [],
  notes: [],
};

/** A record waiting for verdicts: what rescoring needs, and the row to rewrite. */
interface Pending {
  gold: PyValue | undefined;
  cand: PyValue | undefined;
  schema: unknown;
  gates: { hardening: number; coverage_gate: number };
  fieldPolicy?: unknown;
  row: Record<string, unknown>;
  score: RecordScore;
  unsettled: UnsettledPair[];
  line: number;
  fields: FieldsOf;
}

/** Outcomes as the worker batches them (the fields this module reads and rewrites). */
interface RowOutcome {
  kind: string;
  line: number;
  json?: string;
  lenient?: LenientRowPart;
  fields?: string | Uint8Array;
}

/** Asks the parent for verdicts: [hash, verdict] for every pair it could settle. */
export type AskVerdicts = (pairs: UnsettledPair[]) => Promise<[string, JudgeVerdict][]>;

const SCHEMA_CACHE_MAX = 4096;

let shared: { key: string; scorer: LenientScorer } | undefined;

/** Lenient scoring on one worker: the row hook, then `settle` per batch when a judge answers. */
export class LenientScorer {
  /**
   * The worker's scorer for a job: one per policy and judge, kept across the files a worker
   * scores (the compiled policy's per-schema paths and matchers, and the verdicts, carry over).
   */
  static for(job: MatchJob, profile: Profile, ask?: AskVerdicts): LenientScorer {
    const key = JSON.stringify([job, profile, ask !== undefined]);
    if (shared?.key !== key) shared = { key, scorer: new LenientScorer(job, profile, ask) };
    return shared.scorer;
  }

  private readonly policy: Policy;
  private readonly verdicts = new Map<string, JudgeVerdict>();
  private readonly pending = new WeakMap<LenientRowPart, Pending>();
  private readonly schemas = new Map<string, unknown>();

  constructor(
    readonly job: MatchJob,
    /** The profile the exact scores come from (strict reads the answer as it does). */
    readonly profile: Profile,
    private readonly ask?: AskVerdicts,
  ) {
    this.policy = matchPolicy(job.policy, job.judge !== null && ask !== undefined);
  }

  /** Whether a judge answers unsettled pairs (rows then wait in `settle`). */
  get asks(): boolean {
    return this.ask !== undefined;
  }

  private schemaOf(view: ScoringView): unknown {
    if (view.schemaPlain !== undefined) return view.schemaPlain;
    const src = schemaSourceOf(view);
    let s = this.schemas.get(src.key);
    if (s === undefined && !this.schemas.has(src.key)) {
      s = src.plain();
      if (this.schemas.size >= SCHEMA_CACHE_MAX) this.schemas.clear();
      this.schemas.set(src.key, s);
    }
    return s;
  }

  /**
   * Scores one record leniently and adds the lenient fields to its row (`row` is the reference
   * row about to be written). `view` is null for a record that could not be scored (its exact
   * scores are all 0): its lenient scores are 0 too.
   */
  readonly hook = (
    view: ScoringView | null,
    score: RecordScore,
    _modality: Modality,
    row: Record<string, unknown>,
    line: number,
    fields: FieldsOf,
  ): LenientRowPart => {
    if (view === null) {
      Object.assign(row, rowFields(UNSCORED));
      const part: LenientRowPart = { ...partOf(UNSCORED, 0), side: sideLine(score.recordId, line, null) };
      if (this.job.judge !== null) part.noJudge = part.values;
      return part;
    }
    const cand = this.profile === 'strict' ? parseAnswer(view.raw, view.candidate).value : view.candidate;
    // Accepted alternatives (sob review) are right leniently; exact scoring never sees them.
    const gold = goldWithAlternatives(view.groundTruth, cand, view.metadata.get('accepted_alternatives'));
    const schema = this.schemaOf(view);
    const gates = { hardening: score.jsonPass, coverage_gate: score.explanation.coverage_gate ?? 1 };
    // Comparators the record declares by data path (sob build extractbench's field policy).
    const declared = view.metadata.get('field_policy');
    const fieldPolicy = declared === undefined ? undefined : toPlain(declared);
    const base = scoreLenient(gold, cand, schema, { policy: this.policy, gates, fieldPolicy });
    let final = base;
    let waiting = false;
    if (base.unsettled.length > 0) {
      if (base.unsettled.every((u) => this.verdicts.has(u.hash)))
        final = scoreLenient(gold, cand, schema, {
          policy: this.policy,
          gates,
          verdicts: this.verdicts,
          fieldPolicy,
        });
      else waiting = true;
    }
    Object.assign(row, rowFields(final));
    const part: LenientRowPart = {
      ...partOf(final, score.valueAccuracy),
      side: sideLine(score.recordId, line, final),
      fields: fields(final),
    };
    if (this.job.judge !== null) part.noJudge = partOf(base, score.valueAccuracy).values;
    if (waiting)
      this.pending.set(part, {
        gold,
        cand,
        schema,
        gates,
        fieldPolicy,
        row,
        score,
        unsettled: base.unsettled,
        line,
        fields,
      });
    return part;
  };

  /**
   * Before a batch leaves the worker: asks the parent about the unsettled pairs of its records
   * (those no verdict is known for), then scores those records again with the verdicts and
   * rewrites their rows. `begin`/`end` mark each rescoring in the worker's heartbeat.
   */
  async settle(batch: RowOutcome[], begin: (line: number) => void, end: () => void): Promise<void> {
    if (!this.ask) return;
    const waiting: [RowOutcome, Pending][] = [];
    const need = new Map<string, UnsettledPair>();
    for (const o of batch) {
      const p = o.lenient ? this.pending.get(o.lenient) : undefined;
      if (!p) continue;
      waiting.push([o, p]);
      for (const u of p.unsettled) if (!this.verdicts.has(u.hash)) need.set(u.hash, u);
    }
    if (waiting.length === 0) return;
    if (need.size > 0) for (const [h, v] of await this.ask([...need.values()])) this.verdicts.set(h, v);
    for (const [o, p] of waiting) {
      begin(p.line);
      const s = scoreLenient(p.gold, p.cand, p.schema, {
        policy: this.policy,
        gates: p.gates,
        verdicts: this.verdicts,
        fieldPolicy: p.fieldPolicy,
      });
      Object.assign(p.row, rowFields(s));
      const noJudge = o.lenient!.noJudge;
      o.lenient = {
        ...partOf(s, p.score.valueAccuracy),
        noJudge,
        side: sideLine(p.score.recordId, p.line, s),
      };
      o.fields = p.fields(s);
      o.json = dumpsPy(p.row);
      end();
    }
  }
}

/**
 * The worker's side of the verdict exchange: `ask` posts the pairs, `receive` resolves the
 * matching request when the parent's answer arrives.
 */
export class VerdictChannel {
  private next = 1;
  private readonly waiting = new Map<number, (v: [string, JudgeVerdict][]) => void>();

  constructor(private readonly post: (msg: { type: 'judge'; id: number; pairs: UnsettledPair[] }) => void) {}

  readonly ask: AskVerdicts = (pairs) =>
    new Promise((resolve) => {
      const id = this.next++;
      this.waiting.set(id, resolve);
      this.post({ type: 'judge', id, pairs });
    });

  receive(msg: { id: number; verdicts: [string, JudgeVerdict][] }): void {
    const r = this.waiting.get(msg.id);
    this.waiting.delete(msg.id);
    r?.(msg.verdicts);
  }
}
