/**
 * Rows of the released SOB dataset (`interfaze-ai/sob` on Hugging Face) as benchmark records.
 *
 * Inputs: a JSON file (an array of rows, or one row), JSONL, or Parquet (read with hyparquet), or
 * `hf:<repo>[:<config>[:<split>]]`, which downloads the Parquet files of one config/split through
 * the Hub's listing API (`<endpoint>/api/datasets/<repo>/parquet/<config>/<split>` answers a JSON
 * list of Parquet URLs) into the user's cache folder and reads them from there.
 *
 * A row may be the record shape itself (`metadata`, `input`, `output`, each an object or a JSON
 * string) or flat (`record_id`, `context`, `question`, `json_schema`, `ground_truth`,
 * `schema_complexity`, ...). `json_schema` and `ground_truth` arriving as JSON strings (as they
 * do in Parquet) are parsed.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parquetReadObjects } from 'hyparquet';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { writeFileAtomic } from '../src/core/files.ts';
import { assertReadableFile } from '../src/core/jsonl.ts';
import { modalityFromPath } from '../src/core/modality.ts';
import { type PyValue, parsePyJson, pyFloatRepr } from '../src/core/pyjson.ts';
import { isModality, type Modality } from '../src/core/record.ts';
import type { Candidate, DownloadOptions, RecordLoader } from './types.ts';

const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';
const SOB_REPO = 'interfaze-ai/sob';

/** Our modality names -> the dataset's config names (the text rows are its `default` config). */
const SOB_CONFIGS: Record<Modality, string> = { text: 'default', image: 'image', audio: 'audio' };
/** The split read when none is named: the text config's test split, the only split of the others. */
const SOB_DEFAULT_SPLITS: Record<Modality, string> = { text: 'test', image: 'train', audio: 'train' };

export interface RawRow {
  origin: string;
  row: unknown;
  /** The row read losslessly (JSON and JSONL files), so `1.0` is written back as `1.0`. */
  lossless?: PyValue;
  /** The row's own text (a JSONL line): where a numeric id is read as written. */
  text?: string;
}

/**
 * The source text of a row's number at `key` (`id`, `metadata.record_id`): from the line as
 * written (`12345678901234567891`, `1.0`, `-0` stay themselves), else from the lossless value
 * (an int exact, a float as Python writes it); undefined when it is no number.
 */
export function rowNumberText(raw: RawRow, key: string): string | undefined {
  if (raw.text !== undefined) {
    const out = new Map<string, string>();
    try {
      parsePyJson(raw.text.trim(), { keys: new Set([key]), out });
    } catch {
      return undefined;
    }
    const t = out.get(key);
    return t !== undefined && /^-?[0-9]/.test(t) ? t : undefined;
  }
  let v: PyValue | undefined = raw.lossless;
  for (const k of key.split('.')) v = v instanceof Map ? v.get(k) : undefined;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return pyFloatRepr(v);
  return undefined;
}

export interface RowProblem {
  origin: string;
  reasons: string[];
}

/** `$XDG_CACHE_HOME/sob-eval`, else `~/.cache/sob-eval`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.trim() !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'sob-eval');
}

// ---------------------------------------------------------------------------------------------
// Row -> record

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Parquet INT64 comes back as bigint; records are plain JSON. */
function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plainValue);
  if (v instanceof Date) return v.toISOString();
  if (isObj(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = plainValue(x);
    return o;
  }
  return v;
}

/** A field that may hold JSON text: parsed when it is a string that looks like JSON. */
function maybeJson(v: unknown, what: string, always: boolean): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!always && !(t.startsWith('{') || t.startsWith('['))) return v;
  try {
    return JSON.parse(t) as unknown;
  } catch (e) {
    throw new Error(`${what} is a string that is not valid JSON: ${errorMessage(e)}`);
  }
}

const FLAT_METADATA_KEYS = [
  'record_id',
  'meeting_id',
  'id',
  'schema_complexity',
  'difficulty',
  'source',
  'modality',
  'source_category',
  'source_pdf',
];

/**
 * One dataset row as a candidate benchmark record (not yet checked). The row's own
 * `metadata.source` (or `metadata.modality`, or a flat `source` / `modality` column) is kept;
 * `source` fills `metadata.source` when the row states none.
 */
