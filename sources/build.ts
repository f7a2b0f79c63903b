/**
 * `sob build`: raw sources -> checked benchmark records (docs/design.md "The pipeline", first arrow).
 *
 * The kind names a loader (sources/registry.ts, one file each behind sources/types.ts). An item
 * loader's source items are joined with an annotations file (per source id: a question, a JSON
 * schema, the ground truth, optionally the schema complexity; sources/annotations.ts); a record
 * loader produces records itself. Every candidate goes through the record check (sources/checks.ts,
 * in the loader's check mode). Accepted records are written one line at a time as they pass (so
 * a bad record never costs the good ones), rejected ones go to `rejected.jsonl` beside the output
 * with their reasons, and `manifest.json` beside them counts records and weight per source.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { acquireLock, refuseNonFile, refuseSymlink, removeStaleTemps } from '../src/core/files.ts';
import { IdSet } from '../src/core/id-hash.ts';
import { readJsonl } from '../src/core/jsonl.ts';
import { dumpsPy, type PyValue, toPlain } from '../src/core/pyjson.ts';
import { CheckInterrupted, RecordChecker } from '../src/core/record-checker.ts';
import { joinAnnotations, loadAnnotations } from './annotations.ts';
import { type CheckResult, withSeenIds } from './checks.ts';
import {
  type BenchmarkManifest,
  makeManifest,
  manifestPathFor,
  readManifest,
  totalsOfFile,
  type Uncounted,
  writeManifest,
} from './manifest.ts';
import { type LineSink, openLineSink, repairTornTail } from './output.ts';
import { checkBuildRequest, LOADER_KINDS, loaderEntry, loadLoader } from './registry.ts';
import type { Candidate, CheckMode, LoaderOptions, LoadResult, Problem, RecordLoadResult } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Writing a record

const MARKS = {
  json_schema: '\u0000sob-eval:json_schema\u0000',
  ground_truth: '\u0000sob-eval:ground_truth\u0000',
} as const;

/** The record as one JSON line, its schema and ground truth written as their source wrote them. */
export function recordLine(c: Candidate): string {
  const gt = c.lossless?.ground_truth;
  const schema = c.lossless?.json_schema;
  if (gt === undefined && schema === undefined) return JSON.stringify(c.record);
  const rec = c.record as { input: Record<string, unknown>; output: Record<string, unknown> };
  const text = JSON.stringify({
    ...rec,
    input: schema === undefined ? rec.input : { ...rec.input, json_schema: MARKS.json_schema },
    output: gt === undefined ? rec.output : { ...rec.output, ground_truth: MARKS.ground_truth },
  });
  const dump = (v: PyValue) => dumpsPy(v, { ensureAscii: false, separators: [',', ':'] });
  let line = text;
  if (schema !== undefined) line = line.replace(JSON.stringify(MARKS.json_schema), () => dump(schema));
  if (gt !== undefined) line = line.replace(JSON.stringify(MARKS.ground_truth), () => dump(gt));
  return line;
}

// ---------------------------------------------------------------------------------------------
// Source items for other commands (sob author drafts annotations from the same inputs)

/** Loads the source items of an item kind's input, as `sob build <kind>` reads it. */
export async function loadSourceItems(
  kind: string,
  input: string,
  opts: LoaderOptions & { log?: (line: string) => void } = {},
): Promise<LoadResult & { source: string }> {
  const entry = loaderEntry(kind);
  if (!entry) throw new UserError(`unknown source kind "${kind}": use one of ${LOADER_KINDS.join(', ')}`, 2);
  const loader = await loadLoader(entry);
  if (loader.produces !== 'items') throw new UserError(`${kind} inputs are records, not source items`, 2);
  if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
  const loaded = await loader.loadItems(input, { log: opts.log ?? (() => {}), options: opts });
  return { ...loaded, source: loader.source };
}

// ---------------------------------------------------------------------------------------------
// The build

export interface BuildOptions extends LoaderOptions {
  /** A kind of sources/registry.ts. */
  kind: string;
  /** The kind's input (a file, a folder, an `hf:` spec); some kinds take none. */
  input?: string;
  out: string;
  annotations?: string;
  /** Add to an existing records file (ids must stay unique across it); the manifest covers all of it. */
  append?: boolean;
  log?: (line: string) => void;
  /** Warnings printed at most this many times (all are returned). */
  maxWarningsLogged?: number;
  /** Each record's check budget (`--record-timeout-ms`; default the scorer's, 20 s). */
  recordTimeoutMs?: number;
  /** Ctrl-C / SIGTERM: the check stops and nothing is written (exit 130). */
  signal?: AbortSignal;
}

