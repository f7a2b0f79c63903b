/**
 * One evaluation folder, `<out>/<modality>/<model>/`, whole or absent (HELPERS.md contract
 * "Evaluation folders are whole or absent"):
 *
 * 1. the folder is built complete under a temp name in the same parent,
 *    `.<model>.tmp-<pid>-<hex>` (rows streamed into it, then the summary and any side file);
 * 2. the old folder, if any, is renamed aside to `.<model>.old-<pid>-<hex>`, the new one renamed
 *    in, and the old one deleted.
 *
 * A reader never sees rows of one run beside the summary of another; a crash leaves the old
 * folder, no folder, or dot-folders that readers skip and the next `sob score` cleans
 * (`cleanEvaluationParent`). Nothing is ever written into an existing folder, so a symlink
 * planted there (say `eval_summary.json` -> a file elsewhere) is removed with the old folder,
 * never written through. Each folder being written is held under an advisory lock
 * (`.<model>.lock` in the parent), so two `sob score` processes never interleave in one folder.
 */
import {
  closeSync,
  constants,
  existsSync,
  promises as fsp,
  fsync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { withPath } from '../core/errors.ts';
import {
  acquireLock,
  isSymlink,
  type Lock,
  pidAlive,
  refuseSpecial,
  refuseSymlink,
  removeStaleTemps,
  tempNameFor,
} from '../core/files.ts';
import { evalRowText } from '../core/formats/eval-row.ts';

const OLD_MARK = '.old-';
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Writes a whole file into a folder this process just created (no temp name needed there). */
async function writeNew(file: string, data: string): Promise<void> {
  const fh = await fsp.open(file, CREATE, 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    throw withPath(e, file);
  } finally {
    await fh.close();
  }
}

function pidOf(name: string, mark: string): number {
  const at = name.lastIndexOf(mark);
  return at < 0 ? Number.NaN : Number.parseInt(name.slice(at + mark.length), 10);
}

const cleaned = new Set<string>();

/**
 * Before writing under `<out>/<modality>/` (once per process and folder): temp folders of
 * processes that are gone are deleted; a folder moved aside by a process killed before it could
 * move the new one in is put back when nothing replaced it (else deleted); lock files of gone
 * processes are deleted. A symlinked `<out>/<modality>` is refused.
 */
export function cleanEvaluationParent(parent: string): void {
  if (cleaned.has(parent)) return;
  cleaned.add(parent);
  refuseSymlink(parent, 'evaluation folder');
  if (!existsSync(parent)) return;
  removeStaleTemps(parent);
  for (const name of readdirSync(parent)) {
    if (!name.startsWith('.')) continue;
    const full = join(parent, name);
    if (name.includes(OLD_MARK)) {
      const pid = pidOf(name, OLD_MARK);
      if (pid === process.pid || pidAlive(pid)) continue;
      const model = name.slice(1, name.lastIndexOf(OLD_MARK));
      const home = join(parent, model);
      if (model && !existsSync(home) && !isSymlink(home)) renameSync(full, home);
      else rmSync(full, { recursive: true, force: true });
    } else if (name.endsWith('.lock')) {
      try {
        const owner = JSON.parse(readFileSync(full, 'utf8')) as { pid?: unknown };
        if (typeof owner.pid === 'number' && owner.pid !== process.pid && !pidAlive(owner.pid))
          unlinkSync(full);
      } catch {
        // being written right now, or not ours: leave it
      }
    }
  }
}

/**
 * How much of a folder file is kept before it is written (characters). Small on purpose: a write
 * of a string past ~16 KB makes Node copy it into a buffer it allocates, and a joined string past
 * ~128 KB lives in V8's large-object space until a full collection. With 1 MB writes, a long run's
 * memory grew with its output: peak RSS on the SOB files repeated 10 times was 1.24x the 1x run
 * (median of 5); with these it is 1.19x, in the same time.
 */
const FLUSH_CHARS = 12_000;

/**
 * The same for bytes a worker brought (`writeBytes`): no copy is made of them, so more are kept
 * (one write a few batches).
 */
const FLUSH_BYTES = 256 * 1024;

/** Lines streamed to a file of a folder being built (buffered; synced when the folder commits). */
export class FolderStream {
  private buf: string[] = [];
  private bufLen = 0;
  closed = false;
  /** `path`: the file `fd` is open on, named by a failed write (a full disk, a file size limit). */
  constructor(
    readonly fd: number,
    readonly path = '',
  ) {}

  write(line: string): void {
    if (this.ending) throw new Error('a row written after its folder ended its rows');
    if (this.chunks.length > 0) this.flush();
    this.buf.push(line);
    this.bufLen += line.length;
    if (this.bufLen > FLUSH_CHARS) this.flush();
  }

  /**
   * Bytes that already end in a newline (a worker's batch of fields.jsonl lines): kept as they
   * came, slices of one batch's buffer joined back into one, and written together (`writevSync`).
   */
  writeBytes(bytes: Uint8Array): void {
    if (this.ending) throw new Error('a row written after its folder ended its rows');
    if (this.buf.length > 0) this.flush();
    const last = this.chunks[this.chunks.length - 1];
    if (last && last.buffer === bytes.buffer && last.byteOffset + last.byteLength === bytes.byteOffset)
      this.chunks[this.chunks.length - 1] = new Uint8Array(
        last.buffer,
        last.byteOffset,
        last.byteLength + bytes.byteLength,
      );
    else this.chunks.push(bytes);
    this.chunksLen += bytes.byteLength;
    if (this.chunksLen > FLUSH_BYTES) this.flush();
  }

  private chunks: Uint8Array[] = [];
  private chunksLen = 0;

  flush(): void {
    try {
      if (this.chunks.length > 0) {
        let n = writevSync(this.fd, this.chunks);
        // A short write (a signal, a pipe): the rest, from where it stopped.
        while (n < this.chunksLen) n += writeSync(this.fd, Buffer.concat(this.chunks).subarray(n));
        this.chunks = [];
        this.chunksLen = 0;
      }
      if (this.buf.length === 0) return;
      writeSync(this.fd, `${this.buf.join('\n')}\n`);
    } catch (e) {
      throw withPath(e, this.path);
    }
    this.buf = [];
    this.bufLen = 0;
  }

  /** Set once `end` has started: it closes the file whatever happens. */
  private ending?: Promise<void>;

  /** Flushes, syncs and closes (asynchronously: the disk never holds up scoring); once. */
  end(): Promise<void> {
    this.ending ??= (async () => {
      try {
        this.flush();
        await new Promise<void>((resolve, reject) =>
          fsync(this.fd, (e) => (e ? reject(withPath(e, this.path)) : resolve())),
        );
      } finally {
        closeSync(this.fd);
        this.closed = true;
      }
    })();
    return this.ending;
  }

  close(): void {
    // A sync under way closes the file itself when it ends (its number is not reused before).
    if (this.ending) return;
    if (!this.closed) closeSync(this.fd);
    this.closed = true;
  }
}

/** An evaluation folder being built: rows stream in, then `commit` swaps it in whole. */
export class EvalFolder {
  private rows: FolderStream;
  /** Side files streamed beside the rows (`lenient_records.jsonl`). */
  private sides: FolderStream[] = [];
  private lock: Lock;
  readonly tmp: string;

  constructor(readonly dir: string) {
    const parent = dirname(dir);
    refuseSpecial(dir, 'evaluation folder');
    mkdirSync(parent, { recursive: true });
    cleanEvaluationParent(parent);
    this.lock = acquireLock(parent, `evaluation folder ${basename(dir)} in`, `.${basename(dir)}.lock`);
    try {
      this.tmp = tempNameFor(dir);
      mkdirSync(this.tmp);
      // A failed write names the file where it was going (the temp folder is removed).
      this.rows = new FolderStream(
        openSync(join(this.tmp, 'eval_records.jsonl'), CREATE, 0o644),
        join(dir, 'eval_records.jsonl'),
      );
    } catch (e) {
      this.lock.release();
      throw e;
    }
  }

  /** One row (`eval_records.jsonl`), its JSON text as the scorer built it: stamped with its format version here. */
  write(line: string): void {
    this.rows.write(evalRowText(line));
  }

  /** A side file streamed beside the rows, swapped in with them. */
  stream(name: string): FolderStream {
    const s = new FolderStream(openSync(join(this.tmp, name), CREATE, 0o644), join(this.dir, name));
    this.sides.push(s);
    return s;
  }

  /**
   * Ends the rows: the summary is computed after (and, with a bootstrap, waits for it), so the
   * rows are synced from now on, in the background, not when the folder commits (fsyncing each
   * ~2 MB eval_records.jsonl then held the last folders ~45 ms after their bootstrap). A failed
   * sync is raised by `commit`.
   */
  endRows(): void {
    for (const s of [this.rows, ...this.sides]) s.end().catch(() => {});
  }

  /**
   * Writes the summary (and side files), syncs, then swaps the folder in whole; releases the
   * lock. Asynchronous: the disk's latency never holds up scoring.
   */
  async commit(files: Record<string, string>): Promise<void> {
    try {
      for (const s of [this.rows, ...this.sides]) await s.end();
      for (const [name, data] of Object.entries(files)) await writeNew(join(this.tmp, name), data);
      let aside: string | undefined;
      if (existsSync(this.dir) || isSymlink(this.dir)) {
        aside = join(
          dirname(this.dir),
          `.${basename(this.dir)}${OLD_MARK}${basename(this.tmp).slice(`.${basename(this.dir)}.tmp-`.length)}`,
        );
        renameSync(this.dir, aside);
      }
      try {
        renameSync(this.tmp, this.dir);
      } catch (e) {
        // The old folder goes back where it was; the new one is dropped, not left as a temp.
        if (aside) renameSync(aside, this.dir);
        throw e;
      }
      if (aside) await fsp.rm(aside, { recursive: true, force: true });
    } catch (e) {
      for (const s of [this.rows, ...this.sides]) s.close();
      rmSync(this.tmp, { recursive: true, force: true });
      throw e;
    } finally {
      this.lock.release();
    }
  }

  /** Drops what was built (the old folder, if any, stays as it was). */
  abort(): void {
    try {
      for (const s of [this.rows, ...this.sides]) s.close();
      rmSync(this.tmp, { recursive: true, force: true });
    } finally {
      this.lock.release();
    }
  }
}
