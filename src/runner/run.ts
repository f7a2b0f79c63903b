/**
 * `sob run`: asks one model every record of a benchmark and writes each answer the moment it
 * arrives. One scheduler owns concurrency, the per-request timeout and the only retry layer;
 * a re-run of the same command resumes (records already answered are never asked again).
 */

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Attachments, type InputMode } from '../core/attachments.ts';
import {
  type BenchmarkCheck,
  type BenchmarkItem,
  checkBenchmark,
  enforceCheck,
  recordsWithIds,
  selectRecords,
} from '../core/benchmark-records.ts';
import { mapConcurrent } from '../core/concurrency.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { acquireLock, removeStaleTemps } from '../core/files.ts';
import { errorLineText } from '../core/formats/error-line.ts';
import { type RunManifest, type RunSession, runManifestDoc } from '../core/formats/manifest.ts';
import { responseLineText } from '../core/formats/response-line.ts';
import type { IdLookup, IdSet } from '../core/id-hash.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { getField, type PyObject, type PyValue, parsePyJson, toPlain } from '../core/pyjson.ts';
import type { Source } from '../core/record.ts';
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, retrying, sleep } from '../core/retry.ts';
import { unreachableCause } from '../providers/http.ts';
import { redactSecrets } from '../providers/secrets.ts';
import {
  type DocumentLimits,
  type ErrorClass,
  FATAL,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  RETRYABLE,
} from '../providers/types.ts';
import {
  type BatchSettings,
  checkBatchesFile,
  heldByBatches,
  runBatches,
  uncollectedBatches,
} from './batch.ts';
import { cacheKey, ResponseCache } from './cache.ts';
import { warnLargeContexts } from './context-size.ts';
import {
  type DocumentDecision,
  type DocumentTools,
  type Fitted,
  fitDocuments,
  type PdfOverLimit,
} from './documents.ts';
import { documentNote, type PromptTemplate, renderPrompt, sha256 } from './prompt.ts';
import {
  AppendLog,
  ERRORS,
  MANIFEST,
  RESPONSES,
  readManifest,
  repairTail,
  sanitizeModelId,
  scanResponses,
  writeJsonAtomic,
} from './run-dir.ts';

export interface RunOptions {
  provider: Provider;
  benchmark: string;
  /** Default: runs/<run-id>, where the id is fixed by model, benchmark, prompt and settings. */
  runDir?: string;
  source?: Source;
  limit?: number;
  concurrency: number;
  constrained: boolean;
  temperature: number;
  maxTokens: number;
  timeoutMs: number;
  maxRetries: number;
  template: PromptTemplate;
  backoff?: BackoffOptions;
  /** Aborting it (Ctrl-C) stops the run cleanly: nothing half-written, status "interrupted". */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  log?: (line: string) => void;
  /** Response cache folder (--cache); answers only, never errors. Baselines and replay are not cached. */
  cacheDir?: string;
  /** Ask through the provider's batch interface (--batch). */
  batch?: BatchSettings;
  /** Contexts above this many characters are said per record before asking (0: never; default 200,000). */
  contextWarnChars?: number;
  /** The benchmark's check already made (sob eval checks once for all its models, and says it once). */
  check?: BenchmarkCheck;
  /** Go on without the records the benchmark check rejects (default: stop, exit 2, nothing asked). */
  skipInvalid?: boolean;
  /** Ask records whose ground truth fails its own schema (the reference does). */
  allowInvalidGroundTruth?: boolean;
  /** Each record's check budget (`--record-timeout-ms`; default the scorer's, 20 s). */
  recordTimeoutMs?: number;
  /**
   * `sob eval --epochs N`: which sample of each record this run is (1..N). Written on every
   * answer (`metadata.epoch`); epochs after the first are part of the run's identity and of the
   * cache key, so a resumed epoch never takes another epoch's answers.
   */
  epoch?: number;
  /**
   * JSONSchemaBench's empirical-coverage limits for schema records (`metadata.source` schema):
   * the time to the first token (grammar compilation) and from it to the end (generation). A
   * request over the first is written as a refused schema (not declared); over the second, as
   * an answer that never came (invalid). A provider that does not stream gets their sum, counted
   * as generation. Both in ms; undefined: no such limits (the request timeout only).
   */
  coverageLimits?: { compileMs: number; generationMs: number };
  /**
   * `--input`: `text` (the transcript, the default), `document` (the record's attachments
   * instead of its transcript) or `both`. Given (even `text`), it is written on every answer.
   */
  input?: InputMode;
  /** The renderer the document policy uses to downscale images and draw PDF pages (src/runner/documents.ts). */
  documentTools?: DocumentTools;
  /** A PDF over the provider's page or byte limit: sent as page images (default) or the record refused. */
  pdfOverLimit?: PdfOverLimit;
  /**
   * Limits that replace the provider's own (`--max-image-edge`, `--max-pdf-pages`): a self-hosted
   * OpenAI-compatible server (vLLM) reads smaller images or fewer pages than OpenAI does.
   */
  documentLimits?: { maxImageEdge?: number; maxPdfPages?: number };
}

/** The limits documents are held to: the provider's, with the run's own in their place where given. */
export function limitsOf(o: RunOptions): DocumentLimits | undefined {
  const base = o.provider.documentLimits;
  if (!base) return undefined;
  const own = Object.fromEntries(Object.entries(o.documentLimits ?? {}).filter(([, v]) => v !== undefined));
  return Object.keys(own).length > 0
    ? { ...base, ...own, source: `${base.source}; --max-* flags: ${JSON.stringify(own)}` }
    : base;
}

/** The mode a run asks in (`text` unless given). */
function modeOf(o: Pick<RunOptions, 'input'>): InputMode {
  return o.input ?? 'text';
}

