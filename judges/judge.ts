/**
 * `sob judge`: deterministic checks first (no LLM is asked about a record that fails one), then
 * every quality judge, then the combination rule. Writes, in the output folder:
 *   accepted.jsonl   records that passed, as they came in
 *   rejected.jsonl   records that did not, with every reason
 *   judgments.jsonl  every judge's scores, rationale, judge id, prompt sha256 (or judge_error)
 *   summary.json     acceptance per source, score histograms, agreement between judges
 * Resumable: a judgment already in judgments.jsonl (keyed by record id and judge) is not asked
 * again, unless its prompt hash differs (the record or the prompt changed since); a judge_error
 * is asked again; a torn last line is dropped.
 *
 * Where a record goes: accepted.jsonl, or rejected.jsonl with `stage` saying why: `checks` (a
 * deterministic check failed; no LLM was asked), `judge_error` (a quality judge gave no valid
 * answer after its attempts: not a quality verdict; a re-run asks again), `reviewer` (the
 * reviewer flagged it, or gave no valid answer on it, and --reject-flagged is on) or `quality`
 * (below the threshold). A reviewer's failure alone flags a record; it never rejects it
 * without --reject-flagged.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { closeSync, existsSync, mkdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { mapConcurrent } from '../src/core/concurrency.ts';
import { UserError } from '../src/core/errors.ts';
import {
  acquireLock,
  openNoFollow,
  refuseSymlink,
  truncateNoFollow,
  writeFileAtomic,
  writeJsonAtomic,
} from '../src/core/files.ts';
import { type GroundedBy, groundingCounts, groundLeaves } from '../src/core/grounding.ts';
import { readJsonl } from '../src/core/jsonl.ts';
import { toPlain } from '../src/core/pyjson.ts';
import type { BenchmarkRecord } from '../src/core/record-shape.ts';
import { type AskOptions, askStructured } from '../src/providers/ask.ts';
import type { Provider } from '../src/providers/types.ts';
import {
  accepts,
  type CombineRule,
  cohensKappa,
  combine,
  DIMENSIONS,
  meanAbsoluteDifference,
  type Scores,
  spearman,
} from './agreement.ts';
import { parseQuality, QUALITY_SCHEMA, type QualityAnswer, qualityPrompt } from './quality.ts';
import { parseReview, REVIEW_SCHEMA, reviewPrompt } from './reviewer.ts';

/** The deterministic record checks (sources/checks.ts `checkRecord`), handed in by the caller. */
export type RecordCheck = (
  record: unknown,
  seenIds: Set<string>,
) => { ok: boolean; errors: string[]; warnings: string[]; record?: BenchmarkRecord };

export interface JudgeOptions extends AskOptions {
  records: string;
  check: RecordCheck;
  /** The cross-check reviewer; its issues are recorded, and reject the record with `rejectFlagged`. */
  reviewer?: Provider;
  rejectFlagged?: boolean;
  judges: Provider[];
  outDir: string;
  threshold: number;
  combine: CombineRule;
  concurrency: number;
  /** Called after each judgment: judgments done and to do, judge errors, the start time. */
  onProgress?: (p: { total: number; done: number; failed: number; startedAt: number }) => void;
  /** A ground-truth value not found in the context rejects the record (default true). */
  requireGrounding: boolean;
  /** The judge's instructions in place of ours (`--judge-prompt <file>`); the reply schema stays. */
  judgePrompt?: string;
  log?: (line: string) => void;
}

export interface Judgment {
  record_id: string;
  judge: string;
  /** sha256 of everything the judge was sent: system text, user text (the record) and answer schema. */
  prompt_sha256: string;
  /** sha256 of the prompt template alone: the same for every record under one prompt version. */
  template_sha256: string;
  /** Whether the answer schema went to the provider's structured-output mode (false after a refusal). */
  constrained?: boolean;
  scores?: Scores;
  needs_multiple_turns?: boolean | null;
  rationale?: string;
  judge_error?: string;
  /** The reviewer's findings (a `review:` judgment). */
  issues?: { kind: string; path: string; reason: string }[];
  attempts: number;
}

