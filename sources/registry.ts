/**
 * The source kinds `sob build <kind>` knows, each one file behind the `Loader` interface
 * (sources/types.ts), loaded only when used (the PDF side pulls in pdf.js and tesseract.js).
 * A new kind is one file and one entry here; `sob build --help` lists them from this table.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../src/core/errors.ts';
import { moduleUrl } from '../src/core/paths.ts';
import type { Loader } from './types.ts';

export interface LoaderEntry {
  kind: string;
  /** One line for `--help`. */
  summary: string;
  /** What `<input>` is for this kind (undefined: it takes none). */
  input?: string;
  /** Whether its records need `--annotations` (questions, schemas, ground truths per item). */
  annotations: boolean;
  /** The source its records carry, as `--help` says it. */
  source: string;
  /** Its file in sources/, which exports `loader` (loaded only when the kind is used). */
  file: string;
}

/** The kind's loader: its file's `loader` export. */
export async function loadLoader(entry: LoaderEntry): Promise<Loader> {
  const mod = (await import(moduleUrl(`./${entry.file}`, import.meta.url).href)) as { loader?: Loader };
  if (!mod.loader) throw new Error(`sources/${entry.file} exports no loader`);
  return mod.loader;
}

export const LOADERS: readonly LoaderEntry[] = [
  {
    kind: 'hotpotqa',
    summary: 'HotpotQA items (distractor split): one source item per question, its ten paragraphs',
    input: 'the JSON array the dataset ships, or JSONL',
    annotations: true,
    source: 'text',
    file: 'hotpotqa.ts',
  },
  {
    kind: 'pdf',
    summary: 'PDF pages through the text layer or OCR: one item per page and per document',
    input: 'a PDF or a folder of them',
    annotations: true,
    source: 'image',
    file: 'pdf-pages.ts',
  },
  {
    kind: 'ami',
    summary: 'AMI meetings as speaker-labelled transcripts: one item per meeting',
    input: 'an NXT corpus folder (words/, segments/) or a CSV/JSONL of utterance rows',
    annotations: true,
    source: 'audio',
    file: 'ami.ts',
  },
  {
    kind: 'sob',
    summary: 'rows of the SOB dataset (records already): local files or the Hugging Face Hub',
    input: 'a JSON/JSONL/Parquet file, or hf:<repo>[:<config>[:<split>]]',
    annotations: false,
    source: "each row's own (see below)",
    file: 'sob-rows.ts',
  },
  {
    kind: 'jsonschemabench',
    summary: "JSONSchemaBench's real-world schemas as schema-only records (category = dataset)",
    input: 'its data folder (<dataset>/<id>.json), or one dataset folder',
    annotations: false,
    source: 'schema',
    file: 'jsonschemabench.ts',
  },
  {
    kind: 'schemas',
    summary: 'your own JSON Schemas as schema-only records (category = folder or file)',
    input: 'a folder of *.json schemas, a JSON file (a schema or an array), or JSONL (one a line)',
    annotations: false,
    source: 'schema',
    file: 'schemas.ts',
  },
  {
    kind: 'probes',
    summary: 'SchemaBench-style probes with ground truths: escape translation and custom formats',
    annotations: false,
    source: 'schema (scored on both tracks)',
    file: 'probes.ts',
  },
];

export const LOADER_KINDS: readonly string[] = LOADERS.map((l) => l.kind);

export function loaderEntry(kind: string): LoaderEntry | undefined {
  return LOADERS.find((l) => l.kind === kind);
}

/**
 * The entry for a build request, or a usage error (exit 2) saying what is missing or extra:
 * the kind, `<input>`, `--annotations`.
 */
export function checkBuildRequest(
  kind: string,
  input: string | undefined,
  annotations: string | undefined,
): LoaderEntry {
  const entry = loaderEntry(kind);
  if (!entry) throw new UserError(`unknown source kind "${kind}": use one of ${LOADER_KINDS.join(', ')}`, 2);
  if (entry.input && input === undefined) throw new UserError(`${kind} needs an <input>: ${entry.input}`, 2);
  if (!entry.input && input !== undefined)
    throw new UserError(`${kind} takes no <input> (got "${input}")`, 2);
  if (entry.annotations && !annotations) {
    throw new UserError(
      `building from ${kind} needs --annotations FILE (questions, schemas and ground truths per source id)`,
      2,
    );
  }
  if (!entry.annotations && annotations)
    throw new UserError(`${kind} records need no --annotations (they carry their own questions)`, 2);
  return entry;
}

/** The kinds, one a line, for `sob build --help`. */
export function kindsHelp(): string {
  const w = Math.max(...LOADERS.map((l) => l.kind.length));
  return LOADERS.map(
    (l) =>
      `  ${l.kind.padEnd(w)}  ${l.summary}\n  ${' '.repeat(w)}  <input>: ${l.input ?? 'none'}; source: ${l.source}${l.annotations ? '; needs --annotations' : ''}`,
  ).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Telling an input's kind from its shape (sob author reads what sob build reads)

function hasPdf(dir: string, depth = 0): boolean {
  if (depth > 8) return false;
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (e.toLowerCase().endsWith('.pdf') && statSync(p).isFile()) return true;
    if (statSync(p).isDirectory() && hasPdf(p, depth + 1)) return true;
  }
  return false;
}

function firstJsonValue(file: string): unknown {
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v[0] : v;
  } catch {
    const line = text.split(/\r?\n/).find((l) => l.trim() !== '');
    try {
      return line === undefined ? undefined : (JSON.parse(line) as unknown);
    } catch {
      return undefined;
    }
  }
}

/**
 * Which item kind an input is, by its shape: a folder with `words/` (an AMI corpus), a PDF or a
 * folder of PDFs, a CSV (AMI utterance rows), a JSON/JSONL file of HotpotQA items (`_id` and a
 * list `context`) or of AMI utterance rows. Undefined when it is none of these.
 */
export function detectItemKind(input: string): 'hotpotqa' | 'ami' | 'pdf' | undefined {
  if (!existsSync(input)) return undefined;
  if (statSync(input).isDirectory()) {
    if (existsSync(join(input, 'words'))) return 'ami';
    return hasPdf(input) ? 'pdf' : undefined;
  }
  const lower = input.toLowerCase();
  if (lower.endsWith('.pdf')) return 'pdf';
  if (lower.endsWith('.csv')) return 'ami';
  const first = firstJsonValue(input);
  if (first === null || typeof first !== 'object') return undefined;
  const o = first as Record<string, unknown>;
  if (typeof o._id === 'string' && Array.isArray(o.context)) return 'hotpotqa';
  if ((o.meeting_id ?? o.meeting) !== undefined && (o.speaker_id ?? o.speaker) !== undefined && 'text' in o)
    return 'ami';
  return undefined;
}
