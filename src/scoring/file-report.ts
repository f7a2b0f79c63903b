/**
 * The lines a finished file says on stderr: repeated record ids, rows without an id, schemas that
 * are not usable, records without a weight, a benchmark's missing and unknown ids, refused
 * schemas, defaulted sources, schemas that ran over time, malformed lines.
 */
import { join } from 'node:path';
import type { Modality, Source } from '../core/record.ts';
import { BENCHMARK_IDS, someIds } from './benchmark.ts';
import type { FileState } from './file-state.ts';

/** Says on `log` what a finished file held beside its scores (`modality`: the run's `--modality`). */
export function reportFile(st: FileState, modality: Modality | undefined, log: (line: string) => void): void {
  const file = st.target.file;
  const bench = st.benchmarkIds(modality);
  for (const out of st.outputs.values()) {
    const name = `${file} (${out.modality})`;
    if (out.duplicates > 0)
      log(
        `${name}: ${out.duplicates} rows repeat an earlier record id (${out.distinct} distinct): ${out.repeats.join(', ')}${out.duplicates > out.repeats.length ? ', ...' : ''}; ${st.dedupe ? 'strict profile: only the first row of each id is scored' : 'sob profile: every row is scored, as the reference does (--profile strict keeps the first of each id)'}`,
      );
    if (out.noId > 0)
      log(
        `${name}: ${out.noId} rows name no metadata.record_id (line${out.noIdLines.length > 1 ? 's' : ''} ${out.noIdLines.join(', ')}${out.noId > out.noIdLines.length ? ', ...' : ''}): scored, but they cannot be told apart, checked for repeats or matched to a benchmark`,
      );
    if (out.badSchema > 0)
      log(
        `${name}: ${out.badSchema === 1 ? '1 record has' : `${out.badSchema} records have`} an input.json_schema that is not a usable JSON Schema, so ${out.badSchema === 1 ? 'it scores' : 'they score'} 0 (data_quality.invalid_schema_input_count): ${out.badSchemaSeen.join('; ')}${out.badSchema > out.badSchemaSeen.length ? '; ...' : ''}`,
      );
    const unweighted = out.acc.dataQuality.unknown_difficulty_count;
    if (out.modality !== 'schema' && unweighted > 0)
      log(
        `${name}: ${unweighted === out.rows ? `none of its ${unweighted} records names` : `${unweighted} of its ${out.rows} records name no`} schema_complexity or difficulty (easy, medium, hard): weight 0, so ${unweighted === out.rows ? 'every weighted mean is 0.000' : 'they are left out of the weighted means'} (the reference's rule); give metadata.schema_complexity, or score against the benchmark with --benchmark`,
      );
    if (!bench) continue;
    const missing = bench.missing.get(out.modality as Source) ?? [];
    const unknown = st.unknown.get(out.modality as Source) ?? [];
    if (missing.length > 0 || unknown.length > 0)
      log(
        `${name}: ${missing.length} of the benchmark's ${bench.counts.get(out.modality as Source) ?? 0} ${out.modality} records have no answer${missing.length ? ` (${someIds(missing)})` : ''}; ${unknown.length} answers are not in the benchmark${unknown.length ? ` (${someIds(unknown)}; not scored)` : ''}; lists in ${join(out.dir, BENCHMARK_IDS)}`,
      );
  }
  if (bench) {
    // Benchmark records of a source this file has no answer for at all.
    for (const [m, missing] of bench.missing)
      if (!st.outputs.has(m) && missing.length > 0)
        log(
          `${file}: none of the benchmark's ${missing.length} ${m} records has an answer (no ${m} folder written); ids: ${someIds(missing)}`,
        );
    for (const [m, ids] of st.unknown)
      if (!st.outputs.has(m))
        log(`${file}: ${ids.length} ${m} answers are not in the benchmark (not scored): ${someIds(ids)}`);
  }
  const refused = [...st.rejected.values()].reduce((n, l) => n + l.length, 0);
  if (refused > 0)
    log(
      `${file}: ${refused} records whose schema the provider refused (eval_info.schema_rejected) are left out of the scores (data_quality.schema_rejected_count)`,
    );
  if (st.defaulted > 0)
    log(
      `${file}: ${st.defaulted === 1 ? '1 record names' : `${st.defaulted} records name`} no source (metadata.source) and the file name does not tell one (text_response, image_response, audio_response, _image, _audio): scored as text; --modality chooses`,
    );
  if (st.remembered > 0)
    log(
      `${file}: ${st.remembered} records share a schema that ran over the time budget earlier: reported with scoring_error, not run again`,
    );
  for (const m of st.malformed.slice(0, 5)) log(`${file}:${m.line}: skipped: ${m.error}`);
  if (st.malformed.length > 5) log(`${file}: ${st.malformed.length - 5} more malformed lines skipped`);
}
