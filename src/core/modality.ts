/**
 * Where a record's modality and a file's output folder come from (docs/scoring.md "Per-record scoring",
 * docs/design.md `sob score`), mirroring the reference's `infer_modality` / `resolve_output_dir`.
 */
import { basename } from 'node:path';
import { folderName } from './files.ts';
import type { PyObject } from './pyjson.ts';
import { isModality, type Modality } from './record.ts';

/** The reference's path rule: `text_response`, `image(s)_response`, `audio_response`, then
 * `_image` / `_audio` in the file name, else text. */
export function modalityFromPath(file: string): Modality {
  return pathModality(file).modality;
}

/** `modalityFromPath`, and whether nothing in the path told it (the default, text). */
export function pathModality(file: string): { modality: Modality; defaulted: boolean } {
  const p = file.replaceAll('\\', '/').toLowerCase();
  const told = (modality: Modality) => ({ modality, defaulted: false });
  if (p.includes('text_response')) return told('text');
  if (p.includes('images_response') || p.includes('image_response')) return told('image');
  if (p.includes('audio_response')) return told('audio');
  const name = basename(p);
  if (name.includes('_image')) return told('image');
  if (name.includes('_audio')) return told('audio');
  return { modality: 'text', defaulted: true };
}

/** Whether a record names its own modality (`metadata.source` or `metadata.modality`). */
export function namesModality(metadata: PyObject): boolean {
  return isModality(metadata.get('source')) || isModality(metadata.get('modality'));
}

/** `--modality`, else the record's `metadata.source` / `metadata.modality`, else the path. */
export function recordModality(metadata: PyObject, fromPath: Modality, forced?: Modality): Modality {
  if (forced) return forced;
  const s = metadata.get('source');
  if (isModality(s)) return s;
  const m = metadata.get('modality');
  if (isModality(m)) return m;
  return fromPath;
}

/**
 * `response_<model>_image.jsonl` -> `<model>` (the SOB repository's folder names). A name that
 * is no plain folder name (`response_..jsonl` gives `..`) is refused with one line.
 */
export function modelDirName(file: string, modality: Modality): string {
  let stem = basename(file);
  if (stem.toLowerCase().endsWith('.jsonl')) stem = stem.slice(0, -'.jsonl'.length);
  if (stem.startsWith('response_')) stem = stem.slice('response_'.length);
  if (modality === 'audio' && stem.endsWith('_audio')) stem = stem.slice(0, -'_audio'.length);
  else if (modality === 'image' && stem.endsWith('_image')) stem = stem.slice(0, -'_image'.length);
  return folderName(stem, file);
}
