/**
 * The one run-directory resolver: which run directories (`sob run`'s manifest.json +
 * responses.jsonl) an input names, as score targets, and the benchmark a run answered. `sob score`
 * scores them into each run's own evaluation/; `sob report` scores those not scored yet.
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunManifest } from '../core/formats/manifest.ts';
import { isModality } from '../core/record.ts';
import { readManifest, runDirTargets } from '../runner/run-dir.ts';
import { type BenchmarkRef, fileSha256 } from './benchmark.ts';
import type { ScoreTarget } from './file-state.ts';

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The run a response file belongs to, when it is the responses.jsonl of a run directory: scored
 * as that run (its benchmark, its profile, its evaluation/), so both spellings give one number.
 */
function runOfResponses(file: string): ScoreTarget[] | null {
  if (!existsSync(file) || !statSync(file).isFile()) return null;
  const run = runDirTargets(dirname(resolve(file)));
  return run && run.length === 1 && resolve(run[0].file) === resolve(file) ? run : null;
}

/**
 * The runs an input of `sob score` names: a run directory, the responses.jsonl of one, or a folder
 * of run directories (e.g. runs/, holding no *.jsonl of its own); null when it names none (then it
 * is a response file or a folder of them).
 */
export function runsNamedBy(input: string): ScoreTarget[] | null {
  const run = isDir(input) ? runDirTargets(input) : runOfResponses(input);
  if (run) return run;
  // A folder of run directories (e.g. runs/): each of them.
  const runs =
    isDir(input) && !readdirSync(input).some((f) => f.endsWith('.jsonl'))
      ? readdirSync(input)
          .sort()
          .map((d) => (isDir(join(input, d)) ? runDirTargets(join(input, d)) : null))
          .filter((r): r is NonNullable<typeof r> => r !== null)
      : [];
  return runs.length > 0 ? runs.flat() : null;
}

/**
 * The runs of a folder `sob report` reads: a run directory (scored into its evaluation/, named
 * after its model), or an eval folder's `runs/<model>/` (scored into the eval folder's
 * evaluation/, named after their folder); none otherwise.
 */
export function runsToReport(dir: string): ScoreTarget[] {
  const run = runDirTargets(dir);
  const runs: ScoreTarget[] = [];
  if (run) runs.push(...run);
  else if (isDir(join(dir, 'runs')))
    for (const sub of readdirSync(join(dir, 'runs')).sort()) {
      if (sub.startsWith('.') || !isDir(join(dir, 'runs', sub))) continue;
      for (const t of runDirTargets(join(dir, 'runs', sub)) ?? [])
        runs.push({ file: t.file, modelDir: sub, outDir: join(dir, 'evaluation') });
    }
  return runs;
}

/**
 * The benchmark a run directory answered, from its manifest (path, `--source`, `--limit`), when
 * that file is still there and unchanged; otherwise the response file's own ground truths are
 * used, and a line says why.
 */
export function runBenchmarkOf(runDir: string, log: (line: string) => void): BenchmarkRef | undefined {
  const manifest = readManifest(runDir);
  // Typed by its format, checked field by field: the file is the user's.
  const b = manifest?.benchmark;
  if (!b || typeof b.path !== 'string') return undefined;
  const settings: Partial<RunManifest['settings']> = manifest?.settings ?? {};
  if (!existsSync(b.path)) {
    log(`${runDir}: its benchmark ${b.path} is gone: scoring against the ground truths in responses.jsonl`);
    return undefined;
  }
  if (typeof b.sha256 === 'string' && fileSha256(b.path) !== b.sha256) {
    log(
      `${runDir}: its benchmark ${b.path} changed since the run: scoring against the ground truths in responses.jsonl`,
    );
    return undefined;
  }
  // The records the run's check rejected (asked with --skip-invalid) are left out here too.
  const rejected: unknown = b.rejected;
  const exclude = Array.isArray(rejected)
    ? rejected
        .map((r: Partial<RunManifest['benchmark']['rejected'][number]> | null) => r?.line)
        .filter((n): n is number => typeof n === 'number')
    : [];
  return {
    path: b.path,
    source: isModality(settings.source) ? settings.source : undefined,
    limit: typeof settings.limit === 'number' ? settings.limit : undefined,
    ...(exclude.length > 0 ? { exclude } : {}),
  };
}
