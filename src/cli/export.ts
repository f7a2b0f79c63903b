/** `sob export`: an evaluation's records and fields as Parquet files, for a warehouse. */
import type { Command } from 'commander';
import { exportEvaluation } from '../app/export.ts';
import { log } from '../app/io.ts';
import { choiceOption } from './common.ts';

interface ExportFlags {
  format: 'parquet';
  out?: string;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "an evaluation's per-record rows and field rows as Parquet files (records.parquet, fields.parquet), for DuckDB, pandas or Spark",
    )
    .argument('<eval-dir>', 'an evaluation folder (sob eval --eval-dir, or sob score --out)')
    .option('--format <f>', 'parquet', choiceOption(['parquet'] as const), 'parquet')
    .option('--out <dir>', 'where the files go (default: <eval-dir>/export)')
    .addHelpText(
      'after',
      `
Each row leads with its source and model (the evaluation's <source>/<model> folder). Types are
kept: integers INT64, numbers DOUBLE, booleans BOOLEAN, strings STRING; a nested value (a list,
an object) is its JSON text. fields.parquet's gold and answer are the leaves as JSON text, as
fields.jsonl writes them.

Example (DuckDB): the worst fields by model
  sob export runs/eval --format parquet
  duckdb -c "SELECT model, field, count(*) AS n, avg(exact::INT) AS accuracy
             FROM 'runs/eval/export/fields.parquet' GROUP BY model, field
             HAVING n >= 5 ORDER BY accuracy, n DESC LIMIT 20"`,
    )
    .action(async (evalDir: string, flags: ExportFlags) => {
      const r = await exportEvaluation({ evalDir, format: flags.format, out: flags.out, log });
      process.stdout.write(
        `${r.records.rows} record rows -> ${r.records.file}\n${r.fields.rows} field rows -> ${r.fields.file}\n`,
      );
      log(`${r.folders.length} model folders: ${r.folders.join(', ')}`);
    });
}
