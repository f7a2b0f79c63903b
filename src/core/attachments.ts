/**
 * A record's documents (docs/records.md "Attachments"): `input.attachments`, each
 * `{kind, path, sha256, mime, pages?}`, the file stored inside the benchmark folder by its content
 * hash, `attachments/<sha256>.<ext>`, so a benchmark folder is self-contained and can be moved.
 *
 * One writer (`storeAttachment`, used by every builder) and one checker (`verifyAttachments`,
 * used by the benchmark loader before anything is asked); the runner reads a file when it sends
 * it (`readAttachment`), so a benchmark's documents are never all held at once.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { z } from 'zod';
import { renameInto, tempNameFor, writeFileAtomic } from './files.ts';

/** The kinds of document a record may carry. */
export const ATTACHMENT_KINDS = ['image', 'pdf', 'audio'] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];

/** How a model is given a record (`--input`): its transcript, its documents, or both. */
export const INPUT_MODES = ['text', 'document', 'both'] as const;
export type InputMode = (typeof INPUT_MODES)[number];

/** The folder, inside a benchmark folder, its documents are stored in. */
export const ATTACHMENTS_DIR = 'attachments';

export const Attachment = z
  .object({
    kind: z.enum(ATTACHMENT_KINDS),
    /** Relative to the benchmark folder (`attachments/<sha256>.<ext>`). */
    path: z.string().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lower-case hex digits'),
    mime: z.string().regex(/^[a-z]+\/[a-z0-9.+-]+$/i, 'a MIME type such as image/png'),
    /** For a PDF: the pages of the source document it covers (1-based); for a page render, its page. */
    pages: z.array(z.number().int().positive()).optional(),
    /** For a page render (`sob build pdf`): the resolution it was drawn at, in dots per inch. */
    dpi: z.number().positive().optional(),
  })
  .strict();
export type Attachment = z.infer<typeof Attachment>;

export const Attachments = z.array(Attachment);

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'application/pdf': 'pdf',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/flac': 'flac',
  'audio/ogg': 'ogg',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
};

const MIME_OF_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  pdf: 'application/pdf',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
};

/** The MIME type and kind a file name's extension stands for; undefined for one not known. */
export function mimeOfFile(file: string): { mime: string; kind: AttachmentKind } | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase();
  const mime = ext ? MIME_OF_EXT[ext] : undefined;
  if (!mime) return undefined;
  return { mime, kind: mime === 'application/pdf' ? 'pdf' : (mime.split('/')[0] as AttachmentKind) };
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Stores a document in a benchmark folder by its content hash (`attachments/<sha256>.<ext>`;
 * the same bytes are stored once) and returns the record's entry for it.
 */
export function storeAttachment(
  benchmarkDir: string,
  bytes: Uint8Array,
  kind: AttachmentKind,
  mime: string,
  pages?: number[],
): Attachment {
  const sha256 = sha256Hex(bytes);
  const path = `${ATTACHMENTS_DIR}/${sha256}.${EXT[mime.toLowerCase()] ?? 'bin'}`;
  const file = join(benchmarkDir, path);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileAtomic(file, bytes);
  }
  return { kind, path, sha256, mime, ...(pages?.length ? { pages } : {}) };
}

/**
 * `storeAttachment` for a file on disk, read as a stream (a meeting's recording may be hundreds
 * of megabytes): hashed, then copied in under its hash (a temp file renamed) unless already there.
 */
export async function storeAttachmentFile(
  benchmarkDir: string,
  source: string,
  kind: AttachmentKind,
  mime: string,
  pages?: number[],
): Promise<Attachment> {
  const sha256 = await fileHash(source);
  const path = `${ATTACHMENTS_DIR}/${sha256}.${EXT[mime.toLowerCase()] ?? 'bin'}`;
  const file = join(benchmarkDir, path);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = tempNameFor(file);
    try {
      copyFileSync(source, tmp);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
    renameInto(tmp, file);
    // Copied while it was being written? The stored file must be the bytes its name says.
    const got = await fileHash(file);
    if (got !== sha256) {
      rmSync(file, { force: true });
      throw new Error(`${source} changed while it was being copied into the benchmark folder`);
    }
  }
  return { kind, path, sha256, mime, ...(pages?.length ? { pages } : {}) };
}

