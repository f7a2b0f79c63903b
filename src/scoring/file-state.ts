/**
 * One response file being scored (on the main thread): the rows the workers send back, folded
 * into one evaluation folder per modality, with the counts the summary reports (repeated ids,
 * answers the benchmark lacks, refused schemas, records whose modality was the default).
 */
import { CustomAccumulator } from '../../metrics/custom.ts';
import { SummaryAccumulator, type SummaryData } from '../../metrics/summary.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { FIELDS_FILE } from '../core/formats/field-row.ts';
import { type IdSlots, SlotLines } from '../core/id-hash.ts';
import { pathModality } from '../core/modality.ts';
import { dumpsPy, type PyValue } from '../core/pyjson.ts';
import type { Modality, Source } from '../core/record.ts';
import { type Benchmark, type BenchmarkRef, benchmarkSha256, HashLines } from './benchmark.ts';
import { LenientOutput } from './lenient-output.ts';
import { EvalFolder, type FolderStream } from './output.ts';
import type { LineOutcome, ProfileOptions } from './score-line.ts';
import { folderOf } from './targets.ts';
import { TrackCollector } from './track.ts';
import { SCHEMA_TIMED_OUT } from './verdicts.ts';

export interface ScoreTarget {
  /** The response JSONL file. */
  file: string;
  /** Output folder name under `<out>/<modality>/`; default from the file name. */
  modelDir?: string;
  /** Output root for this file; default the run's `outDir`. */
  outDir?: string;
  /** The profile for this file; default the run's `profile`. */
  profile?: ProfileOptions;
  /** The benchmark this file answers (a run directory's); default the run's `benchmark`. */
  benchmark?: BenchmarkRef;
}

/** One evaluation folder being filled. */
export class Output {
  readonly acc = new SummaryAccumulator();
  /** `--scorer`: the columns of the scorers of your own (metrics/custom.ts). */
  readonly custom = new CustomAccumulator();
  /** The compliance track's share of this folder (src/scoring/compliance.ts). */
  readonly track = new TrackCollector();
  /** `--match`: the folder's lenient numbers and side file, opened with its first lenient row. */
  lenient?: LenientOutput;
  /** `fields.jsonl`: one line per record and ground-truth leaf (SOB folders only; none with `--no-fields`). */
  readonly fields?: FolderStream;
  /** Rows written (a schema folder writes rows the SOB summary does not count). */
  written = 0;
  /**
   * Each record id's first line, by the id's 64-bit hash (repeats are counted; the strict
   * profile keeps the first): in the benchmark record's slot where the benchmark's index knows
   * the id (4 bytes a benchmark record), else 12 bytes a hash slot; never the ids.
   */
  readonly firstLine: SlotLines;
  /** Rows without a record id (each counts as one distinct record). */
  noId = 0;
  /** The first lines of rows without a record id. */
  readonly noIdLines: number[] = [];
  /** Rows whose schema is not a usable JSON Schema (they score 0), and the first few. */
  badSchema = 0;
  readonly badSchemaSeen: string[] = [];
  duplicates = 0;
  /** Distinct record ids, and rows written, once the rows end (the id map is then let go). */
  distinct = 0;
  rows = 0;
  readonly repeats: string[] = [];
  constructor(
    /** A modality, or `schema` (the compliance track's folder). */
    readonly modality: Source,
    readonly folder: EvalFolder,
    /** Whether to write `fields.jsonl` (false: `--no-fields`, no file at all). */
    fields = true,
    /** The benchmark's index, when known: the id table numbers its records by it. */
    slots?: IdSlots,
  ) {
    this.firstLine = new SlotLines(slots);
    if (modality !== 'schema' && fields) this.fields = folder.stream(FIELDS_FILE);
  }
  get dir(): string {
    return this.folder.dir;
  }
  /** Room for `n` rows in the summary's columns and the id table. */
  reserve(n: number): void {
    this.acc.reserve(n);
    this.firstLine.reserve(n);
  }
}

