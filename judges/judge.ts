/**
 * `sob judge`: deterministic checks first (no LLM is asked about a record that fails one), then
 * every quality judge, then the combination rule. Writes, in the output folder:
 *   accepted.jsonl   records that passed, as they came in
 *   rejected.jsonl   records that did not, with every reason
 *   judgments.jsonl  every judge's scores, rationale, judge id, prompt sha256 (or judge_error)
 *   summary.json     acceptance per source, score histograms, agreement between judges
 * Resumable: a judgment already in judgments.jsonl is not asked again (a judge_error is); a torn
 * last line is dropped.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../src/core/errors.ts';
import { readJsonl } from '../src/core/jsonl.ts';
import { toPlain } from '../src/core/pyjson.ts';
import type { BenchmarkRecord } from '../src/core/record.ts';
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
import { type AskOptions, askStructured } from './ask.ts';
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
  /** A ground-truth value not found in the context rejects the record (default true). */
  requireGrounding: boolean;
  log?: (line: string) => void;
}

export interface Judgment {
  record_id: string;
  judge: string;
  prompt_sha256: string;
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
  judge_errors: number;
  flagged_by_reviewer: number;
  per_source: Record<string, { records: number; accepted: number; acceptance: number }>;
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

/** One judge on one record. */
async function askJudge(judge: Provider, r: BenchmarkRecord, o: JudgeOptions): Promise<Judgment> {
  const prompt = qualityPrompt(r);
  const base = { record_id: r.metadata.record_id, judge: judge.id, prompt_sha256: prompt.templateSha };
  const res = await askStructured(
    judge,
    r.metadata.record_id,
    prompt,
    QUALITY_SCHEMA as unknown as Record<string, unknown>,
    parseQuality,
    o,
  );
  if (!res.value) return { ...base, judge_error: res.error, attempts: res.attempts };
  const a: QualityAnswer = res.value;
  return {
    ...base,
    attempts: res.attempts,
    scores: { accuracy: a.accuracy, grounding: a.grounding, schema_quality: a.schema_quality },
    needs_multiple_turns: a.needs_multiple_turns ?? null,
    rationale: a.rationale,
  };
}

/** The cross-check reviewer on one record: its issues, or a judge_error. */
async function askReviewer(reviewer: Provider, r: BenchmarkRecord, o: JudgeOptions): Promise<Judgment> {
  const prompt = reviewPrompt(r);
  const base = {
    record_id: r.metadata.record_id,
    judge: `review:${reviewer.id}`,
    prompt_sha256: prompt.templateSha,
  };
  const res = await askStructured(
    reviewer,
    r.metadata.record_id,
    prompt,
    REVIEW_SCHEMA as unknown as Record<string, unknown>,
    parseReview,
    o,
  );
  if (!res.value) return { ...base, judge_error: res.error, attempts: res.attempts };
  return { ...base, attempts: res.attempts, issues: res.value.issues };
}

/** Judgments already made (resume): `record_id|judge` -> judgment. judge_errors are asked again. */
async function priorJudgments(file: string): Promise<Map<string, Judgment>> {
  const out = new Map<string, Judgment>();
  if (!existsSync(file)) return out;
  // A torn last line (a crash mid-write) is cut off.
  const data = readFileSync(file);
  if (data.length > 0 && data[data.length - 1] !== 0x0a) truncateSync(file, data.lastIndexOf(0x0a) + 1);
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
  const judgmentsFile = join(o.outDir, 'judgments.jsonl');
  const prior = await priorJudgments(judgmentsFile);
  const append = (j: Judgment) => appendFileSync(judgmentsFile, `${JSON.stringify(j)}\n`);

  // 1. Deterministic checks, before any LLM.
  const seen = new Set<string>();
  const passed: { record: BenchmarkRecord; raw: string }[] = [];
  const rejected: { record_id?: string; origin: string; reasons: string[]; record?: unknown }[] = [];
  for await (const l of readJsonl(o.records)) {
    const origin = `${o.records}:${l.line}`;
    if (!l.ok) {
      rejected.push({ origin, reasons: [`not JSON: ${l.error}`] });
      continue;
    }
    const plain = toPlain(l.value);
    const c = o.check(plain, seen);
    const ungrounded = c.warnings.filter((w) => w.includes('not found in the context'));
    const reasons = [...c.errors, ...(o.requireGrounding ? ungrounded : [])];
    if (!c.ok || !c.record || reasons.length > 0) {
      const id = (plain as { metadata?: { record_id?: string } })?.metadata?.record_id;
      rejected.push({ record_id: id, origin, reasons, record: plain });
      continue;
    }
    passed.push({ record: c.record, raw: JSON.stringify(plain) });
  }
  const rejectedByChecks = rejected.length;
  log(
    `${passed.length + rejected.length} records: ${rejected.length} rejected by the checks, ${passed.length} to judge with ${o.judges.length} judge(s)`,
  );

  // 2. The judges, through a small pool.
  const all = new Map<string, Judgment>();
  const queue: [BenchmarkRecord, Provider, 'judge' | 'review'][] = [];
  for (const p of passed) {
    const asks: [Provider, 'judge' | 'review', string][] = o.judges.map((j) => [j, 'judge', j.id]);
    if (o.reviewer) asks.push([o.reviewer, 'review', `review:${o.reviewer.id}`]);
    for (const [j, kind, id] of asks) {
      const done = prior.get(`${p.record.metadata.record_id}|${id}`);
      if (done) all.set(`${done.record_id}|${id}`, done);
      else queue.push([p.record, j, kind]);
    }
  }
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < queue.length && !o.signal?.aborted) {
      const [r, j, kind] = queue[next++];
      const jd = kind === 'judge' ? await askJudge(j, r, o) : await askReviewer(j, r, o);
      append(jd);
      all.set(`${jd.record_id}|${jd.judge}`, jd);
      finished++;
      if (finished % 25 === 0) log(`... ${finished}/${queue.length} judgments`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, queue.length)) }, worker));
  if (o.signal?.aborted) throw new UserError('interrupted: re-run the same command to resume');

  // 3. The verdicts.
  const accepted: string[] = [];
  const perSource: JudgeSummary['per_source'] = {};
  let judgeErrors = 0;
  let flagged = 0;
  for (const p of passed) {
    const id = p.record.metadata.record_id;
    const js = o.judges.map((j) => all.get(`${id}|${j.id}`)!);
    const review = o.reviewer ? all.get(`${id}|review:${o.reviewer.id}`) : undefined;
    const flags = (review?.issues ?? []).map((i) => `reviewer: ${i.kind} at ${i.path}: ${i.reason}`);
    if (review?.issues?.length) flagged++;
    const src = String(p.record.metadata.source ?? 'unknown');
    perSource[src] ??= { records: 0, accepted: 0, acceptance: 0 };
    perSource[src].records++;
    const errors = [...js, ...(review ? [review] : [])].filter((j) => j.judge_error);
    if (errors.length > 0) {
      judgeErrors++;
      rejected.push({
        record_id: id,
        origin: id,
        reasons: errors.map((j) => `judge_error (${j.judge}): ${j.judge_error}`),
        record: JSON.parse(p.raw),
      });
      continue;
    }
    const scores = js.map((j) => j.scores!);
    if (o.rejectFlagged && flags.length > 0) {
      rejected.push({ record_id: id, origin: id, reasons: flags, record: JSON.parse(p.raw) });
    } else if (combine(scores, o.threshold, o.combine)) {
      accepted.push(p.raw);
      perSource[src].accepted++;
    } else {
      const reasons = js.flatMap((j) =>
        DIMENSIONS.filter((d) => j.scores![d] < o.threshold).map(
          (d) => `${j.judge}: ${d} ${j.scores![d]} < ${o.threshold}${j.rationale ? ` (${j.rationale})` : ''}`,
        ),
      );
      reasons.push(...flags);
      rejected.push({ record_id: id, origin: id, reasons, record: JSON.parse(p.raw) });
    }
  }
  for (const s of Object.values(perSource)) s.acceptance = s.records ? s.accepted / s.records : 0;
  writeFileSync(join(o.outDir, 'accepted.jsonl'), accepted.map((l) => `${l}\n`).join(''));
  writeFileSync(join(o.outDir, 'rejected.jsonl'), rejected.map((r) => `${JSON.stringify(r)}\n`).join(''));

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
    judge_errors: judgeErrors,
    flagged_by_reviewer: flagged,
    per_source: perSource,
    histograms,
    agreement,
    threshold: o.threshold,
    combine: o.combine,
  };
  writeFileSync(join(o.outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

export function readAccepted(dir: string): string[] {
  return readFileSync(join(dir, 'accepted.jsonl'), 'utf8').split('\n').filter(Boolean);
}
