/** Shared CLI plumbing: option parsers that fail as usage errors, and stderr logging. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { UserError } from '../core/errors.ts';
import { MODALITIES, type Modality, SOURCES, type Source } from '../core/record.ts';

export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

/** A benchmark source: a modality, or `schema` (the compliance track's schema-only records). */
export function sourceOption(v: string): Source {
  if (!(SOURCES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`expected one of ${SOURCES.join(', ')}`);
  }
  return v as Source;
}

export function modalityOption(v: string): Modality {
  if (!(MODALITIES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`expected one of ${MODALITIES.join(', ')}`);
  }
  return v as Modality;
}

export function choiceOption<T extends string>(choices: readonly T[]): (v: string) => T {
  return (v: string) => {
    if (!(choices as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return v as T;
  };
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
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

/**
 * --batch, --batch-fallback, --batch-poll-ms (sob run and sob eval). A `--batch-*` option given
 * without `--batch` is a usage error (exit 2), not silently ignored while the run goes online.
 */
export function batchOptions(cmd: Command, batchHelp: string): Command {
  return cmd
    .hook('preAction', (c) => {
      if (c.opts().batch) return;
      const given = c.options
        .filter((o) => o.long?.startsWith('--batch-') && c.getOptionValueSource(o.attributeName()) === 'cli')
        .map((o) => o.long);
      if (given.length > 0)
        throw new UserError(
          `${given.join(', ')} only appl${given.length === 1 ? 'ies' : 'y'} with --batch`,
          2,
        );
    })
    .option('--batch', batchHelp)
    .option(
      '--batch-fallback <where>',
      'failed requests of a batch go to a follow-up batch, or are asked one by one (online)',
      choiceOption(['batch', 'online'] as const),
      'batch',
    )
    .option(
      '--batch-poll-ms <n>',
      'time between batch status checks',
      intOption('--batch-poll-ms', 1),
      30_000,
    );
}

/**
 * The evaluation folder to read: the one given, or, for a `sob eval` folder (`runs/` beside
 * `evaluation/`) or a run directory (`responses.jsonl` beside it), that `evaluation/`, said on
 * stderr. Any other folder is read as given.
 */
export function evaluationDirOf(dir: string): string {
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  if (!isDir(join(dir, 'evaluation')) || [...MODALITIES, 'schema'].some((m) => isDir(join(dir, m))))
    return dir;
  const kind = isDir(join(dir, 'runs'))
    ? 'eval folder'
    : existsSync(join(dir, 'responses.jsonl'))
      ? 'run directory'
      : undefined;
  if (!kind) return dir;
  log(`reading ${join(dir, 'evaluation')} (the scores of this ${kind})`);
  return join(dir, 'evaluation');
}

/** `--engine` of `sob ocr` and `sob build pdf`: a local OCR engine, or a vision-language model. */
export type OcrEngineFlag = 'both' | 'tesseract' | 'paddle' | `${'openai' | 'gemini'}:${string}`;

/** `--engine`: both | tesseract | paddle, or `openai:<model>` / `gemini:<model>` (a vision-language model). */
export function engineOption(v: string): OcrEngineFlag {
  if (v === 'both' || v === 'tesseract' || v === 'paddle') return v;
  if (/^(openai|gemini):.+$/.test(v)) return v as OcrEngineFlag;
  throw new InvalidArgumentError('use both, tesseract, paddle, openai:<model> or gemini:<model>');
}
