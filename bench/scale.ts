/**
 * How `sob eval` grows with the benchmark (docs/performance.md "Scale"):
 *
 *   node --import tsx bench/scale.ts [--sizes 10000,100000,1000000] [--keep]
 *
 * For each size it writes that many flat rows (a user's own JSONL: id, context, question, schema,
 * ground_truth; 4 fields, one of them an array), then times, each as a fresh process under
 * /usr/bin/time (wall seconds, peak resident memory):
 *
 *   sob eval rows.jsonl --model baseline:gold --eval-dir <dir>     (build, check, run, score, report)
 *   sob score <dir>/runs/baseline_gold --out <dir>/rescore          (scoring alone, 1,000 samples)
 *   sob score ... --bootstrap-samples 0                             (scoring without the bootstrap)
 *
 * and prints each as a ratio to the smallest size: time per record and peak memory. The bootstrap's
 * share of `sob score` is (with - without) / with.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SOB = join(ROOT, 'bin/sob.js');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const sizes = (arg('--sizes') ?? '10000,100000,1000000').split(',').map(Number);
const keep = process.argv.includes('--keep');
if (!existsSync('/usr/bin/time'))
  throw new Error('bench/scale.ts needs /usr/bin/time (Debian: apt-get install time)');

const SCHEMA = {
  type: 'object',
  properties: {
    invoice: { type: 'string' },
    total: { type: 'number' },
    paid: { type: 'boolean' },
    items: { type: 'array', items: { type: 'string' } },
  },
  required: ['invoice', 'total', 'paid', 'items'],
};
const WORDS = ['bolt', 'nut', 'gear', 'belt', 'pump', 'valve', 'hose', 'seal', 'fan', 'coil'];

/** n rows, each a small invoice whose values are all in its context. */
async function writeRows(file: string, n: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < n; i++) {
    const items = [WORDS[i % 10], WORDS[(i * 7 + 3) % 10], WORDS[(i * 3 + 1) % 10]].slice(0, 1 + (i % 3));
    const total = Math.round(((i * 37) % 100000) + 0.5 * (i % 2)) / 1;
    const row = {
      id: `inv-${i}`,
      context: `Invoice INV-${i} totals ${total} and is ${i % 3 === 0 ? 'paid' : 'unpaid'}. Items: ${items.join(', ')}.`,
      question: 'Extract the invoice number, total, whether it is paid, and the items.',
      schema: SCHEMA,
      ground_truth: { invoice: `INV-${i}`, total, paid: i % 3 === 0, items },
    };
    if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

interface Measure {
  wallS: number;
  rssMb: number;
}

/** One command as a fresh process: wall seconds and peak RSS (the largest process, /usr/bin/time). */
function measure(args: string[]): Measure {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '@@rss %M', process.execPath, SOB, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const wallS = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`sob ${args.join(' ')}: exit ${r.status}\n${r.stderr.slice(-2000)}`);
  const m = /@@rss (\d+)/.exec(r.stderr);
  return { wallS, rssMb: m ? Number(m[1]) / 1024 : Number.NaN };
}

const work = mkdtempSync(join(tmpdir(), 'sob-scale-'));
const results: { n: number; evalRun: Measure; score: Measure; scoreNoBoot: Measure }[] = [];
try {
  for (const n of sizes) {
    const dir = join(work, `n${n}`);
    const rows = join(work, `rows-${n}.jsonl`);
    await writeRows(rows, n);
    const evalDir = join(dir, 'eval');
    const evalRun = measure(['eval', rows, '--model', 'baseline:gold', '--eval-dir', evalDir]);
    const run = join(evalDir, 'runs/baseline_gold');
    const score = measure(['score', run, '--out', join(dir, 'rescore')]);
    const scoreNoBoot = measure(['score', run, '--out', join(dir, 'rescore0'), '--bootstrap-samples', '0']);
    results.push({ n, evalRun, score, scoreNoBoot });
    const line = (what: string, m: Measure) =>
      `${what} ${m.wallS.toFixed(1)} s, ${((m.wallS / n) * 1e6).toFixed(1)} µs/record, peak ${m.rssMb.toFixed(0)} MB`;
    console.log(
      `${n} rows: ${line('eval', evalRun)}; ${line('score', score)}; ${line('score (no bootstrap)', scoreNoBoot)}`,
    );
    if (!keep) rmSync(dir, { recursive: true, force: true });
    rmSync(rows, { force: true });
  }
  const base = results[0];
  console.log(`\nratios to ${base.n} rows (time per record; peak RSS):`);
  console.log(
    '| rows | eval µs/rec | ratio | eval peak MB | ratio | score µs/rec | ratio | score peak MB | bootstrap share of score |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const per = (m: Measure, n: number) => (m.wallS / n) * 1e6;
  for (const r of results) {
    const share = (r.score.wallS - r.scoreNoBoot.wallS) / r.score.wallS;
    console.log(
      `| ${r.n.toLocaleString('en-US')} | ${per(r.evalRun, r.n).toFixed(1)} | ${(per(r.evalRun, r.n) / per(base.evalRun, base.n)).toFixed(2)}x | ${r.evalRun.rssMb.toFixed(0)} | ${(r.evalRun.rssMb / base.evalRun.rssMb).toFixed(2)}x | ${per(r.score, r.n).toFixed(1)} | ${(per(r.score, r.n) / per(base.score, base.n)).toFixed(2)}x | ${r.score.rssMb.toFixed(0)} | ${(100 * share).toFixed(0)}% |`,
    );
  }
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept: ${work}`);
}
