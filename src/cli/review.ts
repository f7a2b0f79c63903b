/** `sob review`: people check the gold on a local page; their decisions become a new gold version. */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { log } from '../app/io.ts';
import { reviewCommand } from '../app/review.ts';
import { UserError } from '../core/errors.ts';
import { DEFAULT_AGREE_SHARE, DEFAULT_MIN_AGREE } from '../report/review-flags.ts';
import { intOption } from './common.ts';

function shareOption(v: string): number {
  const n = Number(v);
  if (!(n > 0 && n <= 1)) throw new UserError('--agree-share must be a number in (0, 1]', 2);
  return n;
}

function defaultReviewer(): string {
  try {
    return userInfo().username || 'reviewer';
  } catch {
    return 'reviewer';
  }
}

export function registerReview(program: Command): void {
  program
    .command('review')
    .description(
      'check the gold: a local page of the leaves that deserve a look, one decision per leaf (then --apply writes a new benchmark version)',
    )
    .argument(
      '<eval-dir>',
      'what sob eval wrote (runs/<model>/responses.jsonl), or a folder of response files',
    )
    .option('--reviewer <name>', 'who decides (recorded with every decision)', defaultReviewer())
    .option(
      '--benchmark <records.jsonl>',
      'the benchmark the answers belong to (default: the one the runs name)',
    )
    .option(
      '--agree-share <x>',
      'flag a leaf when at least this share of the answering models agree on one value that is not the gold',
      shareOption,
      DEFAULT_AGREE_SHARE,
    )
    .option(
      '--min-agree <n>',
      '... and at least this many models',
      intOption('--min-agree', 1),
      DEFAULT_MIN_AGREE,
    )
    .option('--port <n>', 'the port (default: a random free one)', intOption('--port', 0), 0)
    .option('--list', 'print the flagged leaves and their reasons instead of serving the page')
    .option(
      '--apply',
      'write a new benchmark version from the decisions (beside the old one; the old is not touched)',
    )
    .option(
      '--out <dir>',
      "with --apply: the new version's folder (default: <benchmark folder>-gold-v<N> beside it)",
    )
    .option('--agreement', "the reviewers' agreement on the leaves they both decided")
    .addHelpText(
      'after',
      `
The page is served on 127.0.0.1 only, at a random port, behind a random token in the URL it
prints; it shows nothing outside the evaluation folder and sends no request elsewhere.
Keys: j/k next/previous, g gold right, a accept the selected answer (1-9 pick the model),
w or e type the right value, d drop the record, n note, u undo.
Every decision is appended to <eval-dir>/review/decisions.jsonl (fsync) before the page says
"saved"; a restart resumes after the reviewer's last decision.

Examples:
  sob review runs/eval --reviewer ana
  sob review runs/eval --list
  sob review runs/eval --agreement
  sob review runs/eval --apply
  sob score runs/eval/runs/* --benchmark runs/eval/benchmark-gold-v2/records.jsonl --out runs/eval/evaluation-v2`,
    )
    .action(
      async (
        evalDir: string,
        flags: {
          reviewer: string;
          benchmark?: string;
          agreeShare: number;
          minAgree: number;
          port: number;
          list?: boolean;
          apply?: boolean;
          out?: string;
          agreement?: boolean;
        },
      ) => {
        const modes = [flags.list && 'list', flags.apply && 'apply', flags.agreement && 'agreement'].filter(
          (m): m is 'list' | 'apply' | 'agreement' => typeof m === 'string',
        );
        if (modes.length > 1) throw new UserError(`--${modes.join(' and --')} do not go together`, 2);
        if (flags.out && !flags.apply) throw new UserError('--out goes with --apply', 2);
        await reviewCommand(
          {
            evalDir,
            mode: modes[0] ?? 'serve',
            reviewer: flags.reviewer,
            benchmark: flags.benchmark,
            flags: { agreeShare: flags.agreeShare, minAgree: flags.minAgree },
            port: flags.port,
            out: flags.out,
          },
          log,
        );
      },
    );
}