/** Candidates handed to the record checker ahead of the one whose verdict is awaited. */
const CHECK_AHEAD = 64;

export interface BuildWarning {
  record_id: string;
  warning: string;
}

export interface BuildResult {
  out: string;
  rejectedFile: string;
  manifestFile: string;
  written: number;
  rejected: number;
  /** The first 10,000 warnings (a build of any size holds no more). */
  warnings: BuildWarning[];
  /** All of them. */
  warningCount: number;
  manifest: BenchmarkManifest;
  /** Per source item: its id and context length in tokens (AMI: tokenizer `ws-punct-v1`). */
  contexts: { id: string; tokens?: number; chars: number }[];
  /** Records the file held before (with --append). */
  before: number;
  /** Records written though their ground truth fails their schema (kept with a warning). */
  groundTruthInvalid: number;
  /** Records whose schema was widened to admit their gold (ExtractBench, `--gold-invalid widen`). */
  schemaWidened: number;
  /** Lines of the records file the manifest does not count, by reason. */
  uncounted: Uncounted;
}

/** The ids a records file holds, as 64-bit hashes (`IdSet`): a million ids in 24 MB, not their text. */
async function existingIds(file: string): Promise<IdSet> {
  const ids = new IdSet();
  if (!existsSync(file)) return ids;
  for await (const line of readJsonl(file)) {
    if (!line.ok) continue;
    const rec = toPlain(line.value) as { metadata?: { record_id?: unknown } };
    if (typeof rec?.metadata?.record_id === 'string') ids.add(rec.metadata.record_id);
  }
  return ids;
}

interface Loaded {
  candidates: Candidate[];
  problems: Problem[];
  /** A record loader's rows one at a time, after `candidates` (see RecordLoadResult). */
  stream?: AsyncIterable<{ candidate: Candidate } | { problem: Problem }>;
  contexts: BuildResult['contexts'];
  checks: CheckMode;
  /** The loader's own warnings (a meeting without its recording). */
  warnings?: { id: string; warning: string }[];
  checkOptions?: RecordLoadResult['checkOptions'];
  manifest?: Record<string, unknown>;
}

/** The candidates of a build: the loader's records, or its items joined with the annotations. */
async function loadCandidates(opts: BuildOptions, log: (line: string) => void): Promise<Loaded> {
  const { kind } = opts;
  const entry = checkBuildRequest(kind, opts.input, opts.annotations);
  if (opts.input !== undefined && !opts.input.startsWith('hf:') && !existsSync(opts.input))
    throw new UserError(`no such file or folder: ${opts.input}`);

  const loader = await loadLoader(entry);
  if (loader.produces === 'records') {
    const r = await loader.loadRecords(opts.input, { log, options: opts });
    return { ...r, contexts: [], checks: loader.checks };
  }
  const { annotations, problems } = loadAnnotations(opts.annotations!);
  const only = new Set(annotations.map((a) => a.annotation.source_id));
  const loaded = await loader.loadItems(opts.input!, { log, only, options: opts });
  problems.push(...loaded.problems);
  const contexts = loaded.items.map((it) => ({
    id: it.id,
    tokens: typeof it.metadata.context_tokens === 'number' ? it.metadata.context_tokens : undefined,
    chars: it.context.length,
  }));
  log(`loaded ${loaded.items.length} ${kind} source items and ${annotations.length} annotations`);
  const rejectedItems = new Set(
    loaded.problems.map((p) => p.source_id).filter((id): id is string => id !== undefined),
  );
  const joined = joinAnnotations(kind, loader.source, loaded.items, annotations, rejectedItems);
  problems.push(...joined.problems);
  return {
    candidates: joined.candidates,
    problems,
    contexts,
    checks: 'extraction',
    warnings: loaded.warnings,
  };
}

export async function buildBenchmark(opts: BuildOptions): Promise<BuildResult> {
  const log = opts.log ?? (() => {});
  const out = resolve(opts.out);
  // A device, FIFO or socket (`--out /dev/null`) is refused before anything is read or written
  // beside it (the lock, manifest.json and rejected.jsonl would go into its folder).
  refuseNonFile(out, 'records file');
  // 1. Candidates
  const loaded = await loadCandidates(opts, log);

  // 2. Checks and output, record by record. One build at a time per benchmark folder.
  const dir = dirname(out);
  mkdirSync(dir, { recursive: true });
  const lock = acquireLock(dir, 'benchmark folder');
  try {
    const stale = removeStaleTemps(dir);
    if (stale > 0) log(`removed ${stale} temp files left by an interrupted build in ${dir}`);
    return await writeOutputs(opts, out, loaded, log);
  } finally {
    lock.release();
  }
}

