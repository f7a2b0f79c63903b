/** `sob score`: score response files (or folders of them) into the reference's evaluation layout. */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { GATE_METRICS, type GateMetric } from '../../metrics/gates.ts';
import { UserError } from '../core/errors.ts';
import type { EvalSummaryOut, SummaryOut } from '../core/formats/eval-summary.ts';
import type { Modality } from '../core/record.ts';
import { PROTOCOLS, type Protocol } from '../core/validator-protocols.ts';
import { complianceScoreLine } from '../report/compliance.ts';
import { LENIENT_SHOWN, lenientShown } from '../report/lenient.ts';
import type { BenchmarkRef } from '../scoring/benchmark.ts';
import { runBenchmarkOf, runsNamedBy } from '../scoring/run-targets.ts';
import { defaultOutDir, expandInputs, type ScoreTarget, scoreFiles } from '../scoring/score-files.ts';
import type { ProfileOptions } from '../scoring/score-line.ts';
import {
  choiceOption,
  intOption,
  log,
  modalityOption,
  recordCheckOptions,
  type ScoreOptionFlags,
  scoreOptions,
} from './common.ts';

import { applyGates, type GateFlags, gateOptions, parseGates } from './gates.ts';

interface ScoreFlags extends ScoreOptionFlags, GateFlags {
  modality?: Modality;
  benchmark?: string;
  out?: string;
  skipInvalid?: boolean;
  allowInvalidGroundTruth?: boolean;
  topKErrors: number;
  jobs?: number;
  recordTimeoutMs: number;
  assertFormats?: boolean;
  matchJudge?: string;
  baseUrl: string[];
  matchCache?: string;
  judgeConcurrency?: number;
  judgeTimeout?: number;
  protocol: Protocol;
  remote: string[];
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
  flags: { skipInvalid?: boolean; allowInvalidGroundTruth?: boolean },
): Promise<BenchmarkRef> {
  const { checkBenchmark, enforceCheck } = await import('../core/benchmark-records.ts');
  const { resolveBenchmark } = await import('../runner/run.ts');
  const file = resolve(resolveBenchmark(path));
  const check = await checkBenchmark(file, { allowInvalidGroundTruth: flags.allowInvalidGroundTruth });
  enforceCheck(check, { skipInvalid: flags.skipInvalid, log, what: 'was scored' });
  return { path: file, exclude: check.rejected.map((r) => r.line) };
}

/** `--remote <uri-prefix>=<folder>`: the folder must exist. */
function remoteFolder(v: string): { base: string; dir: string } {
  const i = v.indexOf('=');
  if (i <= 0 || i === v.length - 1)
    throw new UserError(
      `--remote ${v}: expected <uri-prefix>=<folder>, e.g. http://localhost:1234/=remotes`,
      2,
    );
  const dir = resolve(v.slice(i + 1));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`--remote ${v}: ${dir} is not a folder`, 2);
  return { base: v.slice(0, i), dir };
}

