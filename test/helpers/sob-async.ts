/** The real `sob` command in a child process, without blocking the test's event loop. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');

export interface SobRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sob <args>` in `cwd`; the exit code (1 when killed by the timeout), stdout and stderr. */
export function sobAsync(args: string[], cwd: string, timeoutMs = 120_000): Promise<SobRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/sob.js'), ...args],
      { cwd, timeout: timeoutMs, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
