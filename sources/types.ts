/**
 * The one interface every source loader implements (as providers do: one file per loader, a
 * registry `sob build <kind>` looks up, `sources/registry.ts`). A loader imports this file and
 * `src/core`, never `build.ts`: the build depends on loaders, not the other way round.
 *
 * Two shapes:
 * - an item loader (hotpotqa, pdf, ami) turns its input into source items (an id, a context,
 *   metadata); an annotations file supplies each record's question, schema and ground truth;
 * - a record loader (sob, jsonschemabench, schemas, probes) produces candidate records itself.
 * Every candidate then goes through the record checks and is written or rejected by the build.
 */
import type { Attachment } from '../src/core/attachments.ts';
import type { PyValue } from '../src/core/pyjson.ts';
import type { Modality } from '../src/core/record.ts';
import type { CheckMode, CheckOptions } from '../src/core/record-checks.ts';

/** How a record loader fetches a published data set's files (`sources/sob-rows.ts`). */
export interface DownloadOptions {
  endpoint?: string;
  cacheDir?: string;
  /** Download again even when the files are cached. */
  refresh?: boolean;
  log?: (line: string) => void;
  fetchImpl?: typeof fetch;
}

export interface SourceItem {
  /** The id annotations refer to (HotpotQA `_id`, AMI meeting id, PDF `<name>_pg<N>` or `<name>`). */
  id: string;
  context: string;
  metadata: Record<string, unknown>;
  /** The item's documents (its PDF pages and their renders, a meeting's audio): see `Attach`. */
  attach?: Attach;
}

/**
 * A record's documents, stored into the benchmark folder when the record has passed its checks
 * (so a rejected record leaves no file behind, and a page is rendered only for a record that
 * needs it): each stored by content hash with `storeAttachment`, the list the record's
 * `input.attachments`. A throw rejects the record with its message.
 */
export type Attach = (benchmarkDir: string) => Promise<Attachment[]>;

/** Something that did not become a record, with where it came from and why. */
export interface Problem {
  origin: string;
  reasons: string[];
  record_id?: string;
  /** The source item the problem cost (its annotations are then rejected saying so). */
  source_id?: string;
  record?: unknown;
}

export interface LoadResult {
  items: SourceItem[];
  problems: Problem[];
  /** Said, counted, and no reason to reject anything (a meeting without its recording). */
  warnings?: { id: string; warning: string }[];
}

/** A record ready for the checks. */
export interface Candidate {
  origin: string;
  record: unknown;
  /** Values to write exactly as their source wrote them (`17.0` stays a float). */
  lossless?: { ground_truth?: PyValue; json_schema?: PyValue };
  /** Its documents, stored once it passes (`input.attachments`). */
  attach?: Attach;
  /** The loader's warnings for this record, said (and counted) when it is written. */
  warnings?: string[];
}

export interface RecordLoadResult {
  candidates: Candidate[];
  problems: Problem[];
  /**
   * Or the same, one row at a time (a JSONL file of any size: the build holds one record at a
   * time); `done` is called when it ends, for the loader's closing line.
   */
  stream?: AsyncIterable<{ candidate: Candidate } | { problem: Problem }>;
  /** How its records are checked beyond the loader's mode (a gold kept though its schema rejects it). */
  checkOptions?: Pick<CheckOptions, 'invalidGroundTruth' | 'skipGrounding'>;
  /** Keys the build adds to the manifest (ExtractBench: each document's pages and transcript length). */
  manifest?: Record<string, unknown>;
}

/** How a loader's records are checked (src/core/record-checks.ts). */
export type { CheckMode };

/** Options `sob build` hands every loader; each reads the ones it knows. */
export interface LoaderOptions {
  /** AMI: the paper's upper-case transcript style. */
  upper?: boolean;
  /** SOB rows: config (text|image|audio or the dataset's name) and split for `hf:` inputs. */
  config?: string;
  split?: string;
  /** SOB rows: the source of every row, whatever the row, config or file name says. */
  source?: Modality;
  download?: Omit<DownloadOptions, 'log'>;
  /** Records: our field -> the user's column (`--map context=passage`). */
  map?: Record<string, string>;
  /** PDF: options handed to pdfToTranscripts as they are (e.g. minOcrPass). */
  pdf?: Record<string, unknown>;
  /** PDF: the resolution each page is rendered at for its records' attachments (0: no renders). */
  renderDpi?: number;
  /** AMI: the folder of the meetings' recordings (`<meeting>.Mix-Headset.wav`). */
  audio?: string;
  /** The records file being written: a loader storing documents puts them beside it (attachments/). */
  out?: string;
  /** ExtractBench: a gold its own schema rejects is rejected, not kept with a warning. */
  strictGold?: boolean;
  /** ExtractBench: a gold its schema rejects widens the record's schema (default) or is kept as is. */
  goldInvalid?: 'widen' | 'keep';
}

export interface LoadContext {
  log: (line: string) => void;
  /** Source ids some annotation names: an item loader may load only these. */
  only?: ReadonlySet<string>;
  options: LoaderOptions;
}

export interface ItemLoader {
  produces: 'items';
  /** The source of the records built from its items. */
  source: Modality;
  loadItems(input: string, ctx: LoadContext): Promise<LoadResult>;
}

export interface RecordLoader {
  produces: 'records';
  checks: CheckMode;
  loadRecords(input: string | undefined, ctx: LoadContext): Promise<RecordLoadResult>;
}

export type Loader = ItemLoader | RecordLoader;