export interface JudgeSummary {
  records: number;
  accepted: number;
  rejected: number;
  rejected_by_checks: number;
  /** Of those, the records rejected only for ground-truth values not found in the context (`--allow-ungrounded` keeps them). */
  rejected_for_grounding: number;
  /** How the string values of the records that passed the shape checks were found in their contexts. */
  grounding: Record<GroundedBy | 'none', number>;
  judge_errors: number;
  flagged_by_reviewer: number;
  /** Of those flagged, the records the reviewer gave no valid answer on (flagged, not rejected, unless --reject-flagged). */
  reviewer_errors: number;
  per_source: Record<
    string,
    { records: number; accepted: number; acceptance: number; needs_multiple_turns?: number }
  >;
  histograms: Record<string, Record<string, number[]>>;
  agreement: {
    a: string;
    b: string;
    kappa: number;
    spearman: Record<string, number>;
    mean_abs_diff: Record<string, number>;
    n: number;
  }[];
  threshold: number;
  combine: CombineRule;
}

export function promptSha(p: { system: string; user: string }, schema: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([p.system, p.user, schema]))
    .digest('hex');
}

type Ask = { kind: 'judge' | 'review'; provider: Provider; id: string };

/** What a judge or the reviewer is sent about a record, and its hash (the resume key's check). */
function promptFor(a: Ask, r: BenchmarkRecord, judgePrompt?: string) {
  const prompt = a.kind === 'judge' ? qualityPrompt(r, judgePrompt) : reviewPrompt(r);
  const schema = a.kind === 'judge' ? QUALITY_SCHEMA : REVIEW_SCHEMA;
  return { prompt, schema: schema as unknown as Record<string, unknown>, sha: promptSha(prompt, schema) };
}

/** One judge on one record. */
async function askJudge(judge: Provider, r: BenchmarkRecord, o: JudgeOptions): Promise<Judgment> {
  const { prompt, schema, sha } = promptFor(
    { kind: 'judge', provider: judge, id: judge.id },
    r,
    o.judgePrompt,
  );
  const base = {
    record_id: r.metadata.record_id,
    judge: judge.id,
    prompt_sha256: sha,
    template_sha256: prompt.templateSha,
  };
  const source = r.metadata.source;
  const res = await askStructured(
    judge,
    r.metadata.record_id,
    prompt,
    schema,
    (t) => parseQuality(t, source),
    o,
  );
  if (!res.value)
    return { ...base, constrained: res.constrained, judge_error: res.error, attempts: res.attempts };
  const a: QualityAnswer = res.value;
  return {
    ...base,
    constrained: res.constrained,
    attempts: res.attempts,
    scores: { accuracy: a.accuracy, grounding: a.grounding, schema_quality: a.schema_quality },
    needs_multiple_turns: a.needs_multiple_turns ?? null,
    rationale: a.rationale,
  };
}

/** The cross-check reviewer on one record: its issues, or a judge_error. */
async function askReviewer(reviewer: Provider, r: BenchmarkRecord, o: JudgeOptions): Promise<Judgment> {
  const id = `review:${reviewer.id}`;
  const { prompt, schema, sha } = promptFor({ kind: 'review', provider: reviewer, id }, r);
  const base = {
    record_id: r.metadata.record_id,
    judge: id,
    prompt_sha256: sha,
    template_sha256: prompt.templateSha,
  };
  const res = await askStructured(reviewer, r.metadata.record_id, prompt, schema, parseReview, o);
  if (!res.value)
    return { ...base, constrained: res.constrained, judge_error: res.error, attempts: res.attempts };
  return { ...base, constrained: res.constrained, attempts: res.attempts, issues: res.value.issues };
}

