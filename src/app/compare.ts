/**
 * `sob compare` as one use case: a paired bootstrap of model B against model A on the records
 * both answered, or the Holm-corrected pairwise matrix of every model of one source (`all`). The
 * command (`src/cli/compare.ts`) reads the flags into `CompareSettings` and calls `compareRuns`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../core/errors.ts';
import { MODALITIES } from '../core/record.ts';
import { LENIENT_COMPARED, type MatrixMetric, matrixMetric } from '../report/lenient.ts';
import { evaluationDirOf } from './evaluation-dir.ts';
import { log } from './io.ts';

/** What `sob compare` was asked: the two models (folders) or one evaluation folder, and how. */
export interface CompareSettings {
  /** Model A's folder (or its eval_records.jsonl); with `all`, an evaluation folder. */
  a: string;
  /** Model B's, the same way. */
  b?: string;
  all?: boolean;
  /** `--model A,B`: the two models by name, under `a` (and `b`). */
  model?: string;
  modality?: string;
  samples: number;
  seed: number;
  format: 'table' | 'json';
  metric: MatrixMetric;
}

/** Runs `sob compare`: the table (or JSON) on stdout, progress on stderr. */
export async function compareRuns(s: CompareSettings): Promise<void> {
  let { a, b } = s;
  const {
    COMPARED,
    comparePair,
    loadModelRows,
    matrixTable,
    methodNote,
    modelFolders,
    pairTable,
    pairwiseMatrix,
    resolveModelFolders,
    inputModeOf,
    recordFlips,
    recordFlipsText,
    singleModelFolder,
  } = await import('../report/compare.ts');
  const { holm } = await import('../../metrics/compare.ts');
  if (s.all) {
    const modality = s.modality ?? 'text';
    const found = modelFolders(evaluationDirOf(a), modality);
    for (const s of found.skipped) log(`skipped ${s.folder}: ${s.reason}`);
    const metric = matrixMetric(s.metric);
    let models = await Promise.all(found.folders.map(loadModelRows));
    if (metric.lenient) {
      for (const x of models)
        if (![...x.rows.values()].some((r) => r.lenient))
          log(`skipped ${x.name}: no lenient scores (score it with sob score --match)`);
      models = models.filter((x) => [...x.rows.values()].some((r) => r.lenient));
    }
    if (models.length < 2)
      throw new UserError(`need at least two models with eval_records.jsonl under ${a}/${modality}`);
    log(`comparing ${models.length} models pairwise on ${modality} (${s.samples} resamples)`);
    const m = pairwiseMatrix(models, s.samples, s.seed, metric.pick);
    for (const [i, j] of m.noCommon)
      log(`${m.models[i]} and ${m.models[j]}: no common records (left out of the matrix and the correction)`);
    const json = {
      metric: s.metric,
      name: metric.label,
      difference: "B - A: B = the column's model (cells[row][column]), A = the row's",
      correction: 'holm-bonferroni',
      method: methodNote(s.samples, s.seed),
      models: m.models,
      cells: m.cells,
      pairs_tested: (m.models.length * (m.models.length - 1)) / 2 - m.noCommon.length,
      no_common_records: m.noCommon.map(([i, j]) => [m.models[i], m.models[j]]),
    };
    process.stdout.write(
      `${s.format === 'json' ? JSON.stringify(json, null, 2) : `${matrixTable(m, metric.label)}\n${methodNote(s.samples, s.seed)}`}\n`,
    );
    return;
  }
  if (s.model) {
    const names = s.model.split(',').filter((x) => x !== '');
    // An eval folder (sob eval) or a run directory stands for its evaluation/, as with --all.
    const r = resolveModelFolders(
      (b ? [a, b] : [a]).map((d) => evaluationDirOf(d)),
      names,
      s.modality,
    );
    log(`comparing B = ${r.b} against A = ${r.a} (${r.modality})`);
    a = r.a;
    b = r.b;
  }
  if (!b) throw new UserError('give two models to compare (or --all with an evaluation folder)', 2);
  // A run directory, an eval folder or an evaluation folder of one model stands for that model.
  if (!s.model) {
    const da = evaluationDirOf(a);
    const db = evaluationDirOf(b);
    // Without --modality: the first source both have (text, image, audio), so A and B match.
    const both = s.modality ?? MODALITIES.find((m) => existsSync(join(da, m)) && existsSync(join(db, m)));
    a = singleModelFolder(a, da, both);
    b = singleModelFolder(b, db, both);
  }
  const [ma, mb] = await Promise.all([loadModelRows(a), loadModelRows(b)]);
  // Two input modes (sob run --input): each side named with its mode, `model · document`.
  const modes = [inputModeOf(a), inputModeOf(b)];
  if (modes[0] !== undefined && modes[1] !== undefined && modes[0] !== modes[1]) {
    ma.name = `${ma.name} · ${modes[0]}`;
    mb.name = `${mb.name} · ${modes[1]}`;
  }
  const res = comparePair(ma, mb, s.samples, s.seed);
  if (res[0].n === 0) throw new UserError(`${ma.name} and ${mb.name} have no record id in common`);
  // Rows scored with --match: the lenient metrics too, over the records both scored leniently.
  const len = comparePair(ma, mb, s.samples, s.seed, LENIENT_COMPARED.length, (r) => r.lenient);
  const lenient = len[0].n > 0 ? len : [];
  // Every metric is a test of its own: p-values adjusted together (Holm-Bonferroni).
  const pHolm = holm([...res, ...lenient].map((r) => r.pValue));
  const flipsOfRecords = recordFlips(ma, mb);
  const note = `${methodNote(s.samples, s.seed)}; p (Holm): adjusted over the ${pHolm.length} metrics (Holm-Bonferroni), * below 0.05`;
  // Field flips (fields.jsonl of both): leaves right in A and wrong in B, and the reverse.
  const { fieldFlips, fieldFlipsText, fieldsFileOf, noFieldsLine } = await import('../report/fields.ts');
  const flips = await fieldFlips(a, b);
  // A side scored with --no-fields: one line says why there are no field flips.
  const bare = [a, b].find((x) => !fieldsFileOf(x));
  const flipsText = flips
    ? `\n\n${fieldFlipsText(flips, ma.name, mb.name)}`
    : `\n\nfield flips: ${noFieldsLine(bare?.endsWith('.jsonl') ? dirname(bare) : (bare ?? a), 'no field flips shown')}`;
  const lenNote =
    lenient.length > 0 && lenient[0].n !== res[0].n
      ? `\nlenient metrics over the ${lenient[0].n} records both scored with --match`
      : '';
  process.stdout.write(
    `${
      s.format === 'json'
        ? JSON.stringify(
            {
              a: ma.name,
              b: mb.name,
              difference: 'B - A',
              method: note,
              ...(modes[0] !== undefined || modes[1] !== undefined
                ? { input_modes: { a: modes[0] ?? null, b: modes[1] ?? null } }
                : {}),
              correction: 'holm-bonferroni over the metrics',
              results: res.map((r, i) => ({
                metric: COMPARED[i][0],
                name: COMPARED[i][1],
                ...r,
                pHolm: pHolm[i],
              })),
              ...(lenient.length > 0
                ? {
                    lenient_results: lenient.map((r, i) => ({
                      metric: LENIENT_COMPARED[i][0],
                      name: LENIENT_COMPARED[i][1],
                      ...r,
                      pHolm: pHolm[res.length + i],
                    })),
                  }
                : {}),
              record_flips: {
                rule: 'right = Value Accuracy 1 (every ground-truth leaf right)',
                both_answered: flipsOfRecords.both,
                right_in_a_wrong_in_b: flipsOfRecords.lost,
                wrong_in_a_right_in_b: flipsOfRecords.gained,
              },
              ...(flips
                ? {
                    field_flips: {
                      leaves: flips.reduce((n, f) => n + f.n, 0),
                      right_in_a_wrong_in_b: flips.reduce((n, f) => n + f.lost, 0),
                      wrong_in_a_right_in_b: flips.reduce((n, f) => n + f.gained, 0),
                      fields: flips,
                    },
                  }
                : {}),
            },
            null,
            2,
          )
        : `${pairTable(ma, mb, [...res, ...lenient], [...COMPARED, ...LENIENT_COMPARED.slice(0, lenient.length)], pHolm)}${lenNote}\n${note}\n\n${recordFlipsText(flipsOfRecords, ma.name, mb.name)}${flipsText}`
    }\n`,
  );
}