/**
 * A scratch build's documents moved into the benchmark folder it replaces (each file by rename;
 * one already there is the same bytes, its name being its hash, and is kept). Done before the
 * records file is moved in, so no record ever names a file that is not there yet.
 */
export function moveAttachments(fromDir: string, toDir: string): number {
  const from = join(fromDir, ATTACHMENTS_DIR);
  if (!existsSync(from)) return 0;
  const to = join(toDir, ATTACHMENTS_DIR);
  mkdirSync(to, { recursive: true });
  let moved = 0;
  for (const name of readdirSync(from)) {
    if (name.startsWith('.')) continue; // a temp file of an interrupted store
    if (existsSync(join(to, name))) continue;
    renameSync(join(from, name), join(to, name));
    moved++;
  }
  return moved;
}

/** The file an entry names, or why it cannot be one (a path leaving the benchmark folder). */
export function attachmentFile(benchmarkDir: string, a: Pick<Attachment, 'path'>): string | { bad: string } {
  if (isAbsolute(a.path) || a.path.includes('\\'))
    return { bad: `path ${JSON.stringify(a.path)} must be relative to the benchmark folder` };
  const file = join(benchmarkDir, normalize(a.path));
  const rel = relative(benchmarkDir, file);
  if (rel.startsWith(`..${sep}`) || rel === '..')
    return { bad: `path ${JSON.stringify(a.path)} leaves the benchmark folder` };
  return file;
}

async function fileHash(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Why a record's attachments cannot be sent, each as one reason naming the attachment (its
 * index and path): a file missing, not a file, or with other bytes than its hash says. Files are
 * hashed as streams, one at a time.
 */
export async function verifyAttachments(
  benchmarkDir: string,
  list: readonly Attachment[],
): Promise<string[]> {
  const out: string[] = [];
  for (const [i, a] of list.entries()) {
    const name = `attachment ${i + 1} (${a.path})`;
    const file = attachmentFile(benchmarkDir, a);
    if (typeof file !== 'string') {
      out.push(`${name}: ${file.bad}`);
      continue;
    }
    let isFile = false;
    try {
      isFile = statSync(file).isFile();
    } catch {
      out.push(`${name}: no such file ${file}`);
      continue;
    }
    if (!isFile) {
      out.push(`${name}: ${file} is not a file`);
      continue;
    }
    const got = await fileHash(file);
    if (got !== a.sha256)
      out.push(
        `${name}: its bytes do not match its sha256 (${a.sha256.slice(0, 12)}..., the file has ${got.slice(0, 12)}...): altered after the build?`,
      );
  }
  return out;
}

/** A document's bytes, read now (for one request) and checked against its hash again. */
export function readAttachment(benchmarkDir: string, a: Attachment): Buffer {
  const file = attachmentFile(benchmarkDir, a);
  if (typeof file !== 'string') throw new Error(file.bad);
  const data = readFileSync(file);
  const got = sha256Hex(data);
  if (got !== a.sha256)
    throw new Error(`${a.path}: its bytes no longer match its sha256 (altered during the run?)`);
  return data;
}

/**
 * The pages a record's documents show (cost per page): its PDFs' pages; without a PDF, its
 * images (a page render beside its PDF is the same page, not another one). Audio has none.
 */
export function documentPages(list: readonly Pick<Attachment, 'kind' | 'pages'>[]): number {
  const pdfs = list.filter((a) => a.kind === 'pdf');
  if (pdfs.length > 0) return pdfs.reduce((n, a) => n + (a.pages?.length ?? 1), 0);
  return list.filter((a) => a.kind === 'image').length;
}
