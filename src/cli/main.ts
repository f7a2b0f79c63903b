/**
 * The `sob` command line: one file per command; this file only wires them and maps errors.
 * A command's module (and the heavy packages it pulls in: SDKs, OCR, ajv) is imported only when
 * that command runs: `sob --help` lists the commands from `dist/commands.json`, which the build
 * writes from the commands themselves, so it loads none of them.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Command as CommandType } from 'commander';
import { errorMessage, UserError } from '../core/errors.ts';
import { printable } from '../core/files.ts';
import { moduleUrl, PACKAGE_ROOT } from '../core/paths.ts';

// commander by require: its CommonJS loaded without the ES-module wrapper (~3 ms of `sob --help`).
const { Command, CommanderError, Help } = createRequire(import.meta.url)(
  'commander',
) as typeof import('commander');
type Command = CommandType;

/** The commands, in the order `--help` lists them: the main job first, then each stage in order. */
const COMMANDS: readonly { name: string; file: string; register: string }[] = [
  { name: 'eval', file: './eval.ts', register: 'registerEval' },
  { name: 'run', file: './run.ts', register: 'registerRun' },
  { name: 'score', file: './score.ts', register: 'registerScore' },
  { name: 'leaderboard', file: './leaderboard.ts', register: 'registerLeaderboard' },
  { name: 'compare', file: './compare.ts', register: 'registerCompare' },
  { name: 'report', file: './report.ts', register: 'registerReport' },
  { name: 'build', file: './build.ts', register: 'registerBuild' },
  { name: 'ocr', file: './ocr.ts', register: 'registerOcr' },
  { name: 'judge', file: './judge.ts', register: 'registerJudge' },
  { name: 'author', file: './author.ts', register: 'registerAuthor' },
  { name: 'review', file: './review.ts', register: 'registerReview' },
  { name: 'export', file: './export.ts', register: 'registerExport' },
];

/** What the top-level `--help` shows of a command without loading it. */
export interface CommandSummary {
  name: string;
  aliases: string[];
  term: string;
  description: string;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function rootProgram(): Command {
  return new Command('sob')
    .description('sob-eval: does a model put the right values into schema-valid JSON? (the SOB benchmark)')
    .version(version())
    .option('--debug', 'print stack traces on errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
}

async function registerCommand(program: Command, entry: (typeof COMMANDS)[number]): Promise<void> {
  const mod = (await import(moduleUrl(entry.file, import.meta.url).href)) as Record<
    string,
    (p: Command) => void
  >;
  mod[entry.register](program);
}

/** The whole program, every command loaded (the reference for the lazy one, and for the docs). */
export async function buildProgram(): Promise<Command> {
  const program = rootProgram();
  for (const entry of COMMANDS) await registerCommand(program, entry);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/** Each command's line in the top-level `--help`, read from the commands themselves. */
export async function commandSummaries(): Promise<CommandSummary[]> {
  const program = await buildProgram();
  const help = new Help();
  return program.commands.map((c) => ({
    name: c.name(),
    aliases: c.aliases(),
    term: help.subcommandTerm(c),
    description: help.subcommandDescription(c),
  }));
}

/** The summaries the build wrote (dist/commands.json), when this is the built program. */
function builtSummaries(): CommandSummary[] | undefined {
  if (!import.meta.url.endsWith('.js')) return undefined;
  const file = join(PACKAGE_ROOT, 'dist/commands.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as CommandSummary[];
}

/**
 * The program for `argv`: the command it names loaded for real; every other command a stand-in
 * with the same line in `--help` (from the build's summaries), so `sob --help`, `sob --version`
 * and a mistyped command load no command module. Without summaries, every command is loaded.
 */
async function programFor(argv: string[]): Promise<Command> {
  const summaries = builtSummaries();
  if (!summaries) return buildProgram();
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  const named = words[0] === 'help' ? words[1] : words[0];
  const program = rootProgram();
  const terms = new Map<string, CommandSummary>();
  for (const entry of COMMANDS) {
    const s = summaries.find((x) => x.name === entry.name);
    if (s && named !== s.name && !s.aliases.includes(named ?? '')) {
      program.command(s.name).aliases(s.aliases).description(s.description);
      terms.set(s.name, s);
    } else await registerCommand(program, entry);
  }
  const help = new Help();
  program.configureHelp({
    subcommandTerm: (c) => terms.get(c.name())?.term ?? help.subcommandTerm(c),
  });
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/**
 * A reader that stops early (`sob score --help | head`, `sob leaderboard ... | head -5`) closes
 * the pipe: what is left to print has nowhere to go, and the command goes on to its end (its files
 * are written as usual) instead of dying on an EPIPE stack trace.
 */
const tolerant = new WeakSet<NodeJS.WriteStream>();
function toleratePipeClosed(stream: NodeJS.WriteStream): void {
  if (tolerant.has(stream)) return;
  tolerant.add(stream);
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
    throw e;
  });
}

/** Where an in-process run's output goes (`main(argv, io)`); unset for a real process. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

const ioContext = new AsyncLocalStorage<Io>();
let writesRouted = false;

/**
 * Once a run is given an `io`: process.stdout/stderr writes made inside that run (its async
 * context) go to it; every other write (a test runner's own report) goes where it went.
 */
function routeWrites(): void {
  if (writesRouted) return;
  writesRouted = true;
  for (const [stream, key] of [
    [process.stdout, 'stdout'],
    [process.stderr, 'stderr'],
  ] as const) {
    const original = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const io = ioContext.getStore();
      if (!io) return original(chunk, ...rest);
      io[key](typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (cb) queueMicrotask(cb);
      return true;
    }) as typeof stream.write;
  }
}

/**
 * Runs `sob` on `argv` (`process.argv`'s shape: two leading words, then the arguments) and
 * returns its exit code. Without `io` it is the process's command: output on the process's
 * streams, `process.exitCode` set. With `io`, it runs in this process for a caller (the tests'
 * kit): output goes to `io`, and `process.exitCode` is left as it was.
 */
export async function main(argv: string[], io?: Io): Promise<number> {
  if (!io) {
    await run(argv);
    return Number(process.exitCode ?? 0);
  }
  routeWrites();
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await ioContext.run(io, () => run(argv));
    return Number(process.exitCode ?? 0);
  } finally {
    process.exitCode = before;
    // The command is over: its locks go, as they would with its process (a failed sob eval
    // would otherwise keep its eval directory locked until this process exits).
    const { releaseHeldLocks } = await import('../core/files.ts');
    releaseHeldLocks();
  }
}

async function run(argv: string[]): Promise<void> {
  toleratePipeClosed(process.stdout);
  toleratePipeClosed(process.stderr);
  try {
    const program = await programFor(argv);
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is a usage error.
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    const debug = argv.includes('--debug');
    // Credentials from a --base-url or the environment never reach the terminal (or a log); a
    // control character (a newline in a file name) is escaped, so the error stays one line.
    const { redactSecrets } = await import('../providers/secrets.ts');
    const line = (m: string) => process.stderr.write(`sob: ${printable(redactSecrets(m))}\n`);
    if (e instanceof UserError) {
      line(e.message);
      process.exitCode = e.exitCode;
    } else {
      line(errorMessage(e));
      process.exitCode = 1;
    }
    if (debug && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
  }
}
