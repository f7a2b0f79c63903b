/** `sob score`: score response files (or folders of them) into the reference's evaluation layout. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import type { Modality } from '../core/record.ts';
import { LENIENT_SHOWN, lenientShown } from '../report/lenient.ts';
import { prepareLenientRun } from '../scoring/lenient-output.ts';
import { defaultOutDir, expandInputs, type ScoreTarget, scoreFiles } from '../scoring/score-files.ts';
import { choiceOption, intOption, log, modalityOption } from './common.ts';

interface ScoreFlags {
  modality?: Modality;
  profile: 'sob' | 'strict';
  out?: string;
  bootstrapSamples: number;
  seed: number;
  topKErrors: number;
  jobs?: number;
  recordTimeoutMs: number;
  assertFormats?: boolean;
  match?: string;
  matchJudge?: string;
  baseUrl: string[];
  matchCache?: string;
  judgeConcurrency?: number;
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

export function registerScore(program: Command): void {
  program
    .command('score')
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
    .option(
      '--profile <p>',
      'sob (parity with the published leaderboard) | strict',
      choiceOption(['sob', 'strict'] as const),
      'sob',
    )
    .option('--assert-formats', 'strict profile: assert `format` (date, email, uri, ...)')
    .option(
      '--out <dir>',
      'output root: writes <out>/<modality>/<model>/eval_records.jsonl and eval_summary.json',
      undefined,
    )
    .option(
      '--bootstrap-samples <n>',
      'bootstrap resamples for the 95% intervals',
      intOption('--bootstrap-samples'),
      1000,
    )
    .option('--seed <n>', 'bootstrap seed (the weighted summary uses seed + 1)', intOption('--seed'), 42)
    .option('--top-k-errors <n>', 'most-missed paths kept in error_analysis', intOption('--top-k-errors'), 20)
    .option('--jobs <n>', 'worker threads (default: one per core)', intOption('--jobs', 1))
    .option(
      '--record-timeout-ms <n>',
      'time budget per record; a record over it is reported, not hung on',
      intOption('--record-timeout-ms', 1),
      20000,
    )
    .option(
      '--match <policy>',
      'lenient matching beside the seven metrics: "default" or a policy file (JSON or YAML)',
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

A line that is not JSON is counted (malformed_jsonl_line_count) and skipped.

--match adds, per row, lenient_value_accuracy, lenient_faithfulness, field_precision,
field_recall, field_f1, matcher_counts and lenient_leaves (the seven metrics stay as they are),
writes lenient_records.jsonl beside the rows (each leaf not accepted by exact comparison in
place: its matcher, who accepted it, the verdict; each alignment that moved an item), and a
"lenient" block in eval_summary.json with bootstrap intervals (own generators: seed + 100 and
+ 101). With --match-judge, only pairs the deterministic matchers leave unsettled are asked,
each once across files and reruns (--match-cache); an unreadable answer is unscored (the leaf
leaves the denominators), a failed request leaves the pair pending (not accepted).`,
    )
    .action(async (inputs: string[], flags: ScoreFlags) => {
      if (flags.matchJudge && !flags.match)
        throw new UserError('--match-judge needs --match (default or a policy file)', 2);
      if ((flags.baseUrl.length > 0 || flags.matchCache || flags.judgeConcurrency) && !flags.matchJudge)
        throw new UserError('--base-url, --match-cache and --judge-concurrency go with --match-judge', 2);
      if (flags.assertFormats && flags.profile !== 'strict') {
        throw new UserError(
          '--assert-formats needs --profile strict (the sob profile never asserts formats)',
          2,
        );
      }
      // A run directory (manifest.json + responses.jsonl) is scored into its own evaluation/.
      const { runDirTargets } = await import('../runner/run-dir.ts');
      const targets: ScoreTarget[] = [];
      const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
      const addRun = (run: ScoreTarget[]) =>
        targets.push(...run.map((t) => (flags.out ? { file: t.file, modelDir: t.modelDir } : t)));
      for (const input of inputs) {
        const run = isDir(input) ? runDirTargets(input) : null;
        if (run) {
          addRun(run);
          continue;
        }
        // A folder of run directories (e.g. runs/): each of them.
        const runs =
          isDir(input) && !readdirSync(input).some((f) => f.endsWith('.jsonl'))
            ? readdirSync(input)
                .sort()
                .map((d) => (isDir(join(input, d)) ? runDirTargets(join(input, d)) : null))
                .filter((r): r is NonNullable<typeof r> => r !== null)
            : [];
        if (runs.length > 0) for (const r of runs) addRun(r);
        else targets.push(...expandInputs([input]).map((file) => ({ file })));
      }
      const files = targets.map((t) => t.file);
      const outDir = flags.out ?? defaultOutDir();
      const started = Date.now();
      log(
        `scoring ${files.length} file${files.length === 1 ? '' : 's'} -> ${targets.every((t) => t.outDir) ? "each run directory's evaluation/" : outDir}`,
      );
      let done = 0;
      const match = flags.match
        ? await prepareLenientRun({
            policy: flags.match,
            judge: flags.matchJudge,
            baseUrls: flags.baseUrl,
            cacheDir: flags.matchCache ?? join('runs', '.judge-cache'),
            concurrency: flags.judgeConcurrency,
            profile: flags.profile,
            log,
          })
        : undefined;
      const results = await scoreFiles(targets, {
        outDir,
        modality: flags.modality,
        summary: {
          bootstrapSamples: flags.bootstrapSamples,
          seed: flags.seed,
          topKErrors: flags.topKErrors,
        },
        jobs: flags.jobs,
        recordTimeoutMs: flags.recordTimeoutMs,
        profile: { profile: flags.profile, assertFormats: flags.assertFormats === true },
        match,
        log,
      });
      const header = ['file', 'source', 'n', ...SHOWN.map(([, h]) => h), ...(match ? LENIENT_SHOWN : [])];
      const rows: string[][] = [];
      let failures = 0;
      for (const [i, r] of results.entries()) {
        done++;
        if (r.error) {
          failures++;
          log(`sob: ${r.error}`);
        }
        for (const o of r.outputs) {
          const s = o.summary.summary as { overall_weighted: { metrics: Record<string, { mean: number }> } };
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
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
      const fmt = (cs: string[]) =>
        cs.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
      if (rows.length > 0) process.stdout.write(`${[fmt(header), ...rows.map(fmt)].join('\n')}\n`);
      log(
        `scored ${done - failures}/${files.length} files in ${((Date.now() - started) / 1000).toFixed(2)} s (weighted means shown)`,
      );
      if (match?.judge) {
        log(match.judge.summaryLine());
        if (match.judge.fatal) {
          log(`sob: judge ${match.judge.id}: ${match.judge.fatal}`);
          failures++;
        }
      }
      if (failures > 0) process.exitCode = 1;
    });
}
