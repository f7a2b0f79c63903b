/** `sob build`: raw sources (HotpotQA, PDFs, AMI meetings, SOB dataset rows) -> checked benchmark records. */
import type { Command } from 'commander';
// The registry is a table of lazy imports: registering the command loads no loader.
import { checkBuildRequest, kindsHelp, LOADER_KINDS } from '../../sources/registry.ts';
import { buildRecords } from '../app/build.ts';

import { UserError } from '../core/errors.ts';
import type { Modality } from '../core/record.ts';
import {
  batchOptions,
  choiceOption,
  engineOption,
  intOption,
  modalityOption,
  type OcrEngineFlag,
  recordTimeoutOption,
} from './common.ts';

interface BuildFlags {
  out: string;
  annotations?: string;
  append?: boolean;
  upper?: boolean;
  config?: string;
  source?: Modality;
  split?: string;
  hfEndpoint?: string;
  cacheDir?: string;
  refresh?: boolean;
  minOcrPass?: string;
  margins?: 'repeated' | 'layout' | false;
  ocrTests?: string;
  maxPages?: number;
  pageTimeout?: number;
  ocrEngine?: 'both' | 'tesseract' | 'paddle';
  map?: string;
  engine?: OcrEngineFlag;
  baseUrl?: string[];
  lang?: string;
  batch?: boolean;
  batchFallback: 'batch' | 'online';
  batchPollMs: number;
  batchDeadline?: number;
  recordTimeoutMs: number;
  renderDpi?: number;
  audio?: string;
  strictGold?: boolean;
  goldInvalid?: 'widen' | 'keep';
}

