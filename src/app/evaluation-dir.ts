/** Which evaluation folder a path the user gave stands for (sob compare, sob leaderboard, the gates). */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MODALITIES } from '../core/record.ts';
import { log } from './io.ts';

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