/** A record id as a map key (an int id and a string id never collide); undefined when absent. */
function idKey(id: PyValue): string | undefined {
  if (typeof id === 'string') return id === '' ? undefined : id;
  if (id === null) return undefined;
  return `\u0000${dumpsPy(id)}`;
}

/** Evaluation folders being written by this process, and by which input (one writer each). */
const claimed = new Map<string, string>();

export class FileState {
  readonly outputs = new Map<Source, Output>();
  readonly malformed: { line: number; error: string }[] = [];
  readonly skip: Record<number, string> = {};
  lastLine = 0;
  failed = 0;
  /** Records not run because their schema ran over the time budget before. */
  remembered = 0;
  /** Records scored as text only because nothing told their modality. */
  defaulted = 0;
  readonly pathModality: Modality;
  readonly pathDefaulted: boolean;
  /** Answers whose id the known benchmark lacks, by modality. */
  readonly unknown = new Map<Source, string[]>();
  /** Records whose schema the provider refused, by modality (their ids). */
  readonly rejected = new Map<Source, string[]>();
  /** Set when the file cannot be written (a folder in use): the rest of it is not scored. */
  error?: string;
  constructor(
    readonly idx: number,
    readonly target: ScoreTarget,
    readonly outRoot: string,
    /** The strict profile keeps the first row of each record id. */
    readonly dedupe: boolean,
    readonly benchmark: Benchmark | undefined,
    readonly onRecord: () => void = () => {},
    /** Whether its folders get `fields.jsonl` (false: `--no-fields`). */
    readonly fields = true,
  ) {
    const p = pathModality(target.file);
    this.pathModality = p.modality;
    this.pathDefaulted = p.defaulted;
  }

  /** Takes one outcome; false when the file must stop (its error says why). */
  accept(o: LineOutcome): boolean {
    if (this.error) return false;
    if (o.line <= this.lastLine) return true; // already have it (a message from a replaced worker)
    this.lastLine = o.line;
    this.onRecord();
    if (o.kind === 'malformed') {
      this.malformed.push({ line: o.line, error: o.error });
      return true;
    }
    if (o.kind === 'unknown' || o.kind === 'rejected') {
      const byModality = o.kind === 'unknown' ? this.unknown : this.rejected;
      const list = byModality.get(o.modality);
      if (list) list.push(o.recordId);
      else byModality.set(o.modality, [o.recordId]);
      return true;
    }
    let out = this.outputs.get(o.modality);
    if (!out) {
      const dir = folderOf(this.target, this.outRoot, o.modality);
      const owner = claimed.get(dir);
      try {
        if (owner !== undefined)
          throw new UserError(`${owner} and ${this.target.file} would both be written to ${dir}`);
        out = new Output(o.modality, new EvalFolder(dir), this.fields, this.benchmark?.records);
        // The folder's rows are about its benchmark records: room for them all, taken once.
        if (this.benchmark && o.modality !== 'schema')
          out.reserve(this.benchmark.records.countOf(o.modality, this.pathModality));
      } catch (e) {
        this.error = `${this.target.file}: ${errorMessage(e)}`;
        return false;
      }
      claimed.set(dir, this.target.file);
      this.outputs.set(o.modality, out);
    }
    const key = idKey(o.score.recordId);
    if (key === undefined) {
      out.noId++;
      if (out.noIdLines.length < 5) out.noIdLines.push(o.line);
    } else {
      const first = out.firstLine.get(key);
      if (first !== undefined) {
        out.duplicates++;
        if (out.repeats.length < 5)
          out.repeats.push(`${dumpsPy(o.score.recordId)} (line ${o.line}, first ${first})`);
        if (this.dedupe) return true;
      } else out.firstLine.set(key, o.line);
    }
    if (o.defaulted) this.defaulted++;
    const schemaError = o.score.explanation.schema_error;
    if (schemaError !== undefined && o.modality !== 'schema') {
      out.badSchema++;
      if (out.badSchemaSeen.length < 3)
        out.badSchemaSeen.push(`line ${o.line}, ${dumpsPy(o.score.recordId)}: ${schemaError}`);
    }
    const t = o.track;
    if (!t || t.write) {
      try {
        out.folder.write(o.json);
        out.written++;
        // The side file has one line per row, in the same order.
        if (o.lenient) (out.lenient ??= new LenientOutput(out.folder)).add(o.lenient, o.score.weight);
        if (o.fields && o.fields.length > 0 && out.fields) {
          if (typeof o.fields === 'string') out.fields.write(o.fields);
          else out.fields.writeBytes(o.fields);
        }
      } catch (e) {
        // A full disk, a file size limit, a read-only folder: the file stops with one line naming
        // where, and its folders being built are dropped (no temp folder left behind).
        this.error = `${this.target.file}: ${errorMessage(e)}`;
        return false;
      }
    }
    if (!t || t.sob) {
      out.acc.add(o.score);
      out.custom.add(o.custom);
    }
    if (t) out.track.add(t);
    if (o.score.explanation.scoring_error) {
      this.failed++;
      if (o.score.explanation.scoring_error === SCHEMA_TIMED_OUT) this.remembered++;
    }
    return true;
  }

