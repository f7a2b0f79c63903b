/**
 * Writing files so that a reader never sees half of one, a crash never leaves a mixed state,
 * two processes never write the same place, and no write follows a symbolic link out of the
 * folder it was meant for.
 *
 * - `writeFileAtomic`: a temp file beside the target (a name unique per output file and
 *   process), then `rename`. A rename replaces a symlink at the target by the new file; it
 *   never writes through it.
 * - `openNoFollow` / `truncateNoFollow`: appends and repairs open with `O_NOFOLLOW`, so a
 *   symlink in place of a log is refused with one line instead of followed.
 * - `acquireLock`: an advisory lock file holding the owner's pid, host and start time (never its
 *   command line: a `--base-url` may carry credentials); a second writer is refused
 *   with one line naming the owner; a lock whose process is gone (or that is unreadable) is
 *   stale and taken over.
 * - `removeStaleTemps`: temp files of processes that no longer run are deleted.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { errorMessage, UserError, withPath } from './errors.ts';

/**
 * A name made from something outside (a response file's name, a model id) that becomes one
 * folder name: `.`, `..`, an empty name, a path separator or a control character would make the
 * folder another one (`<out>/text/..` is `<out>`, which a swap of results would replace), so
 * each is refused with one line naming where the name came from.
 */
export function folderName(name: string, from: string): string {
  const bad = /[\u0000-\u001f\u007f/\\]/.test(name);
  if (name === '' || name === '.' || name === '..' || bad)
    throw new UserError(
      `${printable(from)}: gives the folder name ${JSON.stringify(name)}, which is not a plain folder name (no ".", "..", separators or control characters); rename the file`,
    );
  return name;
}

/** `s` with control characters (a newline in a file name) escaped, for one line on stderr. */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === '\n' ? '\\n' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** True when `path` exists and is a symbolic link (a dangling one included). */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * `root/parts...` made as plain folders: each part below `root` that exists must be a folder,
 * not a symbolic link (a link planted inside a cache or an eval folder would send its writes
 * elsewhere); one that does not exist is made. Returns the path.
 */
export function plainDirs(root: string, parts: string[], what = 'folder'): string {
  mkdirSync(root, { recursive: true });
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(at);
    } catch {
      st = undefined;
    }
    if (st?.isSymbolicLink())
      throw new UserError(
        `refusing to write through a symbolic link: ${at} (a ${what} inside ${root} must be a plain folder)`,
      );
    if (st && !st.isDirectory())
      throw new UserError(`refusing to write ${at}: it is not a folder (a ${what} inside ${root})`);
    if (!st) {
      try {
        mkdirSync(at);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        if (isSymlink(at)) throw new UserError(`refusing to write through a symbolic link: ${at}`);
      }
    }
  }
  return at;
}

/**
 * `plainDirs` without making anything: each part of `root/parts...` that exists must be a plain
 * folder (a link or a file is refused with the same one line); the first missing part ends the
 * check. For a command to refuse a planted link before it does anything, and make the folder
 * (with `plainDirs`) only when it writes there.
 */
export function checkPlainDirs(root: string, parts: string[], what = 'folder'): void {
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(at);
    } catch {
      return;
    }
    if (st.isSymbolicLink())
      throw new UserError(
        `refusing to write through a symbolic link: ${at} (a ${what} inside ${root} must be a plain folder)`,
      );
    if (!st.isDirectory())
      throw new UserError(`refusing to write ${at}: it is not a folder (a ${what} inside ${root})`);
  }
}

/** Refuses a path that is a symbolic link, with one line saying where. */
export function refuseSymlink(path: string, what = 'file'): void {
  if (isSymlink(path))
    throw new UserError(
      `refusing to write through a symbolic link: ${path} (the ${what} must be a plain file)`,
    );
}

/** What a non-regular file is, in words, or undefined for a regular file, a folder or a link. */
function specialKind(path: string): string | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (st.isFile() || st.isDirectory() || st.isSymbolicLink()) return undefined;
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  if (st.isFIFO()) return 'named pipe (FIFO)';
  if (st.isSocket()) return 'socket';
  return 'special file';
}

/**
 * Outputs are written only as regular files or folders: a device, FIFO or socket in the place of
 * one (`--out /dev/null`) is refused with one line, never replaced or written into.
 */
export function refuseSpecial(path: string, what = 'output'): void {
  const kind = specialKind(path);
  if (kind)
    throw new UserError(
      `refusing to write ${path}: it is a ${kind}, and the ${what} is written only as a regular file or folder`,
    );
}

/** Refuses (one line) an output file whose place holds a folder, a device, a FIFO or a socket. */
export function refuseNonFile(path: string, what = 'output file'): void {
  refuseSpecial(path, what);
  try {
    if (lstatSync(path).isDirectory())
      throw new UserError(`refusing to write ${path}: it is a folder, and the ${what} must be a file`);
  } catch (e) {
    if (e instanceof UserError) throw e;
  }
}