export function sobRowToRecord(
  rowIn: unknown,
  source?: Modality,
  /** A numeric id's source text by its key in the row (`rowNumberText`): the id as written. */
  idText?: (key: string) => string | undefined,
): Record<string, unknown> {
  const row = plainValue(rowIn);
  let idKey = 'metadata.record_id';
  if (!isObj(row)) throw new Error('a row must be an object');
  let metadata: Record<string, unknown>;
  let input: Record<string, unknown>;
  let output: Record<string, unknown>;
  if ('input' in row || 'output' in row) {
    const m = maybeJson(row.metadata ?? {}, 'metadata', true);
    const i = maybeJson(row.input, 'input', true);
    const o = maybeJson(row.output, 'output', true);
    if (!isObj(m) || !isObj(i) || !isObj(o)) throw new Error('metadata, input and output must be objects');
    metadata = { ...m };
    input = { ...i };
    output = { ...o };
  } else {
    metadata = isObj(row.metadata) ? { ...row.metadata } : {};
    for (const k of FLAT_METADATA_KEYS)
      if (row[k] !== undefined && row[k] !== null && metadata[k] === undefined) metadata[k] = row[k];
    idKey =
      isObj(row.metadata) && row.metadata.record_id !== undefined
        ? idKey
        : row.record_id !== undefined && row.record_id !== null
          ? 'record_id'
          : 'id';
    if (metadata.record_id === undefined && metadata.id !== undefined) metadata.record_id = metadata.id;
    delete metadata.id;
    input = { context: row.context, question: row.question, json_schema: row.json_schema };
    output = { ground_truth: row.ground_truth };
  }
  input.json_schema = maybeJson(input.json_schema, 'json_schema', false);
  output.ground_truth = maybeJson(output.ground_truth, 'ground_truth', true);
  // A numeric id keeps its text: through a double, 12345678901234567891 would be ...000 (and
  // its neighbour's duplicate), 1.0 would be 1, -0 would be 0.
  if (typeof metadata.record_id === 'number' || typeof metadata.record_id === 'bigint')
    metadata.record_id = idText?.(idKey) ?? String(metadata.record_id);
  if (!isModality(metadata.source) && isModality(metadata.modality)) metadata.source = metadata.modality;
  if (!isModality(metadata.source) && source) metadata.source = source;
  // A response file's fields are not part of a benchmark record.
  delete output.candidate_response;
  delete metadata.model_id;
  return { metadata, input, output };
}

/** A JSON text read losslessly, or undefined when it does not parse. */
function parseLossless(text: string): PyValue | undefined {
  try {
    return parsePyJson(text.trim());
  } catch {
    return undefined;
  }
}

/** `key` of a row read losslessly (a Map) or plainly (an object). */
function fieldOf(v: unknown, key: string): unknown {
  if (v instanceof Map) return v.get(key);
  return isObj(v) ? v[key] : undefined;
}

/**
 * A row's `ground_truth` and `json_schema` as their source wrote them (`1.0` stays a float),
 * from the row read losslessly (JSON, JSONL) or from the JSON text a field holds (Parquet):
 * the values `sobRowToRecord` reads, found the same way, for `recordLine` to write.
 */
export function sobRowLossless(raw: RawRow): Candidate['lossless'] {
  const row = raw.lossless ?? raw.row;
  const box = (v: unknown) => (typeof v === 'string' ? parseLossless(v) : v);
  const nested = fieldOf(row, 'input') !== undefined || fieldOf(row, 'output') !== undefined;
  const gt = nested ? fieldOf(box(fieldOf(row, 'output')), 'ground_truth') : fieldOf(row, 'ground_truth');
  const schema = nested ? fieldOf(box(fieldOf(row, 'input')), 'json_schema') : fieldOf(row, 'json_schema');
  const value = (v: unknown, always: boolean): PyValue | undefined => {
    if (typeof v === 'string') {
      const t = v.trim();
      return always || t.startsWith('{') || t.startsWith('[') ? parseLossless(t) : undefined;
    }
    // A plain object or array has lost its lexemes already: only a lossless one is worth keeping.
    return raw.lossless !== undefined && v !== undefined ? (v as PyValue) : undefined;
  };
  const out: Candidate['lossless'] = {};
  const g = value(gt, true);
  const s = value(schema, false);
  if (g !== undefined) out.ground_truth = g;
  if (s !== undefined) out.json_schema = s;
  return out.ground_truth === undefined && out.json_schema === undefined ? undefined : out;
}

// ---------------------------------------------------------------------------------------------
// Which source a row belongs to

