/** The `sob` command line: one file per command; this file only wires them and maps errors. */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { errorMessage, UserError } from '../core/errors.ts';
import { printable } from '../core/files.ts';
import { registerAuthor } from './author.ts';
import { registerBuild } from './build.ts';
import { registerCompare } from './compare.ts';
import { registerEval } from './eval.ts';
import { registerJudge } from './judge.ts';
import { registerLeaderboard } from './leaderboard.ts';
import { registerOcr } from './ocr.ts';
import { registerReport } from './report.ts';
import { registerRun } from './run.ts';
import { registerScore } from './score.ts';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('sob')
    .description('sob-eval: does a model put the right values into schema-valid JSON? (the SOB benchmark)')
    .version(version())
    .option('--debug', 'print stack traces on errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  // The main job first, then each stage of the pipeline in order.
  registerEval(program);
  registerRun(program);
  registerScore(program);
  registerLeaderboard(program);
  registerCompare(program);
  registerReport(program);
  registerBuild(program);
  registerOcr(program);
  registerJudge(program);
  registerAuthor(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/**
 * A reader that stops early (`sob score --help | head`, `sob leaderboard ... | head -5`) closes
 * the pipe: what is left to print has nowhere to go, and the command goes on to its end (its files
 * are written as usual) instead of dying on an EPIPE stack trace.
 */
function toleratePipeClosed(stream: NodeJS.WriteStream): void {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
    throw e;
  });
}

export async function main(argv: string[]): Promise<void> {
  toleratePipeClosed(process.stdout);
  toleratePipeClosed(process.stderr);
  const program = buildProgram();
  try {
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