const TEMP_MARK = '.tmp-';

/** A temp name beside `file`, unique per output file and per process: `.<name>.tmp-<pid>-<hex>`. */
export function tempNameFor(file: string): string {
  return join(
    dirname(file),
    `.${basename(file)}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`,
  );
}

/** Writes `data` to `file` whole or not at all (temp file, fsync, rename). */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  refuseNonFile(file);
  const tmp = tempNameFor(file);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    writeFileSync(fd, data); // loops until every byte is written
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw withPath(e, file); // a write to an open file names none: the file it was for
  }
  closeSync(fd);
  renameInto(tmp, file);
}

/** `rename(tmp, target)`; when it fails the temp file (or folder) is removed, never left behind. */
export function renameInto(tmp: string, target: string): void {
  try {
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** `writeFileAtomic` of pretty-printed JSON with a final newline. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Opens `file` without following a symlink: flags 'a' (append, create), 'w' (truncate, create),
 * 'r+' (read and write an existing file). A symlink is refused with one line.
 */
export function openNoFollow(file: string, flags: 'a' | 'w' | 'r+'): number {
  const f = constants;
  const mode =
    flags === 'a'
      ? f.O_WRONLY | f.O_APPEND | f.O_CREAT
      : flags === 'w'
        ? f.O_WRONLY | f.O_TRUNC | f.O_CREAT
        : f.O_RDWR;
  if (flags !== 'r+') refuseNonFile(file);
  try {
    return openSync(file, mode | f.O_NOFOLLOW, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') refuseSymlink(file);
    throw e;
  }
}

/** Cuts `file` to `size` bytes; a symlink is refused, never followed. */
export function truncateNoFollow(file: string, size: number): void {
  const fd = openNoFollow(file, 'r+');
  try {
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

/** Whether a process with this pid runs on this machine. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Deletes `.<name>.tmp-<pid>-<hex>` files in `dir` whose process no longer runs; returns how many. */
export function removeStaleTemps(dir: string): number {
  if (!existsSync(dir)) return 0;
  let removed = 0;
  for (const name of readdirSync(dir)) {
    const at = name.lastIndexOf(TEMP_MARK);
    if (!name.startsWith('.') || at < 0) continue;
    const pid = Number.parseInt(name.slice(at + TEMP_MARK.length), 10);
    if (pid === process.pid || pidAlive(pid)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

export interface LockOwner {
  pid: number;
  host: string;
  started: string;
}

export interface Lock {
  file: string;
  release(): void;
}

const held = new Set<string>();
let exitHook = false;

/**
 * Releases every lock this process holds, as its exit would: a command run in-process
 * (`main(argv, io)`, the library) ends with its locks released, whether it finished or failed.
 */
export function releaseHeldLocks(): void {
  for (const f of [...held]) releaseFile(f);
}

/**
 * Takes the advisory lock `<dir>/<name>` for `what` (e.g. "run directory"). A live owner on this
 * host refuses us with one line; a dead owner's (or an unreadable) lock is stale and replaced.
 * Released by `release()` or when the process exits.
 */
export function acquireLock(dir: string, what: string, name = '.sob.lock'): Lock {
  const file = join(dir, name);
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(
        file,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (isSymlink(file)) refuseSymlink(file, 'lock file');
      let owner: Partial<LockOwner> = {};
      try {
        owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
      } catch {
        // A lock being written right now reads empty: look again before calling it stale.
        if (attempt === 0) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
          continue;
        }
      }
      const live =
        typeof owner.pid === 'number' &&
        (owner.pid === process.pid ? held.has(file) : pidAlive(owner.pid)) &&
        (owner.host === undefined || owner.host === me.host);
      if (live)
        throw new UserError(
          `${what} ${dir} is in use by another sob process (pid ${owner.pid} on ${owner.host ?? '?'}, since ${owner.started ?? '?'}); wait for it to finish, or remove ${file} if that process is gone`,
        );
      // Stale: the owner is gone. Move it aside (atomic) so only one taker wins, then retry.
      try {
        renameSync(file, `${file}.stale-${process.pid}`);
        rmSync(`${file}.stale-${process.pid}`, { force: true });
      } catch {
        // someone else took it over first; look again
      }
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(file);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const f of held) releaseFile(f);
      });
    }
    return { file, release: () => releaseFile(file) };
  }
  throw new UserError(`could not take the lock ${file}: it keeps changing hands`);
}

function releaseFile(file: string): void {
  if (!held.delete(file)) return;
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    if (owner.pid === process.pid) unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      process.stderr.write(`sob: releasing ${file}: ${errorMessage(e)}\n`);
  }
}
