#!/usr/bin/env node
/**
 * What each test file costs: every file (or the ones named) run alone as
 * `node --import tsx --test <file>`, at most `--jobs N` at once (default 2), each under
 * /usr/bin/time for its CPU time (user + system of the file and every process it started).
 * Prints one line per file, the dearest CPU first, and writes the figures as JSON to `--json F`.
 * Wall times depend on what else the machine runs; CPU times much less so.
 *
 *   node scripts/test-times.mjs [--jobs 2] [--json times.json] [files...]
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
let jobs = 2;
let jsonOut;
const named = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--jobs') jobs = Number(args[++i]);
  else if (args[i] === '--json') jsonOut = args[++i];
  else named.push(args[i]);
}

function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(relative(ROOT, p));
  }
  return out;
}

const files = named.length > 0 ? named : walk(join(ROOT, 'test'), []).sort();
const haveTime = existsSync('/usr/bin/time');

function runOne(file) {
  return new Promise((done) => {
    const t0 = performance.now();
    const cmd = [process.execPath, '--import', 'tsx', '--test', '--test-reporter=dot', file];
    const argv = haveTime ? ['/usr/bin/time', '-f', '@@cpu %U %S %M', ...cmd] : cmd;
    const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const wall = (performance.now() - t0) / 1000;
      const m = /@@cpu ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      const cpu = m ? Number(m[1]) + Number(m[2]) : null;
      const maxRssMb = m ? Math.round(Number(m[3]) / 1024) : null;
      const pass = Number(/ℹ pass (\d+)/.exec(out)?.[1] ?? NaN);
      const fail = Number(/ℹ fail (\d+)/.exec(out)?.[1] ?? NaN);
      done({ file, code, wall, cpu, maxRssMb, pass, fail });
    });
  });
}

const results = [];
const queue = [...files];
const t0 = performance.now();
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (queue.length > 0) {
      const f = queue.shift();
      const r = await runOne(f);
      results.push(r);
      process.stderr.write(
        `${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.wall.toFixed(1).padStart(6)}s wall ${String(r.cpu?.toFixed(1)).padStart(6)}s cpu  ${f}\n`,
      );
    }
  }),
);
const wall = (performance.now() - t0) / 1000;
results.sort((a, b) => (b.cpu ?? b.wall) - (a.cpu ?? a.wall));
for (const r of results) {
  console.log(
    `${r.cpu?.toFixed(1).padStart(7)} cpu ${r.wall.toFixed(1).padStart(7)} wall ${String(r.maxRssMb).padStart(5)} MB  ${r.code === 0 ? '' : 'FAIL '}${r.file}`,
  );
}
const cpu = results.reduce((s, r) => s + (r.cpu ?? 0), 0);
console.log(`${files.length} files, ${jobs} at once: ${wall.toFixed(1)} s wall, ${cpu.toFixed(1)} s CPU`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ jobs, wall, cpu, results }, null, 1)}\n`);
