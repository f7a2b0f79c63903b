/**
 * Cost and tokens per input mode (issue 31, item 5): the real `sob run --input text|document`
 * against local servers speaking OpenAI's, Gemini's and Anthropic's wire protocols, each answering
 * a document request with usage that counts its documents (as the vendors do: a page costs tokens).
 * Each provider records the input tokens it reports for image and PDF requests; the leaderboard
 * (md, csv, json) and the report carry the mode, the pages and the cost per record, page and
 * correct field; the response cache never serves a text answer to a document request.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type AnthropicServer, startAnthropicServer } from '../kit/anthropic-server.ts';
import {
  documentBenchmark,
  documentsOf,
  type ProtocolServer,
  pdfOf,
  pngOf,
  rows,
  type SeenRequest,
  sobIn,
  startProtocolServer,
  tempDir,
} from '../kit/index.ts';
import { reportData } from '../report/run.ts';

let server: ProtocolServer;
let claude: AnthropicServer;
const dir = tempDir('sob-doc-cost-');
let bench: string;

/** Input tokens the servers report: 20 for the text, 1000 per document (an image or a PDF). */
const tokensIn = (docs: number) => 20 + 1000 * docs;
/** The OpenAI-protocol server prices an answer at $1 per million input tokens (as OpenRouter reports cost). */
const costOf = (docs: number) => tokensIn(docs) / 1e6;

before(async () => {
  server = await startProtocolServer({
    script: (r: SeenRequest) => {
      const sent = documentsOf(r);
      const docs = sent.length;
      // Text answers get the id only; document answers the vendor too (a field more right).
      const text =
        docs > 0 ? JSON.stringify({ id: r.key, total: null, vendor: null }) : JSON.stringify({ id: r.key });
      // Gemini splits the prompt's tokens by modality (promptTokensDetails).
      const pdfs = sent.filter((d) => d.mime === 'application/pdf').length;
      const byModality =
        r.protocol === 'gemini'
          ? {
              TEXT: 20,
              ...(docs > pdfs ? { IMAGE: 1000 * (docs - pdfs) } : {}),
              ...(pdfs ? { DOCUMENT: 1000 * pdfs } : {}),
            }
          : undefined;
      return {
        kind: 'answer',
        text,
        usage: {
          input: tokensIn(docs),
          output: 5,
          cost: costOf(docs),
          ...(byModality ? { byModality } : {}),
        },
      };
    },
  });
  claude = await startAnthropicServer({
    script: (r) => ({
      kind: 'answer',
      text: JSON.stringify({ id: r.key }),
      usage: { input: tokensIn(r.attachments.length), output: 5 },
    }),
  });
  bench = join(dir, 'bench');
  const pdf = await pdfOf(2);
  documentBenchmark(bench, [
    { id: 'img1', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(40, 30, 1) }] },
    // A two-page PDF and its first page's render: two pages, not three (documentPages).
    {
      id: 'pdf1',
      docs: [
        { kind: 'pdf', mime: 'application/pdf', data: pdf, pages: [1, 2] },
        { kind: 'image', mime: 'image/png', data: pngOf(30, 40, 2) },
      ],
    },
    { id: 'img2', docs: [{ kind: 'image', mime: 'image/png', data: pngOf(40, 30, 3) }] },
  ]);
});
after(async () => {
  await server.close();
  await claude.close();
});

const env = {
  OPENAI_API_KEY: 'k',
  GEMINI_API_KEY: 'k',
  ANTHROPIC_API_KEY: 'k',
  ANTHROPIC_BASE_URL: undefined,
};

function run(model: string, mode: string, runDir: string, extra: string[] = []) {
  const provider = model.split(':')[0];
  const base =
    provider === 'openai' ? server.openaiBaseUrl : provider === 'gemini' ? server.geminiBaseUrl : claude.url;
  return sobIn(
    [
      'run',
      '--model',
      model,
      '--benchmark',
      bench,
      '--input',
      mode,
      '--base-url',
      base,
      '--run-dir',
      runDir,
      ...extra,
    ],
    { env },
  );
}

/** One CSV line's cells (quoted cells may hold commas). */
function csvCells(line: string): string[] {
  return [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)]
    .map((m) => m[1])
    .slice(0, -1)
    .map((c) => (c.startsWith('"') ? c.slice(1, -1).replaceAll('""', '"') : c));
}

/** Documents each record sends: img1 one, pdf1 two (the PDF and its render), img2 one. */
const DOCS: Record<string, number> = { img1: 1, pdf1: 2, img2: 1 };

for (const model of ['openai:m', 'gemini:m', 'anthropic:claude-opus-4-7']) {
  test(`${model.split(':')[0]}: each answer to a document request records the input tokens the provider reported`, async () => {
    const runDir = join(dir, `tokens-${model.split(':')[0]}`);
    const r = await run(model, 'document', runDir);
    assert.equal(r.code, 0, r.stderr);
    const lines = rows(join(runDir, 'responses.jsonl'));
    assert.equal(lines.length, 3);
    for (const l of lines) {
      const id = l.metadata.record_id as string;
      assert.equal(l.eval_info.input_mode, 'document');
      assert.equal(l.eval_info.input_tokens, tokensIn(DOCS[id]), `${id}: input tokens`);
      assert.equal(l.eval_info.output_tokens, 5);
      if (model.startsWith('gemini'))
        assert.deepEqual(
          l.eval_info.input_tokens_by_modality,
          id === 'pdf1' ? { text: 20, image: 1000, document: 1000 } : { text: 20, image: 1000 },
          `${id}: Gemini's tokens per modality`,
        );
      else assert.equal(l.eval_info.input_tokens_by_modality, undefined);
    }
    if (model.startsWith('anthropic')) {
      // Priced from the table: $5 per million input tokens, $25 per million output tokens.
      const cost = lines.reduce((n, l) => n + l.eval_info.cost, 0);
      assert.ok(Math.abs(cost - ((1020 + 2020 + 1020) * 5 + 15 * 25) / 1e6) < 1e-12, String(cost));
    }
  });
}

