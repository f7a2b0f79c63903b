#!/usr/bin/env node
/**
 * `npm test`: every `test/**\/*.test.ts` with node:test, in two tiers.
 *
 * 1. **parallel**: the files run several at once, each in its own process (default 4: most tests
 *    wait on child processes, sockets and files, so more than the 2 cores pay). The longest files
 *    start first, so none begins last and ends alone.
 * 2. **serial**: the files that measure time or memory against a limit (a time to first token
 *    within 10%, a page timer, a peak RSS) run after the parallel tier, at most one per core, on a
 *    machine the other tests no longer share (each mostly waits: 2 at once on 2 cores took the
 *    tier from 41 s to 22 s, every limit still met in 3 runs of 3).
 *
 * Both tiers always run; the exit code is 1 if either failed. The last line adds up both:
 * `tests: N passed, N failed, N skipped`.
 *
 *   node scripts/test.mjs                       both tiers (what `npm test` runs)
 *   node scripts/test.mjs --tier serial         one tier
 *   node scripts/test.mjs --jobs 2              files at once in the parallel tier (or SOB_TEST_JOBS)
 *   node scripts/test.mjs test/core test/cli/eval.test.ts   only these files or folders (tiers kept)
 *   node scripts/test.mjs --list                the files of each tier, in the order they start
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/**
 * A file's time limit: a test file that hangs (a child waiting forever) is stopped and counted
 * failed, so the suite always ends (CI's own limit is 90 minutes; a file takes 45 s at most).
 */
const FILE_LIMIT_S = Number(process.env.SOB_TEST_FILE_LIMIT_S || 420);
/** The test files running now (each in its own process group: stopped with the runner). */
const running = new Set();
/** The run's OCR cache folder, named to every test file in SOB_TEST_OCR_CACHE. */
let ocrCache = '';

/**
 * Run alone, after the rest, with why. A file listed here that no longer exists is ignored.
 * A new test that asserts wall time or peak memory against a limit belongs here.
 */
export const SERIAL = {
  'test/providers/streaming.test.ts': 'ttft_ms and tpot_ms within 10% of scripted delays',
  'test/cli/ocr-limits.test.ts': 'peak RSS and seconds under --page-timeout + 10 s',
  'test/providers/skeleton-limits.test.ts': 'SIGTERM stops a run within 10 s (10.7 s in parallel)',
  'test/cli/record-budget.test.ts':
    'a catastrophic pattern rejected within its budget + 2 s; SIGTERM obeyed within 2 s',
  'test/scoring/bad-input.test.ts':
    'a 50 MB answer validated within the default record time budget; a ReDoS run under 30 s',
  'test/cli/eval-progress.test.ts': "sob eval's first progress line within 1 s of starting",
};

/**
 * Started first in the parallel tier, longest first (CPU seconds of each file alone,
 * `node scripts/test-times.mjs`; ocr-vlm and suite-cli also wait on timers); the rest follow in
 * path order. The OCR data sets come first: pdf-cli and ocr-gate, which read pages of the olmOCR
 * sample again, start later and find them in the run's OCR cache (test/kit/ocr-cache.ts).
 */
export const SLOW_FIRST = [
  // sob build extractbench on 1,917 real pages, then eval and run over the 29 records.
  'test/sources/extractbench.test.ts',
  'test/sources/pdf.test.ts',
  'test/sources/pdf-orbit.test.ts',
  'test/cli/ocr-turned.test.ts',
  'test/scoring/crash.test.ts',
  'test/schema/suite-cli.test.ts',
  'test/sources/paddle.test.ts',
  'test/compliance/instance.test.ts',
  'test/sources/pdf-generated.test.ts',
  'test/cli/ocr-vlm.test.ts',
  'test/sources/schemabench.test.ts',
  'test/sources/examples-pdf.test.ts',
  'test/schema/instance.test.ts',
  'test/cli/ocr-inputs.test.ts',
  // From here in the order of their CPU seconds alone (test-times.mjs --jobs 1, 2026-12-03).
  'test/documents/example.test.ts', // 25.4: the example benchmark built (its scan OCR'd), sob run
  'test/cli/ocr-lang.test.ts', // 24.0
  'test/app/evaluate.test.ts', // 20.7: two whole sob evals (one in-process), sob score twice
  'test/lenient/sob-images.test.ts', // 17.8
  'test/runner/cli.test.ts', // 16.4
  'test/cli/ocr-tables.test.ts', // 15.1
  'test/runner/batch.test.ts', // 14.9
  'test/cli/eval.test.ts', // 13.7: sob eval with its report
  'test/sources/sob-source.test.ts', // 11.0
];

function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(relative(ROOT, p));
  }
  return out;
}

