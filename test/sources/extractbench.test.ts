/**
 * issue 33 item 1: `sob build extractbench ../shared/data/extract-bench`: one record per
 * document (29: the 30 golds less the one without its PDF), the gold kept where it fails its
 * schema (15 of the 29, warned naming the first violation, counted in the manifest), the schema a
 * model sees without `evaluation_config` (kept as the record's field policy), the PDF attached,
 * the transcript from the text layer (OCR only for the scanned resumes). Built once (about a
 * minute and a half of CPU: 1,917 pages), then `sob eval --model baseline:gold` scores 1.000 on
 * the seven metrics on all 29 (a gold its schema rejects gets its schema widened where it violates it), and every leaf a deterministic
 * comparator declared passes; a real request through the OpenAI protocol shows no
 * `evaluation_config` reaches a model.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { ROOT, type SobResult, sobAsync } from '../kit/cli.ts';
import { sharedOcrCache } from '../kit/ocr-cache.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { tempDir } from '../kit/temp.ts';

const DATA = sharedData('extract-bench');
const DETERMINISTIC = [
  'string_exact',
  'string_case_insensitive',
  'string_fuzzy',
  'integer_exact',
  'number_exact',
  'number_tolerance',
  'boolean_exact',
];

interface Rec {
  metadata: Record<string, unknown> & { record_id: string; field_policy: Record<string, unknown> };
  input: { json_schema: unknown; attachments: { path: string; sha256: string; pages?: number[] }[] };
  output: { ground_truth: unknown };
}

describe('sob build extractbench', { skip: needsData('extract-bench') }, () => {
  const tmp = tempDir('sob-extractbench-');
  const bench = join(tmp, 'bench', 'records.jsonl');
  let built: SobResult;
  let records: Rec[];
  let manifest: Record<string, unknown> & {
    documents: { record_id: string; pages: number; transcript_chars: number }[];
  };

  before(async () => {
    // Tesseract alone for the five scanned resumes (the text layer does the other 1,900 pages);
    // the run's OCR cache, so a second run reads them from it.
    built = await sobAsync(
      ['build', 'extractbench', DATA, '--out', bench, '--ocr-engine', 'tesseract', '--page-timeout', '900'],
      { cwd: ROOT, timeoutMs: 1_800_000, env: { XDG_CACHE_HOME: sharedOcrCache().home } },
    );
    assert.equal(built.code, 0, built.stderr.slice(-3000));
    records = readFileSync(bench, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec);
    manifest = JSON.parse(readFileSync(join(tmp, 'bench', 'manifest.json'), 'utf8'));
  });

  test('29 records; the gold without its PDF rejected by name; 15 invalid golds kept, counted and warned', () => {
    assert.equal(records.length, 29);
    assert.equal(manifest.records, 29);
    const rejected = readFileSync(join(tmp, 'bench', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { record_id: string; reasons: string[] });
    const noPdf = rejected.filter((r) => r.reasons.some((x) => x.startsWith('gold without its PDF')));
    assert.deepEqual(
      noPdf.map((r) => r.record_id),
      ['academic/research/[zhao25] a survey of LLMs'],
    );
    assert.match(built.stderr, /gold without its PDF: no \[zhao25\] a survey of LLMs\.pdf beside/);
    // 16 of the 30 gold files fail their schema (Python jsonschema, ../shared/data/README.md);
    // one of them is zhao25's, which has no PDF: 15 of the 29 records.
    assert.equal(manifest.ground_truth_invalid, 15);
    assert.match(built.stdout, /^15 records kept though their ground truth fails their own schema/m);
    // Each warned naming its first violation.
    assert.match(
      built.stderr,
      /warning: finance\/10kq\/adp_10q_fy2025q2: ground truth does not validate against the schema: \/cash_flow_statement\/shares_repurchased\/0\/unit must be string/,
    );
    assert.match(built.stderr, /warning: hiring\/resume\/Resume-Academic01: .*\/skills must be array/);
    // By default each such record's schema is widened where its gold violates it, the gold as written.
    assert.equal(manifest.schema_widened, 15);
    assert.match(
      built.stderr,
      /adp_10q_fy2025q2: .*the record's schema was widened in \d+ places? to admit it/,
    );
    const widened = records.filter((r) => Array.isArray(r.metadata.schema_widened));
    assert.equal(widened.length, 15);
  });

  test('the manifest gives pages and transcript length per document, and the largest', () => {
    assert.equal(manifest.documents.length, 29);
    const pages = manifest.documents.reduce((n, d) => n + d.pages, 0);
    // 1,917 pages in the 29 PDFs of the four domains.
    assert.equal(pages, 1917);
    const largest = manifest.largest as Record<
      string,
      { record_id: string; pages: number; transcript_chars: number }
    >;
    assert.equal(largest.by_pages.record_id, 'finance/credit_agreement/amzn_credit_agreement_2014_09_05');
    assert.equal(largest.by_pages.pages, 218);
    assert.ok(largest.by_pages.transcript_chars > 250_000, `${largest.by_pages.transcript_chars}`);
    const longest = Math.max(...manifest.documents.map((d) => d.transcript_chars));
    assert.equal(largest.by_transcript.transcript_chars, longest);
    // Every document has a transcript (the scanned resumes through OCR).
    for (const d of manifest.documents)
      assert.ok(d.transcript_chars > 200, `${d.record_id}: ${d.transcript_chars}`);
    assert.match(
      built.stdout,
      /largest document: finance\/credit_agreement\/amzn_credit_agreement_2014_09_05 \(218 pages\)/,
    );
  });

  test('the schema without evaluation_config, kept as the field policy; the gold as written; the PDF attached', () => {
    for (const r of records) {
      assert.ok(!JSON.stringify(r.input.json_schema).includes('"evaluation_config"'), r.metadata.record_id);
      assert.ok(Object.keys(r.metadata.field_policy).length > 0, r.metadata.record_id);
      const [att] = r.input.attachments;
      const pdf = join(DATA, r.metadata.source_pdf as string);
      assert.equal(att.sha256, createHash('sha256').update(readFileSync(pdf)).digest('hex'));
      assert.equal(att.pages?.length, r.metadata.pages);
      assert.equal(
        createHash('sha256')
          .update(readFileSync(join(tmp, 'bench', att.path)))
          .digest('hex'),
        att.sha256,
      );
    }
    const q10 = records.find((r) => r.metadata.record_id === 'finance/10kq/adp_10q_fy2025q2')!;
    // $defs kept, the number_tolerance object form kept as written in the policy.
    assert.ok((q10.input.json_schema as Record<string, unknown>).$defs);
    const tol = Object.entries(q10.metadata.field_policy).find(([, v]) => typeof v === 'object');
    assert.ok(tol, 'an object-form evaluation_config');
    assert.deepEqual(tol[1], { metrics: [{ metric_id: 'number_tolerance', params: { tolerance: 0.001 } }] });
    // The resume schema is unwrapped from {name, description, schema_definition}.
    const cv = records.find((r) => r.metadata.record_id === 'hiring/resume/Resume-IT')!;
    assert.ok(!('schema_definition' in (cv.input.json_schema as object)));
    assert.equal((cv.input.json_schema as { type: string }).type, 'object');
    const gold = JSON.parse(readFileSync(join(DATA, 'hiring/resume/pdf+gold/Resume-IT.gold.json'), 'utf8'));
    assert.deepEqual(cv.output.ground_truth, gold);
    // The credit agreements are read from their text layer, the scanned resumes by OCR.
    const amzn = records.find((r) => r.metadata.record_id.endsWith('amzn_credit_agreement_2014_09_05'))!;
    assert.deepEqual(amzn.metadata.ocr_methods, ['text-layer']);
    assert.deepEqual(cv.metadata.ocr_methods, ['ocr']);
  });

  test('sob eval --model baseline:gold: 1.000 on the seven metrics; every deterministic comparator passes', async () => {
    const evalDir = join(tmp, 'eval');
    // All 29: the 15 golds their schema rejected pass it as widened at build.
    const r = await sobAsync(
      ['eval', '--model', 'baseline:gold', '--benchmark', bench, '--eval-dir', evalDir, '--match', 'default'],
      { cwd: ROOT, timeoutMs: 600_000 },
    );
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    const [row] = JSON.parse(readFileSync(join(evalDir, 'leaderboard.json'), 'utf8')) as {
      per_modality: { image: Record<string, number> };
    }[];
    const m = row.per_modality.image;
    assert.equal(m.n, 29);
    for (const k of [
      'value_accuracy',
      'faithfulness',
      'json_pass',
      'path_recall',
      'structure_coverage',
      'type_safety',
      'perfect',
    ])
      assert.equal(m[k].toFixed(3), '1.000', k);
    const fields = readFileSync(join(evalDir, 'evaluation/image/baseline_gold/fields.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { comparator: string; lenient: boolean | null; field: string });
    const decided = fields.filter((f) => DETERMINISTIC.includes(f.comparator));
    const by = new Map<string, number>();
    for (const f of decided) by.set(f.comparator, (by.get(f.comparator) ?? 0) + 1);
    // The credit agreements' string_fuzzy parties, the 10-Qs' number_tolerance values and units...
    assert.ok(decided.length >= 100, `${decided.length} leaves decided by a declared comparator`);
    for (const c of ['string_fuzzy', 'string_exact', 'number_tolerance', 'string_case_insensitive'])
      assert.ok((by.get(c) ?? 0) > 0, `${c}: ${JSON.stringify([...by])}`);
    assert.equal(decided.filter((f) => f.lenient === true).length / decided.length, 1);
  });

  test('the schema sent to a model has no evaluation_config (a real request, OpenAI protocol)', async () => {
    const server: ProtocolServer = await startProtocolServer({});
    try {
      const r = await sobAsync(
        [
          'run',
          '--model',
          'openai:m',
          '--base-url',
          server.openaiBaseUrl,
          '--benchmark',
          bench,
          '--allow-invalid-ground-truth',
          '--constrained',
          '--limit',
          '2',
          '--run-dir',
          join(tmp, 'run'),
        ],
        { cwd: ROOT, timeoutMs: 300_000, env: { OPENAI_API_KEY: 'sk-test' } },
      );
      assert.equal(r.code, 0, r.stderr.slice(-2000));
      assert.equal(server.requests.length, 2);
      for (const q of server.requests) {
        const body = JSON.stringify(q.body);
        assert.ok(body.includes('"properties"'), 'the schema is in the request');
        assert.ok(!body.includes('evaluation_config'), 'no evaluation_config in the request');
      }
    } finally {
      await server.close();
    }
  });
});
