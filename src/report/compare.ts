/**
 * Reading what `sob compare` needs: the per-record rows (`eval_records.jsonl`) of two or more
 * models on one source, joined by record id, and the tables it prints.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { holm, type PairedResult, pairedBootstrap } from '../../metrics/compare.ts';
import { UserError } from '../core/errors.ts';
import { EVAL_ROW } from '../core/formats/eval-row.ts';
import { checkVersion } from '../core/formats/version.ts';
import { readJsonl, readLinesSync } from '../core/jsonl.ts';
import { MODALITIES, type Modality } from '../core/record.ts';
import { type SkippedFolder, scanSource } from './evaluation.ts';
import { LENIENT_COMPARED } from './lenient.ts';
import { evalInfoOf } from './usage.ts';

/** The metrics compared, in the paper's words (reference field names at the file boundary). */
export const COMPARED: [string, string][] = [
  ['leaf_value_em', 'Value Accuracy'],
  ['value_token_f1', 'Faithfulness'],
  ['schema_compliance', 'JSON Pass'],
  ['hier_path_recall', 'Path Recall'],
  ['path_set_f1', 'Structure Coverage'],
  ['type_precision', 'Type Safety'],
  ['strict_json_em', 'Perfect Response'],
];

/** One record's values: COMPARED order, and (scored with `--match`) LENIENT_COMPARED order. */
export interface RowValues {
  values: number[];
  weight: number;
  lenient?: number[];
}

export interface ModelRows {
  name: string;
  /** record id -> metric values (COMPARED order) and weight */
  rows: Map<string, RowValues>;
}

/** Which numbers of a record a comparison uses (undefined: the record has none). */
export type Pick = (r: RowValues) => number[] | undefined;
const EXACT: Pick = (r) => r.values;

function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0;
}

/** A model folder (`<dir>/<source>/<model>`) or its `eval_records.jsonl`. */
export async function loadModelRows(path: string): Promise<ModelRows> {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'eval_records.jsonl') : path;
  if (!existsSync(file))
    throw new UserError(
      `no eval_records.jsonl at ${path} (give a <eval>/<source>/<model> folder or the file)`,
    );
  const rows = new Map<string, RowValues>();
  for await (const l of readJsonl(file)) {
    if (!l.ok) throw new UserError(`${file}:${l.line}: not JSON: ${l.error}`);
    if (!(l.value instanceof Map)) continue;
    checkVersion(l.value, EVAL_ROW, `${file}:${l.line}`);
    const id = l.value.get('record_id');
    if (typeof id !== 'string' || rows.has(id)) continue;
    const row = l.value;
    rows.set(id, {
      values: COMPARED.map(([k]) => num(row.get(k))),
      weight: num(row.get('difficulty_weight')),
      ...(row.has(LENIENT_COMPARED[0][0]) ? { lenient: LENIENT_COMPARED.map(([k]) => num(row.get(k))) } : {}),
    });
  }
  const name = basename(file === path ? join(path, '..') : path);
  return { name, rows };
}

/**
 * `--model` names against evaluation folders: with two folders, model A from the first and B
 * (the second name, else the same name) from the second; with one folder, two names of it. The
 * source is `modality` when given, else the first source (text, image, audio) where both exist.
 */
export function resolveModelFolders(
  dirs: string[],
  names: string[],
  modality?: string,
): { a: string; b: string; modality: string } {
  let pair: [string, string];
  if (dirs.length === 2) pair = [join(dirs[0], '%s', names[0]), join(dirs[1], '%s', names[1] ?? names[0])];
  else if (names.length === 2) pair = [join(dirs[0], '%s', names[0]), join(dirs[0], '%s', names[1])];
  else throw new UserError('with one evaluation folder, --model needs two names: --model <a>,<b>', 2);
  const has = (m: string) => pair.every((p) => existsSync(join(p.replace('%s', m), 'eval_records.jsonl')));
  const m = modality ?? MODALITIES.find(has);
  if (!m || !has(m)) {
    const where = pair.map((p) => p.replace('%s', modality ?? '<source>')).join(' and ');
    throw new UserError(`no eval_records.jsonl for both ${where}`);
  }
  return { a: pair[0].replace('%s', m), b: pair[1].replace('%s', m), modality: m };
}

