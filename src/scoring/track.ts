/**
 * The compliance track's parent side (src/scoring/compliance.ts scores on the workers): what a
 * row outcome tells its folder, what a folder gathers (`TrackCollector`), and the folder's
 * `eval_summary.json` (`summarizeJob`). Kept apart so the main thread loads neither ajv nor the
 * metrics: a schema folder's summary loads metrics/compliance-track.ts only when there is one.
 */
import type { ComplianceRow } from '../../metrics/compliance.ts';
import type { SchemaFolderInput, TrackCounts } from '../../metrics/compliance-track.ts';
import {
  buildSummary,
  type DataQuality,
  type Intervals,
  type SummaryData,
  type SummaryOptions,
} from '../../metrics/summary.ts';
import type { SchemaSummaryOut, SummaryOut } from '../core/formats/eval-summary.ts';
import { type Protocol, protocolReason } from '../core/validator-protocols.ts';

/** A folder's summary job: its SOB data, its tracks' data, and the bootstrap's intervals. */
export interface SummaryJob {
  data: SummaryData;
  responseFile: string;
  opts: SummaryOptions;
  /** The compliance track's data for this folder, when it has any. */
  track?: TrackData;
  /** The SOB summary's bootstrap intervals, computed with other files' (src/scoring/score-files.ts). */
  intervals?: { plain: Intervals; weighted: Intervals };
}

/** What a row outcome tells the folder besides its SOB score. */
export interface TrackInfo {
  /** Count the row's SOB score in the SOB summary. */
  sob: boolean;
  /** Write the row to eval_records.jsonl (false: a SOB record whose schema was refused). */
  write: boolean;
  /** `eval_info.schema_rejected`. */
  rejected: boolean;
  /** A schema record: its aggregate row and what the folder's data quality counts. */
  schema?: {
    row: ComplianceRow;
    recordId: string;
    modelId: string;
    /** The protocol its schema was read under. */
    protocol: Protocol;
    /** Formats no value can satisfy under that protocol (`unsatisfiableFormats`), when any. */
    never?: string[];
    parses: boolean;
    /** null: not known (the record ran out of its budget). */
    compiles: boolean | null;
    scoringError: boolean;
  };
}

/** What a folder's summary needs of its tracks (structured-cloneable: it goes to a worker). */
export interface TrackData {
  /** The folder is `schema/<model>/`. */
  schema: boolean;
  profile: string;
  /** How its schemas were read (docs/compliance-protocols.md): one protocol, or `mixed`. */
  protocol: string;
  /** Why (`protocolReason`; for `mixed`, how many records each). */
  protocolReason: string;
  /** Records whose schema has a format no value satisfies under its protocol (the first 1,000). */
  unsatisfiable: { record_id: string; formats: string[] }[];
  /** How many records have such a schema. */
  unsatisfiableCount: number;
  rows: ComplianceRow[];
  counts: TrackCounts;
  modelIds: string[];
  distinctIds: number;
  /** SOB records left out because their schema was refused. */
  rejectedSob: number;
}

export class TrackCollector {
  private readonly rows: ComplianceRow[] = [];
  private readonly counts: TrackCounts = {
    parse_failures: 0,
    schema_rejected: 0,
    uncompilable: 0,
    scoring_errors: 0,
  };
  private readonly modelIds = new Set<string>();
  private readonly ids = new Set<string>();
  private rejectedSob = 0;
  private schema = false;
  private readonly protocols = new Map<Protocol, number>();
  private readonly unsatisfiable: { record_id: string; formats: string[] }[] = [];
  private unsatisfiableCount = 0;

  add(t: TrackInfo): void {
    const s = t.schema;
    if (!s) {
      if (t.rejected) this.rejectedSob++;
      return;
    }
    this.schema = true;
    this.rows.push(s.row);
    this.modelIds.add(s.modelId);
    this.ids.add(s.recordId);
    this.protocols.set(s.protocol, (this.protocols.get(s.protocol) ?? 0) + 1);
    if (s.never) {
      this.unsatisfiableCount++;
      if (this.unsatisfiable.length < 1000)
        this.unsatisfiable.push({ record_id: s.recordId, formats: s.never });
    }
    if (t.rejected) this.counts.schema_rejected++;
    else if (!s.parses && !s.scoringError) this.counts.parse_failures++;
    if (s.compiles === false) this.counts.uncompilable++;
    if (s.scoringError) this.counts.scoring_errors++;
  }

  /** The folder's data; `asked`: the `--protocol` given (else each record had its default). */
  data(profile: string, asked?: Protocol): TrackData | undefined {
    if (!this.schema && this.rejectedSob === 0) return undefined;
    const used = [...this.protocols].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let protocol: string;
    let reason: string;
    if (asked !== undefined || used.length === 0) {
      protocol = asked ?? 'dialect';
      reason = asked !== undefined ? protocolReason(asked, 'asked') : protocolReason('dialect', 'default');
    } else if (used.length === 1) {
      protocol = used[0][0];
      reason = protocolReason(used[0][0], 'default');
    } else {
      protocol = 'mixed';
      const n = (p: Protocol) => this.protocols.get(p) ?? 0;
      reason = `jsonschemabench for the ${n('jsonschemabench')} records built from JSONSchemaBench, dialect for the ${n('dialect')} others (each the default for its records): their rates are not comparable; --protocol reads all of them one way`;
    }
    return {
      schema: this.schema,
      profile,
      protocol,
      protocolReason: reason,
      unsatisfiable: [...this.unsatisfiable],
      unsatisfiableCount: this.unsatisfiableCount,
      rows: this.rows,
      counts: { ...this.counts },
      modelIds: [...this.modelIds],
      distinctIds: this.ids.size,
      rejectedSob: this.rejectedSob,
    };
  }
}

type SchemaFolderSummary = (input: SchemaFolderInput) => SchemaSummaryOut;

let schemaFolderSummary: SchemaFolderSummary | undefined;

/** Loads what a schema folder's summary needs (once; before `summarizeJob` meets one). */
export async function loadSchemaFolderSummary(): Promise<void> {
  schemaFolderSummary ??= (await import('../../metrics/compliance-track.ts')).schemaFolderSummary;
}

/**
 * A folder's `eval_summary.json`: the SOB summary, or the schema folder's (after
 * `loadSchemaFolderSummary`).
 */
export function summarizeJob(it: SummaryJob): SummaryOut {
  const t = it.track;
  if (!t) return buildSummary(it.data, it.responseFile, it.opts, it.intervals);
  if (!t.schema) {
    (it.data.dataQuality as DataQuality & { schema_rejected_count?: number }).schema_rejected_count =
      t.rejectedSob;
    return buildSummary(it.data, it.responseFile, it.opts, it.intervals);
  }
  if (!schemaFolderSummary) throw new Error('schema folder summary not loaded (loadSchemaFolderSummary)');
  const sob =
    it.data.weights.length > 0 ? buildSummary(it.data, it.responseFile, it.opts, it.intervals) : undefined;
  return schemaFolderSummary({
    responseFile: it.responseFile,
    profile: t.profile,
    protocol: t.protocol,
    protocolReason: t.protocolReason,
    unsatisfiable: t.unsatisfiable,
    unsatisfiableCount: t.unsatisfiableCount,
    modelIds: t.modelIds,
    rows: t.rows,
    counts: t.counts,
    distinctIds: t.distinctIds,
    malformedLines: it.data.dataQuality.malformed_jsonl_line_count,
    benchmark: it.data.benchmark,
    sob,
    bootstrapSamples: it.opts.bootstrapSamples,
    seed: it.opts.seed,
  });
}
