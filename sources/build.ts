/**
 * `sob build`: raw sources -> checked benchmark records (DESIGN.md "The pipeline", first arrow).
 *
 * A source loader turns its input into source items (an id, a context, metadata); an annotations
 * file supplies, per source id, a question, a JSON schema, the ground truth and optionally the
 * schema complexity. Joined, they are candidate records; every candidate goes through
 * `checkRecord` (sources/checks.ts). Accepted records are written one line at a time as they
 * pass (so a bad record never costs the good ones), rejected ones go to `rejected.jsonl` beside
 * the output with their reasons, and `manifest.json` beside them counts records and weight per
 * source. SOB dataset rows are records already and need no annotations.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { assertReadableFile, readJsonl } from '../src/core/jsonl.ts';
import { dumpsPy, type PyValue, parsePyJson, toPlain } from '../src/core/pyjson.ts';
import { COMPLEXITIES, type Modality } from '../src/core/record.ts';
import { loadAmi, TOKENIZER_NAME } from './ami.ts';
import { checkRecord } from './checks.ts';
import { loadHotpotQA } from './hotpotqa.ts';
import { type BenchmarkManifest, makeManifest, totalsOfFile, writeManifest } from './manifest.ts';
import { type DownloadOptions, loadSobRows, sobRowToRecord } from './sob-rows.ts';

export interface SourceItem {
  /** The id annotations refer to (HotpotQA `_id`, AMI meeting id, PDF `<name>_pg<N>` or `<name>`). */
  id: string;
  context: string;
  metadata: Record<string, unknown>;
}

export interface Problem {
  origin: string;
  reasons: string[];
  record_id?: string;
  record?: unknown;
}

export interface LoadResult {
  items: SourceItem[];
  problems: Problem[];
}

export const SOURCE_KINDS = ['hotpotqa', 'pdf', 'ami', 'sob'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** The modality each raw source feeds (SOB rows carry their own). */
export const SOURCE_MODALITY: Record<Exclude<SourceKind, 'sob'>, Modality> = {
  hotpotqa: 'text',
  pdf: 'image',
  ami: 'audio',
};

// ---------------------------------------------------------------------------------------------
// Annotations

const ID_KEYS = ['source_id', 'id', '_id', 'meeting_id', 'source'] as const;

export const Annotation = z
  .object({
    source_id: z.string().min(1),
    record_id: z.string().min(1).optional(),
    question: z.string().min(1),
    json_schema: z.union([z.record(z.unknown()), z.string()]),
    ground_truth: z.unknown(),
    schema_complexity: z.enum(COMPLEXITIES).optional(),
    difficulty: z.string().optional(),
    metadata: z.record(z.unknown()).optional(),
  })
  .passthrough();
export type Annotation = z.infer<typeof Annotation>;

export interface LoadedAnnotation {
  origin: string;
  annotation: Annotation;
  /** The ground truth as written (`17.0` stays a float), for writing the record. */
  groundTruth?: PyValue;
}

/** An annotation's `ground_truth`, read losslessly from its source text. */
function losslessGroundTruth(v: PyValue | undefined): PyValue | undefined {
  return v instanceof Map ? v.get('ground_truth') : undefined;
}

function withSourceId(v: unknown, key?: string): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = { ...(v as Record<string, unknown>) };
  if (o.source_id === undefined) {
    const k = ID_KEYS.find((name) => typeof o[name] === 'string');
    if (k) o.source_id = o[k];
    else if (key !== undefined) o.source_id = key;
  }
  return o;
}

/**
 * An annotations file: JSONL (one annotation a line), a JSON array of annotations, or a JSON
 * object keyed by source id whose values are an annotation or a list of them. An annotation
 * names its source with `source_id` (or `id`, `_id`, `meeting_id`).
 */