/** The p-value and interval method, printed under every comparison. */
export function methodNote(samples: number, seed: number): string {
  return `95% interval: 2.5%/97.5% percentiles of ${samples} paired resamples of the records (seed ${seed}); p: two-sided bootstrap, 2 x the share of resampled differences on the far side of 0 (capped at 1)`;
}

/**
 * Every model folder of one source in an evaluation folder that has per-record rows and a
 * readable summary; every other non-dot folder is named with why it is left out.
 */
export function modelFolders(
  evalDir: string,
  modality: string,
): { folders: string[]; skipped: SkippedFolder[] } {
  if (!(MODALITIES as readonly string[]).includes(modality) || !existsSync(join(evalDir, modality))) {
    const present = MODALITIES.filter((m) => existsSync(join(evalDir, m)));
    throw new UserError(
      `no ${modality} results under ${evalDir}${present.length > 0 ? ` (it has ${present.join(', ')}: pass --modality ${present[0]})` : ''}`,
    );
  }
  const scan = scanSource(evalDir, modality as Modality);
  const folders: string[] = [];
  const skipped = [...scan.skipped];
  for (const f of scan.folders) {
    if (f.records) folders.push(f.path);
    else
      skipped.push({
        folder: f.folder,
        reason: 'no eval_records.jsonl (a comparison needs the per-record rows)',
      });
  }
  skipped.sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
  return { folders, skipped };
}

/**
 * Paired comparison of B against A on the compared metrics (the first `metrics` of them, all by
 * default), over the records both have.
 */
export function comparePair(
  a: ModelRows,
  b: ModelRows,
  samples: number,
  seed: number,
  metrics = COMPARED.length,
  pick: Pick = EXACT,
): PairedResult[] {
  const ids = [...a.rows.keys()].filter((id) => {
    const rb = b.rows.get(id);
    return rb !== undefined && pick(a.rows.get(id)!) !== undefined && pick(rb) !== undefined;
  });
  return Array.from({ length: metrics }, (_, m) => {
    const va = new Float64Array(ids.length);
    const vb = new Float64Array(ids.length);
    const w = new Float64Array(ids.length);
    ids.forEach((id, i) => {
      const ra = a.rows.get(id)!;
      va[i] = pick(ra)![m];
      vb[i] = pick(b.rows.get(id)!)![m];
      w[i] = ra.weight;
    });
    return pairedBootstrap({ a: va, b: vb, weights: w }, { samples, seed });
  });
}

function f(x: number, d = 3): string {
  return (x >= 0 ? ' ' : '') + x.toFixed(d);
}

export function pairTable(
  a: ModelRows,
  b: ModelRows,
  results: PairedResult[],
  labels: [string, string][] = COMPARED,
  pHolm?: number[],
): string {
  const w = Math.max(20, ...labels.map(([, l]) => l.length));
  const p = (x: number) => (x < 0.001 ? '<0.001' : x.toFixed(3));
  const lines = [
    `A = ${a.name}, B = ${b.name}: ${results[0]?.n ?? 0} records both answered (paired bootstrap, weighted by schema complexity); B - A > 0: B scores higher`,
    `${'metric'.padEnd(w)} ${'A'.padStart(7)} ${'B'.padStart(7)} ${'B - A'.padStart(7)}  ${'95% interval'.padEnd(19)} p${pHolm ? `${''.padEnd(6)} p (Holm)` : ''}`,
  ];
  results.forEach((r, i) => {
    lines.push(
      `${labels[i][1].padEnd(w)} ${r.meanA.toFixed(3).padStart(7)} ${r.meanB.toFixed(3).padStart(7)} ${f(r.difference).padStart(7)}  [${f(r.ciLow)}, ${f(r.ciHigh)}] ${pHolm ? `${p(r.pValue).padEnd(6)} ${p(pHolm[i])}${pHolm[i] < 0.05 ? ' *' : ''}` : p(r.pValue)}`,
    );
  });
  return lines.join('\n');
}

/** One record that flips: fully right (Value Accuracy 1) in one of the two, not in the other. */
export interface RecordFlip {
  id: string;
  /** Value Accuracy of A and of B on the record. */
  a: number;
  b: number;
}

/**
 * The records both answered that flip between A and B: right in A and not in B (`lost`), and
 * the reverse (`gained`); a record is right when every ground-truth leaf is (Value Accuracy 1).
 * Each list in record-id order.
 */
