/**
 * Each leaderboard model's cost and speed (tokens in/out, cost, latency and time-to-first-token
 * percentiles), read from the response files its summaries were scored from (`response_file`,
 * else `<eval-dir>/runs/<model>/responses.jsonl` as `sob eval` lays them out).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ComplianceBoard } from '../../metrics/compliance-track.ts';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import { type Usage, UsageAccumulator, unitCosts } from '../../metrics/usage.ts';
import { documentPages } from '../core/attachments.ts';
import type { ResponseInfo, ResponseLine } from '../core/formats/response-line.ts';
import { readLinesSync } from '../core/jsonl.ts';
import { MODALITIES } from '../core/record.ts';
import type { EvaluationFolder } from './evaluation.ts';

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * A response line's `eval_info`. Writers (ours, the SOB reference's) put it last: the text after
 * the last `"eval_info":` up to the line's closing brace is parsed alone (a fraction of the line);
 * when that is not a whole JSON value (the key is elsewhere, or nested deeper), the whole line is.
 */
export function evalInfoOf(text: string): unknown {
  const k = text.lastIndexOf('"eval_info":');
  const end = text.lastIndexOf('}');
  if (k > 0 && end > k) {
    try {
      return JSON.parse(text.slice(k + '"eval_info":'.length, end));
    } catch {
      // not the last key: read the whole line
    }
  }
  try {
    return (JSON.parse(text) as ResponseLine | null)?.eval_info;
  } catch {
    return undefined;
  }
}

/** What a model's answers say: each one's figures, the pages its records' documents show, the modes asked in. */
interface Answers {
  usage: UsageAccumulator;
  pages: number;
  modes: Set<string>;
  any: boolean;
}

/** A response line's `input.attachments` (only lines that name attachments are parsed whole). */
function pagesOf(text: string): number {
  if (!text.includes('"attachments"')) return 0;
  try {
    const line = JSON.parse(text) as { input?: { attachments?: unknown } } | null;
    const list = line?.input?.attachments;
    if (!Array.isArray(list)) return 0;
    return documentPages(
      list.filter(
        (a): a is { kind: string; pages?: number[] } =>
          typeof a === 'object' && a !== null && typeof (a as { kind?: unknown }).kind === 'string',
      ) as Parameters<typeof documentPages>[0],
    );
  } catch {
    return 0;
  }
}

function readAnswers(files: string[]): Answers {
  const out: Answers = { usage: new UsageAccumulator(), pages: 0, modes: new Set(), any: false };
  for (const file of files) {
    for (const l of readLinesSync(file)) {
      const info = evalInfoOf(l.text);
      if (typeof info !== 'object' || info === null) continue;
      out.any = true;
      const i = info as ResponseInfo;
      if (i.schema_rejected === true) continue; // no answer: nothing spent on the model
      out.modes.add(typeof i.input_mode === 'string' ? i.input_mode : 'text');
      out.pages += pagesOf(l.text);
      out.usage.add({
        input_tokens: num(i.input_tokens),
        output_tokens: num(i.output_tokens),
        cost: i.cached === true ? 0 : num(i.cost),
        // A cached answer took no time of the model's: not a latency.
        latency_ms: i.cached === true ? null : num(i.latency_ms),
        ttft_ms: i.cached === true ? null : num(i.ttft_ms),
      });
    }
  }
  return out;
}

/** The `eval_info` of every answer in the files (a line that is not JSON is skipped). */
export async function readUsage(files: string[]): Promise<Usage | null> {
  const a = readAnswers(files);
  return a.any ? a.usage.result() : null;
}

/** The response files a model's summaries name, or the `sob eval` layout's; those that exist. */
export function responseFilesOf(ev: EvaluationFolder, model: string): string[] {
  const files = new Set<string>();
  const info = ev.info.get(model) ?? {};
  for (const m of MODALITIES) {
    const f = info[m]?.responseFile;
    if (f && isFile(f)) files.add(f);
  }
  if (files.size === 0) {
    const evalLayout = join(dirname(ev.dir), 'runs', model, 'responses.jsonl');
    if (existsSync(join(dirname(ev.dir), 'runs')) && isFile(evalLayout)) files.add(evalLayout);
  }
  return [...files];
}

/**
 * Sets `usage` on every row whose answers can be found, with its units (`unitCosts`): the mode
 * asked in, pages, and cost and input tokens per record and page; per correct field once
 * `attachCorrectFields` has the fields' verdicts.
 */
export async function attachUsage(rows: LeaderboardRow[], ev: EvaluationFolder): Promise<void> {
  for (const r of rows) {
    const files = responseFilesOf(ev, r.model);
    if (files.length === 0) continue;
    const a = readAnswers(files);
    if (!a.any) continue;
    const mode = a.modes.size === 0 ? undefined : [...a.modes].sort().join('+');
    r.usage = unitCosts(a.usage.result(), { pages: a.pages, mode });
  }
}

/** Each row's leaves answered right (fields.jsonl, all sources), and its cost per correct field. */
export function attachCorrectFields(
  rows: LeaderboardRow[],
  correct: ReadonlyMap<string, { right: number; n: number }> | undefined,
): void {
  for (const r of rows) {
    if (!r.usage) continue;
    const c = correct?.get(r.model);
    r.usage = unitCosts(r.usage, {
      pages: r.usage.pages ?? 0,
      mode: r.usage.input_mode,
      correctFields: c ? c.right : null,
    });
  }
}

/**
 * The compliance track's rows: each model's answers from its summary's response file. `folders`
 * are the compliance folders (`ComplianceFolder`, compliance.ts), of which only these fields are read.
 */
export async function attachComplianceUsage(
  board: ComplianceBoard,
  folders: ReadonlyArray<{ model: string; path: string; entry: { responseFile?: string } }>,
): Promise<void> {
  for (const r of board.rows) {
    const f = folders.find((x) => x.model === r.model);
    const files = [f?.entry.responseFile].filter((x): x is string => typeof x === 'string' && isFile(x));
    if (files.length === 0 && f) {
      // sob eval's layout: <eval-dir>/evaluation/schema/<model> and <eval-dir>/runs/<model>
      const evalLayout = join(f.path, '../../../runs', r.model, 'responses.jsonl');
      if (isFile(evalLayout)) files.push(evalLayout);
    }
    if (files.length === 0) continue;
    const u = await readUsage(files);
    if (u) r.usage = u;
  }
}
