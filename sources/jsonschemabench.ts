/**
 * JSONSchemaBench (Geng et al., 2025: "Generating Structured Outputs from Language Models:
 * Benchmark and Studies") as schema-only records: its layout is `<dataset>/<id>.json`, one
 * real-world schema a file (GlaiveAI-2K, GitHub Trivial to Ultra, Kubernetes, Snowplow,
 * WashingtonPost, JSONSchemaStore). Each schema becomes one record of source `schema`, category
 * (`metadata.source_category`) its dataset, with the paper's prompt; see sources/schemas.ts for
 * what a schema record holds and how a schema our validator cannot compile is flagged, not dropped.
 *
 * The input is the benchmark's data folder (one sub-folder per dataset) or one dataset's folder.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UserError } from '../src/core/errors.ts';
import { isProblem, readSchemaFile, type SchemaSource, schemaCandidates } from './schemas.ts';
import type { Problem, RecordLoader } from './types.ts';

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.json') && statSync(join(dir, f)).isFile())
    .sort();
}

/** The dataset folders of the input: its sub-folders holding `*.json`, or the input itself. */
function datasetFolders(input: string): { dataset: string; dir: string }[] {
  if (!existsSync(input) || !statSync(input).isDirectory())
    throw new UserError(`${input}: not a folder (JSONSchemaBench's layout is <dataset>/<id>.json)`);
  const subs = readdirSync(input)
    .sort()
    .filter((d) => statSync(join(input, d)).isDirectory() && jsonFiles(join(input, d)).length > 0)
    .map((d) => ({ dataset: d, dir: join(input, d) }));
  if (subs.length > 0) return subs;
  if (jsonFiles(input).length > 0) return [{ dataset: basename(input), dir: input }];
  throw new UserError(`${input}: no <dataset>/<id>.json schema files in it (JSONSchemaBench's layout)`);
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'compliance',
  loadRecords: async (input, ctx) => {
    if (input === undefined) throw new UserError('jsonschemabench needs an <input>: its data folder', 2);
    const sources: SchemaSource[] = [];
    const problems: Problem[] = [];
    for (const { dataset, dir } of datasetFolders(input)) {
      for (const f of jsonFiles(dir)) {
        const file = join(dir, f);
        const id = f.replace(/\.json$/i, '');
        const r = readSchemaFile(file);
        if (isProblem(r)) {
          problems.push({ ...r, record_id: `jsb-${dataset}-${id}` });
          continue;
        }
        sources.push({
          origin: file,
          recordId: `jsb-${dataset}-${id}`,
          category: dataset,
          schema: r.plain,
          lossless: r.lossless,
          metadata: { dataset: 'jsonschemabench', schema_id: id, schema_file: `${dataset}/${f}` },
        });
      }
    }
    return schemaCandidates(sources, problems, ctx.log);
  },
};