export function recordFlips(
  a: ModelRows,
  b: ModelRows,
): { both: number; lost: RecordFlip[]; gained: RecordFlip[] } {
  const lost: RecordFlip[] = [];
  const gained: RecordFlip[] = [];
  let both = 0;
  for (const [id, ra] of a.rows) {
    const rb = b.rows.get(id);
    if (!rb) continue;
    both++;
    const va = ra.values[0];
    const vb = rb.values[0];
    if (va === 1 && vb !== 1) lost.push({ id, a: va, b: vb });
    else if (va !== 1 && vb === 1) gained.push({ id, a: va, b: vb });
  }
  const byId = (x: RecordFlip, y: RecordFlip) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  return { both, lost: lost.sort(byId), gained: gained.sort(byId) };
}

/** The record flips as text lines, at most `limit` ids per direction (the JSON has them all). */
export function recordFlipsText(f: ReturnType<typeof recordFlips>, a: string, b: string, limit = 10): string {
  const list = (xs: RecordFlip[]) =>
    xs
      .slice(0, limit)
      .map((x) => `  ${x.id}  ${x.a.toFixed(3)} -> ${x.b.toFixed(3)}`)
      .concat(xs.length > limit ? [`  ... ${xs.length - limit} more (--format json has them all)`] : []);
  return [
    `Records that flip (of ${f.both} both answered; right = Value Accuracy 1): ${f.lost.length} right in A (${a}) only, ${f.gained.length} right in B (${b}) only`,
    ...(f.lost.length > 0 ? [`right in A, wrong in B (Value Accuracy A -> B):`, ...list(f.lost)] : []),
    ...(f.gained.length > 0 ? [`wrong in A, right in B (Value Accuracy A -> B):`, ...list(f.gained)] : []),
  ].join('\n');
}

/**
 * The input mode a model folder's answers were asked in (`eval_info.input_mode` of the response
 * file its summary names; `text` when the lines do not say), or undefined when the answers are not found.
 */
export function inputModeOf(modelFolder: string): string | undefined {
  const dir =
    existsSync(modelFolder) && statSync(modelFolder).isDirectory() ? modelFolder : join(modelFolder, '..');
  let file: unknown;
  try {
    file = (JSON.parse(readFileSync(join(dir, 'eval_summary.json'), 'utf8')) as { response_file?: unknown })
      .response_file;
  } catch {
    return undefined;
  }
  if (typeof file !== 'string' || !existsSync(file)) return undefined;
  for (const l of readLinesSync(file)) {
    const info = evalInfoOf(l.text);
    if (typeof info !== 'object' || info === null) continue;
    const m = (info as { input_mode?: unknown }).input_mode;
    return typeof m === 'string' ? m : 'text';
  }
  return undefined;
}

/**
 * The one model folder a path stands for: the folder (or its eval_records.jsonl) as given, or,
 * for an evaluation folder, a run directory or a `sob eval` folder, its only model on `modality`
 * (else the first source it has). Several models there: one line asking for `--model`.
 */
export function singleModelFolder(path: string, evalDir: string, modality?: string): string {
  if (path.endsWith('.jsonl') || existsSync(join(path, 'eval_records.jsonl'))) return path;
  const sources = MODALITIES.filter((m) => (modality ? m === modality : true)).filter((m) =>
    existsSync(join(evalDir, m)),
  );
  for (const m of sources) {
    const scan = scanSource(evalDir, m);
    const folders = scan.folders.filter((f) => f.records);
    if (folders.length === 1) return folders[0].path;
    if (folders.length > 1)
      throw new UserError(
        `${path} holds ${folders.length} ${m} models (${folders.map((f) => f.model).join(', ')}): name them with --model <a>,<b>`,
        2,
      );
  }
  throw new UserError(
    `no eval_records.jsonl at ${path}${modality ? ` for ${modality}` : ''} (give a <eval>/<source>/<model> folder, its file, or a scored run directory)`,
  );
}

export interface MatrixCell extends PairedResult {
  pHolm: number;
}