export interface Progress {
  /** Records selected from the benchmark. */
  total: number;
  /** Answered (including those answered by earlier sessions). */
  done: number;
  /** Answered by earlier sessions. */
  resumed: number;
  /** Records that failed every attempt in this session. */
  failed: number;
  /** Failed attempts in this session (retried or not). */
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  startedAt: number;
  /** Records whose schema the provider refused (written with schema_rejected). */
  schemaRejected?: number;
  /** Said at the end of the line (e.g. a batch's state and counts). */
  note?: string;
}

export type RunStatus = 'running' | 'complete' | 'incomplete' | 'interrupted' | 'failed';

export interface RunResult {
  runDir: string;
  status: RunStatus;
  progress: Progress;
  /** The benchmark check (rejected lines, derived complexities). */
  check?: BenchmarkCheck;
}

// ---------------------------------------------------------------------------------------------

const TOOL_ROOT = pathToFileURL(`${PACKAGE_ROOT}/`);

function toolVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('package.json', TOOL_ROOT), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

function gitCommit(): string | null {
  try {
    const out = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: TOOL_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    });
    return out.toString().trim() || null;
  } catch {
    return null;
  }
}

/** A benchmark argument: a JSONL file, or a folder holding records.jsonl (or exactly one *.jsonl). */
export function resolveBenchmark(path: string): string {
  if (!existsSync(path)) throw new UserError(`no such benchmark: ${path}`);
  if (!statSync(path).isDirectory()) return path;
  if (existsSync(join(path, 'records.jsonl'))) return join(path, 'records.jsonl');
  const found = readdirSync(path).filter((f) => f.endsWith('.jsonl'));
  if (found.length === 1) return join(path, found[0]);
  throw new UserError(
    `${path}: a benchmark folder needs records.jsonl (found ${found.length} *.jsonl files)`,
  );
}

async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** A benchmark record about to be asked (read by the one loader, src/core/benchmark-records.ts). */
export type Item = BenchmarkItem;

/** The settings that decide what a model is asked; a resumed run must match them. */
function identity(o: RunOptions, benchmarkSha: string) {
  return {
    model: o.provider.id,
    benchmark_sha256: benchmarkSha,
    prompt_sha256: o.template.sha256,
    temperature: o.temperature,
    max_tokens: o.maxTokens,
    constrained: o.constrained,
    source: o.source ?? null,
    // Epoch 1 is the run a plain `sob eval` makes (the same identity): --epochs can be added later.
    ...(o.epoch !== undefined && o.epoch > 1 ? { epoch: o.epoch } : {}),
    // Text is the run it always was (the same identity); the other modes are runs of their own.
    ...(modeOf(o) !== 'text' ? { input: modeOf(o) } : {}),
  };
}

export function defaultRunId(o: RunOptions, benchmarkFile: string, benchmarkSha: string): string {
  const h = sha256(JSON.stringify(identity(o, benchmarkSha))).slice(0, 8);
  const stem = basename(benchmarkFile).replace(/\.jsonl$/i, '');
  return `${sanitizeModelId(o.provider.id)}-${sanitizeModelId(stem)}-${h}`;
}

function checkResumable(dir: string, old: Partial<RunManifest>, now: ReturnType<typeof identity>): void {
  const prev = old.identity;
  if (!prev) throw new UserError(`${join(dir, MANIFEST)}: no run identity; use another --run-dir`);
  for (const [k, v] of Object.entries(now)) {
    if (JSON.stringify(prev[k] ?? null) !== JSON.stringify(v)) {
      throw new UserError(
        `${dir} holds a run with a different ${k} (${JSON.stringify(prev[k] ?? null)}, now ${JSON.stringify(v)}): use another --run-dir`,
      );
    }
  }
}

