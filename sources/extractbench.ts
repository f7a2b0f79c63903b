/**
 * ContextualAI's ExtractBench (`sob build extractbench <dir>`): real PDFs, one JSON Schema per
 * document type, a human gold per document. Its layout is `<domain>/<type>/<type>-schema.json`
 * and `<domain>/<type>/pdf+gold/<document>.pdf` beside `<document>.gold.json` (the input is the
 * dataset folder, a domain folder or one type's folder).
 *
 * One record per document (docs/benchmarks.md "ExtractBench"):
 * - `input.json_schema`: the type's schema (unwrapped from `{name, description,
 *   schema_definition}` where it is wrapped) with every `evaluation_config` removed: it is how
 *   the dataset's evaluator compares a field, and a model is never shown it;
 * - `metadata.field_policy`: those `evaluation_config`s, as written, by data path
 *   (`authors[*].name`, `$ref`s followed): what the lenient matcher reads (docs/lenient.md
 *   "Comparators declared in the schema");
 * - `input.context`: the transcript through the PDF pipeline, each page's text layer where it has
 *   text and OCR only for pages that lack one (`ocr: 'missing'`), so a 218-page agreement reads
 *   in seconds;
 * - `input.attachments`: the PDF itself, stored in the benchmark folder by its hash;
 * - `output.ground_truth`: the gold as written (numbers keep their lexeme).
 *
 * Gold its own schema rejects (16 of the 30 files) is kept, with a warning naming the first
 * violation, and counted in the manifest (`ground_truth_invalid`). By default (`--gold-invalid
 * widen`) the record's schema is widened exactly where its gold violates it (a type gains null,
 * a required property dropped...: sources/widen-schema.ts), each place listed in
 * `metadata.schema_widened` and the widened records counted in the manifest (`schema_widened`);
 * the gold is never changed. `--gold-invalid keep` leaves the schema as written; `--strict-gold`
 * rejects the record instead. A gold without its PDF is rejected naming the file. The manifest lists each
 * document's pages and transcript length, and the largest.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { storeAttachment } from '../src/core/attachments.ts';
import { declaredComparators } from '../src/core/declared-comparators.ts';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { parsePyJson } from '../src/core/pyjson.ts';
import { validateInstance } from '../src/core/schema.ts';
import { loadPdfs } from './pdf-pages.ts';
import type { Candidate, Problem, RecordLoader, RecordLoadResult } from './types.ts';
import { type Widening, widenSchema } from './widen-schema.ts';

/** The question every record asks (the dataset ships none: its harness sends the schema alone). */
export const EXTRACTBENCH_QUESTION =
  'Extract from this document the information the JSON schema describes, and answer with one JSON object valid under the schema.';

/** Keys whose value maps names to schemas (the names are data, the values schemas). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keys whose value is data, never a schema (`enum: [{"evaluation_config": ...}]` stays). */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples', 'example', 'required']);

/** A schema with every `evaluation_config` keyword removed (property names of that name kept). */
export function stripEvaluationConfig(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripEvaluationConfig);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (k === 'evaluation_config') continue;
    if (DATA_KEYS.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, stripEvaluationConfig(s)]));
    else out[k] = stripEvaluationConfig(v);
  }
  return out;
}

interface DocumentType {
  /** `<domain>/<type>`. */
  type: string;
  schemaFile: string;
  goldDir: string;
}

/** The type folders under the input: those holding a `*-schema.json` and a `pdf+gold/` folder. */
export function documentTypes(input: string): DocumentType[] {
  if (!existsSync(input) || !statSync(input).isDirectory())
    throw new UserError(
      `${input}: not a folder (ExtractBench's layout is <domain>/<type>/<type>-schema.json and pdf+gold/)`,
    );
  const out: DocumentType[] = [];
  const root = resolve(input);
  const walk = (dir: string, depth: number) => {
    const entries = readdirSync(dir).sort();
    const schema = entries.find((e) => e.endsWith('-schema.json'));
    if (schema && entries.includes('pdf+gold')) {
      const rel = relative(root, dir).split(sep).join('/');
      out.push({
        type: rel === '' ? schema.replace(/-schema\.json$/, '') : rel,
        schemaFile: join(dir, schema),
        goldDir: join(dir, 'pdf+gold'),
      });
      return;
    }
    if (depth >= 3) return;
    for (const e of entries) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p, depth + 1);
    }
  };
  walk(root, 0);
  if (out.length === 0)
    throw new UserError(
      `${input}: no ExtractBench document type in it (a folder with <type>-schema.json and pdf+gold/)`,
    );
  return out;
}

