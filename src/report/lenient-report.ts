/**
 * What the HTML report embeds about lenient matching (`sob score --match`): per model the
 * exact and lenient columns, the gap and rank shifts (from the leaderboard rows), the
 * sensitivity of the ranking, and per record its lenient scores and which matcher accepted each
 * leaf (from `lenient_records.jsonl`). Leaves are stored against the record's shared
 * ground-truth leaves where the diff has them (an index instead of the path).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { sensitivity } from '../../metrics/lenient-leaderboard.ts';
import { LENIENT_SIDE_FILE } from '../../metrics/lenient-summary.ts';
import { kendallTau } from '../../metrics/match/rank.ts';
import { readJsonl } from '../core/jsonl.ts';
import type { PyValue } from '../core/pyjson.ts';
import { MODALITIES } from '../core/record.ts';

const ROW_KEYS = [
  'lenient_value_accuracy',
  'lenient_faithfulness',
  'field_precision',
  'field_recall',
  'field_f1',
];

function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0;
}

function r3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** A leaf's outcome in one word: who accepted it, else why not (`no_match`, `missing`, ...). */
function outcomeOf(acceptedBy: PyValue | undefined, verdict: PyValue | undefined): string {
  if (verdict === 'match' && typeof acceptedBy === 'string') return acceptedBy;
  return verdict === 'unsettled' ? 'pending' : String(verdict ?? '?');
}

export class LenientReport {
  /** `mi|ri` -> [5 lenient numbers, leaves?] */
  private readonly rows: Record<string, unknown[]> = Object.create(null);
  private any = false;

  /** One eval_records.jsonl row of model `mi`, record `ri`. */
  row(mi: number, ri: number, r: Map<string, PyValue>): void {
    if (!r.has('lenient_value_accuracy')) return;
    this.any = true;
    const key = `${mi}|${ri}`;
    if (!Object.hasOwn(this.rows, key)) this.rows[key] = ROW_KEYS.map((k) => r3(num(r.get(k))));
  }

  /**
   * The side files of every model folder: per record, each leaf not accepted by exact comparison
   * in place, as [leaf, outcome] or [leaf, outcome, predicted path] when the answer's leaf sat
   * elsewhere; `leaf` is an index into the record's ground-truth leaves when they are embedded.
   */
  async readSideFiles(
    evalDir: string,
    models: string[],
    recIndex: Map<string, number>,
    records: { leaves?: [string, string][] }[],
  ): Promise<void> {
    if (!this.any) return;
    const leafIndex = new Map<number, Map<string, number>>();
    const indexOf = (ri: number, path: string): number | string => {
      const rec = records[ri];
      if (!rec.leaves) return path;
      let m = leafIndex.get(ri);
      if (!m) leafIndex.set(ri, (m = new Map(rec.leaves.map(([p], i) => [p, i]))));
      return m.get(path) ?? path;
    };
    for (const [mi, model] of models.entries()) {
      for (const source of MODALITIES) {
        const file = join(evalDir, source, model, LENIENT_SIDE_FILE);
        if (!existsSync(file)) continue;
        for await (const l of readJsonl(file)) {
          if (!l.ok || !(l.value instanceof Map)) continue;
          const ri = recIndex.get(String(l.value.get('record_id') ?? ''));
          const row = ri === undefined ? undefined : this.rows[`${mi}|${ri}`];
          if (ri === undefined || !row || row.length > ROW_KEYS.length) continue;
          const leaves = l.value.get('leaves');
          if (!Array.isArray(leaves)) {
            row.push([]);
            continue;
          }
          row.push(
            leaves
              .filter((x): x is PyValue[] => Array.isArray(x) && typeof x[0] === 'string')
              .map((x) => {
                const path = x[0] as string;
                const out: unknown[] = [indexOf(ri, path), outcomeOf(x[3], x[4])];
                if (typeof x[1] === 'string' && x[1] !== path) out.push(x[1]);
                return out;
              }),
          );
        }
      }
    }
  }

  /** The report's `lenient` entry, or null when nothing was scored with `--match`. */
  data(leaderboard: LeaderboardRow[]): Record<string, unknown> | null {
    const withL = leaderboard.filter((r) => r.lenient);
    if (withL.length === 0 && !this.any) return null;
    const policies = [...new Set(withL.map((r) => r.lenient!.policy))];
    const judges = [...new Set(withL.map((r) => r.lenient!.judge).filter((j) => j))];
    const s = withL.length > 1 ? sensitivity(leaderboard, 'overall') : null;
    return {
      policy: policies.join(', ') || '?',
      judge: judges.join(', ') || null,
      tau:
        withL.length > 1
          ? kendallTau(
              withL.map((r) => r.overall),
              withL.map((r) => r.lenient!.overall),
            )
          : null,
      tauVa:
        withL.length > 1
          ? kendallTau(
              withL.map((r) => r.value_accuracy ?? 0),
              withL.map((r) => r.lenient!.value_accuracy),
            )
          : null,
      sensitivity: s && { tau: s.tau, rankings: s.rankings },
      rows: this.rows,
    };
  }
}
