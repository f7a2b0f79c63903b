/**
 * How fast `sob` starts, as ratios against `node -e 0` measured in the same run.
 *
 *   npm run bench:startup          (or: node --import tsx bench/startup.ts [--runs 21])
 *
 * Each case is one fresh process, timed from spawn to exit; the cases take turns (one run of each,
 * then the next round) so a busy moment of a shared machine falls on all of them alike, and each
 * keeps its median. Cases:
 * - `node -e 0`:            the floor, Node itself;
 * - `sob --version`, `sob --help`: `bin/sob.js` on the built JavaScript (dist/), as after `npm ci`;
 * - the same `from source`: `SOB_FROM_SOURCE=1`, every command's TypeScript loaded through tsx,
 *   as every start was before the build (the "before" of the same run; `--version` there goes
 *   through the whole program, as it did).
 * The target: `sob --version` and `sob --help` within 1.5x of `node -e 0`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/sob.js');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '21' } } });
const runs = Number(values.runs);

if (!existsSync(join(ROOT, 'dist/.stamp'))) {
  process.stderr.write('bench/startup: no build (dist/): run `npm run build` first\n');
  process.exit(1);
}

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
}
const CASES: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'sob --version', args: [BIN, '--version'] },
  { name: 'sob --help', args: [BIN, '--help'] },
  // `--debug` passes by bin/sob.js's shortcut for a lone --version: the whole program answers.
  { name: 'sob --version (from source)', args: [BIN, '--debug', '--version'], env: { SOB_FROM_SOURCE: '1' } },
  { name: 'sob --help (from source)', args: [BIN, '--help'], env: { SOB_FROM_SOURCE: '1' } },
];

function once(c: Case): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, c.args, { env: { ...process.env, ...c.env }, stdio: 'pipe' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const times = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
for (const c of CASES) once(c); // warm the file cache
for (let i = 0; i < runs; i++) for (const c of CASES) times.get(c.name)!.push(once(c));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const floor = median(times.get('node -e 0')!);
process.stdout.write(`startup, median of ${runs} runs each (ms), ratio to node -e 0\n`);
for (const c of CASES) {
  const m = median(times.get(c.name)!);
  process.stdout.write(`${c.name.padEnd(30)} ${m.toFixed(1).padStart(8)} ms  ${(m / floor).toFixed(2)}x\n`);
}