/** The source a path names the way the SOB reference reads it (docs/scoring.md "Modality"), or
 * undefined where the reference would only fall back to text: a build never guesses. */
function modalityNamedByPath(file: string): Modality | undefined {
  const m = modalityFromPath(file);
  if (m !== 'text') return m;
  return file.replaceAll('\\', '/').toLowerCase().includes('text_response') ? 'text' : undefined;
}

export interface SourceHints {
  /** `--source`: every row gets it, whatever the row says. */
  forced?: Modality;
  /** The Hugging Face config (or `--config`) the rows came from. */
  config?: Modality;
  /** The input file, read with the reference's file-name rule. */
  file?: string;
}

export type SourceOrigin = '--source' | 'row' | 'config' | 'file name' | 'source_pdf' | 'meeting_id';

/**
 * Where a record's source comes from, first match wins: `--source`; the row's own
 * `metadata.source` / `metadata.modality`; the config; the file name (`text_response`,
 * `image(s)_response`, `audio_response`, `_image`, `_audio`); a `source_pdf` field (most of the
 * released SOB image rows carry one) means image, a `meeting_id` audio. Nothing else: an unknown
 * source is left unknown.
 */
function resolveRowSource(
  metadata: Record<string, unknown>,
  hints: SourceHints,
): { source?: Modality; from?: SourceOrigin } {
  if (hints.forced) return { source: hints.forced, from: '--source' };
  if (isModality(metadata.source)) return { source: metadata.source, from: 'row' };
  if (isModality(metadata.modality)) return { source: metadata.modality, from: 'row' };
  if (hints.config) return { source: hints.config, from: 'config' };
  const byName = hints.file ? modalityNamedByPath(hints.file) : undefined;
  if (byName) return { source: byName, from: 'file name' };
  if (typeof metadata.source_pdf === 'string' && metadata.source_pdf !== '')
    return { source: 'image', from: 'source_pdf' };
  if (typeof metadata.meeting_id === 'string' && metadata.meeting_id !== '')
    return { source: 'audio', from: 'meeting_id' };
  return {};
}

export interface SobCandidates {
  candidates: { origin: string; record: Record<string, unknown>; lossless?: Candidate['lossless'] }[];
  problems: RowProblem[];
  /** How many records took their source from where. */
  origins: Partial<Record<SourceOrigin, number>>;
  /** Rows whose own source `--source` replaced. */
  overridden: number;
}

/**
 * Rows as candidate records, each with its source resolved. A row whose source cannot be told
 * stops the whole build before anything is written (a benchmark with unlabelled records scores
 * as text and counts as nothing in its manifest): one line naming `--source`.
 */
