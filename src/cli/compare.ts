/** `sob compare`: is model B better than model A, and by how much? */
import type { Command } from 'commander';
import { compareRuns } from '../app/compare.ts';
import { MATRIX_METRICS, type MatrixMetric } from '../report/lenient.ts';
import { choiceOption, intOption, modalityOption } from './common.ts';

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
  sob compare runs/m-text runs/m-document          # two input modes of one model (sob run --input)

The difference is B - A (weighted by schema complexity), with a 95% bootstrap interval and a
two-sided bootstrap p-value, and p (Holm): adjusted over the metrics compared (with --all,
over the pairs). The records that flip (Value Accuracy 1 in one side only) and the field flips
follow. A run directory or an eval folder of one model stands for that model; runs of different
--input modes are named with their mode (m · text, m · document). Rows scored
with sob score --match are also compared on Lenient Value Accuracy, Lenient Faithfulness and
Field F1 (over the records both answered), and --all --metric lenient_value_accuracy gives the
matrix on it.`,
    )
    .action(async (a: string, b: string | undefined, flags: CompareFlags) => {
      await compareRuns({ ...flags, a, b });
    });
}
