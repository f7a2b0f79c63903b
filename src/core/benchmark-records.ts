/**
 * Benchmark records in, validated once: the one reader of a benchmark file for `sob run`,
 * `sob eval` and `sob score --benchmark` (docs/records.md).
 *
 * `checkBenchmark` reads the selection (records of `source`, a record without a source taking it;
 * the first line of each id; at most `limit` accepted records) and checks every selected record
 * as `sob build` does (src/core/record-checks.ts): known keys, the shape, the schema a valid
 * draft-07 document, a ground truth present and valid under it. A record that fails is rejected
 * with one line naming the file, the line, the record id and the reason, and is never asked. A
 * record without `schema_complexity` gets the one its schema's shape gives, exactly as the build
 * derives it, so no record weighs 0 unless it says so.
 *
 * `selectRecords` then yields the accepted records (complexity filled in) for each pass the
 * runner makes, without checking them again.
 */

import { dirname } from 'node:path';
import { documentPages, verifyAttachments } from './attachments.ts';
import { COMPLEXITY_WEIGHT } from './complexity.ts';
import { UserError, where } from './errors.ts';
import { HashLines } from './id-hash.ts';
import { readJsonl } from './jsonl.ts';
import { type PyObject, type PyValue, toPlain } from './pyjson.ts';
import { type Complexity, SOURCES, type Source } from './record.ts';
import { CheckInterrupted, RecordChecker } from './record-checker.ts';
import type { CheckResult } from './record-checks.ts';

export interface Selection {
  /** Only records of this source (`--source`); a record without one takes it. */
  source?: Source;
  /** At most this many accepted records (`--limit`). */
  limit?: number;
  /** Ask a record whose ground truth fails its own schema (warned, not rejected). */
  allowInvalidGroundTruth?: boolean;
  /** Each record's check budget (`--record-timeout-ms`; default the scorer's, 20 s). */
  recordTimeoutMs?: number;
  /** Ctrl-C / SIGTERM: the check stops (exit 130, nothing asked). */
  signal?: AbortSignal;
}

export interface Rejection {
  line: number;
  id?: string;
  reason: string;
}

export interface BenchmarkCheck {
  file: string;
  /** Accepted records in the selection. */
  total: number;
  rejected: Rejection[];
  /** Lines whose id an earlier selected line has (skipped: each id is asked once). */
  repeats: { id: string; line: number; first: number }[];
  /** The complexity derived from the schema, by line, for accepted records that give none. */
  derived: Map<number, Complexity>;
  /** Accepted records and their weight (easy 1, medium 2, hard 3) per source, for a manifest. */
  totals: Record<Source, { records: number; weight: number }>;
  /** Accepted records whose ground truth fails its schema (kept by --allow-invalid-ground-truth). */
  warnings: { line: number; id: string; warning: string }[];
  /** The first 5 accepted records that carry no documents (`--input document` refuses them by name). */
  withoutAttachments: { line: number; id: string }[];
  /** How many accepted records carry no documents. */
  withoutAttachmentsCount: number;
  /** Accepted records' documents: how many, and of them PDFs' pages (cost per page). */
  attachments: { records: number; files: number; pages: number };
}

export interface BenchmarkItem {
  id: string;
  line: number;
  /** The record, losslessly parsed, `metadata.schema_complexity` filled in when it was derived. */
  record: PyObject;
}

/** `file:line (record id): reason`, the one line a rejected record gets. */
export function rejectionLine(file: string, r: Rejection): string {
  return `${where(file, r.line, r.id)}: ${r.reason}`;
}