function sobCandidates(rows: RawRow[], hints: SourceHints, input: string): SobCandidates {
  const out: SobCandidates = { candidates: [], problems: [], origins: {}, overridden: 0 };
  const unknown: string[] = [];
  for (const raw of rows) {
    const { origin, row } = raw;
    const parseError = (row as { __parseError?: string } | null)?.__parseError;
    if (parseError) {
      out.problems.push({ origin, reasons: [`not valid JSON: ${parseError}`] });
      continue;
    }
    let record: Record<string, unknown>;
    try {
      record = sobRowToRecord(row, undefined, (key) => rowNumberText(raw, key));
    } catch (e) {
      out.problems.push({ origin, reasons: [errorMessage(e)] });
      continue;
    }
    const metadata = record.metadata as Record<string, unknown>;
    const { source, from } = resolveRowSource(metadata, hints);
    if (!source || !from) {
      unknown.push(origin);
      continue;
    }
    if (from === '--source' && isModality(metadata.source) && metadata.source !== source) out.overridden++;
    metadata.source = source;
    out.origins[from] = (out.origins[from] ?? 0) + 1;
    out.candidates.push({ origin, record, lossless: sobRowLossless(raw) });
  }
  if (unknown.length > 0) {
    throw new UserError(
      `${input}: ${unknown.length} of ${rows.length} rows have no known source (first: ${unknown[0]}; no metadata.source, and neither the config nor the file name says text, image or audio): pass --source text|image|audio`,
      2,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files

async function readParquetRows(file: string): Promise<RawRow[]> {
  const buf = readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = (await parquetReadObjects({ file: ab })) as Record<string, unknown>[];
  } catch (e) {
    throw new UserError(`${file}: cannot read Parquet: ${errorMessage(e)}`);
  }
  return rows.map((row, i) => ({ origin: `${file}: row ${i}`, row }));
}

/**
 * The rows of a JSONL file one at a time (read as a stream: memory does not grow with the file),
 * each as `readSobFile` gives it.
 */
export async function* streamJsonlRows(file: string): AsyncGenerator<RawRow> {
  assertReadableFile(file);
  const lines = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const raw of lines) {
    n++;
    const line = n === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (line.trim() === '') continue;
    let row: unknown;
    let lossless: PyValue | undefined;
    try {
      row = JSON.parse(line);
      lossless = parseLossless(line);
    } catch (e) {
      row = { __parseError: errorMessage(e) };
    }
    yield { origin: `${file}:${n}`, row, lossless, text: line };
  }
}

/** Rows of a local JSON / JSONL / Parquet file. */
export async function readSobFile(file: string): Promise<RawRow[]> {
  assertReadableFile(file);
  const ext = extname(file).toLowerCase();
  if (ext === '.parquet') return readParquetRows(file);
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  if (ext === '.json') {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new UserError(`${file}: not valid JSON: ${errorMessage(e)}`);
    }
    const lossless = parseLossless(text);
    const list = Array.isArray(v) ? v : [v];
    const losslessList = Array.isArray(lossless) ? lossless : [lossless];
    return list.map((row, i) => ({ origin: `${file}: item ${i}`, row, lossless: losslessList[i] }));
  }
  const out: RawRow[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    let lossless: PyValue | undefined;
    try {
      row = JSON.parse(line);
      lossless = parseLossless(line);
    } catch (e) {
      row = { __parseError: errorMessage(e) };
    }
    out.push({ origin: `${file}:${i + 1}`, row, lossless, text: line });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Download

export interface HfSpec {
  repo: string;
  config: string;
  split: string;
  /** The modality the config names (our names, or the SOB dataset's own configs); else unknown. */
  source?: Modality;
}

/**
 * `hf:<repo>[:<config>[:<split>]]`; the config may be our modality name (text, image, audio)
 * or the dataset's own config name.
 */
export function parseHfSpec(spec: string, defaults: { config?: string; split?: string } = {}): HfSpec {
  const m = /^hf:([^:\s]+\/[^:\s]+)(?::([^:\s]+))?(?::([^:\s]+))?$/.exec(spec);
  if (!m) throw new UserError(`"${spec}" is not of the form hf:<owner>/<name>[:<config>[:<split>]]`, 2);
  const configIn = m[2] ?? defaults.config ?? 'text';
  let source: Modality | undefined;
  let config: string;
  if (isModality(configIn)) {
    source = configIn;
    config = SOB_CONFIGS[configIn];
  } else {
    config = configIn;
    // The SOB dataset's own config names say their modality; another dataset's do not.
    const found = (Object.entries(SOB_CONFIGS) as [Modality, string][]).find(([, c]) => c === configIn);
    source = found && m[1] === SOB_REPO ? found[0] : undefined;
  }
  const split = m[3] ?? defaults.split ?? (source ? SOB_DEFAULT_SPLITS[source] : 'train');
  const out: HfSpec = { repo: m[1], config, split };
  if (source) out.source = source;
  return out;
}

/**
 * Whether `HF_TOKEN` may go to this URL: only the Hugging Face hosts (huggingface.co, hf.co and
 * their subdomains) and only over https. A mirror named by `--hf-endpoint` / `HF_ENDPOINT`, a
 * plain-http URL, or a host a listing or a redirect points elsewhere never sees the token.
 */
export function tokenAllowedFor(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:') return false;
  const h = u.hostname.toLowerCase();
  return ['huggingface.co', 'hf.co'].some((d) => h === d || h.endsWith(`.${d}`));
}

export function authHeaders(url: string): Record<string, string> {
  const token = process.env.HF_TOKEN;
  return token && tokenAllowedFor(url) ? { authorization: `Bearer ${token}` } : {};
}

const MAX_REDIRECTS = 10;

/** GET with redirects followed by hand, so each hop decides afresh whether the token goes along. */
async function fetchOk(url: string, f: typeof fetch): Promise<Response> {
  let at = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res: Response;
    try {
      res = await f(at, { headers: authHeaders(at), redirect: 'manual' });
    } catch (e) {
      throw new UserError(`cannot reach ${at}: ${errorMessage(e)}`);
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      at = new URL(location, at).href;
      continue;
    }
    if (!res.ok) throw new UserError(`${at}: HTTP ${res.status} ${res.statusText}`.trim());
    return res;
  }
  throw new UserError(`${url}: more than ${MAX_REDIRECTS} redirects`);
}

/** Lists, downloads (unless cached) and returns the local Parquet files of one config/split. */
export async function downloadSobParquet(spec: HfSpec, opts: DownloadOptions = {}): Promise<string[]> {
  const endpoint = (opts.endpoint ?? process.env.HF_ENDPOINT ?? DEFAULT_HF_ENDPOINT).replace(/\/+$/, '');
  const f = opts.fetchImpl ?? fetch;
  if (process.env.HF_TOKEN && !tokenAllowedFor(endpoint))
    opts.log?.(`HF_TOKEN is not sent to ${endpoint}: it only goes to huggingface.co over https`);
  const dir = join(
    opts.cacheDir ?? defaultCacheDir(),
    'datasets',
    ...spec.repo.split('/'),
    spec.config,
    spec.split,
  );
  const listUrl = `${endpoint}/api/datasets/${spec.repo}/parquet/${encodeURIComponent(spec.config)}/${encodeURIComponent(spec.split)}`;
  const listFile = join(dir, 'files.json');
  let urls: string[] | undefined;
  if (!opts.refresh && existsSync(listFile)) {
    try {
      urls = JSON.parse(readFileSync(listFile, 'utf8')) as string[];
    } catch {
      urls = undefined;
    }
  }
  if (!urls) {
    opts.log?.(`listing ${listUrl}`);
    const body = (await (await fetchOk(listUrl, f)).json()) as unknown;
    if (!Array.isArray(body) || !body.every((u) => typeof u === 'string')) {
      throw new UserError(`${listUrl}: expected a JSON list of Parquet URLs`);
    }
    urls = body as string[];
    if (urls.length === 0)
      throw new UserError(`${listUrl}: no Parquet files for ${spec.config}/${spec.split}`);
  }
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const [i, url] of urls.entries()) {
    const name = `${String(i).padStart(4, '0')}-${createHash('sha256').update(url).digest('hex').slice(0, 12)}.parquet`;
    const file = join(dir, name);
    if (opts.refresh || !existsSync(file)) {
      opts.log?.(`downloading ${url}`);
      const res = await fetchOk(url, f);
      const bytes = new Uint8Array(await res.arrayBuffer());
      // Written whole or not at all (a torn download never looks cached), never through a link.
      writeFileAtomic(file, bytes);
    } else opts.log?.(`cached ${file}`);
    files.push(file);
  }
  writeFileAtomic(listFile, `${JSON.stringify(urls)}\n`);
  return files;
}