export function loadAnnotations(file: string): { annotations: LoadedAnnotation[]; problems: Problem[] } {
  assertReadableFile(file);
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const raw: { origin: string; value: unknown; error?: string; groundTruth?: PyValue }[] = [];
  if (file.toLowerCase().endsWith('.jsonl')) {
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        raw.push({
          origin: `${file}:${i + 1}`,
          value: withSourceId(JSON.parse(line)),
          groundTruth: losslessGroundTruth(parsePyJson(line)),
        });
      } catch (e) {
        raw.push({
          origin: `${file}:${i + 1}`,
          value: undefined,
          error: `not valid JSON: ${errorMessage(e)}`,
        });
      }
    });
  } else {
    let v: unknown;
    let lossless: PyValue;
    try {
      v = JSON.parse(text);
      lossless = parsePyJson(text);
    } catch (e) {
      throw new UserError(`${file}: not valid JSON: ${errorMessage(e)}`);
    }
    if (Array.isArray(v))
      for (const [i, x] of v.entries()) {
        const gt = Array.isArray(lossless) ? losslessGroundTruth(lossless[i]) : undefined;
        raw.push({ origin: `${file}: item ${i}`, value: withSourceId(x), groundTruth: gt });
      }
    else if (v !== null && typeof v === 'object' && 'question' in v)
      raw.push({ origin: file, value: withSourceId(v) });
    else if (v !== null && typeof v === 'object') {
      for (const [key, x] of Object.entries(v)) {
        const list = Array.isArray(x) ? x : [x];
        for (const [i, y] of list.entries()) {
          raw.push({
            origin: `${file}: ${key}${list.length > 1 ? `[${i}]` : ''}`,
            value: withSourceId(y, key),
          });
        }
      }
    } else throw new UserError(`${file}: expected annotations as JSON (array or object) or JSONL`);
  }
  const annotations: LoadedAnnotation[] = [];
  const problems: Problem[] = [];
  for (const r of raw) {
    if (r.error) {
      problems.push({ origin: r.origin, reasons: [r.error] });
      continue;
    }
    const parsed = Annotation.safeParse(r.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        origin: r.origin,
        reasons: [`not an annotation: ${issue.path.join('.') || 'annotation'}: ${issue.message}`],
      });
      continue;
    }
    annotations.push({ origin: r.origin, annotation: parsed.data, groundTruth: r.groundTruth });
  }
  return { annotations, problems };
}

/** Source items joined with their annotations into candidate records (not yet checked). */
/** A record ready for the checks; `groundTruth` (lossless) is what gets written when known. */
export interface Candidate {
  origin: string;
  record: unknown;
  groundTruth?: PyValue;
}

const GT_MARK = '\u0000sob-eval:ground_truth\u0000';

/** The record as one JSON line, its ground truth written as the annotation wrote it. */
function recordLine(c: Candidate): string {
  if (c.groundTruth === undefined) return JSON.stringify(c.record);
  const rec = c.record as { output: Record<string, unknown> };
  const text = JSON.stringify({ ...rec, output: { ...rec.output, ground_truth: GT_MARK } });
  const gt = dumpsPy(c.groundTruth, { ensureAscii: false, separators: [',', ':'] });
  return text.replace(JSON.stringify(GT_MARK), () => gt);
}

export function joinAnnotations(
  kind: Exclude<SourceKind, 'sob'>,
  items: SourceItem[],
  annotations: LoadedAnnotation[],
): { candidates: Candidate[]; problems: Problem[] } {
  const byId = new Map(items.map((it) => [it.id, it]));
  const perSource = new Map<string, number>();
  const candidates: Candidate[] = [];
  const problems: Problem[] = [];
  for (const { origin, annotation: a, groundTruth } of annotations) {
    const k = (perSource.get(a.source_id) ?? 0) + 1;
    perSource.set(a.source_id, k);
    const recordId = a.record_id ?? `${kind}-${a.source_id}-${k}`;
    const item = byId.get(a.source_id);
    if (!item) {
      problems.push({
        origin,
        record_id: recordId,
        reasons: [`no ${kind} source item with id "${a.source_id}" in the input`],
      });
      continue;
    }
    let schema: unknown = a.json_schema;
    if (typeof schema === 'string') {
      try {
        schema = JSON.parse(schema);
      } catch (e) {
        problems.push({
          origin,
          record_id: recordId,
          reasons: [`json_schema is a string that is not valid JSON: ${errorMessage(e)}`],
        });
        continue;
      }
    }
    const metadata: Record<string, unknown> = {
      record_id: recordId,
      source: SOURCE_MODALITY[kind],
      ...(a.schema_complexity ? { schema_complexity: a.schema_complexity } : {}),
      ...(a.difficulty ? { difficulty: a.difficulty } : {}),
      ...item.metadata,
      ...(a.metadata ?? {}),
    };
    candidates.push({
      origin,
      record: {
        metadata,
        input: { context: item.context, question: a.question, json_schema: schema },
        output: { ground_truth: a.ground_truth },
      },
      groundTruth,
    });
  }
  return { candidates, problems };
}

