/**
 * Batch files against the provider limits: the 209 SOB image records (real OCR contexts and
 * schemas, the default prompt) as OpenAI batch lines and Gemini inlined requests, per request
 * (bytes, estimated input tokens = characters / 4) and per batch file, and how `sob run --batch`
 * splits a run of N records (default 60,000: the records repeated) under each provider's limits.
 *
 *   node --import tsx bench/batch.ts [--records 60000]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PyObject, parsePyJson } from '../src/core/pyjson.ts';
import { GeminiProvider } from '../src/providers/gemini.ts';
import { OpenAIProvider } from '../src/providers/openai.ts';
import type { Provider } from '../src/providers/types.ts';
import { splitBatches } from '../src/runner/batch.ts';
import { loadTemplate } from '../src/runner/prompt.ts';
import { type Item, type RunOptions, requestOf } from '../src/runner/run.ts';

const i = process.argv.indexOf('--records');
const N = i > 0 ? Number(process.argv[i + 1]) : 60_000;
const FILE = join(import.meta.dirname, '../../shared/data/sob/images_responses/response_phi-4_image.jsonl');

const items: Item[] = readFileSync(FILE, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l, line) => {
    const record = parsePyJson(l) as PyObject;
    return { id: (record.get('metadata') as PyObject).get('record_id') as string, line, record };
  });

const providers: Provider[] = [
  new OpenAIProvider('gpt-4.1-mini', { apiKey: 'bench', baseUrls: ['http://127.0.0.1:9/v1'] }),
  new GeminiProvider('gemini-2.5-flash', { apiKey: 'bench', baseUrl: 'http://127.0.0.1:9' }),
];
const mb = (b: number) => (b / 1024 / 1024).toFixed(2);

for (const p of providers) {
  const api = p.batch!;
  const opts = {
    provider: p,
    template: loadTemplate(),
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
  } as unknown as RunOptions;
  const lines = items.map((it, k) =>
    api.line(`r${k}`, { ...requestOf(it, opts), signal: new AbortController().signal }),
  );
  const bytes = lines.map((l) => Buffer.byteLength(l) + 1);
  const tokens = lines.map((l) => Math.ceil(l.length / 4));
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
  const sorted = [...bytes].sort((a, b) => a - b);
  console.log(
    `\n${p.id} (${api.limits.source}: at most ${api.limits.maxRequests} requests and ${mb(api.limits.maxBytes)} MB per batch)`,
  );
  console.log(
    `  209 SOB image records: ${mb(sum(bytes))} MB, ~${sum(tokens)} input tokens; per request: mean ${Math.round(sum(bytes) / bytes.length)} bytes (median ${sorted[104]}, max ${sorted[208]}), ~${Math.round(sum(tokens) / tokens.length)} tokens`,
  );
  const many = Array.from({ length: N }, (_, k) => bytes[k % bytes.length]);
  const groups = splitBatches(many, api.limits.maxRequests, api.limits.maxBytes);
  console.log(`  ${N} such requests -> ${groups.length} batch file(s):`);
  for (const g of groups.slice(0, 4)) {
    const b = sum(g.map((k) => many[k]));
    const t = sum(g.map((k) => tokens[k % tokens.length]));
    console.log(
      `    ${g.length} requests (${((100 * g.length) / api.limits.maxRequests).toFixed(0)}% of the request limit), ${mb(b)} MB (${((100 * b) / api.limits.maxBytes).toFixed(0)}% of the byte limit), ~${(t / 1e6).toFixed(1)}M input tokens`,
    );
  }
  if (groups.length > 4) console.log(`    ... ${groups.length - 4} more`);
}
