/** `sob build`: raw sources (HotpotQA, PDFs, AMI meetings, SOB dataset rows) -> checked benchmark records. */
import type { Command } from 'commander';
import type { SourceKind } from '../../sources/build.ts';

/** sources/build.ts's kinds, repeated so that registering the command loads no source code. */
const SOURCE_KINDS: readonly SourceKind[] = ['hotpotqa', 'pdf', 'ami', 'sob'];

import { UserError } from '../core/errors.ts';
import { MODALITIES } from '../core/record.ts';
import { choiceOption, intOption, log } from './common.ts';

interface BuildFlags {
  out: string;
  annotations?: string;
  append?: boolean;
  upper?: boolean;
  config?: string;
  split?: string;
  hfEndpoint?: string;
  cacheDir?: string;
  refresh?: boolean;
  minOcrPass?: string;
  ocrTests?: string;
  maxPages?: number;
  pageTimeout?: number;
  ocrEngine?: 'both' | 'tesseract' | 'paddle';
}

export function registerBuild(program: Command): void {
  program
    .command('build')
    .description(
      'build benchmark records from a raw source, check every record, write records + rejected.jsonl + manifest.json',
    )
    .argument('<kind>', 'hotpotqa | pdf | ami | sob', choiceOption(SOURCE_KINDS))
    .argument(
      '<input>',
      'hotpotqa: JSON/JSONL file; pdf: a PDF or a folder of them; ami: an NXT corpus folder or a CSV/JSONL of utterance rows; sob: JSON/JSONL/Parquet file or hf:<repo>[:<config>[:<split>]]',
    )
    .requiredOption(
      '--out <records.jsonl>',
      'records file to write; rejected.jsonl and manifest.json go beside it',
    )
    .option(
      '--annotations <file>',
      'questions, schemas and ground truths per source id (JSON, JSONL); needed except for sob',
    )
    .option(
      '--append',
      'add to an existing records file instead of replacing it (ids stay unique; the manifest covers the whole file)',
    )
    .option('--upper', "ami: transcript text in upper case (the paper's style)")
    .option('--config <name>', "sob from hf: text | image | audio (or the dataset's own config name)")
    .option('--split <name>', 'sob from hf: split (default: test for text, train for image and audio)')
    .option(
      '--hf-endpoint <url>',
      'sob from hf: Hub base URL (default $HF_ENDPOINT or https://huggingface.co)',
    )
    .option(
      '--cache-dir <dir>',
      'sob from hf: download cache (default $XDG_CACHE_HOME/sob-eval or ~/.cache/sob-eval)',
    )
    .option('--refresh', 'sob from hf: download again even if cached')
    .option(
      '--min-ocr-pass <x>',
      'pdf: keep only pages whose transcript passes at least this share of their OCR tests',
    )
    .option(
      '--ocr-tests <dataset.jsonl>',
      'pdf: olmOCR-bench tests (present/absent/order) used by --min-ocr-pass',
    )
    .option(
      '--max-pages <n>',
      'pdf: pages read per PDF, later ones skipped and named (default 500)',
      intOption('--max-pages', 1),
    )
    .option(
      '--page-timeout <seconds>',
      'pdf: time allowed per page; a slower page is skipped and named (default 180)',
      intOption('--page-timeout', 1),
    )
    .option(
      '--ocr-engine <name>',
      'pdf: both (tesseract.js + PaddleOCR, default) | tesseract | paddle',
      choiceOption(['both', 'tesseract', 'paddle'] as const),
    )
    .addHelpText(
      'after',
      `
Examples:
  sob build hotpotqa hotpot_dev_distractor_v1.json --annotations hotpot-annotations.jsonl --out bench/records.jsonl
  sob build ami ami_public_manual_1.6.2 --annotations meetings.jsonl --out bench/records.jsonl --append
  sob build ami utterances.csv --annotations meetings.jsonl --out bench/records.jsonl --upper
  sob build pdf pdfs/ --annotations pages.jsonl --out bench/records.jsonl --append
  sob build sob hf:interfaze-ai/sob:audio --out sob-audio/records.jsonl
  sob build sob sob-text.parquet --config text --out sob-text/records.jsonl

Every record is checked (shape, draft-07 schema, ground truth valid against it, >= 3 properties,
unique id); a failing one goes to rejected.jsonl with its reasons and the build goes on.
Warnings (ungrounded values, a given schema_complexity that differs from the derived one) are printed.
Source modality: hotpotqa -> text, pdf -> image, ami -> audio, sob -> the row's own (or the config's).`,
    )
    .action(async (kind: SourceKind, input: string, flags: BuildFlags) => {
      if (flags.config && kind !== 'sob') throw new UserError('--config is for sob inputs only', 2);
      if (kind !== 'sob' && !flags.annotations) {
        throw new UserError(
          `building from ${kind} needs --annotations FILE (questions, schemas and ground truths per source id)`,
          2,
        );
      }
      const started = Date.now();
      log(`building ${kind} records from ${input} -> ${flags.out}`);
      // Loaded here, not at the top: the PDF side pulls in pdf.js and tesseract.js.
      const { buildBenchmark } = await import('../../sources/build.ts');
      const res = await buildBenchmark({
        kind,
        input,
        out: flags.out,
        annotations: flags.annotations,
        append: flags.append,
        upper: flags.upper,
        config: flags.config,
        split: flags.split,
        download: { endpoint: flags.hfEndpoint, cacheDir: flags.cacheDir, refresh: flags.refresh },
        pdf: {
          ...(flags.minOcrPass !== undefined
            ? { minOcrPass: Number(flags.minOcrPass), ocrTests: flags.ocrTests }
            : {}),
          ...(flags.maxPages !== undefined ? { maxPages: flags.maxPages } : {}),
          ...(flags.pageTimeout !== undefined ? { pageTimeoutMs: flags.pageTimeout * 1000 } : {}),
          ...(flags.ocrEngine !== undefined ? { ocrEngine: flags.ocrEngine } : {}),
        },
        log,
      });
      const per = MODALITIES.map(
        (m) => `${m} ${res.manifest.sources[m].records} (weight ${res.manifest.sources[m].weight})`,
      ).join(', ');
      process.stdout.write(
        `${res.written} records written, ${res.rejected} rejected, ${res.warnings.length} warnings -> ${res.out}\n` +
          `benchmark now holds ${res.manifest.records} records: ${per}\n`,
      );
      log(
        `manifest ${res.manifestFile}; rejected ${res.rejectedFile}; ${((Date.now() - started) / 1000).toFixed(2)} s`,
      );
      if (res.written === 0 && res.rejected > 0)
        throw new UserError(`no record passed the checks: see ${res.rejectedFile}`);
    });
}