export function registerScore(program: Command): void {
  const cmd = program.command('score');
  scoreOptions(
    cmd,
    "sob (parity with the published leaderboard) | strict (the reference's defects fixed); default: strict for the answers of a sob run (its directory or its responses.jsonl), sob for other response files",
  );
  recordCheckOptions(cmd);
  cmd
    .description('score model responses: per-record rows and a summary with bootstrap intervals per file')
    .argument(
      '<file-or-dir...>',
      'response JSONL files, folders of them (every *.jsonl), or run directories (sob run)',
    )
    .option(
      '--modality <m>',
      "text | image | audio (default: each record's metadata.source, else the file name)",
      modalityOption,
    )
    .option('--assert-formats', 'strict profile: assert `format` (date, email, uri, ...)')
    .option(
      '--benchmark <records.jsonl>',
      "the benchmark the answers belong to: ground truths, schemas and weights come from it, and answers it lacks or records without an answer are reported (a run directory's manifest names its own)",
    )
    .option(
      '--out <dir>',
      'output root: writes <out>/<modality>/<model>/eval_records.jsonl and eval_summary.json',
      undefined,
    )
    .option('--top-k-errors <n>', 'most-missed paths kept in error_analysis', intOption('--top-k-errors'), 20)
    .option('--jobs <n>', 'worker threads (default: one per core)', intOption('--jobs', 1))
    .option(
      '--record-timeout-ms <n>',
      'time budget per record; a record over it is reported, not hung on',
      intOption('--record-timeout-ms', 1),
      20000,
    )
    .option(
      '--protocol <name>',
      "how schema records' schemas are read: jsonschemabench (the paper's Draft 2020-12 validation) | dialect (each schema's own $schema draft); docs/compliance-protocols.md",
      choiceOption(PROTOCOLS),
      'jsonschemabench' as Protocol,
    )
    .option(
      '--remote <uri-prefix=folder>',
      'schema records: resolve remote $refs under this URI prefix from files in this folder (repeatable; never the network), e.g. http://localhost:1234/=remotes',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option(
      '--match-judge <provider:model>',
      'with --match: ask this model "same meaning?" for leaf pairs the matchers leave unsettled',
    )
    .option(
      '--base-url <url>',
      "the judge's endpoint (OpenAI-compatible; repeatable)",
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--match-cache <dir>', "the judge's answers, one file per pair (default runs/.judge-cache)")
    .option(
      '--judge-concurrency <n>',
      'judge requests in flight (default 4)',
      intOption('--judge-concurrency', 1),
    )
    .option(
      '--judge-timeout <seconds>',
      "the judge's deadline for the whole run: past it nothing more is asked and the pairs without a verdict stay pending (exit 1); default: none",
      intOption('--judge-timeout', 1),
    );
  gateOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  sob score examples/responses/response_example-model.jsonl
  sob score ../shared/data/sob/images_responses --out runs/evaluation
  sob score response_x.jsonl --modality image --bootstrap-samples 0
  sob score runs/<run-id>          # a run directory: writes runs/<run-id>/evaluation/...
  sob score ../shared/data/sob/images_responses --match default
  sob score responses.jsonl --match policy.yaml --match-judge openai:gpt-4.1-mini

Profiles: response files (the SOB layout) are scored with the sob profile, the reference's
numbers quirks included (each row names, in explanation.sob_quirks, the leaves a quirk decided);
run directories (your own benchmark) with strict, the reference's defects fixed. --profile
chooses for every input; the summary's "profile" key and a stderr line say which scored.

A line that is not JSON is counted (malformed_jsonl_line_count) and skipped.

Schema records (metadata.source "schema": sob build jsonschemabench / schemas / probes) are
scored on the compliance track into <out>/schema/<model>/: each row's compliance block (valid,
every violation with instance path, schema path and keyword, partial validity) and, in
eval_summary.json, "compliance": declared coverage, empirical coverage and compliance with 95%
intervals, per dataset (metadata.source_category) and overall, timings' medians and p90. See
them with: sob leaderboard <out> --track compliance. With --profile strict, rows of the SOB
sources carry the compliance block too.
Schema records are validated by --protocol: jsonschemabench (default) validates every schema as
JSONSchemaBench does (Draft 2020-12 meta-validation, then Draft 2020-12 with Python jsonschema's
format checks; a $ref that resolves nowhere fails only the answers that reach it); dialect reads
each schema in the draft its $schema names (draft-07 when none). The summary's "protocol" key
and the compliance leaderboard say which. See docs/compliance-protocols.md.

--match adds, per row, lenient_value_accuracy, lenient_faithfulness, field_precision,
field_recall, field_f1, matcher_counts and lenient_leaves (the seven metrics stay as they are),
writes lenient_records.jsonl beside the rows (each leaf not accepted by exact comparison in
place: its matcher, who accepted it, the verdict; each alignment that moved an item), and a
"lenient" block in eval_summary.json with bootstrap intervals (own generators: seed + 100 and
+ 101). With --match-judge, only pairs the deterministic matchers leave unsettled are asked,
each once across files and reruns (--match-cache); an unreadable answer is unscored (the leaf
leaves the denominators), a failed request leaves the pair pending (not accepted). Schema
records (the compliance track) are not scored leniently.`,
    )
    .action(async (inputs: string[], flags: ScoreFlags) => {
      const gates = parseGates(flags, SCORED_GATE_METRICS);
      if (flags.matchJudge && !flags.match)
        throw new UserError('--match-judge needs --match (default or a policy file)', 2);
      if (
        (flags.baseUrl.length > 0 || flags.matchCache || flags.judgeConcurrency || flags.judgeTimeout) &&
        !flags.matchJudge
      )
        throw new UserError(
          '--base-url, --match-cache, --judge-concurrency and --judge-timeout go with --match-judge',
          2,
        );
      if (flags.assertFormats && flags.profile === 'sob') {
        throw new UserError(
          '--assert-formats needs --profile strict (the sob profile never asserts formats)',
          2,
        );
      }
      // The profile follows the answers, never how their path is written: the answers of a sob
      // run (its directory, or the responses.jsonl in it) are the user's own benchmark, strict,
      // the reference's defects fixed; response files in the SOB layout get the sob profile,
      // where parity is the point. Each profile carries its reason into the summary.
      const remotes = flags.remote.map(remoteFolder);
      const profileOf = (p: 'sob' | 'strict', reason: string): ProfileOptions => ({
        profile: p,
        assertFormats: p === 'strict' && flags.assertFormats === true,
        reason,
        protocol: flags.protocol,
        remotes,
      });
      const chosen = flags.profile ? profileOf(flags.profile, 'as asked') : undefined;
      const runProfile =
        chosen ??
        profileOf(
          'strict',
          "the default for a run's answers (its directory or its responses.jsonl): your own benchmark, the reference's defects fixed; --profile sob for parity",
        );
      const fileProfile =
        chosen ??
        (flags.assertFormats
          ? profileOf('strict', '--assert-formats is a strict-profile option')
          : profileOf(
              'sob',
              'the default for response files: parity with the SOB reference; --profile strict fixes its quirks',
            ));
      // A run directory (manifest.json + responses.jsonl) is scored into its own evaluation/.
      const targets: ScoreTarget[] = [];
      // Flat rows a user wrote become records first (runs/benchmarks/<name>-<hash>), as sob run does.
      let benchmarkPath = flags.benchmark ? resolve(flags.benchmark) : undefined;
      if (benchmarkPath) {
        const { userBenchmark, userBenchmarkDir } = await import('../../sources/user-benchmark.ts');
        benchmarkPath = (
          await userBenchmark(benchmarkPath, userBenchmarkDir(benchmarkPath), {
            log,
            skipInvalid: flags.skipInvalid,
          })
        ).path;
      }
      const benchmark = benchmarkPath ? await checkedBenchmark(benchmarkPath, flags) : undefined;
      for (const input of inputs) {
        const runs = runsNamedBy(input);
        if (runs)
          targets.push(
            ...runs.map((t) => ({
              ...(flags.out ? { file: t.file, modelDir: t.modelDir } : t),
              profile: runProfile,
              benchmark: benchmark ?? runBenchmarkOf(dirname(t.file), log),
            })),
          );
        else targets.push(...expandInputs([input]).map((file) => ({ file, profile: fileProfile })));
      }
      const files = targets.map((t) => t.file);
      const outDir = flags.out ?? defaultOutDir();
      const started = Date.now();
      log(
        `scoring ${files.length} file${files.length === 1 ? '' : 's'} -> ${targets.every((t) => t.outDir) ? "each run directory's evaluation/" : outDir}`,
      );
      log(profileLine(targets));
      let done = 0;
      const match = flags.match
        ? await (await import('../scoring/lenient-run.ts')).prepareLenientRun({
            policy: flags.match,
            judge: flags.matchJudge,
            baseUrls: flags.baseUrl,
            cacheDir: flags.matchCache ?? join('runs', '.judge-cache'),
            concurrency: flags.judgeConcurrency,
            judgeDeadlineMs: flags.judgeTimeout === undefined ? undefined : flags.judgeTimeout * 1000,
            log,
          })
        : undefined;
      const results = await scoreFiles(targets, {
        outDir,
        benchmark,
        modality: flags.modality,
        summary: {
          bootstrapSamples: flags.bootstrapSamples,
          seed: flags.seed,
          topKErrors: flags.topKErrors,
        },
        jobs: flags.jobs,
        recordTimeoutMs: flags.recordTimeoutMs,
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
      await applyGates(gates, {
        command: `sob score ${inputs.join(' ')}`,
        subjects: gated.map((o) => ({ name: subjectOf(o), values: scoredValues(o.summary) })),
        pairs: (baseline) => {
          const pairs = gated.map((o) => folderPair(subjectOf(o), o.dir, baseline));
          return {
            pairs: pairs.filter((p) => p !== null),
            unmatched: gated.filter((_, i) => pairs[i] === null).map(subjectOf),
          };
        },
        seed: flags.seed,
      });
    });
}

/** `--fail-under` on a scored file: the seven metrics (Overall and coverage are leaderboard figures). */
const SCORED_GATE_METRICS = Object.entries(GATE_METRICS)
  .filter(([, v]) => v.field !== null)
  .map(([k]) => k as GateMetric);

/** A summary's weighted means by gate metric name. */
function scoredValues(summary: SummaryOut): Partial<Record<GateMetric, number | null>> {
  const s = summary.summary;
  return Object.fromEntries(
    SCORED_GATE_METRICS.map((m) => [m, s?.overall_weighted.metrics[GATE_METRICS[m].field!]?.mean ?? null]),
  );
}
