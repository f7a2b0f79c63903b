/**
 * `sob build` as one use case: raw sources (HotpotQA, PDFs, AMI meetings, SOB dataset rows) ->
 * checked benchmark records, with a page-reading model when one is named. The command
 * (`src/cli/build.ts`) checks the flags against the kind, reads them into `BuildSettings` and
 * calls `buildRecords`.
 */
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UserError } from '../core/errors.ts';
import { type Modality, SOURCES } from '../core/record.ts';
import { log } from './io.ts';

/** What `sob build` was asked: the kind of source, its input and the build's options. */
export interface BuildSettings {
  kind: string;
  input: string | undefined;
  out: string;
  annotations?: string;
  append?: boolean;
  upper?: boolean;
  config?: string;
  source?: Modality;
  /** `--map`, parsed: a record field -> the column it is read from. */
  map: Record<string, string>;
  split?: string;
  hfEndpoint?: string;
  cacheDir?: string;
  refresh?: boolean;
  minOcrPass?: string;
  ocrTests?: string;
  maxPages?: number;
  /** Seconds. */
  pageTimeout?: number;
  ocrEngine?: 'both' | 'tesseract' | 'paddle';
  /** pdf: `--margins <mode>` (default repeated), or false for `--no-margins`. */
  margins?: 'repeated' | 'layout' | false;
  /** A local OCR engine, or `openai:<model>` / `gemini:<model>` (a page-reading model). */
  engine?: string;
  baseUrl?: string[];
  /** `--lang`, parsed: the tesseract languages OCR'd pages are read in. */
  langs?: string[];
  /** `--batch` (with a page-reading model): every page through the provider's batches first. */
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  /** Seconds. */
  batchDeadline?: number;
  /** Each record's check budget (`--record-timeout-ms`). */
  recordTimeoutMs?: number;
  /** PDF: the resolution of each record's page renders (`--render-dpi`; 0: none). */
  renderDpi?: number;
  /** AMI: the folder of the meetings' recordings (`--audio`). */
  audio?: string;
  /** ExtractBench: a gold failing its own schema is rejected (`--strict-gold`). */
  strictGold?: boolean;
  /** ExtractBench: a gold failing its own schema widens the record's schema (default) or not (`--gold-invalid`). */
  goldInvalid?: 'widen' | 'keep';
}

/**
 * Runs `sob build`: the counts on stdout, progress on stderr; no record passing the checks is an
 * error (exit 1), after the rejected ones are written.
 */
