/** The real `sob` command in a child process, without blocking the test's event loop (test/kit/cli.ts). */
import { sobAsync as run } from '../kit/cli.ts';

export { ROOT } from '../kit/cli.ts';

export interface SobRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sob <args>` in `cwd`; the exit code (1 when killed by the timeout), stdout and stderr. */
export async function sobAsync(args: string[], cwd: string, timeoutMs = 120_000): Promise<SobRun> {
  const r = await run(args, { cwd, timeoutMs });
  return { code: r.code ?? 1, stdout: r.stdout, stderr: r.stderr };
}
