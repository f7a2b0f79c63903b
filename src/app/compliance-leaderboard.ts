/** The compliance track's leaderboard files of an eval directory (`sob eval`). */
import { join } from 'node:path';
import { writeFileAtomic } from '../core/files.ts';
import {
  complianceMarkdown,
  complianceTable,
  complianceText,
  loadComplianceBoard,
} from '../report/compliance.ts';
import { attachComplianceUsage } from '../report/usage.ts';
import { log } from './io.ts';

/**
 * `sob eval`: the compliance table as `leaderboard-compliance.{md,csv,json}` in the eval
 * directory, and on stdout; returns the Markdown file's path, or null when there are no schema
 * results.
 */
export async function writeComplianceLeaderboards(
  evaluation: string,
  evalDir: string,
): Promise<string | null> {
  const { board, folders, skipped } = loadComplianceBoard(evaluation);
  for (const s of skipped) log(`skipped ${s.folder}: ${s.reason}`);
  if (board.rows.length === 0) return null;
  await attachComplianceUsage(board, folders);
  const md = join(evalDir, 'leaderboard-compliance.md');
  writeFileAtomic(md, `${complianceMarkdown(board)}\n`);
  writeFileAtomic(join(evalDir, 'leaderboard-compliance.csv'), complianceText(board, 'csv'));
  writeFileAtomic(join(evalDir, 'leaderboard-compliance.json'), `${complianceText(board, 'json')}\n`);
  process.stdout.write(`${complianceTable(board)}\n`);
  return md;
}