function firstLine(s: string, max = 500): string {
  const line = s.split('\n')[0];
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

/** Any failure as a ProviderError (a timeout we fired, SDK errors the provider did not map). */
function classify(e: unknown, timedOut: boolean): ProviderError {
  if (timedOut) return new ProviderError('timeout', 'no answer within the request timeout', { cause: e });
  if (e instanceof ProviderError) return e;
  const msg = errorMessage(e);
  const why = unreachableCause(e);
  if (why) return new ProviderError('network', `${msg}: ${why}`, { cause: e, unreachable: true });
  if (/fetch failed|ECONNRESET|ECONNREFUSED|EPIPE|socket|terminated|network/i.test(msg)) {
    return new ProviderError('network', msg, { cause: e });
  }
  return new ProviderError('bad_request', msg, { cause: e });
}

/** The model's text as the reference stores it: parsed JSON when it is JSON, else the text. */
function candidateOf(text: string): PyValue {
  try {
    return parsePyJson(text);
  } catch {
    return text;
  }
}

function int(n: number | undefined): bigint | null {
  return n === undefined || !Number.isFinite(n) ? null : BigInt(Math.round(n));
}

/** A record's attachments as its input block lists them (checked by the loader). */
export function attachmentsOf(item: Item) {
  const input = item.record.get('input');
  const raw = input instanceof Map ? input.get('attachments') : undefined;
  if (raw === undefined || raw === null) return [];
  return Attachments.parse(toPlain(raw));
}

/**
 * What a record asks the model (everything but the abort signal). `docs`: the record's documents
 * as the policy fitted them (`--input document|both`); `document` leaves the transcript out.
 */
export function requestOf(
  item: Item,
  o: RunOptions,
  docs?: ProviderRequest['attachments'],
): Omit<ProviderRequest, 'signal'> {
  const input = item.record.get('input') as PyObject;
  const schema = toPlain(input.get('json_schema') ?? null) as Record<string, unknown>;
  const mode = modeOf(o);
  const transcript = input.get('context') as string;
  const context =
    mode === 'text' || !docs
      ? transcript
      : mode === 'document'
        ? documentNote(mode, docs)
        : `${transcript}\n\n${documentNote(mode, docs)}`;
  const prompt = renderPrompt(o.template, {
    context,
    question: input.get('question') as string,
    schema,
    recordId: item.id,
  });
  return {
    ...(mode !== 'text' && docs ? { attachments: docs } : {}),
    recordId: item.id,
    system: prompt.system,
    user: prompt.user,
    schema,
    constrained: o.constrained,
    temperature: o.temperature,
    maxTokens: o.maxTokens,
    groundTruth: getField(item.record.get('output'), 'ground_truth') ?? null,
  };
}

/** How an answer came: the attempt it took, where from, and (batch mode) the batch. */
export interface AnswerInfo {
  attempts: number;
  /** Total time of the answering request (ms); null for a cached or batch answer. */
  latencyMs?: number;
  cached?: boolean;
  /** The provider's batch id, when answered through a batch API. */
  batch?: string;
  /** The provider refused the record's schema in its structured-output mode. */
  schemaRejected?: ProviderError;
  /** A coverage time limit ran out (RunOptions.coverageLimits): which one, and the message. */
  coverageTimeout?: { phase: 'compile' | 'generation'; message: string };
  /** `--input document|both`: what was sent, and what the document policy changed. */
  documents?: Extract<Fitted, { ok: true }>;
}

/** The class a recorded answer is logged under (a cut or refused answer is still the answer). */
function answerClass(res: ProviderResponse): ErrorClass | undefined {
  return res.finishReason === 'length' ? 'truncated' : res.finishReason === 'refusal' ? 'refusal' : undefined;
}

/**
 * One responses.jsonl line (the reference's fields plus output.raw_response and eval_info).
 * A refused schema (HELPERS.md "Refused schemas and timings") is written once, with a null
 * candidate and raw response and `eval_info.schema_rejected: true`.
 */
function responseLine(item: Item, o: RunOptions, res: ProviderResponse | undefined, a: AnswerInfo): string {
  const metadata = new Map(item.record.get('metadata') as PyObject);
  metadata.set('model_id', o.provider.id);
  if (o.source && !metadata.has('source')) metadata.set('source', o.source);
  if (o.epoch !== undefined) metadata.set('epoch', BigInt(o.epoch));
  const output: PyObject = new Map();
  output.set('ground_truth', getField(item.record.get('output'), 'ground_truth') ?? null);
  output.set('candidate_response', res ? candidateOf(res.text) : null);
  output.set('raw_response', res ? res.text : null);
  const info: PyObject = new Map<string, PyValue>([
    ['latency_ms', a.latencyMs === undefined ? null : int(a.latencyMs)],
  ]);
  if (res?.ttftMs !== undefined) info.set('ttft_ms', roundMs(res.ttftMs));
  if (res?.tpotMs !== undefined) info.set('tpot_ms', roundMs(res.tpotMs));
  info.set('input_tokens', int(res?.inputTokens));
  info.set('output_tokens', int(res?.outputTokens));
  if (res?.inputTokensByModality)
    info.set(
      'input_tokens_by_modality',
      new Map(Object.entries(res.inputTokensByModality).map(([k, v]) => [k, int(v)] as [string, PyValue])),
    );
  if (res?.cacheReadTokens !== undefined) info.set('cache_read_tokens', int(res.cacheReadTokens));
  if (res?.cacheWriteTokens !== undefined) info.set('cache_write_tokens', int(res.cacheWriteTokens));
  info.set('attempts', BigInt(a.attempts));
  info.set('finish_reason', res ? res.finishReason : null);
  if (res?.cost !== undefined) info.set('cost', res.cost);
  if (a.batch) info.set('batch', a.batch);
  const cls = res ? answerClass(res) : undefined;
  if (cls) info.set('error_class', cls);
  if (a.schemaRejected) {
    info.set('schema_rejected', true);
    info.set('error', redactSecrets(firstLine(a.schemaRejected.message)));
  }
  if (a.coverageTimeout) {
    info.set('coverage_timeout', a.coverageTimeout.phase);
    info.set('error', a.coverageTimeout.message);
  }
  if (res?.endpoint) info.set('endpoint', res.endpoint);
  if (a.cached) info.set('cached', true);
  if (o.input !== undefined) info.set('input_mode', o.input);
  if (a.documents) {
    info.set(
      'documents',
      a.documents.attachments.map(
        (d) =>
          new Map<string, PyValue>([
            ['kind', d.kind],
            ['mime', d.mime],
            ['sha256', d.sha256],
            ['bytes', BigInt(d.data.length)],
          ]),
      ),
    );
    info.set('document_bytes', BigInt(a.documents.bytes));
    if (a.documents.decisions.length > 0) info.set('document_policy', decisionsValue(a.documents.decisions));
  }
  const line = { metadata, input: item.record.get('input') as PyObject, output, eval_info: info };
  try {
    return responseLineText(line);
  } catch (e) {
    // An answer nested too deep to write recursively is kept as its text.
    if (!(e instanceof RangeError) || !res) throw e;
    output.set('candidate_response', res.text);
    return responseLineText(line);
  }
}

function decisionsValue(list: DocumentDecision[]): PyValue {
  return list.map(
    (d) =>
      new Map<string, PyValue>([
        ['path', d.path],
        ['sha256', d.sha256],
        ['action', d.action],
        ['detail', d.detail],
      ]),
  );
}

/** Milliseconds with 0.1 ms resolution, as a float (time per token is often below 1 ms). */
function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The environment variable each provider's key comes from. */
const KEY_VARIABLE: Record<string, string> = { gemini: 'GEMINI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };

/** The one line a run that cannot go on ends with (a bad key, no server, no such model). */
export function fatalError(p: Provider, pe: ProviderError): UserError {
  if (pe.errorClass === 'auth')
    return new UserError(
      `${p.id}: authentication failed (${pe.status ? `HTTP ${pe.status}` : 'auth'}); check the API key in the environment (${KEY_VARIABLE[p.kind] ?? 'OPENAI_API_KEY'})`,
    );
  const hint = pe.errorClass === 'unreachable' ? '; check --base-url' : '';
  return new UserError(`${p.id}: ${redactSecrets(firstLine(pe.message))}${hint}`);
}

export async function runBenchmark(o: RunOptions): Promise<RunResult> {
  const log = o.log ?? (() => {});
  const benchmark = resolve(resolveBenchmark(o.benchmark));
  const benchmarkSha = await fileSha256(benchmark);
  const id = identity(o, benchmarkSha);
  const runDir = resolve(o.runDir ?? join('runs', defaultRunId(o, benchmark, benchmarkSha)));

  if (o.batch && !o.provider.batch)
    throw new UserError(
      `${o.provider.id}: --batch needs a provider with a batch interface (openai:, gemini:, anthropic:)`,
      2,
    );
  // Check and count the selection before asking anything: a rejected record is never asked.
  const check =
    o.check?.file === benchmark
      ? o.check
      : await checkBenchmark(benchmark, {
          source: o.source,
          limit: o.limit,
          allowInvalidGroundTruth: o.allowInvalidGroundTruth,
          recordTimeoutMs: o.recordTimeoutMs,
          signal: o.signal,
        });
  const total = check.total;
  const repeats = check.repeats.map((r) => `"${r.id}" (line ${r.line}, first at line ${r.first})`);
  // Said, not silent: the model is asked each id once, for the record on its first line.
  if (repeats.length > 0)
    log(
      `${benchmark}: ${repeats.length} ${repeats.length === 1 ? 'line repeats' : 'lines repeat'} an earlier record id, skipped (each id is asked once, for its first line): ${repeats.slice(0, 5).join(', ')}${repeats.length > 5 ? ', ...' : ''}`,
    );
  enforceCheck(check, { skipInvalid: o.skipInvalid, log: check === o.check ? () => {} : log });
  if (total === 0)
    throw new UserError(
      `${benchmark}: no records${o.source ? ` of source ${o.source}` : ''} to run (an empty benchmark?)`,
    );
  refuseDocumentless(o, check);
  // A context above the stated size is said before asking (sob eval says it once, for all models).
  if (check !== o.check) await warnLargeContexts(benchmark, o, log);

  mkdirSync(runDir, { recursive: true });
  // One writer per run directory: a second `sob run` on it is refused before it asks anything.
  const lock = acquireLock(runDir, 'run directory');
  try {
    removeStaleTemps(runDir);
    return { ...(await runLocked(o, { benchmark, benchmarkSha, id, runDir, total, check, log })), check };
  } finally {
    lock.release();
  }
}

/**
 * `--input document|both` before anything is asked: a provider that reads no documents, or a
 * record that carries none, stops the run (exit 2), naming the records.
 */
export function refuseDocumentless(
  o: Pick<RunOptions, 'input' | 'provider'>,
  check: Pick<BenchmarkCheck, 'file' | 'withoutAttachments' | 'withoutAttachmentsCount'>,
): void {
  const mode = modeOf(o);
  if (mode === 'text') return;
  const blind = o.provider.kind === 'baseline' || o.provider.kind === 'replay';
  if (!o.provider.documentLimits && !blind)
    throw new UserError(
      `${o.provider.id}: this provider takes no documents (--input ${mode}); use --input text, or a provider that does (openai:, gemini:, anthropic:)`,
      2,
    );
  const none = check.withoutAttachments;
  const count = check.withoutAttachmentsCount;
  if (count === 0) return;
  const named = none.slice(0, 5).map((r) => `${r.id} (line ${r.line})`);
  throw new UserError(
    `${check.file}: ${count} record${count === 1 ? '' : 's'} without attachments cannot be asked with --input ${mode}: ${named.join(', ')}${count > 5 ? ', ...' : ''}; nothing was asked (use --input text, or --source to select records that carry their documents)`,
    2,
  );
}

interface Setup {
  benchmark: string;
  benchmarkSha: string;
  id: ReturnType<typeof identity>;
  runDir: string;
  total: number;
  check: BenchmarkCheck;
  log: (line: string) => void;
}

/**
 * Resume: the run directory's manifest (checked against this run's identity) and the records
 * its responses already answer; a torn last line is dropped and a line that is not a response
 * is asked again, each said on `log`.
 */
async function resumeRunDir(
  runDir: string,
  id: Setup['id'],
  log: (line: string) => void,
): Promise<{ old: Partial<RunManifest> | undefined; answered: IdSet }> {
  const old = readManifest(runDir) ?? undefined;
  if (old) checkResumable(runDir, old, id);
  else if (existsSync(join(runDir, RESPONSES))) {
    throw new UserError(`${runDir} has ${RESPONSES} but no ${MANIFEST}: use another --run-dir`);
  }
  checkBatchesFile(runDir);
  const scan = await scanResponses(join(runDir, RESPONSES));
  if (scan.droppedBytes > 0)
    log(`${join(runDir, RESPONSES)}: dropped a torn last line (${scan.droppedBytes} bytes)`);
  for (const n of scan.badLines)
    log(`${join(runDir, RESPONSES)}:${n}: not a response line; its record is asked again`);
  repairTail(join(runDir, ERRORS));
  return { old, answered: scan.ids };
}

/** This session's entry in the manifest's `sessions`. */
type SessionEntry = RunSession & { started_at: string; ended_at: string | null; status: RunStatus };

/** One record's document decisions, as the manifest lists them. */
export interface RecordDecisions {
  record_id: string;
  decisions: DocumentDecision[];
}

/**
 * The manifest's `documents`: the mode, the policy and the provider's limits it applied, and every
 * record whose documents it changed or refused (earlier sessions' kept, this one's added).
 */
function documentsManifest(
  o: RunOptions,
  old: Partial<RunManifest> | undefined,
  decisions: RecordDecisions[],
): Record<string, unknown> {
  const before = (old as { documents?: { records?: RecordDecisions[] } } | undefined)?.documents?.records;
  const seen = new Set(decisions.map((d) => d.record_id));
  return {
    input: modeOf(o),
    policy:
      'an image over the limits is downscaled to them; a PDF over the page or byte limit is ' +
      ((o.pdfOverLimit ?? 'images') === 'images' ? 'sent as its page images' : 'refused') +
      '; a kind the provider does not take refuses the record (docs/providers.md "Documents")',
    pdf_over_limit: o.pdfOverLimit ?? 'images',
    limits: limitsOf(o) ?? null,
    records: [...(Array.isArray(before) ? before.filter((d) => !seen.has(d.record_id)) : []), ...decisions],
  };
}

/** The run's manifest as it stands (`status`: this session's). */
function manifestOf(
  o: RunOptions,
  { benchmark, benchmarkSha, id, total, check }: Setup,
  progress: Progress,
  old: Partial<RunManifest> | undefined,
  session: SessionEntry,
  status: RunStatus,
  decisions: RecordDecisions[] = [],
): RunManifest {
  const sessions: RunSession[] = Array.isArray(old?.sessions) ? old.sessions : [];
  return {
    tool: 'sob-eval',
    tool_version: toolVersion(),
    git_commit: gitCommit(),
    model: o.provider.id,
    provider: o.provider.kind,
    provider_model: o.provider.model,
    provider_settings: o.provider.describe(),
    identity: id,
    settings: {
      temperature: o.temperature,
      max_tokens: o.maxTokens,
      constrained: o.constrained,
      source: o.source ?? null,
      ...(o.epoch !== undefined ? { epoch: o.epoch } : {}),
      input: modeOf(o),
      limit: o.limit ?? null,
      concurrency: o.concurrency,
      timeout_ms: o.timeoutMs,
      max_retries: o.maxRetries,
      backoff: {
        base_ms: (o.backoff ?? DEFAULT_BACKOFF).baseMs,
        max_ms: (o.backoff ?? DEFAULT_BACKOFF).maxMs,
      },
      batch: o.batch
        ? {
            fallback: o.batch.fallback,
            poll_ms: o.batch.pollMs,
            max_requests: o.batch.maxRequests ?? null,
            max_bytes: o.batch.maxBytes ?? null,
            state_file: o.batch ? 'batches.json' : null,
          }
        : null,
    },
    benchmark: {
      path: benchmark,
      sha256: benchmarkSha,
      // What the loader decided: records left out (--skip-invalid) and complexities it derived.
      rejected: check.rejected.map((r) => ({ line: r.line, record_id: r.id ?? null, reason: r.reason })),
      schema_complexity_derived: check.derived.size,
    },
    prompt: { file: o.template.file ?? null, sha256: o.template.sha256, template: o.template.text },
    ...(modeOf(o) !== 'text' ? { documents: documentsManifest(o, old, decisions) } : {}),
    counts: {
      selected: total,
      answered: progress.done,
      failed_this_session: progress.failed,
      pending: total - progress.done,
    },
    usage_this_session: {
      input_tokens: progress.inputTokens,
      output_tokens: progress.outputTokens,
      cost: progress.cost,
    },
    started_at: typeof old?.started_at === 'string' ? old.started_at : session.started_at,
    ended_at: status === 'running' ? null : new Date().toISOString(),
    status,
    sessions: [
      ...sessions,
      { ...session, status, ended_at: status === 'running' ? null : new Date().toISOString() },
    ],
  };
}

/**
 * What this session writes to the run directory: each answer (or refused schema) to
 * responses.jsonl, each failed attempt to errors.jsonl, counted in `progress`.
 */
class RunLog {
  private readonly responses: AppendLog;
  private readonly errors: AppendLog;
  /** Records whose documents the policy changed or refused in this session (the manifest's list). */
  readonly decisions: RecordDecisions[] = [];

  constructor(
    private readonly o: RunOptions,
    runDir: string,
    readonly progress: Progress,
    /** Records answered (by any session): never asked again. */
    readonly answered: IdSet,
  ) {
    this.responses = new AppendLog(join(runDir, RESPONSES));
    this.errors = new AppendLog(join(runDir, ERRORS));
  }

  errorLine(item: Item, attempt: number, pe: ProviderError, outcome: string): void {
    this.progress.errors++;
    this.errors.append(
      errorLineText({
        time: new Date().toISOString(),
        record_id: item.id,
        attempt,
        error_class: pe.errorClass,
        status: pe.status ?? null,
        message: redactSecrets(firstLine(pe.message)),
        outcome,
      }),
    );
  }

  /** Writes an answer (or a refused schema) and counts it; never asked again after this. */
  /** `counted`: false for a record outside this run's --limit (an earlier batch's answer, kept). */
  record(item: Item, res: ProviderResponse | undefined, a: AnswerInfo, counted = true): void {
    const { o, progress } = this;
    this.responses.append(responseLine(item, o, res, a));
    if (a.documents?.decisions.length)
      this.decisions.push({ record_id: item.id, decisions: a.documents.decisions });
    this.answered.add(item.id);
    if (counted) progress.done++;
    if (a.schemaRejected) {
      progress.schemaRejected = (progress.schemaRejected ?? 0) + 1;
      this.errorLine(item, a.attempts, a.schemaRejected, 'recorded');
      return;
    }
    if (a.coverageTimeout) {
      this.errorLine(item, a.attempts, new ProviderError('timeout', a.coverageTimeout.message), 'recorded');
      return;
    }
    if (!res) return;
    progress.inputTokens += res.inputTokens ?? 0;
    progress.outputTokens += res.outputTokens ?? 0;
    if (!a.cached) progress.cost += res.cost ?? 0; // a cached answer costs nothing now
    // A cut or refused answer is the model's own answer: scored as it is, and logged.
    const cls = answerClass(res);
    if (cls) {
      const what = cls === 'truncated' ? `stopped at the ${o.maxTokens}-token limit` : 'the model refused';
      this.errorLine(item, a.attempts, new ProviderError(cls, what), 'recorded');
    }
  }

  /** A record failed every attempt (or could not be asked). */
  failed(): void {
    this.progress.failed++;
    this.o.onProgress?.(this.progress);
  }

  close(): void {
    this.responses.close();
    this.errors.close();
  }
}

/** The response cache of a run (--cache), keyed per provider settings and epoch; none for baselines and replay. */
function answerCache(o: RunOptions, log: (line: string) => void) {
  const cacheable = o.provider.kind !== 'baseline' && o.provider.kind !== 'replay';
  const cache = o.cacheDir && cacheable ? new ResponseCache(o.cacheDir) : undefined;
  if (!cache) return undefined;
  const cacheScope = {
    ...o.provider.describe(),
    ...(o.epoch !== undefined && o.epoch > 1 ? { epoch: o.epoch } : {}),
    // The mode changes what is asked (the documents' hashes are in the key too); text keys stay as they were.
    ...(modeOf(o) !== 'text' ? { input: modeOf(o) } : {}),
  };
  let cacheRefused = false;
  return {
    key: (req: ProviderRequest) => cacheKey(o.provider.id, cacheScope, req),
    get: (key: string) => cache.get(key),
    /** Stores an answer; a cache that refuses the write (a symlinked shard) costs the answer nothing. */
    set: (key: string, res: ProviderResponse) => {
      if (cacheRefused) return;
      try {
        cache.set(key, res);
      } catch (e) {
        cacheRefused = true;
        log(`response cache: ${errorMessage(e)}; answers are no longer cached in this run`);
      }
    },
  };
}

/** The coverage limits' timers for one request of a schema record (none for other records). */
function coverageLimitsFor(o: RunOptions, item: Item) {
  const lim = o.coverageLimits;
  if (!lim) return undefined;
  const md = item.record.get('metadata');
  if (!(md instanceof Map) || md.get('source') !== 'schema') return undefined;
  const streams = (o.provider as { stream?: unknown }).stream === true;
  let hit: { phase: 'compile' | 'generation'; message: string } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const s = (ms: number) => `${+(ms / 1000).toFixed(3)} s`;
  return {
    arm(req: ProviderRequest, abort: () => void) {
      const expire = (phase: 'compile' | 'generation', message: string) => () => {
        hit = { phase, message };
        abort();
      };
      if (!streams) {
        const total = lim.compileMs + lim.generationMs;
        timer = setTimeout(
          expire(
            'generation',
            `no answer within ${s(total)} (the coverage limits, compilation + generation)`,
          ),
          total,
        );
        return;
      }
      timer = setTimeout(
        expire('compile', `no first token within ${s(lim.compileMs)} (grammar compilation limit)`),
        lim.compileMs,
      );
      req.onFirstToken = () => {
        clearTimeout(timer);
        timer = setTimeout(
          expire(
            'generation',
            `generation ran over ${s(lim.generationMs)} after the first token (generation limit)`,
          ),
          lim.generationMs,
        );
      };
    },
    over: () => hit,
    clear: () => clearTimeout(timer),
  };
}

/** What the asker, the online scheduler and the batch hand-off of one session share. */
interface Session {
  o: RunOptions;
  log: RunLog;
  /** Aborted on Ctrl-C (the caller's signal) or a fatal provider error: nothing new is asked. */
  stop: AbortController;
  /** The first fatal provider error (a bad key, a model that does not exist): the run stops. */
  fatal?: ProviderError;
  /** The folder the benchmark's attachment paths are relative to. */
  benchmarkDir: string;
}

type Sent = Extract<Fitted, { ok: true }>;

/**
 * A record's documents read now and held to the provider's limits (`--input document|both`);
 * undefined for `text`. A record whose documents are refused (or cannot be read) gets one line
 * in errors.jsonl and on stderr, its decision in the manifest, and is not asked.
 */
async function documentsFor(s: Session, item: Item): Promise<Sent | undefined | 'refused'> {
  const { o } = s;
  if (modeOf(o) === 'text') return undefined;
  let fitted: Fitted;
  try {
    fitted = await fitDocuments(
      s.benchmarkDir,
      attachmentsOf(item),
      limitsOf(o),
      o.documentTools,
      o.pdfOverLimit,
    );
  } catch (e) {
    fitted = { ok: false, reason: errorMessage(e), decisions: [] };
  }
  if (fitted.ok) return fitted;
  const message = `documents not sent: ${fitted.reason}`;
  s.log.errorLine(item, 1, new ProviderError('bad_request', message), 'gave_up');
  if (fitted.decisions.length > 0) s.log.decisions.push({ record_id: item.id, decisions: fitted.decisions });
  o.log?.(`record ${item.id}: ${message}; not asked`);
  s.log.failed();
  return 'refused';
}

/** Asks one record: `before` attempts already made elsewhere (a batch's); `prepared`: its documents, already fitted. */
type Ask = (item: Item, before?: number, prepared?: Sent) => Promise<void>;

/**
 * Ask/retry: one record asked with the run's one retry loop (`retrying`: the request timeout,
 * the backoff, a server's Retry-After holding every request), its outcome written once.
 */
function asker(s: Session, cache: ReturnType<typeof answerCache>): Ask {
  const { o, log, stop } = s;
  const { progress } = log;
  const backoff = o.backoff ?? DEFAULT_BACKOFF;
  let pausedUntil = 0;
  /** `before`: attempts already made elsewhere (a batch's, before --batch-fallback online); numbering goes on from them. */
  return async (item: Item, before = 0, prepared?: Sent) => {
    const documents = prepared ?? (await documentsFor(s, item));
    if (documents === 'refused') return;
    let base: Omit<ProviderRequest, 'signal'>;
    try {
      base = requestOf(item, o, documents?.attachments);
    } catch (e) {
      // A record that cannot even be put into a request (an untrusted schema nested thousands of
      // levels deep runs JSON.stringify out of stack) fails alone; the run goes on.
      log.errorLine(
        item,
        1,
        new ProviderError('bad_request', `cannot build the request: ${errorMessage(e)}`),
        'gave_up',
      );
      log.failed();
      return;
    }
    let t0 = 0;
    let limits: ReturnType<typeof coverageLimitsFor>;
    const r = await retrying(
      async ({ signal, abort }) => {
        t0 = performance.now();
        limits = coverageLimitsFor(o, item);
        try {
          const req: ProviderRequest = { ...base, signal };
          if (limits) limits.arm(req, abort);
          const key = cache ? cache.key(req) : '';
          const hit = cache?.get(key);
          const res = hit ?? (await o.provider.complete(req));
          if (cache && !hit) cache.set(key, res);
          return { res, cached: hit !== undefined, latencyMs: hit ? 0 : performance.now() - t0 };
        } finally {
          limits?.clear();
        }
      },
      ({ error: e, attempt, timedOut, canRetry }) => {
        if (stop.signal.aborted && !timedOut) return 'stop'; // stopped: not the record's failure
        const over = limits?.over();
        if (over) {
          // JSONSchemaBench's limit: a schema-processing failure, written once, not retried.
          const a: AnswerInfo = {
            attempts: before + attempt,
            latencyMs: performance.now() - t0,
            coverageTimeout: over,
          };
          if (over.phase === 'compile') a.schemaRejected = new ProviderError('schema_rejected', over.message);
          log.record(item, undefined, a);
          o.onProgress?.(progress);
          return 'stop';
        }
        const pe = classify(e, timedOut);
        if (FATAL.has(pe.errorClass)) {
          s.fatal ??= pe;
          log.errorLine(item, before + attempt, pe, 'stopped');
          stop.abort();
          return 'stop';
        }
        if (pe.errorClass === 'rate_limit' && pe.retryAfterMs !== undefined) {
          pausedUntil = Math.max(
            pausedUntil,
            Date.now() + Math.min(pe.retryAfterMs, backoff.maxRetryAfterMs ?? Number.POSITIVE_INFINITY),
          );
        }
        if (pe.errorClass === 'schema_rejected') {
          // The provider's verdict on the schema, not the model's failure: written once, not retried.
          log.record(item, undefined, { attempts: before + attempt, schemaRejected: pe, documents });
          o.onProgress?.(progress);
          return 'stop';
        }
        const retry = RETRYABLE.has(pe.errorClass) && canRetry;
        log.errorLine(item, before + attempt, pe, retry ? 'retrying' : 'gave_up');
        if (!retry) {
          log.failed();
          return 'stop';
        }
        o.onProgress?.(progress);
        return { retryAfterMs: pe.retryAfterMs };
      },
      {
        maxRetries: o.maxRetries,
        delay: (failures, retryAfterMs) => backoffDelay(failures, backoff, retryAfterMs),
        timeoutMs: o.timeoutMs,
        signal: stop.signal,
        // A server's Retry-After holds every new request, not only the one it answered.
        beforeAttempt: async () => {
          const hold = pausedUntil - Date.now();
          if (hold > 0) await sleep(hold, stop.signal);
        },
      },
    );
    if (!r.ok || stop.signal.aborted) return; // stopped while it answered: leave it for the resume
    log.record(item, r.value.res, {
      attempts: before + r.attempt,
      latencyMs: r.value.latencyMs,
      cached: r.value.cached,
      documents,
    });
    o.onProgress?.(progress);
  };
}

/**
 * The online scheduler: the records not yet answered, at most --concurrency at once. A provider
 * that answers without I/O (the baselines, replay) never lets the event loop turn: the pool gives
 * it a turn every 50 ms so Ctrl-C, SIGTERM and progress are still heard.
 */
async function askOnline(
  s: Session,
  ask: Ask,
  source: AsyncIterator<Item> | Iterator<Item>,
  before?: (id: string) => number,
  prepared?: (id: string) => Sent | undefined,
): Promise<void> {
  await mapConcurrent(
    source,
    async (item) => {
      if (!s.log.answered.has(item.id)) await ask(item, before?.(item.id), prepared?.(item.id));
    },
    { concurrency: s.o.concurrency, signal: s.stop.signal, yieldEveryMs: 50 },
  );
}

/**
 * Without --batch: a batch an earlier `--batch` run left at the provider still answers (and is
 * billed), so asking its records online now pays for them twice. Said before anything is asked.
 */
function warnUncollected(runDir: string, answered: IdLookup, log: (line: string) => void): void {
  const left = uncollectedBatches(runDir, answered);
  if (left.length > 0)
    log(
      `warning: ${left.map((b) => `batch ${b.id} (${b.records} record${b.records === 1 ? '' : 's'})`).join(', ')} of an earlier --batch run ${left.length === 1 ? 'is' : 'are'} still at the provider, not collected: ${left.length === 1 ? 'its' : 'their'} records are asked online now and billed twice; Ctrl-C and re-run with --batch to collect ${left.length === 1 ? 'it' : 'them'} instead`,
    );
}

/**
 * The batch hand-off (--batch): the records not yet answered go to the provider's batch
 * interface (`runBatches`), with those an earlier session's batches hold beyond this --limit
 * (collected, never lost, never submitted again); what falls back online goes through `ask`.
 */
async function handOffToBatches(
  s: Session,
  ask: Ask,
  source: AsyncGenerator<Item>,
  { benchmark, runDir, log }: Setup,
  sessionStarted: string,
): Promise<void> {
  const { o } = s;
  const { progress, answered } = s.log;
  const items: Item[] = [];
  const inLimit = new Set<string>();
  for await (const it of source) {
    inLimit.add(it.id);
    if (!answered.has(it.id)) items.push(it);
  }
  const held = heldByBatches(runDir);
  let earlier: Item[] = [];
  for (const id of inLimit) held.delete(id);
  for (const id of [...held]) if (answered.has(id)) held.delete(id);
  if (held.size > 0) for await (const it of recordsWithIds(benchmark, held)) earlier.push(it);
  // A batch is built whole: each record's documents fitted once, here (a refused one is not sent).
  const fitted = new Map<string, Sent>();
  if (modeOf(o) !== 'text') {
    const keep = async (list: Item[]) => {
      const out: Item[] = [];
      for (const it of list) {
        const d = await documentsFor(s, it);
        if (d === 'refused') continue;
        if (d) fitted.set(it.id, d);
        out.push(it);
      }
      return out;
    };
    items.splice(0, items.length, ...(await keep(items)));
    earlier = await keep(earlier);
  }
  s.fatal ??= await runBatches({
    provider: o.provider,
    runDir,
    items,
    earlier,
    request: (it) => requestOf(it, o, fitted.get(it.id)?.attachments),
    answered,
    constrained: o.constrained,
    maxRetries: o.maxRetries,
    settings: o.batch!,
    session: sessionStarted,
    signal: s.stop.signal,
    record: (it, res, a) => {
      s.log.record(it, res, { ...a, documents: fitted.get(it.id) }, inLimit.has(it.id));
      o.onProgress?.(progress);
    },
    error: (it, attempt, pe, outcome) => s.log.errorLine(it, attempt, pe, outcome),
    failed: () => s.log.failed(),
    note: (text) => {
      progress.note = text || undefined;
      o.onProgress?.(progress);
    },
    online: (list, before) => askOnline(s, ask, list[Symbol.iterator](), before, (id) => fitted.get(id)),
    log,
  });
}

/** A session's stop: aborted by the caller's signal (Ctrl-C) as well; `release` lets go of it. */
function sessionStop(o: RunOptions): { stop: AbortController; release: () => void } {
  const stop = new AbortController();
  // Each request in flight and each worker's backoff pause listen on it: a bounded number,
  // proportional to --concurrency, not a leak (no MaxListenersExceededWarning at any setting).
  setMaxListeners(Math.max(10, 4 * o.concurrency + 10), stop.signal);
  const onAbort = () => stop.abort();
  if (o.signal?.aborted) stop.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  return { stop, release: () => o.signal?.removeEventListener('abort', onAbort) };
}

/**
 * One session on a locked run directory: resume, the manifest marked running, every record not
 * yet answered asked (online or through batches), the manifest written with how it ended.
 */
async function runLocked(o: RunOptions, setup: Setup): Promise<RunResult> {
  const { runDir, total, check, log } = setup;
  const { old, answered } = await resumeRunDir(runDir, setup.id, log);

  const startedAt = new Date();
  const progress: Progress = {
    total,
    done: 0,
    resumed: 0,
    failed: 0,
    errors: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
    startedAt: startedAt.getTime(),
  };
  for await (const it of selectRecords(check, { source: o.source })) {
    if (answered.has(it.id)) progress.resumed++;
  }
  progress.done = progress.resumed;
  if (progress.resumed > 0) log(`resuming ${runDir}: ${progress.resumed}/${total} records already answered`);

  const entry: SessionEntry = { started_at: startedAt.toISOString(), ended_at: null, status: 'running' };
  const runLog = new RunLog(o, runDir, progress, answered);
  const manifest = (status: RunStatus) =>
    manifestOf(o, setup, progress, old, entry, status, runLog.decisions);
  writeJsonAtomic(join(runDir, MANIFEST), runManifestDoc(manifest('running')));

  const { stop, release } = sessionStop(o);
  const s: Session = { o, log: runLog, stop, benchmarkDir: dirname(setup.benchmark) };
  const ask = asker(s, answerCache(o, log));

  let status: RunStatus = 'failed';
  try {
    const source = selectRecords(check, { source: o.source });
    if (o.batch) await handOffToBatches(s, ask, source, setup, entry.started_at);
    else {
      warnUncollected(runDir, answered, log);
      await askOnline(s, ask, source);
    }
    await source.return(undefined);
    status = s.fatal
      ? 'failed'
      : stop.signal.aborted
        ? 'interrupted'
        : progress.done === total
          ? 'complete'
          : 'incomplete';
  } finally {
    release();
    runLog.close();
    writeJsonAtomic(join(runDir, MANIFEST), runManifestDoc(manifest(status)));
    await o.provider.close?.();
  }
  if (s.fatal) throw fatalError(o.provider, s.fatal);
  return { runDir, status, progress };
}
