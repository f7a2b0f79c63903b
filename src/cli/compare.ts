/** `sob compare`: is model B better than model A, and by how much? */
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { LENIENT_COMPARED, MATRIX_METRICS, type MatrixMetric, matrixMetric } from '../report/lenient.ts';
import { choiceOption, evaluationDirOf, intOption, log, modalityOption } from './common.ts';

interface CompareFlags {
  all?: boolean;
  model?: string;
  modality?: string;
  samples: number;
  seed: number;
  format: 'table' | 'json';
  metric: MatrixMetric;
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('paired bootstrap: is model B better than model A, on the records both answered?')
    .argument(
      '<a>',
      'model A: a <eval>/<source>/<model> folder (or its eval_records.jsonl); with --all, an evaluation folder',
    )
    .argument('[b]', 'model B, the same way')
    .option(
      '--all',
      'every model of one source in an evaluation folder: the pairwise matrix (Holm-corrected)',
    )
    .option(
      '--model <a[,b]>',
      'model folder names: with two evaluation folders, A from the first and B (b, else a) from the second; with one, two names of it',
    )
    .option(
      '--modality <m>',
      'with --all or --model: which source (default: text for --all, else the first source both have)',
      modalityOption,
    )
    .option('--samples <n>', 'bootstrap resamples', intOption('--samples', 1), 2000)
    .option('--seed <n>', 'bootstrap seed', intOption('--seed'), 42)
    .option('--format <f>', 'table | json', choiceOption(['table', 'json'] as const), 'table')
    .option(
      '--metric <m>',
      `with --all: ${MATRIX_METRICS.join(' | ')} (lenient ones need rows scored with sob score --match)`,
      choiceOption(MATRIX_METRICS),
      'value_accuracy',
    )
    .addHelpText(
      'after',
      `
Examples:
  sob compare runs/evaluation/image/phi-4 runs/evaluation/image/gpt-oss
  sob compare runs/evaluation --all --modality image
  sob compare runs/eval-before/evaluation runs/eval-after/evaluation --model phi-4
  sob compare ../shared/data/sob/evaluation --model phi-4,gpt-oss --modality image

The difference is B - A (weighted by schema complexity), with a 95% bootstrap interval and a
two-sided bootstrap p-value; with --all, p-values are Holm-Bonferroni adjusted. Rows scored
with sob score --match are also compared on Lenient Value Accuracy, Lenient Faithfulness and
Field F1 (over the records both answered), and --all --metric lenient_value_accuracy gives the
matrix on it.`,
    )
    .action(async (a: string, b: string | undefined, flags: CompareFlags) => {
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
      } = await import('../report/compare.ts');
      if (flags.all) {
        const modality = flags.modality ?? 'text';
        const found = modelFolders(evaluationDirOf(a), modality);
        for (const s of found.skipped) log(`skipped ${s.folder}: ${s.reason}`);
        const metric = matrixMetric(flags.metric);
        let models = await Promise.all(found.folders.map(loadModelRows));
        if (metric.lenient) {
          for (const x of models)
            if (![...x.rows.values()].some((r) => r.lenient))
              log(`skipped ${x.name}: no lenient scores (score it with sob score --match)`);
          models = models.filter((x) => [...x.rows.values()].some((r) => r.lenient));
        }
        if (models.length < 2)
          throw new UserError(`need at least two models with eval_records.jsonl under ${a}/${modality}`);
        log(`comparing ${models.length} models pairwise on ${modality} (${flags.samples} resamples)`);
        const m = pairwiseMatrix(models, flags.samples, flags.seed, metric.pick);
        for (const [i, j] of m.noCommon)
          log(
            `${m.models[i]} and ${m.models[j]}: no common records (left out of the matrix and the correction)`,
          );
        const json = {
          metric: flags.metric,
          name: metric.label,
          difference: "B - A: B = the column's model (cells[row][column]), A = the row's",
          correction: 'holm-bonferroni',
          method: methodNote(flags.samples, flags.seed),
          models: m.models,
          cells: m.cells,
          pairs_tested: (m.models.length * (m.models.length - 1)) / 2 - m.noCommon.length,
          no_common_records: m.noCommon.map(([i, j]) => [m.models[i], m.models[j]]),
        };
        process.stdout.write(
          `${flags.format === 'json' ? JSON.stringify(json, null, 2) : `${matrixTable(m, metric.label)}\n${methodNote(flags.samples, flags.seed)}`}\n`,
        );
        return;
      }
      if (flags.model) {
        const names = flags.model.split(',').filter((x) => x !== '');
        // An eval folder (sob eval) or a run directory stands for its evaluation/, as with --all.
        const r = resolveModelFolders(
          (b ? [a, b] : [a]).map((d) => evaluationDirOf(d)),
          names,
          flags.modality,
        );
        log(`comparing B = ${r.b} against A = ${r.a} (${r.modality})`);
        a = r.a;
        b = r.b;
      }
      if (!b) throw new UserError('give two models to compare (or --all with an evaluation folder)', 2);
      const [ma, mb] = await Promise.all([loadModelRows(a), loadModelRows(b)]);
      const res = comparePair(ma, mb, flags.samples, flags.seed);
      if (res[0].n === 0) throw new UserError(`${ma.name} and ${mb.name} have no record id in common`);
      // Rows scored with --match: the lenient metrics too, over the records both scored leniently.
      const len = comparePair(ma, mb, flags.samples, flags.seed, LENIENT_COMPARED.length, (r) => r.lenient);
      const lenient = len[0].n > 0 ? len : [];
      const note = methodNote(flags.samples, flags.seed);
      const lenNote =
        lenient.length > 0 && lenient[0].n !== res[0].n
          ? `\nlenient metrics over the ${lenient[0].n} records both scored with --match`
          : '';
      process.stdout.write(
        `${
          flags.format === 'json'
            ? JSON.stringify(
                {
                  a: ma.name,
                  b: mb.name,
                  difference: 'B - A',
                  method: note,
                  results: res.map((r, i) => ({ metric: COMPARED[i][0], name: COMPARED[i][1], ...r })),
                  ...(lenient.length > 0
                    ? {
                        lenient_results: lenient.map((r, i) => ({
                          metric: LENIENT_COMPARED[i][0],
                          name: LENIENT_COMPARED[i][1],
                          ...r,
                        })),
                      }
                    : {}),
                },
                null,
                2,
              )
            : `${pairTable(ma, mb, [...res, ...lenient], [...COMPARED, ...LENIENT_COMPARED.slice(0, lenient.length)])}${lenNote}\n${note}`
        }\n`,
      );
    });
}