  private benchIds?: { counts: Map<Source, number>; missing: Map<Source, string[]> };

  /**
   * The benchmark's record count per modality for this file, and the ids without an answer
   * (once the rows end), in file order. The index is walked by id hash: only the unanswered
   * records' ids are read from the file.
   */
  benchmarkIds(
    forced?: Modality,
  ): { counts: Map<Source, number>; missing: Map<Source, string[]> } | undefined {
    if (!this.benchmark) return undefined;
    if (this.benchIds) return this.benchIds;
    // A record the provider refused was asked: it is not missing.
    const refused = new Map<Source, HashLines>();
    for (const [m, ids] of this.rejected) {
      const set = new HashLines();
      for (const id of ids) set.set(id, 0);
      refused.set(m, set);
    }
    const per = this.benchmark.records.unanswered(
      forced ?? this.pathModality,
      (m, lo, hi) =>
        this.outputs.get(m)?.firstLine.getHash(lo, hi) !== undefined ||
        refused.get(m)?.getHash(lo, hi) !== undefined,
    );
    const counts = new Map<Source, number>();
    const missing = new Map<Source, string[]>();
    for (const [m, e] of per) {
      counts.set(m, e.count);
      missing.set(m, e.missing);
    }
    this.benchIds = { counts, missing };
    return this.benchIds;
  }

  /**
   * Ends the rows of every folder; the data each summary is computed from. What only the rows
   * needed (the accumulator's columns, the id map) is let go: a folder may wait a while for its
   * bootstrap, and memory must not grow with the rows waiting.
   */
  endRows(forced?: Modality): { out: Output; data: SummaryData }[] {
    const bench = this.benchmarkIds(forced);
    return [...this.outputs.values()].map((out) => {
      out.folder.endRows();
      out.distinct = out.firstLine.size + out.noId;
      out.rows = out.acc.n;
      const dq = out.acc.dataQuality;
      dq.malformed_jsonl_line_count = this.malformed.length;
      dq.duplicate_record_id_count = out.duplicates;
      dq.distinct_record_ids = out.distinct;
      const refused = this.rejected.get(out.modality as Source)?.length ?? 0;
      if (refused > 0) dq.schema_rejected_count = refused;
      const data = out.acc.data();
      const custom = out.custom.data();
      if (custom) data.custom = custom;
      if (this.benchmark && bench)
        data.benchmark = {
          path: this.benchmark.path,
          sha256: benchmarkSha256(this.benchmark),
          records: bench.counts.get(out.modality as Source) ?? 0,
          missing_ids: bench.missing.get(out.modality as Source)?.length ?? 0,
          unknown_ids: this.unknown.get(out.modality as Source)?.length ?? 0,
        };
      out.acc.release();
      out.firstLine.clear();
      return { out, data };
    });
  }

  /** The folder is in place (or abandoned): another input may write that name again. */
  release(out: Output): void {
    claimed.delete(out.dir);
  }

  /** Drops every folder this file was building (the old folders stay as they were). */
  abort(): void {
    for (const out of this.outputs.values()) {
      claimed.delete(out.dir);
      out.folder.abort();
    }
    this.outputs.clear();
  }
}