export interface MatrixResult {
  models: string[];
  /**
   * [i][j] = B=models[j] vs A=models[i] on Value Accuracy, with Holm-adjusted p-values; null on
   * the diagonal and for a pair with no record in common.
   */
  cells: (MatrixCell | null)[][];
  /** Pairs [i, j] (i < j) with no record in common: out of the matrix and of the correction. */
  noCommon: [number, number][];
}

/**
 * All pairs on Value Accuracy, p-values adjusted together (Holm-Bonferroni). A pair with no
 * record in common has no comparison: it is left out of the matrix and of the correction (it
 * would otherwise count as a test with p = 1 and inflate every other adjusted p-value).
 */
export function pairwiseMatrix(
  models: ModelRows[],
  samples: number,
  seed: number,
  pick: Pick = EXACT,
): MatrixResult {
  const raw: { i: number; j: number; r: PairedResult }[] = [];
  const noCommon: [number, number][] = [];
  for (let i = 0; i < models.length; i++) {
    for (let j = i + 1; j < models.length; j++) {
      const r = comparePair(models[i], models[j], samples, seed, 1, pick)[0];
      if (r.n === 0) noCommon.push([i, j]);
      else raw.push({ i, j, r });
    }
  }
  const adjusted = holm(raw.map((x) => x.r.pValue));
  const cells: (MatrixCell | null)[][] = models.map(() => models.map(() => null));
  raw.forEach(({ i, j, r }, k) => {
    cells[i][j] = { ...r, pHolm: adjusted[k] };
    cells[j][i] = {
      ...r,
      meanA: r.meanB,
      meanB: r.meanA,
      difference: -r.difference,
      ciLow: -r.ciHigh,
      ciHigh: -r.ciLow,
      pHolm: adjusted[k],
    };
  });
  return { models: models.map((m) => m.name), cells, noCommon };
}

/**
 * A name in pieces of at most `width` characters for a column header, cut after a separator
 * (`-`, `_`, `.`, `/`, space) where one falls in the piece's second half.
 */
export function wrapName(name: string, width: number): string[] {
  const out: string[] = [];
  let rest = name;
  while (rest.length > width) {
    let cut = width;
    for (let k = width; k > width / 2; k--)
      if ('-_./ '.includes(rest[k - 1])) {
        cut = k;
        break;
      }
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

/** The matrix as text: the difference per pair, * where significant, n/c where no record is shared. */
export function matrixTable(m: MatrixResult, label = 'Value Accuracy'): string {
  const w = Math.max(8, ...m.models.map((x) => x.length));
  const noCommon = new Set(m.noCommon.flatMap(([i, j]) => [`${i},${j}`, `${j},${i}`]));
  // Full names over the columns, wrapped onto as many header lines as the longest needs.
  const col = 12;
  const wrapped = m.models.map((x) => wrapName(x, col - 1));
  const depth = Math.max(...wrapped.map((p) => p.length));
  const heads = Array.from({ length: depth }, (_, k) =>
    `${''.padEnd(w)} ${wrapped.map((p) => (p[k] ?? '').padStart(col)).join(' ')}`.trimEnd(),
  );
  const rows = m.models.map((name, i) => {
    const cells = m.models.map((_, j) => {
      if (i === j) return '-'.padStart(col);
      const c = m.cells[i][j];
      if (!c) return (noCommon.has(`${i},${j}`) ? 'n/c ' : '- ').padStart(col);
      const mark = c.pHolm < 0.05 ? '*' : ' ';
      return `${f(c.difference)}${mark}`.padStart(col);
    });
    return `${name.padEnd(w)} ${cells.join(' ')}`;
  });
  const tested = (m.models.length * (m.models.length - 1)) / 2 - m.noCommon.length;
  const out = [
    `${label}, column minus row (paired bootstrap); * = p < 0.05 after Holm-Bonferroni correction over ${tested} pair${tested === 1 ? '' : 's'}`,
    ...heads,
    ...rows,
    `Each cell: B - A with A = the row's model, B = the column's (> 0: the column's model scores higher). Marks: * significant (Holm p < 0.05); no mark: not significant; - the model itself${m.noCommon.length > 0 ? '; n/c no common records' : ''}.`,
  ];
  if (m.noCommon.length > 0)
    out.push(
      `n/c = no common records (left out of the matrix and the correction): ${m.noCommon.map(([i, j]) => `${m.models[i]} / ${m.models[j]}`).join(', ')}`,
    );
  return out.join('\n');
}
