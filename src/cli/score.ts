/** `sob score`: score response files (or folders of them) into the reference's evaluation layout. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { SCORED_GATE_METRICS, scoreTargets } from '../app/score.ts';
import { UserError } from '../core/errors.ts';
import type { Modality } from '../core/record.ts';
import { PROTOCOLS, type Protocol } from '../core/validator-protocols.ts';
import {
  choiceOption,
  fieldMapOf,
  intOption,
  modalityOption,
  recordCheckOptions,
  refuseSobPoisson,
  type ScoreOptionFlags,
  scoreOptions,
} from './common.ts';

import { type GateFlags, gateOptions, parseGates, refuseFieldGatesWithoutFields } from './gates.ts';

interface ScoreFlags extends ScoreOptionFlags, GateFlags {
  modality?: Modality;
  benchmark?: string;
  out?: string;
  skipInvalid?: boolean;
  allowInvalidGroundTruth?: boolean;
  map?: string;
  topKErrors: number;
  jobs?: number;
  recordTimeoutMs: number;
  assertFormats?: boolean;
  matchJudge?: string;
  baseUrl: string[];
  matchCache?: string;
  judgeConcurrency?: number;
  judgeTimeout?: number;
  protocol?: Protocol;
  remote: string[];
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
      '--protocol <name>',
      "how schema records' schemas are read: jsonschemabench (the paper's Draft 2020-12 validation) | dialect (each schema's own $schema draft); default: jsonschemabench for records built from JSONSchemaBench, dialect for any other; docs/compliance-protocols.md",
      choiceOption(PROTOCOLS),
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
Schema records are validated by a protocol that follows the data: records built from
JSONSchemaBench (sob build jsonschemabench) by jsonschemabench, which validates every schema as
its harness does (Draft 2020-12 meta-validation, then Draft 2020-12 with Python jsonschema's
format checks, ipv4/ipv6/uuid failing every value; a $ref that resolves nowhere fails only the
answers that reach it); any other schema record (sob build schemas, your own rows) by dialect,
each schema in the draft its $schema names (draft-07 when none). --protocol chooses one for all.
A stderr line, the summary's "protocol" and "protocol_reason", the compliance leaderboard and the
report say which and why. See docs/compliance-protocols.md.

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
      refuseFieldGatesWithoutFields(gates, flags.fields);
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
      refuseSobPoisson(flags);
      if (flags.map !== undefined && flags.benchmark === undefined)
        throw new UserError('--map renames the columns of your own rows: it goes with --benchmark <rows>', 2);
      const remotes = flags.remote.map(remoteFolder);
      await scoreTargets({
        inputs,
        gates,
        profile: flags.profile,
        assertFormats: flags.assertFormats,
        protocol: flags.protocol,
        remotes,
        modality: flags.modality,
        benchmark: flags.benchmark,
        out: flags.out,
        skipInvalid: flags.skipInvalid,
        map: await fieldMapOf(flags.map),
        allowInvalidGroundTruth: flags.allowInvalidGroundTruth,
        bootstrapSamples: flags.bootstrapSamples,
        bootstrapMethod: flags.bootstrapMethod,
        seed: flags.seed,
        topKErrors: flags.topKErrors,
        jobs: flags.jobs,
        recordTimeoutMs: flags.recordTimeoutMs,
        match: flags.match,
        scorers: flags.scorer,
        matchJudge: flags.matchJudge,
        baseUrl: flags.baseUrl,
        matchCache: flags.matchCache,
        judgeConcurrency: flags.judgeConcurrency,
        judgeTimeout: flags.judgeTimeout,
        fields: flags.fields,
      });
    });
}