/** Judgments already made (resume): `record_id|judge` -> judgment. judge_errors are asked again. */
async function priorJudgments(file: string): Promise<Map<string, Judgment>> {
  const out = new Map<string, Judgment>();
  refuseSymlink(file, 'judgment log');
  if (!existsSync(file)) return out;
  // A torn last line (a crash mid-write) is cut off (never through a symlink).
  const data = readFileSync(file);
  if (data.length > 0 && data[data.length - 1] !== 0x0a) truncateNoFollow(file, data.lastIndexOf(0x0a) + 1);
  for await (const l of readJsonl(file)) {
    if (!l.ok) continue;
    const j = toPlain(l.value) as Judgment;
    if (j && typeof j.record_id === 'string' && !j.judge_error) out.set(`${j.record_id}|${j.judge}`, j);
  }
  return out;
}

export async function judgeRecords(o: JudgeOptions): Promise<JudgeSummary> {
  const log = o.log ?? (() => {});
  mkdirSync(o.outDir, { recursive: true });
  // Each judge request in flight listens on the stop signal: bounded by --concurrency, no leak.
  if (o.signal) setMaxListeners(Math.max(10, 4 * o.concurrency + 10), o.signal);
  // One `sob judge` per output folder: a second one is refused before it asks anything.
  const lock = acquireLock(o.outDir, 'judge output folder');
  try {
    return await judgeLocked(o, log);
  } finally {
    lock.release();
  }
}

async function judgeLocked(o: JudgeOptions, log: (line: string) => void): Promise<JudgeSummary> {
  const judgmentsFile = join(o.outDir, 'judgments.jsonl');
  const prior = await priorJudgments(judgmentsFile);
  const fd = openNoFollow(judgmentsFile, 'a');
  try {
    return await judgeWith(o, log, prior, (j: Judgment) => writeSync(fd, `${JSON.stringify(j)}\n`));
  } finally {
    closeSync(fd);
  }
}