function idOf(value: PyValue): string | undefined {
  const md = value instanceof Map ? value.get('metadata') : undefined;
  const id = md instanceof Map ? md.get('record_id') : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function sourceOf(value: PyValue): unknown {
  const md = value instanceof Map ? value.get('metadata') : undefined;
  return md instanceof Map ? md.get('source') : undefined;
}

/** Reads the selection and checks each selected record once, each within the record budget. */
export async function checkBenchmark(file: string, sel: Selection = {}): Promise<BenchmarkCheck> {
  const totals = Object.fromEntries(
    SOURCES.map((m) => [m, { records: 0, weight: 0 }]),
  ) as BenchmarkCheck['totals'];
  const out: BenchmarkCheck = {
    file,
    total: 0,
    rejected: [],
    repeats: [],
    derived: new Map(),
    totals,
    warnings: [],
    withoutAttachments: [],
    withoutAttachmentsCount: 0,
    attachments: { records: 0, files: 0, pages: 0 },
  };
  // Each accepted id's line, by the id's 64-bit hash: memory flat in the records' text.
  const seen = new HashLines();
  const checker = new RecordChecker({ timeoutMs: sel.recordTimeoutMs, signal: sel.signal });
  /** Lines handed to the checker, in file order (the checker runs ahead; verdicts are taken in order). */
  const inFlight: { line: number; id?: string; src: unknown; verdict: Promise<CheckResult> }[] = [];
  const full = () => sel.limit !== undefined && out.total >= sel.limit;
  const take = async (): Promise<void> => {
    const next = inFlight.shift()!;
    const res = await next.verdict;
    if (full()) return;
    const { line, id } = next;
    // An earlier line of the same id, accepted while this one was being checked: a repeat.
    const first = id === undefined ? undefined : seen.get(id);
    if (first !== undefined) {
      out.repeats.push({ id: id!, line, first });
      return;
    }
    if (!res.ok || !res.record) {
      out.rejected.push({ line, id, reason: res.errors.join('; ') });
      return;
    }
    const rid = res.record.metadata.record_id;
    // Every document there and as built (its hash), before anything is asked: a benchmark folder
    // moved elsewhere still runs, a missing or altered file is refused naming it.
    const docs = res.record.input.attachments ?? [];
    const bad = docs.length > 0 ? await verifyAttachments(dirname(file), docs) : [];
    if (bad.length > 0) {
      out.rejected.push({ line: line, id: rid, reason: bad.join('; ') });
      return;
    }
    if (docs.length === 0) {
      out.withoutAttachmentsCount++;
      if (out.withoutAttachments.length < 5) out.withoutAttachments.push({ line: line, id: rid });
    } else {
      out.attachments.records++;
      out.attachments.files += docs.length;
      out.attachments.pages += documentPages(docs);
    }
    seen.set(rid, line);
    out.total++;
    // Only a ground truth kept against its schema (--allow-invalid-ground-truth) is worth a line:
    // a small schema is the user's to choose, and a stated complexity their call.
    for (const w of res.warnings)
      if (w.startsWith('ground truth does not validate')) out.warnings.push({ line, id: rid, warning: w });
    if (res.record.metadata.schema_complexity === undefined && res.derivedComplexity)
      out.derived.set(line, res.derivedComplexity);
    const complexity = res.record.metadata.schema_complexity ?? res.derivedComplexity;
    const source = res.record.metadata.source ?? sel.source;
    if (source && complexity) {
      totals[source].records++;
      totals[source].weight += COMPLEXITY_WEIGHT[complexity];
    }
  };
  try {
    for await (const l of readJsonl(file)) {
      while (inFlight.length >= CHECK_WINDOW) await take();
      if (full()) break;
      if (!l.ok) {
        inFlight.push({
          line: l.line,
          src: undefined,
          verdict: Promise.resolve({ ok: false, errors: [`not JSON: ${l.error}`], warnings: [] }),
        });
        continue;
      }
      const id = idOf(l.value);
      const src = sourceOf(l.value);
      if (sel.source && src !== undefined && src !== sel.source) continue;
      if (id !== undefined) {
        const first = seen.get(id);
        if (first !== undefined) {
          out.repeats.push({ id, line: l.line, first });
          continue;
        }
      }
      let plain: unknown;
      try {
        plain = toPlain(l.value);
      } catch (e) {
        // An untrusted value nested thousands of levels deep: that record alone is rejected.
        if (!(e instanceof RangeError)) throw e;
        inFlight.push({
          line: l.line,
          id,
          src,
          verdict: Promise.resolve({ ok: false, errors: ['nested too deeply to read'], warnings: [] }),
        });
        continue;
      }
      const verdict = checker.check(
        plain,
        {
          mode: src === 'schema' ? 'compliance' : 'extraction',
          // Grounding is the build's advice on how a record was written; a run asks what it is given.
          skipGrounding: true,
          fewProperties: 'warning',
          invalidGroundTruth: sel.allowInvalidGroundTruth ? 'warning' : 'error',
        },
        l.text,
      );
      // Taken in order below; an interrupt is seen there.
      verdict.catch(() => {});
      inFlight.push({ line: l.line, id, src, verdict });
    }
    while (inFlight.length > 0) await take();
  } catch (e) {
    if (e instanceof CheckInterrupted)
      throw new UserError(
        `${file}: interrupted during the record check: nothing was asked; re-run the same command to start again`,
        130,
      );
    throw e;
  } finally {
    await checker.close();
  }
  // A repeat found while its first line was in flight is listed where the file has it.
  out.repeats.sort((a, b) => a.line - b.line);
  out.rejected.sort((a, b) => a.line - b.line);
  return out;
}

/** Records handed to the checker ahead of the one whose verdict is awaited. */
const CHECK_WINDOW = 64;

/**
 * The check's verdict for a command about to ask or score: each rejected record's line goes to
 * `log` (the first 20, then a count), and unless `skipInvalid`, the command stops (exit 2) before
 * anything is asked. With `skipInvalid` the others go on and a line says how many were left out.
 */
export function enforceCheck(
  check: BenchmarkCheck,
  opts: { skipInvalid?: boolean; log: (line: string) => void; what?: string },
): void {
  const n = check.rejected.length;
  for (const r of check.rejected.slice(0, 20)) opts.log(`rejected ${rejectionLine(check.file, r)}`);
  if (n > 20) opts.log(`... and ${n - 20} more rejected records`);
  if (check.warnings.length > 0) {
    const w = check.warnings[0];
    opts.log(
      `warning: ${check.warnings.length} record${check.warnings.length === 1 ? '' : 's'} kept though ${check.warnings.length === 1 ? 'its' : 'their'} ground truth fails ${check.warnings.length === 1 ? 'its' : 'their'} schema (--allow-invalid-ground-truth; first: ${where(check.file, w.line, w.id)}: ${w.warning})`,
    );
  }
  if (check.derived.size > 0)
    opts.log(
      `${check.file}: ${check.derived.size} record${check.derived.size === 1 ? '' : 's'} without schema_complexity: derived from the schema (easy 1, medium 2, hard 3), as sob build does`,
    );
  if (n === 0) return;
  const records = `${n} record${n === 1 ? '' : 's'}`;
  if (opts.skipInvalid) {
    opts.log(`${check.file}: ${records} rejected and left out (--skip-invalid); ${check.total} go on`);
    return;
  }
  throw new UserError(
    `${check.file}: ${records} rejected (listed above): nothing ${opts.what ?? 'was asked'}; fix ${n === 1 ? 'it' : 'them'}, or pass --skip-invalid to go on without ${n === 1 ? 'it' : 'them'}`,
    2,
  );
}

/** The record with its derived complexity in its metadata (after the id and source, as build writes it). */
function withComplexity(record: PyObject, complexity: Complexity): PyObject {
  const md = record.get('metadata') as PyObject;
  const filled: PyObject = new Map();
  for (const k of ['record_id', 'source']) if (md.has(k)) filled.set(k, md.get(k) as PyValue);
  filled.set('schema_complexity', complexity);
  for (const [k, v] of md) if (!filled.has(k)) filled.set(k, v);
  const out: PyObject = new Map(record);
  out.set('metadata', filled);
  return out;
}

/**
 * The accepted records of a checked benchmark, in file order: the same selection `check` made
 * (rejected lines and repeats skipped), each with its derived complexity. Not checked again.
 */
export async function* selectRecords(
  check: BenchmarkCheck,
  sel: Selection = {},
): AsyncGenerator<BenchmarkItem> {
  const rejected = new Set(check.rejected.map((r) => r.line));
  const repeats = new Set(check.repeats.map((r) => r.line));
  let n = 0;
  for await (const l of readJsonl(check.file)) {
    if (n >= check.total) return;
    if (!l.ok || rejected.has(l.line) || repeats.has(l.line)) continue;
    const src = sourceOf(l.value);
    if (sel.source && src !== undefined && src !== sel.source) continue;
    const id = idOf(l.value);
    if (id === undefined) continue;
    const derived = check.derived.get(l.line);
    const record = derived ? withComplexity(l.value as PyObject, derived) : (l.value as PyObject);
    n++;
    yield { id, line: l.line, record };
  }
}

/**
 * The records of `file` whose id is in `ids`, first line of each id, as read (not checked again):
 * the records an earlier session's batches hold beyond today's `--limit`, whose answers are
 * collected, never submitted again.
 */
export async function* recordsWithIds(file: string, ids: ReadonlySet<string>): AsyncGenerator<BenchmarkItem> {
  const seen = new Set<string>();
  for await (const l of readJsonl(file)) {
    if (!l.ok) continue;
    const id = idOf(l.value);
    if (id === undefined || !ids.has(id) || seen.has(id)) continue;
    seen.add(id);
    yield { id, line: l.line, record: l.value as PyObject };
  }
}