/** Fields answered right in a scored run (its fields.jsonl, exact verdicts). */
function correctFields(runDir: string): number {
  const file = join(runDir, 'evaluation', 'image', 'openai_m', 'fields.jsonl');
  return rows(file).filter((f) => f.exact === true).length;
}

test('the leaderboard and the report: mode, pages, cost per record, page and correct field, per mode', async () => {
  const out: Record<string, { usage: Record<string, unknown>; md: string; csv: string[] }> = {};
  for (const mode of ['text', 'document']) {
    const runDir = join(dir, `lb-${mode}`);
    const r = await run('openai:m', mode, runDir);
    assert.equal(r.code, 0, r.stderr);
    const sc = await sobIn(['score', runDir, '--bootstrap-samples', '0']);
    assert.equal(sc.code, 0, sc.stderr);
    const js = await sobIn(['leaderboard', runDir, '--format', 'json']);
    assert.equal(js.code, 0, js.stderr);
    const [row] = JSON.parse(js.stdout);
    const md = await sobIn(['leaderboard', runDir, '--format', 'md']);
    const csv = await sobIn(['leaderboard', runDir, '--format', 'csv']);
    out[mode] = { usage: row.usage, md: md.stdout, csv: csv.stdout.trim().split('\n') };
    const right = correctFields(runDir);
    assert.ok(right > 0);
    const docs = mode === 'text' ? [0, 0, 0] : [1, 2, 1];
    const cost = docs.reduce((n, d) => n + costOf(d), 0);
    const tokens = docs.reduce((n, d) => n + tokensIn(d), 0);
    const u = row.usage;
    assert.equal(u.input_mode, mode);
    assert.equal(u.pages, 4, 'img1 1 + pdf1 2 (its render is the same page) + img2 1');
    assert.equal(u.input_tokens, tokens);
    assert.ok(Math.abs(u.cost - cost) < 1e-12);
    assert.ok(Math.abs(u.cost_per_record - cost / 3) < 1e-12);
    assert.ok(Math.abs(u.cost_per_page - cost / 4) < 1e-12);
    assert.equal(u.correct_fields, right);
    assert.ok(Math.abs(u.cost_per_correct_field - cost / right) < 1e-12);
    assert.equal(u.input_tokens_per_page, tokens / 4);
    // The report's data carries the same figures.
    const rep = await sobIn(['report', runDir]);
    assert.equal(rep.code, 0, rep.stderr);
    const data = reportData<{ leaderboard: { usage: unknown }[] }>(join(runDir, 'report.html'));
    assert.deepEqual(data.leaderboard[0].usage, u);
  }
  // Document mode costs 4060 input tokens against text's 60, and answers the vendor too.
  assert.equal(out.document.usage.input_tokens, 4060);
  assert.equal(out.text.usage.input_tokens, 60);
  assert.ok((out.document.usage.correct_fields as number) > (out.text.usage.correct_fields as number));
  // Markdown: the per-unit columns after the cost and speed ones.
  assert.match(
    out.document.md,
    /\| Input \| Pages \| Cost\/record \| Cost\/page \| Cost\/correct field \| Tok\. in\/page \|/,
  );
  assert.match(out.document.md, /\| document \| 4 \| \$0\.00135 \| \$0\.00102 \| \$0\.\d+ \| 1015 \|/);
  assert.match(out.text.md, /\| text \| 4 \| \$0\.0000200 \| \$0\.0000150 \|/);
  const head = csvCells(out.document.csv[0]);
  const cells = csvCells(out.document.csv[1]);
  assert.equal(cells[head.indexOf('input_mode')], 'document');
  assert.equal(cells[head.indexOf('pages')], '4');
  assert.equal(Number(cells[head.indexOf('cost_per_page')]), 0.00406 / 4);
  assert.equal(Number(cells[head.indexOf('input_tokens_per_page')]), 1015);
});

test('the response cache: a cached text answer is never served to a document or both request', async () => {
  const cache = join(dir, 'cache');
  const t = await run('openai:m', 'text', join(dir, 'cache-text'), ['--cache', cache]);
  assert.equal(t.code, 0, t.stderr);
  // The same run again is served from the cache: no request.
  let total = server.total;
  const again = await run('openai:m', 'text', join(dir, 'cache-text-2'), ['--cache', cache]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total, total, 'text again: all three from the cache');
  assert.ok(rows(join(dir, 'cache-text-2', 'responses.jsonl')).every((l) => l.eval_info.cached === true));
  for (const mode of ['document', 'both']) {
    total = server.total;
    const runDir = join(dir, `cache-${mode}`);
    const d = await run('openai:m', mode, runDir, ['--cache', cache]);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(server.total, total + 3, `${mode}: every record asked, none served from the text answers`);
    const lines = rows(join(runDir, 'responses.jsonl'));
    assert.ok(lines.every((l) => l.eval_info.cached !== true));
    // Its own answers (the vendor field only document requests are answered with).
    assert.ok(lines.every((l) => 'vendor' in l.output.candidate_response));
    // ...and a second document run is served from the cache, its own entries.
    total = server.total;
    const d2 = await run('openai:m', mode, join(dir, `cache-${mode}-2`), ['--cache', cache]);
    assert.equal(d2.code, 0, d2.stderr);
    assert.equal(server.total, total, `${mode} again: from the cache`);
  }
});