// ---------------------------------------------------------------------------------------------
// PDF (the pipeline lives in sources/pdf/, built separately)

interface PdfPage {
  page: number;
  markdown: string;
  method: string;
  /** Why the page was not transcribed (over the page cap or the time per page). */
  skipped?: string;
}
type PdfToTranscripts = (pdfPath: string, opts: Record<string, unknown>) => Promise<PdfPage[]>;

async function importPdfPipeline(): Promise<PdfToTranscripts> {
  const url = new URL('./pdf/index.ts', import.meta.url);
  if (!existsSync(url)) {
    throw new UserError(
      'the PDF pipeline (sources/pdf/index.ts) is not part of this installation: cannot build from PDFs',
    );
  }
  const mod = (await import(url.href)) as { pdfToTranscripts?: PdfToTranscripts };
  if (typeof mod.pdfToTranscripts !== 'function') {
    throw new UserError('sources/pdf/index.ts does not export pdfToTranscripts: cannot build from PDFs');
  }
  return mod.pdfToTranscripts;
}

function listPdfs(input: string): string[] {
  if (!existsSync(input)) throw new UserError(`no such file or folder: ${input}`);
  if (statSync(input).isFile()) return [input];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.toLowerCase().endsWith('.pdf')) out.push(p);
    }
  };
  walk(input);
  return out;
}

/**
 * PDF pages as source items: `<name>_pg<N>` per page (N from 1) and `<name>` for the whole
 * document (pages joined by blank lines), where `<name>` is the PDF's path relative to the
 * input folder (or its file name) without `.pdf` — the naming `sob ocr` uses.
 */
/**
 * The OCR quality gate (the paper kept pages passing >= 50% of their olmOCR-bench tests):
 * `minOcrPass` with `ocrTests` (a dataset.jsonl) drops pages whose transcript passes fewer of
 * their present/absent/order tests; a page without tests is kept.
 */
async function ocrGate(
  opts: Record<string, unknown>,
): Promise<
  ((name: string, page: number, markdown: string) => { rate: number; tests: number } | null) | null
> {
  const min = opts.minOcrPass;
  const file = opts.ocrTests;
  if (min === undefined) return null;
  if (typeof min !== 'number' || !(min >= 0 && min <= 1))
    throw new UserError('--min-ocr-pass must be a number from 0 to 1');
  if (typeof file !== 'string') {
    throw new UserError(
      '--min-ocr-pass needs --ocr-tests <dataset.jsonl> (olmOCR-bench tests to measure each page)',
      2,
    );
  }
  const { loadOcrTests, runOcrTest } = await import('./ocr-check.ts');
  const { tests } = await loadOcrTests(file);
  return (name, page, markdown) => {
    const mine = tests.filter(
      (t) =>
        t.page === page &&
        (t.pdf.replace(/\.pdf$/i, '') === name || t.pdf.replace(/\.pdf$/i, '').endsWith(`/${name}`)),
    );
    if (mine.length === 0) return null;
    const passed = mine.filter((t) => runOcrTest(t, markdown).passed).length;
    return { rate: passed / mine.length, tests: mine.length };
  };
}

