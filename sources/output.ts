/**
 * How `sob build` writes its files (issue 9 items 4 and 7), on `src/core/files.ts`:
 * - a new records file or rejected.jsonl is written under a temp name unique to that file and
 *   process, then renamed over the target: a reader sees the old file or the whole new one, and a
 *   symlink planted at the target is replaced, never written through;
 * - `--append` opens with O_NOFOLLOW (a symlink is refused in one line) after dropping a torn
 *   last line a crashed build may have left, so every line stays a whole record.
 */
import { closeSync, fsyncSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import {
  openNoFollow,
  refuseNonFile,
  refuseSymlink,
  renameInto,
  tempNameFor,
  truncateNoFollow,
} from '../src/core/files.ts';

export interface LineSink {
  /** Where the lines are going now (the temp file, or the target when appending). */
  readonly path: string;
  write(line: string): void;
  /** Flushes and, for a new file, renames it over the target. */
  commit(): void;
  /** Closes and removes what a new file wrote; an append keeps its whole lines. */
  abort(): void;
}

/** Bytes of `file` up to and including its last newline (a torn last line is not kept). */
function wholeLinesLength(file: string, size: number): number {
  const fd = openNoFollow(file, 'r+');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const i = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (i >= 0) return start + i + 1;
      end = start;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * Drops a torn last line (no final newline) from a file about to be appended to; returns the
 * bytes dropped. A symlink is refused.
 */
export function repairTornTail(file: string): number {
  refuseSymlink(file);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return 0;
  }
  if (size === 0) return 0;
  const keep = wholeLinesLength(file, size);
  if (keep === size) return 0;
  truncateNoFollow(file, keep);
  return size - keep;
}

export function openLineSink(target: string, append: boolean): LineSink {
  if (append) {
    const fd = openNoFollow(target, 'a');
    let open = true;
    const close = () => {
      if (open) closeSync(fd);
      open = false;
    };
    return {
      path: target,
      write: (line) => writeSync(fd, line),
      commit: () => {
        fsyncSync(fd);
        close();
      },
      abort: close,
    };
  }
  refuseNonFile(target);
  const tmp = tempNameFor(target);
  const fd = openNoFollow(tmp, 'w');
  let open = true;
  return {
    path: tmp,
    write: (line) => writeSync(fd, line),
    commit: () => {
      fsyncSync(fd);
      closeSync(fd);
      open = false;
      renameInto(tmp, target);
    },
    abort: () => {
      if (open) closeSync(fd);
      open = false;
      rmSync(tmp, { force: true });
    },
  };
}
