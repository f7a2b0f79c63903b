/**
 * Running `sob` from a test, three ways:
 * - `sobIn`: in this process (`main(argv, io)`), its output captured and its exit code returned:
 *   the fast tier, for what a command prints, writes and exits with;
 * - `sobSync`/`sobAsync`/`sobSpawn`: the real command in a child process, as a user runs it, for
 *   what only a process shows (signals, locks held by another process, a crash's exit code).
 * A child runs the built JavaScript (dist/); `ensureBuilt` rebuilds it first when a source is newer.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error: a JavaScript module without types (scripts/ is plain Node).
import { builtIsFresh } from '../../scripts/dist-fresh.mjs';

export const ROOT = join(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/sob.js');

/** What a run of `sob` left: its exit code (null when a signal ended it), stdout and stderr. */
export interface SobResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SobOptions {
  /** The folder it runs in (default: the test's). */
  cwd?: string;
  /** Variables set for the run (undefined: removed); the rest of the environment is the test's. */
  env?: Record<string, string | undefined>;
}

let built = false;
/** Builds dist/ (scripts/build.mjs, about a second) unless it is as new as every source. */
export function ensureBuilt(): void {
  if (built) return;
  if (!builtIsFresh(pathToFileURL(`${ROOT}/`))) {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stderr}`);
  }
  built = true;
}

function childEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** `sob <args>` in a child process, waited for (blocks this test's event loop meanwhile). */
export function sobSync(args: string[], opts: SobOptions & { timeoutMs?: number } = {}): SobResult {
  ensureBuilt();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
    cwd: opts.cwd,
    env: childEnv(opts.env),
    maxBuffer: 1 << 26,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `sob <args>` in a child process without blocking the event loop; a timeout kill counts as code 1. */
export function sobAsync(args: string[], opts: SobOptions & { timeoutMs?: number } = {}): Promise<SobResult> {
  ensureBuilt();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: opts.cwd, env: childEnv(opts.env), timeout: opts.timeoutMs ?? 120_000, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** What a spawned `sob` left, with the signal that ended it, if one did. */
export interface Exit extends SobResult {
  signal: string | null;
}

/** `sob <args>` as a child to signal or watch: the process, and its end. */
export function sobSpawn(
  args: string[],
  opts: SobOptions = {},
): { child: ChildProcess; done: Promise<Exit> } {
  ensureBuilt();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: childEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d) => (stderr += d));
  child.stdout?.on('data', (d) => (stdout += d));
  const done = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr, stdout })),
  );
  return { child, done };
}

/**
 * `sob <args>` in this process: the command's output captured, its exit code returned, the
 * process's own exit code untouched. `cwd` and `env` hold for the run (process-wide: runs in
 * one test file take turns, as node:test runs them by default).
 */
export async function sobIn(args: string[], opts: SobOptions = {}): Promise<SobResult> {
  const { main } = await import('../../src/cli/main.ts');
  const savedEnv = new Map<string, string | undefined>();
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    savedEnv.set(k, process.env[k]);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const cwd = process.cwd();
  if (opts.cwd) process.chdir(opts.cwd);
  let stdout = '';
  let stderr = '';
  try {
    const code = await main(['node', 'sob', ...args], {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    });
    return { code, stdout, stderr };
  } finally {
    process.chdir(cwd);
    for (const [k, v] of savedEnv) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