export async function loadPdfs(input: string, opts: Record<string, unknown>): Promise<LoadResult> {
  const pdfToTranscripts = await importPdfPipeline();
  const gate = await ocrGate(opts);
  const result: LoadResult = { items: [], problems: [] };
  const isDir = statSync(input).isDirectory();
  for (const pdf of listPdfs(input)) {
    const name = (isDir ? relative(input, pdf) : basename(pdf)).replace(/\.pdf$/i, '');
    let pages: PdfPage[];
    try {
      pages = await pdfToTranscripts(pdf, opts);
    } catch (e) {
      result.problems.push({ origin: pdf, reasons: [`PDF could not be transcribed: ${errorMessage(e)}`] });
      continue;
    }
    // Pages not transcribed are named, one problem each, and left out.
    for (const p of pages.filter((x) => x.skipped))
      result.problems.push({ origin: `${name}_pg${p.page}`, reasons: [`page skipped: ${p.skipped}`] });
    pages = pages.filter((p) => !p.skipped);
    if (gate) {
      const kept: PdfPage[] = [];
      for (const p of pages) {
        const g = gate(name, p.page, p.markdown);
        if (g && g.rate < (opts.minOcrPass as number)) {
          result.problems.push({
            origin: `${name}_pg${p.page}`,
            reasons: [
              `OCR pass rate ${g.rate.toFixed(2)} on ${g.tests} tests is below --min-ocr-pass ${opts.minOcrPass}`,
            ],
          });
        } else kept.push(p);
      }
      pages = kept;
    }
    for (const p of pages) {
      result.items.push({
        id: `${name}_pg${p.page}`,
        context: p.markdown,
        metadata: {
          dataset: 'pdf',
          source_id: `${name}_pg${p.page}`,
          source_pdf: name,
          page: p.page,
          ocr_method: p.method,
        },
      });
    }
    result.items.push({
      id: name,
      context: pages.map((p) => p.markdown).join('\n\n'),
      metadata: {
        dataset: 'pdf',
        source_id: name,
        source_pdf: name,
        pages: pages.length,
        ocr_methods: [...new Set(pages.map((p) => p.method))],
      },
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The build

export interface BuildOptions {
  kind: SourceKind;
  input: string;
  out: string;
  annotations?: string;
  /** Add to an existing records file (ids must stay unique across it); the manifest covers all of it. */
  append?: boolean;
  /** AMI: the paper's upper-case transcript style. */
  upper?: boolean;
  /** SOB rows: config (text|image|audio or the dataset's name) and split for `hf:` inputs. */
  config?: string;
  split?: string;
  download?: Omit<DownloadOptions, 'log'>;
  /** PDF: options handed to pdfToTranscripts as they are (e.g. minOcrPass). */
  pdf?: Record<string, unknown>;
  log?: (line: string) => void;
  /** Warnings printed at most this many times (all are returned). */
  maxWarningsLogged?: number;
}

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
  warnings: BuildWarning[];
  manifest: BenchmarkManifest;
  /** Per source item: its id and context length in tokens (AMI: tokenizer `ws-punct-v1`). */
  contexts: { id: string; tokens?: number; chars: number }[];
}

async function existingIds(file: string): Promise<Set<string>> {
  const ids = new Set<string>();
  if (!existsSync(file)) return ids;
  for await (const line of readJsonl(file)) {
    if (!line.ok) continue;
    const rec = toPlain(line.value) as { metadata?: { record_id?: unknown } };
    if (typeof rec?.metadata?.record_id === 'string') ids.add(rec.metadata.record_id);
  }
  return ids;
}

function annotatedIds(file: string | undefined): Set<string> | undefined {
  if (!file) return undefined;
  return new Set(loadAnnotations(file).annotations.map((a) => a.annotation.source_id));
}

export async function buildBenchmark(opts: BuildOptions): Promise<BuildResult> {
  const log = opts.log ?? (() => {});
  const out = resolve(opts.out);
  const kind = opts.kind;
  if (!(SOURCE_KINDS as readonly string[]).includes(kind))
    throw new UserError(`unknown source kind "${kind}"`, 2);
  if (kind !== 'sob' && !opts.annotations) {
    throw new UserError(
      `building from ${kind} needs --annotations FILE (questions, schemas and ground truths per source id)`,
      2,
    );
  }
  if (!opts.input.startsWith('hf:') && !existsSync(opts.input))
    throw new UserError(`no such file or folder: ${opts.input}`);

  // 1. Candidates
  const candidates: Candidate[] = [];
  const problems: Problem[] = [];
  const contexts: BuildResult['contexts'] = [];
  if (kind === 'sob') {
    const { rows, source } = await loadSobRows(opts.input, {
      ...opts.download,
      config: opts.config,
      split: opts.split,
      log,
    });
    for (const { origin, row } of rows) {
      const parseError = (row as { __parseError?: string } | null)?.__parseError;
      if (parseError) {
        problems.push({ origin, reasons: [`not valid JSON: ${parseError}`] });
        continue;
      }
      try {
        candidates.push({ origin, record: sobRowToRecord(row, source) });
      } catch (e) {
        problems.push({ origin, reasons: [errorMessage(e)], record: row });
      }
    }
    log(`read ${rows.length} SOB rows from ${opts.input}`);
  } else {
    const { annotations, problems: annProblems } = loadAnnotations(opts.annotations!);
    problems.push(...annProblems);
    let loaded: LoadResult;
    if (kind === 'hotpotqa') loaded = loadHotpotQA(opts.input);
    else if (kind === 'ami')
      loaded = loadAmi(opts.input, { upper: opts.upper, only: annotatedIds(opts.annotations) });
    else loaded = await loadPdfs(opts.input, { ...opts.pdf, log });
    problems.push(...loaded.problems);
    for (const it of loaded.items) {
      const tokens = typeof it.metadata.context_tokens === 'number' ? it.metadata.context_tokens : undefined;
      contexts.push({ id: it.id, tokens, chars: it.context.length });
      if (kind === 'ami')
        log(`${it.id}: ${it.metadata.utterances} utterances, ${tokens} tokens (${TOKENIZER_NAME})`);
    }
    log(`loaded ${loaded.items.length} ${kind} source items and ${annotations.length} annotations`);
    const joined = joinAnnotations(kind, loaded.items, annotations);
    candidates.push(...joined.candidates);
    problems.push(...joined.problems);
  }

  // 2. Checks and output, record by record
  mkdirSync(dirname(out), { recursive: true });
  const rejectedFile = join(dirname(out), 'rejected.jsonl');
  const seenIds = opts.append ? await existingIds(out) : new Set<string>();
  const outFd = openSync(out, opts.append ? 'a' : 'w');
  const rejFd = openSync(rejectedFile, opts.append ? 'a' : 'w');
  let written = 0;
  let rejected = 0;
  const warnings: BuildWarning[] = [];
  const maxLogged = opts.maxWarningsLogged ?? 50;
  const reject = (p: Problem) => {
    rejected++;
    writeSync(
      rejFd,
      `${JSON.stringify({ origin: p.origin, record_id: p.record_id ?? null, reasons: p.reasons, record: p.record })}\n`,
    );
    log(`rejected ${p.record_id ?? p.origin}: ${p.reasons.join('; ')}`);
  };
  try {
    for (const p of problems) reject(p);
    for (const c of candidates) {
      const res = checkRecord(c.record, { seenIds });
      const id =
        res.record?.metadata.record_id ??
        (c.record as { metadata?: { record_id?: string } })?.metadata?.record_id;
      if (!res.ok || !res.record) {
        reject({ origin: c.origin, record_id: id, reasons: res.errors, record: c.record });
        continue;
      }
      for (const w of res.warnings) {
        warnings.push({ record_id: res.record.metadata.record_id, warning: w });
        if (warnings.length <= maxLogged) log(`warning: ${res.record.metadata.record_id}: ${w}`);
      }
      const rec = c.record as { metadata: Record<string, unknown> };
      if (rec.metadata.schema_complexity === undefined) {
        const { record_id, source, ...rest } = rec.metadata;
        rec.metadata = { record_id, source, schema_complexity: res.derivedComplexity, ...rest };
      }
      writeSync(outFd, `${recordLine(c)}\n`);
      written++;
    }
  } finally {
    closeSync(outFd);
    closeSync(rejFd);
  }
  if (warnings.length > maxLogged) log(`... and ${warnings.length - maxLogged} more warnings`);

  // 3. Manifest over the whole records file
  const manifest = makeManifest(await totalsOfFile(out), basename(out));
  const manifestFile = writeManifest(out, manifest);
  return { out, rejectedFile, manifestFile, written, rejected, warnings, manifest, contexts };
}