export function registerBuild(program: Command): void {
  const cmd = program
    .command('build')
    .description(
      'build benchmark records from a raw source, check every record, write records + rejected.jsonl + manifest.json',
    )
    .argument(
      '<kind>',
      `the source kind: ${LOADER_KINDS.join(' | ')} (listed below)`,
      choiceOption(LOADER_KINDS),
    )
    .argument('[input]', "the kind's input (see the kinds below)")
    .requiredOption(
      '--out <records.jsonl>',
      'records file to write; rejected.jsonl and manifest.json go beside it',
    )
    .option(
      '--annotations <file>',
      'questions, schemas and ground truths per source id (JSON, JSONL; the format is below); needed for hotpotqa, pdf and ami',
    )
    .option(
      '--append',
      'add to an existing records file instead of replacing it (ids stay unique; the manifest covers the whole file)',
    )
    .option('--upper', "ami: transcript text in upper case (the paper's style)")
    .option(
      '--audio <dir>',
      "ami: the folder of the meetings' recordings (AMI's <meeting>.Mix-Headset.wav, in it or in <meeting>/audio/): each record carries its meeting's audio; a meeting without one is a warning",
    )
    .option(
      '--strict-gold',
      'extractbench: reject a document whose gold fails its own schema (default: kept with a warning naming the first violation, and counted in the manifest)',
    )
    .option(
      '--gold-invalid <widen|keep>',
      "extractbench: a kept gold its own schema rejects: widen (default) widens that record's schema exactly where the gold violates it (a type gains null, a required property dropped..., each place in metadata.schema_widened; the gold itself unchanged), so the gold scores as an answer; keep leaves the schema as written",
    )
    .option('--config <name>', "sob from hf: text | image | audio (or the dataset's own config name)")
    .option(
      '--source <source>',
      'sob: the source of every row (text | image | audio), whatever the row, config or file name says; needed when none of them tells. records: the source of a row that names none (default text)',
      modalityOption,
    )
    .option(
      '--map <field=column,...>',
      'records: which of your columns holds each field (id, context, question, schema, ground_truth, source, schema_complexity, difficulty, attachments), e.g. --map context=passage,ground_truth=answer; attachments=<column>: file paths relative to the rows file (a JSON list, or names separated by ;), each stored in the benchmark folder',
    )
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
    .option(
      '--engine <name>',
      'pdf: as sob ocr --engine: a local OCR engine, or openai:<model> | gemini:<model> (a vision-language model reads each page as olmOCR asks; a page it fails on is read locally)',
      engineOption,
    )
    .option(
      '--render-dpi <dpi>',
      `pdf: each record carries its pages as a PDF and as PNG renders drawn by pdf.js at this resolution (default 150; at most 600; 0: the PDF pages only)`,
      intOption('--render-dpi', 0),
    )
    .option('--base-url <url...>', 'pdf with --engine openai:<model> or gemini:<model>: the server')
    .option(
      '--margins <mode>',
      'pdf: which running heads and feet to drop: repeated (default: only lines repeating across pages, and lone page numbers; a single page keeps its letterhead and foot) | layout (as sob ocr: also by position and clear space)',
      choiceOption(['repeated', 'layout'] as const),
    )
    .option('--no-margins', 'pdf: keep running headers, footers and page numbers')
    .option(
      '--lang <langs>',
      "pdf: as sob ocr --lang: tesseract languages joined by + (eng, fra: the traineddata packages installed), e.g. eng+fra (default eng); OCR'd pages record them (metadata.ocr_languages)",
    );
  recordTimeoutOption(cmd);
  batchOptions(
    cmd,
    "pdf with --engine openai:<model> or gemini:<model>: every page sent through the provider's batch interface first (as sob ocr --batch); the batches are kept in vlm-batch/ beside --out, so a killed build collects them instead of sending them again",
  )
    .addHelpText(
      'after',
      `
Kinds:
${kindsHelp()}

Examples:
  sob build hotpotqa hotpot_dev_distractor_v1.json --annotations hotpot-annotations.jsonl --out bench/records.jsonl
  sob build ami ami_public_manual_1.6.2 --annotations meetings.jsonl --out bench/records.jsonl --append
  sob build ami utterances.csv --annotations meetings.jsonl --out bench/records.jsonl --upper
  sob build pdf pdfs/ --annotations pages.jsonl --out bench/records.jsonl --append
  sob build sob hf:interfaze-ai/sob:audio --out sob-audio/records.jsonl
  sob build sob sob-text.parquet --config text --out sob-text/records.jsonl
  sob build records my-data.csv --map context=passage,ground_truth=answer --out mine/records.jsonl
  sob build records scans.jsonl --map attachments=file --out mine/records.jsonl
  sob build pdf pdfs/ --annotations pages.jsonl --out bench/records.jsonl --render-dpi 200
  sob build ami ami_public_manual_1.6.2 --annotations meetings.jsonl --out bench/records.jsonl --audio amicorpus
  sob build extractbench extract-bench/ --out extract-bench/records.jsonl

Annotations (--annotations FILE), the questions, schemas and ground truths for hotpotqa, pdf and
ami: JSONL (one annotation a line), a JSON array of them, or a JSON object keyed by source id
whose values are an annotation or a list of them. One annotation is one record:
  source_id          the source item it is about (required; "id", "_id" or "meeting_id" also work):
                       hotpotqa: the item's _id; ami: the meeting id (ES2002a);
                       pdf: <name>_pg<N> for one page, <name> for the whole document, where <name>
                       is the PDF's path under the input folder without .pdf (invoice_pg1)
  question           the question the record asks (required)
  json_schema        the answer's draft-07 JSON Schema, an object or a JSON string (required)
  ground_truth       the answer, valid under json_schema (required; numbers keep their lexeme)
  record_id          optional; default <kind>-<source_id>-<n>
  schema_complexity  optional: easy | medium | hard (derived from the schema when absent)
  difficulty         optional, kept in the metadata
  metadata           optional object, merged into the record's metadata
Example line:
  {"source_id": "5a8b57f25542995d1e6f1371", "question": "Which team won, and in which year?",
   "json_schema": {"type": "object", "properties": {"team": {"type": "string"},
   "year": {"type": "integer"}, "venue": {"type": "string"}}, "required": ["team", "year"]},
   "ground_truth": {"team": "Denver Broncos", "year": 2016, "venue": "Levi's Stadium"}}
sob author drafts annotations in this format from the same inputs, for a person to edit.

Every record is checked (shape, draft-07 schema, ground truth valid against it, >= 3 properties,
unique id); a failing one goes to rejected.jsonl with its reasons and the build goes on.
Warnings (ungrounded values, a given schema_complexity that differs from the derived one) are printed.
Source modality: hotpotqa -> text, pdf -> image, ami -> audio. sob rows: --source, else the row's
own metadata.source (or modality), else the config (hf: or --config), else the file name as the
SOB reference reads it (text_response, image(s)_response, audio_response, _image, _audio), else a
source_pdf field (image) or a meeting_id (audio). A row whose source none of these tells stops the
build: pass --source.`,
    )
    .action(async (kind: string, input: string | undefined, flags: BuildFlags) => {
      checkBuildRequest(kind, input, flags.annotations);
      if (flags.config && kind !== 'sob') throw new UserError('--config is for sob inputs only', 2);
      if (flags.source && kind !== 'sob' && kind !== 'records')
        throw new UserError(
          `--source is for sob and records rows only (${kind} records are always of one source)`,
          2,
        );
      if (flags.map && kind !== 'records') throw new UserError('--map is for records inputs only', 2);
      if (flags.strictGold && kind !== 'extractbench')
        throw new UserError('--strict-gold is for extractbench inputs only', 2);
      if (flags.goldInvalid !== undefined && kind !== 'extractbench')
        throw new UserError('--gold-invalid is for extractbench inputs only', 2);
      if (flags.goldInvalid !== undefined && flags.goldInvalid !== 'widen' && flags.goldInvalid !== 'keep')
        throw new UserError(`--gold-invalid ${flags.goldInvalid}: widen or keep`, 2);
      if (flags.lang !== undefined && kind !== 'pdf') throw new UserError('--lang is for pdf inputs only', 2);
      if (flags.renderDpi !== undefined && kind !== 'pdf')
        throw new UserError('--render-dpi is for pdf inputs only', 2);
      if (flags.renderDpi !== undefined && flags.renderDpi > 600)
        throw new UserError(
          `--render-dpi ${flags.renderDpi}: at most 600 (a Letter page is then 5,100 x 6,600 px)`,
          2,
        );
      if (flags.audio !== undefined && kind !== 'ami')
        throw new UserError('--audio is for ami inputs only', 2);
      if (flags.margins !== undefined && kind !== 'pdf')
        throw new UserError(`--${flags.margins === false ? 'no-' : ''}margins is for pdf inputs only`, 2);
      if (flags.batch && (kind !== 'pdf' || !flags.engine?.includes(':')))
        throw new UserError(
          '--batch is for pdf inputs read by a vision-language model (--engine openai:<model> or gemini:<model>)',
          2,
        );
      // Checked before anything is read: an unknown language is a usage error naming the installed ones.
      const langs =
        flags.lang === undefined
          ? undefined
          : (await import('../../sources/pdf/ocr.ts')).parseLanguages(flags.lang);
      const { parseFieldMap } = await import('../../sources/records.ts');
      const map = parseFieldMap(flags.map);
      await buildRecords({ ...flags, kind, input, map, langs });
    });
}
