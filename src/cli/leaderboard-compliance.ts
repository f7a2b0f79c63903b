/** `sob leaderboard --track compliance`: JSONSchemaBench's table from `<dir>/schema/<model>/`. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import {
  type ComplianceFormat,
  complianceText,
  hasSobResults,
  loadComplianceBoard,
  scanCompliance,
} from '../report/compliance.ts';
import { readDisplayNames } from '../report/evaluation.ts';
import { attachComplianceUsage } from '../report/usage.ts';
import { log } from './common.ts';

export interface ComplianceFlags {
  format: ComplianceFormat;
  out?: string;
  names?: string;
  /** Flags of the value leaderboard that mean nothing here (named in the usage error). */
  sobOnly: string[];
}

export async function complianceLeaderboard(dir: string, flags: ComplianceFlags): Promise<void> {
  if (flags.sobOnly.length > 0)
    throw new UserError(
      `${flags.sobOnly.join(', ')}: not for --track compliance (they belong to the value leaderboard)`,
      2,
    );
  const names = readDisplayNames(flags.names, dir);
  const { board, folders, skipped } = loadComplianceBoard(dir, names);
  for (const s of skipped) log(`skipped ${s.folder}: ${s.reason}`);
  await attachComplianceUsage(board, folders);
  if (board.rows.length === 0)
    throw new UserError(
      `no schema/<model>/eval_summary.json with compliance results under ${dir} (score schema records with sob score first)`,
    );
  log(`${board.rows.length} models, ${board.datasets.length} datasets`);
  const text = complianceText(board, flags.format);
  const body = text.endsWith('\n') ? text : `${text}\n`;
  if (flags.out) {
    mkdirSync(dirname(flags.out), { recursive: true });
    writeFileAtomic(flags.out, body);
    log(`wrote ${flags.out}`);
  } else process.stdout.write(body);
}

/** The value leaderboard asked of a folder that holds schema compliance results only: say so. */
export function refuseSobTrackOnComplianceOnly(dir: string): void {
  if (!hasSobResults(dir) && scanCompliance(dir).folders.length > 0)
    throw new UserError(
      `${dir} holds schema compliance results only (schema/<model>/): sob leaderboard ${dir} --track compliance`,
    );
}