async function writeOutputs(
  opts: BuildOptions,
  out: string,
  loaded: Loaded,
  log: (line: string) => void,
): Promise<BuildResult> {
  const { problems, candidates, contexts, checks, stream, checkOptions } = loaded;
  const rejectedFile = join(dirname(out), 'rejected.jsonl');
  const manifestFile = manifestPathFor(out);
  // Refused before anything is read or written: a link must not decide where output goes.
  if (opts.append) {
    refuseSymlink(out, 'records file');
    refuseSymlink(rejectedFile, 'rejected file');
    const torn = existsSync(out) ? repairTornTail(out) : 0;
    if (torn > 0) log(`dropped a torn last line (${torn} bytes) from ${out}, left by an interrupted write`);
  }
  // The ids written so far, as 64-bit hashes (a Set of a million ids' text held 85 MB at build).
  const seenIds = opts.append ? await existingIds(out) : new IdSet();
  const before = opts.append ? (await totalsOfFile(out)).records : 0;
  const records = openLineSink(out, opts.append === true);
  let rejects: LineSink;
  try {
    rejects = openLineSink(rejectedFile, opts.append === true);
  } catch (e) {
    records.abort();
    throw e;
  }
  let written = 0;
  let rejected = 0;
  /** Records of this build whose schema_complexity was derived from the schema. */
  let derived = 0;
  const warnings: BuildWarning[] = [];
  let warningCount = 0;
  /** Records kept though their ground truth fails their schema (a loader's checkOptions). */
  let invalidGold = 0;
  /** Of those, records whose schema was widened to admit their gold (`metadata.schema_widened`). */
  let widenedSchemas = 0;
  const maxLogged = opts.maxWarningsLogged ?? 50;
  const warn = (record_id: string, w: string) => {
    warningCount++;
    if (warnings.length < 10_000) warnings.push({ record_id, warning: w });
    if (warningCount <= maxLogged) log(`warning: ${record_id}: ${w}`);
  };
  const reject = (p: Problem) => {
    rejected++;
    let line: string;
    try {
      line = JSON.stringify({
        origin: p.origin,
        record_id: p.record_id ?? null,
        reasons: p.reasons,
        record: p.record,
      });
    } catch (e) {
      // A record nested too deeply for the JSON writer (a hostile schema): its reasons, without it.
      if (!(e instanceof RangeError)) throw e;
      const deep = `nested too deeply to write as JSON (${e.message})`;
      if (!p.reasons.some((r) => r.startsWith('nested too deeply')))
        p = { ...p, reasons: [...p.reasons, deep] };
      line = JSON.stringify({
        origin: p.origin,
        record_id: p.record_id ?? null,
        reasons: p.reasons,
        record: null,
      });
    }
    rejects.write(`${line}\n`);
    // One line: the record id (else where it came from), the reasons, then where it came from.
    log(`rejected ${p.record_id ?? p.origin}: ${p.reasons.join('; ')}${p.record_id ? ` (${p.origin})` : ''}`);
  };
  let after: Awaited<ReturnType<typeof totalsOfFile>>;
  const checker = new RecordChecker({ timeoutMs: opts.recordTimeoutMs, signal: opts.signal });
  try {
    for (const p of problems) reject(p);
    for (const w of loaded.warnings ?? []) warn(w.id, w.warning);
    // Each candidate checked on the checker's worker within the record budget (it runs up to
    // CHECK_AHEAD records ahead); verdicts are taken, ids counted and lines written in order.
    // The candidates come as a list or, for JSON lines, a stream (a record at a time).
    async function* items(): AsyncGenerator<{ candidate: Candidate } | { problem: Problem }> {
      for (const candidate of candidates) yield { candidate };
      if (stream) yield* stream;
    }
    type Pending = { problem: Problem } | { c: Candidate; verdict: Promise<CheckResult> };
    const queue: Pending[] = [];
    let asked = 0;
    const source = items();
    let ended = false;
    const fill = async () => {
      while (!ended && asked < CHECK_AHEAD) {
        const next = await source.next();
        if (next.done) {
          ended = true;
          break;
        }
        const x = next.value;
        if ('problem' in x) queue.push(x);
        else {
          const verdict = checker.check(x.candidate.record, { ...checkOptions, mode: checks });
          verdict.catch(() => {});
          queue.push({ c: x.candidate, verdict });
          asked++;
        }
      }
    };
    await fill();
    while (queue.length > 0) {
      const head = queue.shift()!;
      if ('problem' in head) {
        reject(head.problem);
        continue;
      }
      asked--;
      const c = head.c;
      const res = withSeenIds(await head.verdict, seenIds);
      await fill();
      const id =
        res.record?.metadata.record_id ??
        (c.record as { metadata?: { record_id?: string } })?.metadata?.record_id;
      if (!res.ok || !res.record) {
        reject({ origin: c.origin, record_id: id, reasons: res.errors, record: c.record });
        continue;
      }
      const rec = c.record as { metadata: Record<string, unknown>; input: Record<string, unknown> };
      // Its documents, stored in the benchmark folder now that it has passed (by content hash).
      if (c.attach) {
        try {
          const list = await c.attach(dirname(out));
          if (list.length > 0) rec.input = { ...rec.input, attachments: list };
        } catch (e) {
          // Not written: a later row may still take its id.
          seenIds.delete(res.record.metadata.record_id);
          reject({
            origin: c.origin,
            record_id: id,
            reasons: [`its documents could not be stored: ${errorMessage(e)}`],
            record: c.record,
          });
          continue;
        }
      }
      const said = [...(c.warnings ?? []), ...res.warnings];
      if (said.some((w) => w.startsWith('ground truth does not validate'))) invalidGold++;
      if (Array.isArray(rec.metadata.schema_widened) && rec.metadata.schema_widened.length > 0)
        widenedSchemas++;
      for (const w of said) warn(res.record.metadata.record_id, w);
      if (rec.metadata.schema_complexity === undefined) {
        derived++;
        const { record_id, source, ...rest } = rec.metadata;
        rec.metadata = { record_id, source, schema_complexity: res.derivedComplexity, ...rest };
      }
      let line: string;
      try {
        line = recordLine(c);
      } catch (e) {
        // An untrusted value nested thousands of levels deep (a hostile schema) runs the JSON
        // writers out of stack: that record is rejected, the build goes on.
        if (!(e instanceof RangeError)) throw e;
        reject({
          origin: c.origin,
          record_id: id,
          reasons: [`nested too deeply to write as JSON (${e.message})`],
        });
        continue;
      }
      records.write(`${line}\n`);
      written++;
    }
    // 3. The totals over the whole records file, taken before it replaces the old one.
    after = await totalsOfFile(records.path);
    // Every record this build wrote has a source and a complexity, so the counts must add up.
    if (after.records !== before + written) {
      throw new UserError(
        `${out}: ${written} records written to a file that held ${before}, but it now holds ${after.records} countable records: was it changed while building?`,
      );
    }
  } catch (e) {
    records.abort();
    rejects.abort();
    if (e instanceof CheckInterrupted)
      throw new UserError(`${out}: interrupted during the record check: nothing was written`, 130);
    throw e;
  } finally {
    await checker.close();
  }
  records.commit();
  rejects.commit();
  if (warningCount > maxLogged) log(`... and ${warningCount - maxLogged} more warnings`);
  const manifest = makeManifest(after.totals, basename(out), after.uncounted);
  // Said in the manifest, so a reader knows which weights the records stated and which the tool
  // derived (an append adds to what the manifest said before).
  const derivedBefore = opts.append ? (readManifest(out)?.schema_complexity_derived ?? 0) : 0;
  if (derived + derivedBefore > 0) manifest.schema_complexity_derived = derived + derivedBefore;
  // Kept though their schema rejects them: counted, so a reader of the manifest knows.
  if (invalidGold > 0) manifest.ground_truth_invalid = invalidGold;
  if (widenedSchemas > 0) manifest.schema_widened = widenedSchemas;
  if (loaded.manifest) Object.assign(manifest, loaded.manifest);
  writeManifest(out, manifest);
  return {
    out,
    rejectedFile,
    manifestFile,
    written,
    rejected,
    warnings,
    warningCount,
    manifest,
    contexts,
    before,
    uncounted: after.uncounted,
    groundTruthInvalid: invalidGold,
    schemaWidened: widenedSchemas,
  };
}
