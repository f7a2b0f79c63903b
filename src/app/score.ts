/**
 * `sob score` as one use case: response files, folders of them or run directories scored into
 * the reference's evaluation layout, a table of weighted means on stdout, the gates checked. The
 * command (`src/cli/score.ts`) reads the flags into `ScoreSettings` and calls `scoreTargets`.
 */

import { basename, dirname, join, resolve } from 'node:path';
import { GATE_METRICS, type GateMetric } from '../../metrics/gates.ts';
import { UserError } from '../core/errors.ts';
import type { EvalSummaryOut, SummaryOut } from '../core/formats/eval-summary.ts';
import type { Modality } from '../core/record.ts';
import { type Protocol, unsatisfiableWarning } from '../core/validator-protocols.ts';
import { complianceScoreLine } from '../report/compliance.ts';
import { LENIENT_SHOWN, lenientShown } from '../report/lenient.ts';
import type { BenchmarkRef } from '../scoring/benchmark.ts';
import { loadScorers, type ScorerSpec, scorerSpecs } from '../scoring/custom-scorers.ts';
import { runBenchmarkOf, runsNamedBy } from '../scoring/run-targets.ts';
import { defaultOutDir, expandInputs, type ScoreTarget, scoreFiles } from '../scoring/score-files.ts';
import type { ProfileOptions } from '../scoring/score-line.ts';
import { applyGates, type Gates } from './gates.ts';
import { log } from './io.ts';

/** What `sob score` was asked to do: its inputs and flags, read and checked by the command. */
export interface ScoreSettings {
  /** Response files, folders of them, or run directories. */
  inputs: string[];
  /** The gates, checked after scoring (parsed before anything is scored). */
  gates: Gates;
  profile?: 'sob' | 'strict';
  assertFormats?: boolean;
  /** `--protocol`; absent: each schema record's default (docs/compliance-protocols.md). */
  protocol?: Protocol;
  /** `--remote` folders, each checked to exist. */
  remotes: { base: string; dir: string }[];
  modality?: Modality;
  benchmark?: string;
  out?: string;
  skipInvalid?: boolean;
  /** `--map`: our field -> the column of the user's rows (`--benchmark`) that holds it. */
  map?: Record<string, string>;
  allowInvalidGroundTruth?: boolean;
  bootstrapSamples: number;
  /** How resamples are drawn (`auto`: Poisson for strict summaries over 50,000 records). */
  bootstrapMethod?: 'auto' | 'cpython' | 'poisson';
  seed: number;
  topKErrors: number;
  jobs?: number;
  recordTimeoutMs: number;
  match?: string;
  /** `--scorer`: scorers of your own (module paths), loaded and checked before anything is scored. */
  scorers?: string[];
  matchJudge?: string;
  baseUrl: string[];
  matchCache?: string;
  judgeConcurrency?: number;
  /** Seconds. */
  judgeTimeout?: number;
  /** `fields.jsonl` beside the rows (default true; false: `--no-fields`). */
  fields?: boolean;
}

const SHOWN = [
  ['schema_compliance', 'JSON Pass'],
  ['leaf_value_em', 'Val.Acc.'],
  ['value_token_f1', 'Faithful.'],
  ['hier_path_recall', 'Path Rec.'],
  ['path_set_f1', 'Str.Cov.'],
  ['type_precision', 'Type Saf.'],
  ['strict_json_em', 'Perfect'],
] as const;

