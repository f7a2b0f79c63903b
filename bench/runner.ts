/**
 * Runner throughput and memory: `sob run` (a child process, as a user runs it) against the
 * local protocol server answering every request after a fixed latency.
 *
 *   node --import tsx bench/runner.ts [--requests 20000] [--latency-ms 100] [--concurrency 32]
 *
 * Prints throughput as a share of the ideal (concurrency / latency = 320 req/s at the
 * defaults) and the child's resident memory over the run (peak, and at each quarter), so
 * "flat" reads as the ratio of the last quarter to the first. Ratios, not timed assertions.
 * Measured twice: through bin/sob.js (every command's modules loaded, as a user runs it) and
 * with only the run command loaded, so a slowdown from another command's imports shows.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProtocolServer } from '../test/kit/protocol-server.ts';

// Child mode: `sob run` with only the run command loaded (no other command's imports).
if (process.argv[2] === '--run-only') {
  const { Command } = await import('commander');
  const { registerRun } = await import('../src/cli/run.ts');
  const program = new Command('sob');
  registerRun(program);
  await program.parseAsync(['node', 'sob', ...process.argv.slice(3)]);
  process.exit(process.exitCode ?? 0);
}

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const N = arg('requests', 20_000);
const LATENCY = arg('latency-ms', 100);
const CONCURRENCY = arg('concurrency', 32);
const ROOT = join(import.meta.dirname, '..');

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-runner-'));
const bench = join(tmp, 'bench.jsonl');
const schema = {
  type: 'object',
  properties: { id: { type: 'string' }, n: { type: 'integer' } },
  required: ['id'],
};
const lines: string[] = [];
for (let i = 0; i < N; i++) {
  lines.push(
    JSON.stringify({
      metadata: { record_id: `r${i}`, schema_complexity: 'easy', source: 'text' },
      input: {
        context: `[rid:r${i}] The record number is ${i}. ${'Filler text. '.repeat(20)}`,
        question: 'Which record?',
        json_schema: schema,
      },
      output: { ground_truth: { id: `r${i}`, n: i } },
    }),
  );
}
writeFileSync(bench, `${lines.join('\n')}\n`);

let first = 0;
let last = 0;
const server = await startProtocolServer({
  keepLog: false,
  latencyMs: LATENCY,
  script: (r) => {
    const t = performance.now();
    if (first === 0) first = t;
    last = t;
    return { kind: 'answer', text: JSON.stringify({ id: r.key, n: Number(r.key?.slice(1)) }) };
  },
});

async function measure(label: string, entry: string[]): Promise<void> {
  first = 0;
  last = 0;
  const runDir = join(tmp, `run-${label}`);
  const child = spawn(
    process.execPath,
    [
      ...entry,
      'run',
      '--model',
      'openai:bench',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
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
  const before = server.total;
  const samples: { done: number; rss: number }[] = [];
  let peak = 0;
  const sampler = setInterval(() => {
    if (!child.pid) return;
    samples.push({ done: server.total - before, rss: statusKb(child.pid, 'VmRSS') });
    peak = Math.max(peak, statusKb(child.pid, 'VmHWM'));
  }, 200);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(sampler);
  const answered = readFileSync(join(runDir, 'responses.jsonl'), 'utf8').split('\n').filter(Boolean).length;
  // First request arrival to the last answer leaving the server (last arrival + latency).
  const seconds = (last - first + LATENCY) / 1000;
  const rate = N / seconds;
  const ideal = (CONCURRENCY * 1000) / LATENCY;
  const at = (q: number) => samples.find((x) => x.done >= q * N && x.rss > 0)?.rss ?? Number.NaN;
  const mb = (kb: number) => (kb / 1024).toFixed(1);
  console.log(
    `[${label}] ${N} requests, ${LATENCY} ms latency, concurrency ${CONCURRENCY}: exit ${code}, ${answered} answered`,
  );
  console.log(
    `[${label}] throughput ${rate.toFixed(1)} req/s of an ideal ${ideal.toFixed(0)} req/s = ${((100 * rate) / ideal).toFixed(1)}%`,
  );
  console.log(
    `[${label}] resident memory (MB): peak ${mb(peak)}; at 25% ${mb(at(0.25))}, 50% ${mb(at(0.5))}, ` +
      `75% ${mb(at(0.75))}, 99% ${mb(at(0.99))}; 99%/25% = ${(at(0.99) / at(0.25)).toFixed(2)}`,
  );
  if (code !== 0) console.log(stderr.split('\n').slice(-5).join('\n'));
}

await measure('bin/sob.js', [join(ROOT, 'bin/sob.js')]);
await measure('run only', ['--import', 'tsx', join(ROOT, 'bench/runner.ts'), '--run-only']);
await server.close();
rmSync(tmp, { recursive: true, force: true });
