/**
 * Documents through `sob run --input text|document|both` (issue 31): a benchmark of records that
 * each carry a page image (a seeded-noise PNG, incompressible, ~`--kb` KB) and, every fourth, a
 * one-page PDF too, asked by the real `sob run` (a child process, as a user runs it) of the local
 * server speaking OpenAI's protocol.
 *
 *   node --import tsx bench/documents.ts [--small 20] [--large 200] [--kb 240] [--concurrency 8]
 *     [--pdf-every 4] [--mode text|document|both]
 *
 * Per mode and size: the child's peak resident memory (VmHWM), and per request the bytes the
 * server received and the wall time. "Flat" reads as the ratio of the peak at `--large` records to
 * the peak at `--small`: the runner reads a record's documents when it sends them, so the ratio
 * stays near 1 while the documents themselves grow 10x (200 x 240 KB = 47 MB of pages).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocRecord, documentBenchmark, noisyPngOf, pdfOf } from '../test/kit/documents.ts';
import { startProtocolServer } from '../test/kit/protocol-server.ts';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const SMALL = arg('small', 20);
const LARGE = arg('large', 200);
const KB = arg('kb', 240);
const CONCURRENCY = arg('concurrency', 8);
/** Every Nth record carries a one-page PDF beside its image (0: none). */
const PDF_EVERY = arg('pdf-every', 4);
const ONLY = process.argv.includes('--mode') ? [process.argv[process.argv.indexOf('--mode') + 1]] : undefined;
const ROOT = join(import.meta.dirname, '..');
const MODES = ['text', 'document', 'both'] as const;

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-documents-'));
// A page of `KB` KB: width x 200 px x 3 bytes.
const width = Math.max(16, Math.round((KB * 1024) / (200 * 3)));
const pdf = await pdfOf(1, 'Bench invoice');

function benchmarkOf(n: number): { file: string; pageBytes: number } {
  const records: DocRecord[] = [];
  let pageBytes = 0;
  for (let i = 0; i < n; i++) {
    const png = noisyPngOf(width, 200, i + 1);
    pageBytes += png.length;
    const docs: DocRecord['docs'] = [{ kind: 'image', mime: 'image/png', data: png }];
    if (PDF_EVERY > 0 && i % PDF_EVERY === 0) {
      // A PDF of its own bytes per record (the same bytes would be stored once).
      const own = Buffer.concat([pdf, Buffer.from(`\n% record ${i}\n`)]);
      docs.unshift({ kind: 'pdf', mime: 'application/pdf', data: own, pages: [1] });
      pageBytes += own.length;
    }
    records.push({ id: `r${i}`, docs });
  }
  return { file: documentBenchmark(join(tmp, `bench-${n}`), records), pageBytes };
}

const server = await startProtocolServer({
  keepLog: false,
  script: (r) => ({ kind: 'answer', text: JSON.stringify({ id: r.key, total: null, vendor: null }) }),
});

interface Result {
  mode: string;
  n: number;
  peakMb: number;
  bytesPerRequest: number;
  msPerRequest: number;
  code: number | null;
}

async function measure(mode: string, n: number, file: string): Promise<Result> {
  const runDir = join(tmp, `run-${mode}-${n}`);
  const bytesBefore = server.bytesIn;
  const totalBefore = server.total;
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'run',
      '--model',
      'openai:bench',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      file,
      '--input',
      mode,
      '--run-dir',
      runDir,
      '--concurrency',
      String(CONCURRENCY),
      '--progress-interval-ms',
      '1000000',
    ],
    { env: { ...process.env, OPENAI_API_KEY: 'bench' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  let peak = 0;
  const sampler = setInterval(() => {
    if (child.pid) peak = Math.max(peak, statusKb(child.pid, 'VmHWM'));
  }, 50);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  const requests = server.total - totalBefore;
  if (code !== 0) console.log(stderr.split('\n').slice(-5).join('\n'));
  return {
    mode,
    n,
    peakMb: peak / 1024,
    bytesPerRequest: (server.bytesIn - bytesBefore) / Math.max(1, requests),
    msPerRequest: (seconds * 1000) / Math.max(1, requests),
    code,
  };
}

const small = benchmarkOf(SMALL);
const large = benchmarkOf(LARGE);
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
console.log(
  `pages: ${SMALL} records = ${mb(small.pageBytes)} MB, ${LARGE} records = ${mb(large.pageBytes)} MB of documents (one ${Math.round(KB)} KB PNG each, ${PDF_EVERY > 0 ? `a PDF every ${PDF_EVERY}th` : 'no PDF'}); concurrency ${CONCURRENCY}`,
);
console.log('mode      records  peak RSS MB  bytes/request  ms/request (wall, incl. start-up)');
const results: Result[] = [];
for (const mode of ONLY ?? MODES) {
  for (const [n, b] of [
    [SMALL, small],
    [LARGE, large],
  ] as const) {
    const r = await measure(mode, n, b.file);
    results.push(r);
    console.log(
      `${mode.padEnd(9)} ${String(n).padStart(7)}  ${r.peakMb.toFixed(1).padStart(11)}  ${Math.round(r.bytesPerRequest).toString().padStart(13)}  ${r.msPerRequest.toFixed(1).padStart(10)}${r.code === 0 ? '' : `  (exit ${r.code})`}`,
    );
  }
}
for (const mode of ONLY ?? MODES) {
  const s = results.find((r) => r.mode === mode && r.n === SMALL)!;
  const l = results.find((r) => r.mode === mode && r.n === LARGE)!;
  console.log(
    `${mode}: peak RSS at ${LARGE} / at ${SMALL} records = ${(l.peakMb / s.peakMb).toFixed(2)} (the documents grew ${(large.pageBytes / small.pageBytes).toFixed(1)}x)`,
  );
}
await server.close();
rmSync(tmp, { recursive: true, force: true });