async function judgeWith(
  o: JudgeOptions,
  log: (line: string) => void,
  prior: Map<string, Judgment>,
  append: (j: Judgment) => void,
): Promise<JudgeSummary> {
  // 1. Deterministic checks, before any LLM.
  const seen = new Set<string>();
  const passed: { record: BenchmarkRecord; raw: string; origin: string }[] = [];
  const rejected: {
    record_id?: string;
    origin: string;
    stage: 'checks' | 'judge_error' | 'reviewer' | 'quality';
    reasons: string[];
    record?: unknown;
  }[] = [];
  let rejectedForGrounding = 0;
  const grounding = groundingCounts([]);
  for await (const l of readJsonl(o.records)) {
    const origin = `${o.records}:${l.line}`;
    if (!l.ok) {
      rejected.push({ origin, stage: 'checks', reasons: [`not JSON: ${l.error}`] });
      continue;
    }
    const plain = toPlain(l.value);
    const c = o.check(plain, seen);
    if (c.record) {
      const furniture = c.record.metadata.page_furniture;
      const counts = groundingCounts(
        groundLeaves(
          c.record.output.ground_truth,
          c.record.input.context,
          Array.isArray(furniture) ? furniture.filter((x): x is string => typeof x === 'string') : [],
        ),
      );
      for (const [k, n] of Object.entries(counts)) grounding[k as keyof typeof grounding] += n;
    }
    const ungrounded = c.warnings.filter((w) => w.includes('not found in the context'));
    const reasons = [...c.errors, ...(o.requireGrounding ? ungrounded : [])];
    if (!c.ok || !c.record || reasons.length > 0) {
      const id = (plain as { metadata?: { record_id?: string } })?.metadata?.record_id;
      if (c.ok && c.record) rejectedForGrounding++;
      rejected.push({ record_id: id, origin, stage: 'checks', reasons, record: plain });
      continue;
    }
    passed.push({ record: c.record, raw: JSON.stringify(plain), origin });
  }
  const rejectedByChecks = rejected.length;
  log(
    `${passed.length + rejected.length} records: ${rejected.length} rejected by the checks${rejectedForGrounding > 0 ? ` (${rejectedForGrounding} only for ground-truth values not found in the context: --allow-ungrounded keeps them)` : ''}, ${passed.length} to judge with ${o.judges.length} judge(s)`,
  );
  const normalised = grounding.date + grounding.number + grounding.near;
  if (grounding.text + normalised + grounding.none > 0)
    log(
      `grounding: ${grounding.text} values found as written, ${normalised} after a normaliser (date ${grounding.date}, number ${grounding.number}, near match ${grounding.near}), ${grounding.none} not found`,
    );

  // 2. The judges, through a small pool.
  const all = new Map<string, Judgment>();
  const queue: [BenchmarkRecord, Provider, 'judge' | 'review'][] = [];
  const asks: Ask[] = o.judges.map((j) => ({ kind: 'judge', provider: j, id: j.id }));
  if (o.reviewer) asks.push({ kind: 'review', provider: o.reviewer, id: `review:${o.reviewer.id}` });
  let stale = 0;
  for (const p of passed) {
    for (const a of asks) {
      const done = prior.get(`${p.record.metadata.record_id}|${a.id}`);
      if (done && done.prompt_sha256 === promptFor(a, p.record, o.judgePrompt).sha)
        all.set(`${done.record_id}|${a.id}`, done);
      else {
        if (done) stale++;
        queue.push([p.record, a.provider, a.kind]);
      }
    }
  }
  if (prior.size > 0)
    log(
      `resuming: ${all.size} judgments already made, ${queue.length} to ask (${stale} whose prompt changed)`,
    );
  let finished = 0;
  let failedJudgments = 0;
  const startedAt = Date.now();
  const report = () =>
    o.onProgress?.({ total: queue.length, done: finished, failed: failedJudgments, startedAt });
  const judgeOne = async ([r, j, kind]: (typeof queue)[number]) => {
    const jd = kind === 'judge' ? await askJudge(j, r, o) : await askReviewer(j, r, o);
    if (o.signal?.aborted) return; // an interrupted question is not a judgment
    append(jd);
    all.set(`${jd.record_id}|${jd.judge}`, jd);
    finished++;
    if (jd.judge_error) failedJudgments++;
    report();
  };
  await mapConcurrent(queue, judgeOne, { concurrency: o.concurrency, signal: o.signal });
  if (o.signal?.aborted) throw new UserError('interrupted: re-run the same command to resume');

  // 3. The verdicts.
  const accepted: string[] = [];
  const perSource: JudgeSummary['per_source'] = {};
  let judgeErrors = 0;
  let flagged = 0;
  let reviewerErrors = 0;
  for (const p of passed) {
    const id = p.record.metadata.record_id;
    const js = o.judges.map((j) => all.get(`${id}|${j.id}`)!);
    const review = o.reviewer ? all.get(`${id}|review:${o.reviewer.id}`) : undefined;
    // A reviewer that gave no valid answer flags the record, as a finding would: it rejects
    // only with --reject-flagged (the reviewer flags; the quality judges decide).
    const flags = review?.judge_error
      ? [`reviewer error (${review.judge}): ${review.judge_error}`]
      : (review?.issues ?? []).map((i) => `reviewer: ${i.kind} at ${i.path}: ${i.reason}`);
    if (flags.length > 0) flagged++;
    if (review?.judge_error) reviewerErrors++;
    const src = String(p.record.metadata.source ?? 'unknown');
    perSource[src] ??= { records: 0, accepted: 0, acceptance: 0 };
    perSource[src].records++;
    const errors = js.filter((j) => j.judge_error);
    if (errors.length > 0) {
      judgeErrors++;
      rejected.push({
        record_id: id,
        origin: p.origin,
        stage: 'judge_error',
        reasons: errors.map((j) => `judge_error (${j.judge}): ${j.judge_error}`),
        record: JSON.parse(p.raw),
      });
      continue;
    }
    // Meetings: does the question need several turns? (the judges' majority)
    if (src === 'audio') {
      const yes = js.filter((j) => j.needs_multiple_turns === true).length;
      perSource[src].needs_multiple_turns =
        (perSource[src].needs_multiple_turns ?? 0) + (yes * 2 > js.length ? 1 : 0);
    }
    const scores = js.map((j) => j.scores!);
    if (o.rejectFlagged && flags.length > 0) {
      rejected.push({
        record_id: id,
        origin: p.origin,
        stage: 'reviewer',
        reasons: flags,
        record: JSON.parse(p.raw),
      });
    } else if (combine(scores, o.threshold, o.combine)) {
      accepted.push(p.raw);
      perSource[src].accepted++;
    } else {
      const reasons = js.flatMap((j) =>
        DIMENSIONS.filter((d) => j.scores![d] < o.threshold).map(
          (d) => `${j.judge}: ${d} ${j.scores![d]} < ${o.threshold}${j.rationale ? ` (${j.rationale})` : ''}`,
        ),
      );
      if (o.combine === 'mean' && reasons.length > 0) {
        const mean = (d: (typeof DIMENSIONS)[number]) => scores.reduce((t, s) => t + s[d], 0) / scores.length;
        const low = DIMENSIONS.filter((d) => mean(d) < o.threshold);
        reasons.unshift(...low.map((d) => `mean ${d} ${mean(d)} < ${o.threshold}`));
      }
      reasons.push(...flags);
      rejected.push({
        record_id: id,
        origin: p.origin,
        stage: 'quality',
        reasons,
        record: JSON.parse(p.raw),
      });
    }
  }
  for (const s of Object.values(perSource)) s.acceptance = s.records ? s.accepted / s.records : 0;
  writeFileAtomic(join(o.outDir, 'accepted.jsonl'), accepted.map((l) => `${l}\n`).join(''));
  writeFileAtomic(join(o.outDir, 'rejected.jsonl'), rejected.map((r) => `${JSON.stringify(r)}\n`).join(''));

  // Score histograms (10-point bins) per judge and dimension, and agreement per pair of judges.
  const histograms: JudgeSummary['histograms'] = {};
  for (const j of o.judges) {
    histograms[j.id] = Object.fromEntries(DIMENSIONS.map((d) => [d, new Array(11).fill(0)]));
    for (const p of passed) {
      const s = all.get(`${p.record.metadata.record_id}|${j.id}`)?.scores;
      if (s) for (const d of DIMENSIONS) histograms[j.id][d][Math.min(10, Math.floor(s[d] / 10))]++;
    }
  }
  const agreement: JudgeSummary['agreement'] = [];
  for (let a = 0; a < o.judges.length; a++) {
    for (let b = a + 1; b < o.judges.length; b++) {
      const both = passed
        .map((p) => [
          all.get(`${p.record.metadata.record_id}|${o.judges[a].id}`)?.scores,
          all.get(`${p.record.metadata.record_id}|${o.judges[b].id}`)?.scores,
        ])
        .filter((x): x is [Scores, Scores] => !!x[0] && !!x[1]);
      agreement.push({
        a: o.judges[a].id,
        b: o.judges[b].id,
        n: both.length,
        kappa: cohensKappa(
          both.map((x) => accepts(x[0], o.threshold)),
          both.map((x) => accepts(x[1], o.threshold)),
        ),
        spearman: Object.fromEntries(
          DIMENSIONS.map((d) => [
            d,
            spearman(
              both.map((x) => x[0][d]),
              both.map((x) => x[1][d]),
            ),
          ]),
        ),
        mean_abs_diff: Object.fromEntries(
          DIMENSIONS.map((d) => [
            d,
            meanAbsoluteDifference(
              both.map((x) => x[0][d]),
              both.map((x) => x[1][d]),
            ),
          ]),
        ),
      });
    }
  }
  const summary: JudgeSummary = {
    records: passed.length + rejectedByChecks,
    accepted: accepted.length,
    rejected: rejected.length,
    rejected_by_checks: rejectedByChecks,
    rejected_for_grounding: rejectedForGrounding,
    grounding,
    judge_errors: judgeErrors,
    flagged_by_reviewer: flagged,
    reviewer_errors: reviewerErrors,
    per_source: perSource,
    histograms,
    agreement,
    threshold: o.threshold,
    combine: o.combine,
  };
  writeJsonAtomic(join(o.outDir, 'summary.json'), summary);
  return summary;
}