export interface SobLoad {
  rows: RawRow[];
  source?: Modality;
}

/** Rows of a local file or an `hf:` spec. */
async function loadSobRows(
  input: string,
  opts: DownloadOptions & { config?: string; split?: string } = {},
): Promise<SobLoad> {
  if (input.startsWith('hf:')) {
    const spec = parseHfSpec(input, { config: opts.config, split: opts.split });
    const files = await downloadSobParquet(spec, opts);
    const rows: RawRow[] = [];
    for (const f of files) rows.push(...(await readParquetRows(f)));
    return { rows, source: spec.source };
  }
  const source = opts.config && isModality(opts.config) ? opts.config : undefined;
  return { rows: await readSobFile(input), source };
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'extraction',
  loadRecords: async (input, ctx) => {
    if (input === undefined)
      throw new UserError('sob needs an <input>: a JSON/JSONL/Parquet file or hf:<repo>', 2);
    const o = ctx.options;
    const { rows, source } = await loadSobRows(input, {
      ...o.download,
      config: o.config,
      split: o.split,
      log: ctx.log,
    });
    const sob = sobCandidates(
      rows,
      { forced: o.source, config: source, file: input.startsWith('hf:') ? undefined : input },
      input,
    );
    const from = Object.entries(sob.origins)
      .map(([k, n]) => `${n} from ${k === 'row' ? 'the row' : k === 'config' ? 'the config' : k}`)
      .join(', ');
    if (from) ctx.log(`source of each record: ${from}`);
    if (sob.overridden > 0)
      ctx.log(`--source ${o.source} replaced a different metadata.source on ${sob.overridden} rows`);
    ctx.log(`read ${rows.length} SOB rows from ${input}`);
    return { candidates: sob.candidates, problems: sob.problems };
  },
};
