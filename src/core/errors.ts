/** Errors a user can act on: the CLI prints `message` as one line (no stack unless --debug). */
export class UserError extends Error {
  constructor(
    message: string,
    /** 1: a failure; 2: bad input or usage; 130: interrupted. */
    readonly exitCode: 1 | 2 | 130 = 1,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** An input file that cannot be read at all (not a PDF, truncated, password-protected, a bad image): `reason` in words. */
export class UnreadableInput extends UserError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'UnreadableInput';
  }
}

/** A place in an input file, for messages like `answers.jsonl:12: ...`. */
export function where(file: string, line?: number, recordId?: string): string {
  let s = file;
  if (line !== undefined) s += `:${line}`;
  if (recordId) s += ` (record ${recordId})`;
  return s;
}

/** An error's message as one line for a user; a system error is put in words (see `systemLine`). */
export function errorMessage(e: unknown): string {
  return systemLine(e) ?? (e instanceof Error ? e.message : String(e));
}

/** What a system error code means, in words (the codes a file or folder write meets). */
const SYSTEM_WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'is a folder, not a file',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'the file system is read-only',
  EXDEV: 'cannot move across file systems',
  ENOTEMPTY: 'the folder is not empty',
  EMFILE: 'too many open files',
  ELOOP: 'a symbolic link is in the way',
  ENAMETOOLONG: 'the name is too long',
  EBUSY: 'busy',
  EIO: 'input/output error',
  EFBIG: 'file too large (over the file size limit)',
};

/**
 * `e` with `path` as the file it was about, when it is a system error that names none: a write
 * to an open file (`writeSync(fd)`, a file handle's write or sync) fails with
 * `EFBIG: file too large, write` or `ENOSPC: no space left on device, write` and no path, so the
 * one line the command prints could not say which file. Returns `e` (changed in place).
 */
export function withPath<E>(e: E, path: string): E {
  const x = e as NodeJS.ErrnoException;
  if (e instanceof Error && typeof x.code === 'string' && typeof x.syscall === 'string' && !x.path)
    x.path = path;
  return e;
}

/**
 * A system error (`EACCES: permission denied, open '/x'`) as `/x: permission denied (EACCES,
 * open)`, naming the path and what was being done; undefined for any other error.
 */
function systemLine(e: unknown): string | undefined {
  const x = e as NodeJS.ErrnoException;
  if (!(e instanceof Error) || typeof x.code !== 'string' || typeof x.syscall !== 'string') return undefined;
  const words = SYSTEM_WORDS[x.code] ?? x.code;
  const dest = (x as { dest?: unknown }).dest;
  const path = x.path ? `${x.path}${typeof dest === 'string' ? ` -> ${dest}` : ''}: ` : '';
  return `${path}${words} (${x.code}, ${x.syscall})`;
}
