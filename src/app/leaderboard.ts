/**
 * `sob leaderboard` as one use case: the paper's unified, complexity-weighted, coverage-adjusted
 * leaderboard of an evaluation folder (or one source's table, or the rank sensitivity), or the
 * compliance track's table; the gates checked. The command (`src/cli/leaderboard.ts`) reads the
 * flags into `LeaderboardSettings` and calls `writeLeaderboard`.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RankBy } from '../../metrics/lenient-leaderboard.ts';
import { sourceRanks, sourceTable } from '../../metrics/ranks.ts';
import { UserError } from '../core/errors.ts';
import { writeFileAtomic } from '../core/files.ts';
import type { Modality } from '../core/record.ts';
import {
  type ComplianceFormat,
  complianceText,
  hasSobResults,
  loadComplianceBoard,
  scanCompliance,
} from '../report/compliance.ts';
import {
  buildLeaderboard,
  type EvaluationFolder,
  loadEvaluation,
  readDisplayNames,
  type TotalsMode,
  totalsLines,
} from '../report/evaluation.ts';
import { sensitivityText } from '../report/lenient.ts';
import { sensitivityOf } from '../report/sensitivity.ts';
import {
  leaderboardCsv,
  leaderboardJson,
  leaderboardMarkdown,
  leaderboardTable,
  sourceTableText,
} from '../report/tables.ts';
import { attachComplianceUsage } from '../report/usage.ts';
import { applyGates, type Gates, rowSubjects } from './gates.ts';
import { log } from './io.ts';

/** On stderr: every folder left out and why, the totals and their origin, what to be wary of. */
export function logFolder(ev: EvaluationFolder): void {
  for (const s of ev.skipped) log(`skipped ${s.folder}: ${s.reason}`);
  log(`benchmark totals: ${totalsLines(ev).join('; ')}`);
  for (const w of ev.warnings) log(`warning: ${w}`);
}

function emit(text: string, out: string | undefined): void {
  const body = text.endsWith('\n') ? text : `${text}\n`;
  if (out) {
    // Never through a symlink: the file is replaced whole (temp + rename), its folder made if new.
    mkdirSync(dirname(out), { recursive: true });
    writeFileAtomic(out, body);
    log(`wrote ${out}`);
  } else process.stdout.write(body);
}

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

/** What `sob leaderboard --track sob` was asked (the flags checked against each other). */
export interface LeaderboardSettings {
  /** The evaluation folder read (an eval folder or run directory stands for its evaluation/). */
  dir: string;
  /** The folder as the user gave it (in the gate summary). */
  dirArg: string;
  gates: Gates;
  format: 'table' | 'md' | 'csv' | 'json';
  out?: string;
  names?: string;
  manifest?: string;
  benchmarkTotals: TotalsMode;
  /** One source's table (--source or --table); undefined: the unified leaderboard. */
  source?: Modality;
  ranks?: boolean;
  sensitivity?: boolean;
  rankBy?: RankBy;
}

/**
 * Runs `sob leaderboard` on the value track: the table (or one source's, or the sensitivity)
 * on stdout or in `out`, progress on stderr, then the gates (exit 3 when one fails).
 */
export async function writeLeaderboard(settings: LeaderboardSettings): Promise<void> {
  const { dir, gates, source } = settings;
  refuseSobTrackOnComplianceOnly(dir);
  const ev = await loadEvaluation(dir, { manifest: settings.manifest, totals: settings.benchmarkTotals });
  const names = readDisplayNames(settings.names, dir);
  if (settings.sensitivity) {
    logFolder(ev);
    const s = sensitivityOf(ev, names, source, settings.rankBy);
    log(
      `${s.models.length} models re-ranked${source ? ` on ${source}` : ''}; ${s.models.filter((m) => m.max_shift > 0).length} move`,
    );
    emit(sensitivityText(s, settings.format), settings.out);
    return;
  }
  if (source) {
    // One source's table (the paper's Tables 4-6), sorted by Value Accuracy, with intervals.
    for (const s of ev.skipped) log(`skipped ${s.folder}: ${s.reason}`);
    const rows = sourceTable(ev.models, names, source);
    if (rows.length === 0) throw new UserError(`no ${source} results under ${dir}`);
    emit(sourceTableText(rows, sourceRanks(ev.models), settings.format), settings.out);
    return;
  }
  const rows = buildLeaderboard(ev, names);
  await (await import('../report/usage.ts')).attachUsage(rows, ev);
  (await import('../report/row-settings.ts')).attachRunSettings(rows, ev);
  const { attachFields, foldersWithoutFields } = await import('../report/fields.ts');
  const fieldTable = await attachFields(rows, dir);
  log(`${rows.length} models`);
  logFolder(ev);
  const ranks = settings.ranks ? sourceRanks(ev.models) : undefined;
  const text =
    settings.format === 'json'
      ? leaderboardJson(rows, ranks)
      : settings.format === 'csv'
        ? leaderboardCsv(rows, ranks)
        : settings.format === 'md'
          ? leaderboardMarkdown(rows, ranks)
          : leaderboardTable(rows, ranks);
  emit(text, settings.out);
  const { evaluationPairs } = await import('../report/gates.ts');
  await applyGates(gates, {
    command: `sob leaderboard ${settings.dirArg}`,
    subjects: rowSubjects(rows),
    fieldTable: async () => fieldTable,
    withoutFields: () => foldersWithoutFields(dir),
    pairs: (baseline) => {
      const p = evaluationPairs(dir, baseline);
      return { pairs: p.pairs, unmatched: [...p.onlyCurrent, ...p.onlyBaseline] };
    },
  });
}