/** Which profile scores what and why, in one line (printed before scoring). */
export function profileLine(targets: ScoreTarget[]): string {
  const groups = new Map<string, number>();
  for (const t of targets) {
    const key = `${t.profile?.profile ?? 'sob'} (${t.profile?.reason ?? 'the default'})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  if (groups.size === 1) return `profile: ${[...groups.keys()][0]}`;
  return `profile: ${[...groups].map(([k, n]) => `${k} for ${n} file${n === 1 ? '' : 's'}`).join('; ')}`;
}

/**
 * `--benchmark`: checked by the loader `sob run` uses (src/core/benchmark-records.ts); a record
 * it rejects stops the scoring (exit 2) or, with --skip-invalid, is left out.
 */
async function checkedBenchmark(
  path: string,
  flags: { skipInvalid?: boolean; allowInvalidGroundTruth?: boolean; recordTimeoutMs?: number },
): Promise<BenchmarkRef> {
  const { checkBenchmark, enforceCheck } = await import('../core/benchmark-records.ts');
  const { resolveBenchmark } = await import('../runner/run.ts');
  const file = resolve(resolveBenchmark(path));
  const check = await checkBenchmark(file, {
    allowInvalidGroundTruth: flags.allowInvalidGroundTruth,
    recordTimeoutMs: flags.recordTimeoutMs,
  });
  enforceCheck(check, { skipInvalid: flags.skipInvalid, log, what: 'was scored' });
  return { path: file, exclude: check.rejected.map((r) => r.line) };
}

/**
 * `--scorer` paths as the workers take them, each loaded once here first: a missing file, a
 * module that does not load or exports no function stops the command in one line (exit 2).
 */
export async function checkedScorers(paths: string[] | undefined): Promise<ScorerSpec[] | undefined> {
  if (!paths || paths.length === 0) return undefined;
  const specs = scorerSpecs(paths);
  await loadScorers(specs);
  return specs;
}

/**
 * Runs `sob score`: each input scored under its profile (strict for a run's answers, sob for
 * response files, unless one is asked), the table printed, the gates checked. A file that could
 * not be scored, or a judge that failed, sets exit code 1; a failed gate 3.
 */
export async function scoreTargets(s: ScoreSettings): Promise<void> {
  const { gates, remotes } = s;
  const scorers = await checkedScorers(s.scorers);
  // The profile follows the answers, never how their path is written: the answers of a sob
  // run (its directory, or the responses.jsonl in it) are the user's own benchmark, strict,
  // the reference's defects fixed; response files in the SOB layout get the sob profile,
  // where parity is the point. Each profile carries its reason into the summary.
  const profileOf = (p: 'sob' | 'strict', reason: string): ProfileOptions => ({
    profile: p,
    assertFormats: p === 'strict' && s.assertFormats === true,
    reason,
    protocol: s.protocol,
    remotes,
    ...(scorers ? { scorers } : {}),
    fields: s.fields !== false,
  });
  const chosen = s.profile ? profileOf(s.profile, 'as asked') : undefined;
  const runProfile =
    chosen ??
    profileOf(
      'strict',
      "the default for a run's answers (its directory or its responses.jsonl): your own benchmark, the reference's defects fixed; --profile sob for parity",
    );
  const fileProfile =
    chosen ??
    (s.assertFormats
      ? profileOf('strict', '--assert-formats is a strict-profile option')
      : profileOf(
          'sob',
          'the default for response files: parity with the SOB reference; --profile strict fixes its quirks',
        ));
  // A run directory (manifest.json + responses.jsonl) is scored into its own evaluation/.
  const targets: ScoreTarget[] = [];
  // Flat rows a user wrote become records first (runs/benchmarks/<name>-<hash>), as sob run does.
  let benchmarkPath = s.benchmark ? resolve(s.benchmark) : undefined;
  if (benchmarkPath) {
    const { userBenchmark, userBenchmarkDir } = await import('../../sources/user-benchmark.ts');
    benchmarkPath = (
      await userBenchmark(benchmarkPath, userBenchmarkDir(benchmarkPath, undefined, s.map), {
        log,
        skipInvalid: s.skipInvalid,
        recordTimeoutMs: s.recordTimeoutMs,
        map: s.map,
        shared: true,
      })
    ).path;
  }
  const benchmark = benchmarkPath ? await checkedBenchmark(benchmarkPath, s) : undefined;
  for (const input of s.inputs) {
    const runs = runsNamedBy(input);
    if (runs)
      targets.push(
        ...runs.map((t) => ({
          ...(s.out ? { file: t.file, modelDir: t.modelDir } : t),
          profile: runProfile,
          benchmark: benchmark ?? runBenchmarkOf(dirname(t.file), log),
        })),
      );
    else targets.push(...expandInputs([input]).map((file) => ({ file, profile: fileProfile })));
  }
  // A benchmark's records (or rows) handed to `sob score` would score as zeros: said, exit 1.
  for (const t of targets) if (await holdsNoAnswers(t.file)) throw new UserError(notAnswersLine(t.file), 1);
  const files = targets.map((t) => t.file);
  const outDir = s.out ?? defaultOutDir();
  const started = Date.now();
  log(
    `scoring ${files.length} file${files.length === 1 ? '' : 's'} -> ${targets.every((t) => t.outDir) ? "each run directory's evaluation/" : outDir}`,
  );
  log(profileLine(targets));
  let done = 0;
  const match = s.match
    ? await (await import('../scoring/lenient-run.ts')).prepareLenientRun({
        policy: s.match,
        judge: s.matchJudge,
        baseUrls: s.baseUrl,
        cacheDir: s.matchCache ?? join('runs', '.judge-cache'),
        concurrency: s.judgeConcurrency,
        judgeDeadlineMs: s.judgeTimeout === undefined ? undefined : s.judgeTimeout * 1000,
        log,
      })
    : undefined;
  const results = await scoreFiles(targets, {
    outDir,
    benchmark,
    modality: s.modality,
    summary: {
      bootstrapSamples: s.bootstrapSamples,
      bootstrapMethod: s.bootstrapMethod,
      seed: s.seed,
      topKErrors: s.topKErrors,
    },
    jobs: s.jobs,
    recordTimeoutMs: s.recordTimeoutMs,
    match,
    log,
  });
  const header = ['file', 'source', 'n', ...SHOWN.map(([, h]) => h), ...(match ? LENIENT_SHOWN : [])];
  const rows: string[][] = [];
  const schemaLines: string[] = [];
  let failures = 0;
  for (const [i, r] of results.entries()) {
    done++;
    if (r.error) {
      failures++;
      log(`sob: ${r.error}`);
    }
    for (const o of r.outputs) {
      if (o.modality === 'schema') {
        // Schema records: the compliance track's numbers (src/report/compliance.ts).
        schemaLines.push(
          `${targets[i].modelDir ?? r.file.split('/').pop() ?? r.file}  schema  ${o.records}  ${complianceScoreLine(o.summary)}`,
        );
        for (const w of unsatisfiableLines(o.summary)) log(w);
        continue;
      }
      const s = (o.summary as EvalSummaryOut).summary;
      rows.push([
        // A run directory's responses.jsonl is named by its model.
        targets[i].modelDir ?? r.file.split('/').pop() ?? r.file,
        o.modality,
        String(o.records),
        ...SHOWN.map(([k]) => s.overall_weighted.metrics[k].mean.toFixed(3)),
        ...(match ? lenientShown(o.summary) : []),
      ]);
    }
  }
  const gated = results.flatMap((r) => r.outputs.filter((o) => o.modality !== 'schema'));
  const { folderPair } = await import('../report/gates.ts');
  const subjectOf = (o: (typeof gated)[number]) => `${o.modality}/${basename(o.dir)}`;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cs: string[]) =>
    cs.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  if (rows.length > 0) process.stdout.write(`${[fmt(header), ...rows.map(fmt)].join('\n')}\n`);
  if (schemaLines.length > 0) process.stdout.write(`${schemaLines.join('\n')}\n`);
  // A version `sob review --apply` wrote: the same answers against the version it came from too.
  const { previousVersion, beforeAfterTable } = await import('./score-versions.ts');
  const prev = benchmark ? previousVersion(benchmark.path) : undefined;
  if (prev && benchmark) {
    const before = await checkedBenchmark(prev.path, {
      ...s,
      allowInvalidGroundTruth: true,
      skipInvalid: true,
    });
    process.stdout.write(
      `\n${await beforeAfterTable(
        targets,
        results.map((r, i) => ({
          name: targets[i].modelDir ?? r.file.split('/').pop() ?? r.file,
          outputs: r.outputs,
        })),
        before,
        { before: prev.version, after: prev.current },
        {
          modality: s.modality,
          summary: { bootstrapSamples: 0, seed: s.seed, topKErrors: s.topKErrors },
          jobs: s.jobs,
          recordTimeoutMs: s.recordTimeoutMs,
          match,
        },
      )}`,
    );
  }
  log(
    `scored ${done - failures}/${files.length} files in ${((Date.now() - started) / 1000).toFixed(2)} s${rows.length > 0 ? ` (weighted means shown; ${profileLine(targets)})` : ''}`,
  );
  if (match?.judge) {
    log(match.judge.summaryLine());
    if (match.judge.fatal) {
      log(`sob: judge ${match.judge.id}: ${match.judge.fatal}`);
      failures++;
    }
  }
  if (failures > 0) process.exitCode = 1;
  const bare =
    (gates.fields?.length ?? 0) > 0
      ? (await import('../report/fields.ts')).foldersWithoutFields(gated.map((o) => o.dir))
      : [];
  await applyGates(gates, {
    command: `sob score ${s.inputs.join(' ')}`,
    subjects: gated.map((o) => ({ name: subjectOf(o), values: scoredValues(o.summary) })),
    // The field gates read each scored folder's fields.jsonl, under the subject's name.
    fieldTable: async () => {
      const { fieldTableOf, fieldsFileOf } = await import('../report/fields.ts');
      return fieldTableOf(
        gated.flatMap((o) => {
          const file = fieldsFileOf(o.dir);
          return file ? [{ model: subjectOf(o), file }] : [];
        }),
      );
    },
    withoutFields: () => bare,
    pairs: (baseline) => {
      const pairs = gated.map((o) => folderPair(subjectOf(o), o.dir, baseline));
      return {
        pairs: pairs.filter((p) => p !== null),
        unmatched: gated.filter((_, i) => pairs[i] === null).map(subjectOf),
      };
    },
    seed: s.seed,
  });
}

/**
 * A schema folder's warnings for formats no value can satisfy under its protocol: one line per
 * record (the first 20, then how many more), naming the fields.
 */
export function unsatisfiableLines(summary: Record<string, unknown>): string[] {
  const list = summary.unsatisfiable_formats;
  if (!Array.isArray(list) || list.length === 0) return [];
  const dq = summary.data_quality as Record<string, unknown> | undefined;
  const total = Number(dq?.unsatisfiable_format_schema_count ?? list.length);
  const protocol = (
    typeof summary.protocol === 'string' && summary.protocol !== 'mixed'
      ? summary.protocol
      : 'jsonschemabench'
  ) as Protocol;
  const out = (list as { record_id: string; formats: string[] }[])
    .slice(0, 20)
    .map((u) => `warning: ${u.record_id}: ${unsatisfiableWarning(u.formats, protocol)}`);
  if (total > out.length) out.push(`... and ${total - out.length} more schemas with such formats`);
  return out;
}

/** What `sob score` says of a file of benchmark records (no answers in it). */
export function notAnswersLine(file: string): string {
  return `${file}: these are benchmark records, not model answers: did you mean \`sob eval --benchmark ${file}\`? (sob score reads the answers a model gave: responses.jsonl of sob run, or response files)`;
}

/**
 * Whether a JSONL file holds records and no answer at all: no line has a `candidate_response`
 * (or `raw_response`) and some line is a benchmark record or a flat row. Streamed, and over at
 * the first answer (a response file's first line, almost always).
 */
export async function holdsNoAnswers(file: string): Promise<boolean> {
  const { createReadStream, statSync } = await import('node:fs');
  if (!file.endsWith('.jsonl') || !statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
  const { createInterface } = await import('node:readline');
  const { isFlatRow } = await import('../core/record-checks.ts');
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let records = 0;
  try {
    for await (const line of lines) {
      if (line.includes('"candidate_response"') || line.includes('"raw_response"')) return false;
      if (line.trim() === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        continue; // the scorer names a line that is not JSON
      }
      const rec = v as { input?: unknown; output?: unknown };
      if (
        isFlatRow(v) ||
        (rec && typeof rec === 'object' && rec.input !== undefined && rec.output !== undefined)
      )
        records++;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return records > 0;
}

/** `--fail-under` on a scored file: the seven metrics (Overall and coverage are leaderboard figures). */
export const SCORED_GATE_METRICS = Object.entries(GATE_METRICS)
  .filter(([, v]) => v.field !== null)
  .map(([k]) => k as GateMetric);

/** A summary's weighted means by gate metric name. */
function scoredValues(summary: SummaryOut): Partial<Record<GateMetric, number | null>> {
  const s = summary.summary;
  return Object.fromEntries(
    SCORED_GATE_METRICS.map((m) => [m, s?.overall_weighted.metrics[GATE_METRICS[m].field!]?.mean ?? null]),
  );
}