export async function buildRecords(s: BuildSettings): Promise<void> {
  const { kind, input, map } = s;
  const started = Date.now();
  log(`building ${kind} records${input === undefined ? '' : ` from ${input}`} -> ${s.out}`);
  // Loaded here, not at the top: the PDF side pulls in pdf.js and tesseract.js.
  const { buildBenchmark } = await import('../../sources/build.ts');
  // --engine openai:<model> / gemini:<model>: pages read by a vision-language model first.
  const vlm = s.engine?.includes(':');
  const model = vlm
    ? await (await import('../runner/vlm-pages.ts')).VlmPageReader.start(s.engine!, {
        providerOptions: s.baseUrl ? { baseUrls: s.baseUrl } : {},
        cacheDir: join(
          s.cacheDir ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sob-eval'),
          'ocr',
          'vlm',
        ),
        log,
      })
    : undefined;
  if (model && s.batch && input !== undefined) {
    // Every page's picture goes to the provider's batches first; the build then reads the
    // pages from their answers (a page without one is read locally).
    const { listPdfs } = await import('../../sources/pdf-pages.ts');
    const { askPagesByBatch, pageBatchLine } = await import('../runner/vlm-batch.ts');
    const { modelPictures } = await import('../../sources/pdf/model-pages.ts');
    const { DEFAULT_MAX_PAGES } = await import('../../sources/pdf/index.ts');
    const b = await askPagesByBatch(model, {
      dir: join(dirname(s.out), 'vlm-batch'),
      settings: {
        fallback: s.batchFallback,
        pollMs: s.batchPollMs,
        deadlineMs: s.batchDeadline === undefined ? undefined : s.batchDeadline * 1000,
      },
      pictures: (then) =>
        modelPictures(listPdfs(input), {
          longSide: model.longSide,
          maxPages: s.maxPages ?? DEFAULT_MAX_PAGES,
          then,
        }),
      log,
    });
    log(pageBatchLine(model.id, b));
  }
  const local = s.engine && !vlm ? (s.engine as 'both' | 'tesseract' | 'paddle') : s.ocrEngine;
  const { describeUncounted, uncountedLines } = await import('../../sources/manifest.ts');
  const res = await buildBenchmark({
    kind,
    input,
    out: s.out,
    annotations: s.annotations,
    append: s.append,
    upper: s.upper,
    config: s.config,
    source: s.source,
    map,
    split: s.split,
    recordTimeoutMs: s.recordTimeoutMs,
    renderDpi: s.renderDpi,
    audio: s.audio,
    strictGold: s.strictGold,
    goldInvalid: s.goldInvalid,
    download: { endpoint: s.hfEndpoint, cacheDir: s.cacheDir, refresh: s.refresh },
    pdf: {
      ...(s.minOcrPass !== undefined ? { minOcrPass: Number(s.minOcrPass), ocrTests: s.ocrTests } : {}),
      ...(s.maxPages !== undefined ? { maxPages: s.maxPages } : {}),
      ...(s.pageTimeout !== undefined ? { pageTimeoutMs: s.pageTimeout * 1000 } : {}),
      ...(s.langs ? { langs: s.langs } : {}),
      ...(s.margins === false ? { dropMargins: false } : s.margins ? { margins: s.margins } : {}),
      ...(local !== undefined ? { ocrEngine: local } : {}),
      ...(model ? { model } : {}),
    },
    log,
  }).finally(() => model?.close());
  if (model)
    log(
      `${model.id}: ${model.stats.asked} request${model.stats.asked === 1 ? '' : 's'}, ${model.stats.cached} from cache, ${model.stats.failed} page${model.stats.failed === 1 ? '' : 's'} read locally instead`,
    );
  const per = SOURCES.map(
    (m) => `${m} ${res.manifest.sources[m].records} (weight ${res.manifest.sources[m].weight})`,
  ).join(', ');
  const was = s.append ? ` (${res.before} before + ${res.written} written)` : '';
  process.stdout.write(
    `${res.written} records written, ${res.rejected} rejected, ${res.warningCount} warnings -> ${res.out}\n` +
      `benchmark now holds ${res.manifest.records} records${was}: ${per}\n`,
  );
  if (res.groundTruthInvalid > 0)
    process.stdout.write(
      `${res.groundTruthInvalid} records kept though their ground truth fails their own schema (warnings above; --strict-gold rejects them): counted in the manifest as ground_truth_invalid\n`,
    );
  if (res.schemaWidened > 0)
    process.stdout.write(
      `${res.schemaWidened} of them with their schema widened to admit their gold (metadata.schema_widened; --gold-invalid keep leaves it as written): counted in the manifest as schema_widened\n`,
    );
  const largest = res.manifest.largest;
  if (largest?.by_pages && largest.by_transcript)
    process.stdout.write(
      `largest document: ${largest.by_pages.record_id} (${largest.by_pages.pages} pages); longest transcript: ${largest.by_transcript.record_id} (${largest.by_transcript.transcript_chars} characters)\n`,
    );
  const skipped = uncountedLines(res.uncounted);
  if (skipped > 0) {
    // Lines that were in the file before this build (ours always count): said, never silent.
    process.stdout.write(
      `${skipped} other lines of ${res.out} are not benchmark records and are not counted: ${describeUncounted(res.uncounted)}\n`,
    );
    log(
      `warning: ${res.out} holds ${skipped} lines the manifest does not count (${describeUncounted(res.uncounted)})`,
    );
  }
  log(
    `manifest ${res.manifestFile}; rejected ${res.rejectedFile}; ${((Date.now() - started) / 1000).toFixed(2)} s`,
  );
  if (res.written === 0 && res.rejected > 0)
    throw new UserError(`no record passed the checks: see ${res.rejectedFile}`);
}
