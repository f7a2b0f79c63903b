/**
 * The VLM engine's own cost (`sob ocr --engine openai:<model>`): pages per minute when the model
 * answers at once (the local protocol server, olmOCR-style answers), so what is measured is ours
 * (rendering at 1,288 px, PNG encoding, the request and the answer read), beside the pipeline
 * reading the same pages from their text layer, in the same run. A real model's time per page
 * (seconds on a GPU) comes on top and dominates.
 *
 *   node --import tsx bench/ocr-vlm.ts [--set DIR] [--workers N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OcrEngine, pdfsToTranscripts } from '../sources/pdf/index.ts';
import { VlmPageReader } from '../src/runner/vlm-pages.ts';
import { startProtocolServer } from '../test/kit/protocol-server.ts';
import { allPdfs } from './ocr-failures.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const SET = flag('--set', join(import.meta.dirname, '../../shared/data/orbit-bench-en'));
const WORKERS = Number(flag('--workers', String(availableParallelism())));

const FRONT =
  '---\nprimary_language: en\nis_rotation_valid: True\nrotation_correction: 0\nis_table: False\nis_diagram: False\n---\n';
const server = await startProtocolServer({
  keepLog: false,
  script: () => ({ kind: 'answer', text: `${FRONT}A page of text as a model would give it.` }),
});
process.env.OPENAI_API_KEY ||= 'sk-bench';
const files = allPdfs(join(SET, 'pdfs')).map((r) => join(SET, 'pdfs', r));

async function run(withModel: boolean): Promise<number> {
  const cache = mkdtempSync(join(tmpdir(), 'sob-bench-vlm-'));
  const engine = new OcrEngine({ workers: WORKERS, cacheDir: cache, engine: 'tesseract' });
  const model = withModel
    ? await VlmPageReader.start('openai:olmocr-bench', {
        providerOptions: { baseUrls: [server.openaiBaseUrl] },
        cacheDir: null,
      })
    : undefined;
  const t0 = performance.now();
  try {
    const out = await pdfsToTranscripts(files, { engine, ocr: withModel ? 'auto' : 'never', model });
    const pages = out.flat().length;
    return (pages / (performance.now() - t0)) * 60_000;
  } finally {
    await model?.close();
    await engine.close();
    rmSync(cache, { recursive: true, force: true });
  }
}

// ABBA, so a change of the machine's load falls on both alike.
const text: number[] = [];
const vlm: number[] = [];
text.push(await run(false));
vlm.push(await run(true));
vlm.push(await run(true));
text.push(await run(false));
await server.close();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
process.stdout.write(
  `${files.length} PDFs of ${SET}, ${WORKERS} workers, ABBA:\n` +
    `  text layer only (--ocr never): ${mean(text).toFixed(1)} pages/min (${text.map((x) => x.toFixed(1)).join(', ')})\n` +
    `  VLM engine, instant server:    ${mean(vlm).toFixed(1)} pages/min (${vlm.map((x) => x.toFixed(1)).join(', ')}); ratio ${(mean(vlm) / mean(text)).toFixed(2)}\n`,
);
