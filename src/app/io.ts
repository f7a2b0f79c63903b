/**
 * What the application functions share with the commands: the progress log (stderr) and the
 * handling of Ctrl-C for a long use case.
 */
import { printable } from '../core/files.ts';

/** One progress line on stderr; a control character in it (a file name's newline) is escaped. */
export function log(line: string): void {
  process.stderr.write(`${printable(line)}\n`);
}

/**
 * Ctrl-C (SIGINT) and SIGTERM for a long command: the first stops it cleanly (the signal aborts,
 * work in flight is left for a resume, and the command exits 130); a second quits at once, 130.
 */
export function interruptible(onFirst?: () => void): {
  signal: AbortSignal;
  interrupted: () => boolean;
  dispose: () => void;
} {
  const controller = new AbortController();
  let count = 0;
  const handler = () => {
    count++;
    if (count > 1) process.exit(130);
    onFirst?.();
    log('stopping: waiting for nothing more to be written (Ctrl-C again to quit at once)');
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    interrupted: () => controller.signal.aborted,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
