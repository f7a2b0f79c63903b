/**
 * Where a record's modality and a file's output folder come from (SPEC.md "Per-record scoring",
 * DESIGN.md `sob score`), mirroring the reference's `infer_modality` / `resolve_output_dir`.
 */
import { basename } from 'node:path';
import type { PyObject } from './pyjson.ts';
import { isModality, type Modality } from './record.ts';

/** The reference's path rule: `text_response`, `image(s)_response`, `audio_response`, then
 * `_image` / `_audio` in the file name, else text. */
export function modalityFromPath(file: string): Modality {
  const p = file.replaceAll('\\', '/').toLowerCase();
  if (p.includes('text_response')) return 'text';
  if (p.includes('images_response') || p.includes('image_response')) return 'image';
  if (p.includes('audio_response')) return 'audio';
  const name = basename(p);
  if (name.includes('_image')) return 'image';
  if (name.includes('_audio')) return 'audio';
  return 'text';
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

/** `response_<model>_image.jsonl` -> `<model>` (the SOB repository's folder names). */
export function modelDirName(file: string, modality: Modality): string {
  let stem = basename(file);
  if (stem.toLowerCase().endsWith('.jsonl')) stem = stem.slice(0, -'.jsonl'.length);
  if (stem.startsWith('response_')) stem = stem.slice('response_'.length);
  if (modality === 'audio' && stem.endsWith('_audio')) stem = stem.slice(0, -'_audio'.length);
  else if (modality === 'image' && stem.endsWith('_image')) stem = stem.slice(0, -'_image'.length);
  return stem.split('/').pop() || stem;
}
