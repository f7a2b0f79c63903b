/**
 * Before scoring: the evaluation folder each input writes, `<out>/<modality>/<model-dir>/`. Two
 * inputs that would write one folder (the same file name in two folders, two run directories of
 * one model scored into one --out, one file given twice) would mix or overwrite each other's
 * rows, so the run stops before scoring anything, with one line naming both inputs.
 */
import { resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { folderName } from '../core/files.ts';
import { parseLine, readLinesSync } from '../core/jsonl.ts';
import { modalityFromPath, modelDirName, recordModality } from '../core/modality.ts';
import type { PyObject } from '../core/pyjson.ts';
import { type Modality, SOURCES, type Source } from '../core/record.ts';

export interface FolderTarget {
  file: string;
  modelDir?: string;
  outDir?: string;
}

/** The folder an input's records of `source` go to (`schema`: the compliance track's folder). */
export function folderOf(t: FolderTarget, outDir: string, source: Source): string {
  return resolve(
    t.outDir ?? outDir,
    source,
    t.modelDir === undefined
      ? modelDirName(t.file, source === 'schema' ? 'text' : source)
      : folderName(t.modelDir, t.file),
  );
}

/** Only the metadata is built: the rest of each line is skipped. */
const SKIP = new Set([
  'input.context',
  'input.question',
  'input.json_schema',
  'output.ground_truth',
  'output.candidate_response',
  'output.raw_response',
]);

/** The folders' sources a file's records actually have (a read of its metadata only). */
function sourcesIn(file: string, forced?: Modality): Set<Source> {
  const out = new Set<Source>();
  const fromPath = modalityFromPath(file);
  for (const l of readLinesSync(file)) {
    const p = parseLine(l, SKIP, SKIP);
    if (!p.ok || !(p.value instanceof Map)) continue;
    const md = p.value.get('metadata');
    const metadata: PyObject = md instanceof Map ? (md as PyObject) : new Map();
    // A schema record goes to the compliance track's folder, whatever --modality says.
    out.add(metadata.get('source') === 'schema' ? 'schema' : recordModality(metadata, fromPath, forced));
    if (out.size === SOURCES.length) break;
  }
  return out;
}

/**
 * Throws a UserError (one line, nothing scored) when two targets would write one evaluation
 * folder. Inputs whose possible folders do not meet cost nothing; only those that might are read
 * for their records' modalities (`metadata.source` decides where a record goes).
 */
export function assertDistinctFolders(targets: FolderTarget[], outDir: string, forced?: Modality): void {
  const possible = (t: FolderTarget) =>
    (forced ? [forced, 'schema' as const] : [...SOURCES]).map((m) => folderOf(t, outDir, m));
  const byFolder = new Map<string, number[]>();
  targets.forEach((t, i) => {
    for (const f of new Set(possible(t))) {
      const list = byFolder.get(f);
      if (list) list.push(i);
      else byFolder.set(f, [i]);
    }
  });
  const suspects = new Set<number>();
  for (const list of byFolder.values()) if (list.length > 1) for (const i of list) suspects.add(i);
  if (suspects.size === 0) return;
  const actual = new Map<string, number>();
  for (const i of [...suspects].sort((a, b) => a - b)) {
    const t = targets[i];
    for (const m of sourcesIn(t.file, forced)) {
      const f = folderOf(t, outDir, m);
      const j = actual.get(f);
      if (j !== undefined) {
        const other = targets[j];
        const same = resolve(other.file) === resolve(t.file);
        throw new UserError(
          same
            ? `${t.file} is given twice (it would be scored twice into ${f}); nothing was scored`
            : `${other.file} and ${t.file} would both be written to ${f}: rename one of the files or score them into different --out folders; nothing was scored`,
        );
      }
      actual.set(f, i);
    }
  }
}