/** The files of each tier, in the order they start. */
export function tiers(only = []) {
  let files = walk(join(ROOT, 'test'), []).sort();
  if (only.length > 0) {
    const wanted = only.map((p) => relative(ROOT, resolve(p)));
    for (const w of wanted)
      if (!existsSync(join(ROOT, w))) throw new Error(`no such test file or folder: ${w}`);
    files = files.filter((f) =>
      wanted.some((w) => f === w || (statSync(join(ROOT, w)).isDirectory() && f.startsWith(`${w}/`))),
    );
  }
  const serial = files.filter((f) => f in SERIAL);
  const rest = files.filter((f) => !(f in SERIAL));
  const rank = (f) => {
    const i = SLOW_FIRST.indexOf(f);
    return i < 0 ? SLOW_FIRST.length : i;
  };
  const parallel = rest.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i);
  return { parallel: parallel.map((x) => x.f), serial };
}

/**
 * Runs one tier: each file in its own process (`node --import tsx --test-reporter=spec <file>`,
 * what `node --test` does per file), at most `concurrency` at once, started in the given order
 * (`node --test` would sort them by path). A file's output is printed whole when it ends, under
 * a line naming it; its counts are read from its summary. A file that ends without one (a crash)
 * counts as one failure.
 */
function runTier(files, concurrency) {
  const total = { pass: 0, fail: 0, skipped: 0, failedFiles: [] };
  const queue = [...files];
  const one = (file) =>
    new Promise((done) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', file], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SOB_TEST_OCR_CACHE: ocrCache },
        // Its own process group: a file over its time limit is stopped with every process it started.
        detached: true,
      });
      running.add(child);
      let out = '';
      let err = '';
      let timedOut = false;
      const limit = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, FILE_LIMIT_S * 1000);
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code, signal) => {
        running.delete(child);
        clearTimeout(limit);
        if (timedOut)
          err += `\n# ${file}: stopped after its time limit of ${FILE_LIMIT_S} s (SOB_TEST_FILE_LIMIT_S)\n`;
        const secs = ((performance.now() - t0) / 1000).toFixed(1);
        const count = (what) => Number(new RegExp(`^ℹ ${what} (\\d+)$`, 'm').exec(out)?.[1] ?? Number.NaN);
        const pass = count('pass');
        const fail = count('fail') + (count('cancelled') || 0);
        const ok = code === 0 && !signal;
        process.stdout.write(
          `# ${file}: ${ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${secs} s\n${out}${err ? `${err}\n` : ''}`,
        );
        total.pass += Number.isNaN(pass) ? 0 : pass;
        total.fail += Number.isNaN(fail) ? (ok ? 0 : 1) : fail || (ok ? 0 : 1);
        total.skipped += count('skipped') || 0;
        if (!ok) total.failedFiles.push(file);
        done();
      });
    });
  const worker = async () => {
    while (queue.length > 0) await one(queue.shift());
  };
  return Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker)).then(() => total);
}

async function main() {
  const args = process.argv.slice(2);
  let tier = 'all';
  let jobs = Number(process.env.SOB_TEST_JOBS || 4);
  let list = false;
  const only = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--tier') tier = args[++i];
    else if (a === '--jobs') jobs = Number(args[++i]);
    else if (a === '--list') list = true;
    else if (a.startsWith('-')) {
      process.stderr.write(`scripts/test.mjs: unknown option ${a}\n`);
      process.exit(2);
    } else only.push(a);
  }
  if (!['all', 'parallel', 'serial'].includes(tier) || !(jobs >= 1)) {
    process.stderr.write('scripts/test.mjs: --tier is all, parallel or serial; --jobs is 1 or more\n');
    process.exit(2);
  }
  let t;
  try {
    t = tiers(only);
  } catch (e) {
    process.stderr.write(`scripts/test.mjs: ${e.message}\n`);
    process.exit(2);
  }
  const runs = [];
  if (tier !== 'serial' && t.parallel.length > 0) runs.push(['parallel', t.parallel, jobs]);
  if (tier !== 'parallel' && t.serial.length > 0) runs.push(['serial', t.serial, availableParallelism()]);
  if (list) {
    for (const [name, files] of runs) for (const f of files) console.log(`${name}\t${f}`);
    return;
  }
  const total = { pass: 0, fail: 0, skipped: 0 };
  let failed = false;
  const started = performance.now();
  // One OCR cache for the whole run (test/kit/ocr-cache.ts), removed when it ends.
  ocrCache = mkdtempSync(join(tmpdir(), 'sob-test-ocr-'));
  process.on('exit', () => rmSync(ocrCache, { recursive: true, force: true }));
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      for (const c of running)
        try {
          process.kill(-c.pid, 'SIGTERM');
        } catch {}
      process.exit(130);
    });
  for (const [name, files, n] of runs) {
    const t0 = performance.now();
    console.log(`# tier ${name}: ${files.length} files, ${Math.min(n, files.length)} at once`);
    const r = await runTier(files, n);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`# tier ${name}: ${r.pass} passed, ${r.fail} failed, ${r.skipped} skipped in ${secs} s`);
    for (const f of r.failedFiles) console.log(`# failed: ${f}`);
    total.pass += r.pass;
    total.fail += r.fail;
    total.skipped += r.skipped;
    if (r.failedFiles.length > 0) failed = true;
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`# all tiers: ${secs} s`);
  // Counted from both tiers, for whoever reads only the last line.
  console.log(`tests: ${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped`);
  process.exitCode = failed ? 1 : 0;
}

await main();