/** A schema file as the records carry it: unwrapped, and its name and description when it was wrapped. */
function readTypeSchema(file: string): { schema: unknown; name?: string; description?: string } {
  const v = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, '')) as Record<string, unknown>;
  if (v && typeof v === 'object' && v.schema_definition && typeof v.schema_definition === 'object') {
    return {
      schema: v.schema_definition,
      name: typeof v.name === 'string' ? v.name : undefined,
      description: typeof v.description === 'string' ? v.description : undefined,
    };
  }
  return { schema: v };
}

/** One document's line in the manifest. */
export interface ExtractBenchDocument {
  record_id: string;
  pages: number;
  transcript_chars: number;
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'extraction',
  loadRecords: async (input, ctx): Promise<RecordLoadResult> => {
    if (input === undefined) throw new UserError('extractbench needs an <input>: its dataset folder', 2);
    const out = ctx.options.out;
    if (!out) throw new Error('extractbench: the build names no records file (its documents go beside it)');
    const benchDir = dirname(resolve(out));
    const root = resolve(input);
    const problems: Problem[] = [];
    type Doc = { id: string; type: DocumentType; gold: string; pdf: string; name: string };
    const docs: Doc[] = [];
    const schemas = new Map<string, ReturnType<typeof readTypeSchema>>();
    for (const t of documentTypes(root)) {
      try {
        schemas.set(t.type, readTypeSchema(t.schemaFile));
      } catch (e) {
        problems.push({
          origin: t.schemaFile,
          reasons: [`the type's schema is not JSON: ${errorMessage(e)}`],
        });
        continue;
      }
      const files = readdirSync(t.goldDir).sort();
      for (const g of files.filter((f) => f.endsWith('.gold.json'))) {
        const stem = g.slice(0, -'.gold.json'.length);
        const id = `${t.type}/${stem}`;
        const pdf = join(t.goldDir, `${stem}.pdf`);
        if (!existsSync(pdf)) {
          problems.push({
            origin: join(t.goldDir, g),
            record_id: id,
            reasons: [`gold without its PDF: no ${stem}.pdf beside ${g}`],
          });
          continue;
        }
        docs.push({
          id,
          type: t,
          gold: join(t.goldDir, g),
          pdf,
          name: relative(root, pdf).replace(/\.pdf$/i, ''),
        });
      }
      for (const p of files.filter((f) => f.toLowerCase().endsWith('.pdf'))) {
        const stem = p.replace(/\.pdf$/i, '');
        if (!files.includes(`${stem}.gold.json`))
          ctx.log(`${t.type}: ${p} has no gold (${stem}.gold.json): not a record`);
      }
    }
    ctx.log(`extractbench: ${docs.length} documents with gold and PDF; reading their transcripts`);
    // Text layers where the pages have text, OCR only where they lack it.
    const read = await loadPdfs(
      root,
      { ...ctx.options.pdf, ocr: 'missing', log: ctx.log },
      new Set(docs.map((d) => d.name)),
    );
    const transcripts = new Map(read.items.map((it) => [it.id, it]));
    for (const p of read.problems) problems.push(p);
    const candidates: Candidate[] = [];
    const documents: ExtractBenchDocument[] = [];
    for (const d of docs) {
      const item = transcripts.get(d.name);
      if (!item) {
        if (!read.problems.some((p) => p.origin === d.pdf))
          problems.push({ origin: d.pdf, record_id: d.id, reasons: ['its PDF gave no transcript'] });
        continue;
      }
      let goldText: string;
      let gold: unknown;
      try {
        goldText = readFileSync(d.gold, 'utf8').replace(/^\uFEFF/, '');
        gold = JSON.parse(goldText);
      } catch (e) {
        problems.push({ origin: d.gold, record_id: d.id, reasons: [`gold is not JSON: ${errorMessage(e)}`] });
        continue;
      }
      const s = schemas.get(d.type.type)!;
      // The PDF's pages: those transcribed and those skipped (over the time per page: named above).
      const skipped = typeof item.metadata.pages_skipped === 'number' ? item.metadata.pages_skipped : 0;
      const pages = (typeof item.metadata.pages === 'number' ? item.metadata.pages : 0) + skipped;
      const attachment = storeAttachment(
        benchDir,
        readFileSync(d.pdf),
        'pdf',
        'application/pdf',
        Array.from({ length: pages }, (_, i) => i + 1),
      );
      const [domain] = d.type.type.split('/');
      documents.push({ record_id: d.id, pages, transcript_chars: item.context.length });
      // A gold its schema rejects: by default the schema widened exactly where the gold violates
      // it (sources/widen-schema.ts); where that does not make it valid, kept as today.
      let jsonSchema = stripEvaluationConfig(s.schema);
      let widened: Widening[] | undefined;
      const warnings: string[] = [];
      if (!ctx.options.strictGold && (ctx.options.goldInvalid ?? 'widen') === 'widen') {
        const first = validateInstance(jsonSchema as object, gold);
        if (!first.valid) {
          const w = widenSchema(jsonSchema, gold);
          if (w.valid && validateInstance(w.schema as object, gold).valid) {
            jsonSchema = w.schema;
            widened = w.widened;
            warnings.push(
              `ground truth does not validate against the schema: ${first.reason}; the record's schema was widened in ${w.widened.length} place${w.widened.length === 1 ? '' : 's'} to admit it (metadata.schema_widened; --gold-invalid keep leaves it as written)`,
            );
          }
        }
      }
      candidates.push({
        origin: d.gold,
        record: {
          metadata: {
            record_id: d.id,
            source: 'image',
            dataset: 'extract-bench',
            source_category: d.type.type,
            domain,
            document_type: d.type.type,
            ...(s.name ? { schema_name: s.name } : {}),
            source_pdf: relative(root, d.pdf).split(sep).join('/'),
            pages,
            ...(skipped > 0 ? { pages_skipped: skipped } : {}),
            transcript_chars: item.context.length,
            ocr_methods: item.metadata.ocr_methods,
            field_policy: declaredComparators(s.schema, ['evaluation_config']),
            ...(widened ? { schema_widened: widened } : {}),
          },
          input: {
            context: item.context,
            question: EXTRACTBENCH_QUESTION,
            json_schema: jsonSchema,
            attachments: [attachment],
          },
          output: { ground_truth: gold },
        },
        ...(warnings.length > 0 ? { warnings } : {}),
        lossless: { ground_truth: parsePyJson(goldText) },
      });
    }
    const largest = (by: 'pages' | 'transcript_chars') =>
      documents.reduce<ExtractBenchDocument | undefined>((a, b) => (!a || b[by] > a[by] ? b : a), undefined);
    const lp = largest('pages');
    const lt = largest('transcript_chars');
    if (lp && lt)
      ctx.log(
        `extractbench: largest ${lp.record_id} (${lp.pages} pages); longest transcript ${lt.record_id} (${lt.transcript_chars.toLocaleString('en-US')} characters)`,
      );
    return {
      candidates,
      problems,
      checkOptions: {
        // A gold its schema rejects is the dataset's (16 of 30): kept and said, unless --strict-gold.
        invalidGroundTruth: ctx.options.strictGold ? 'error' : 'warning',
        // Grounding every gold string in a 500,000-character transcript costs minutes a record.
        skipGrounding: true,
      },
      manifest: {
        documents,
        ...(lp && lt ? { largest: { by_pages: lp, by_transcript: lt } } : {}),
      },
    };
  },
};
