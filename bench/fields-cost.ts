/**
 * What `fields.jsonl` costs (issue 33 item 3's target: scoring time +20% at most on the 34 SOB
 * image files), run alternately so a busy machine weighs on both sides alike, each side the
 * fastest of `--runs`:
 *
 * - same tree (the default): this tree with fields.jsonl against this tree with `--no-fields`,
 *   the cost of fields.jsonl alone;
 *
 *     node --import tsx bench/fields-cost.ts [--runs 5] [--samples 0]
 *
 * - `--before <tree>`: this tree against a tree of the commit before fields.jsonl landed
 *   (822c875^, which wrote no fields.jsonl; 169 commits older, so the ratio counts every other
 *   change since as well);
 *
 *     git archive 822c875^ | tar -x -C /tmp/before && ln -s $PWD/node_modules /tmp/before/
 *     node --import tsx bench/fields-cost.ts --before /tmp/before [--runs 3] [--samples 0]
 *     ... --after /tmp/fields      (another tree as "after", e.g. 822c875 itself)
 *
 * Each measurement is bench/score.ts's child mode in that tree (`score:<samples>`, and
 * `score:<samples>:nofields` for --no-fields: scoreFiles on every file, its own process, warm
 * validator cache of its own): wall, CPU of every thread.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (name: string, dflt?: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};

interface Measure {
  ms: number;
  cpuMs: number;
  maxRssMb: number;
}

function once(tree: string, mode: string, data: string, out: string, cache: string): Measure {
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(tree, 'bench/score.ts'), '--child', mode, data, out],
    { encoding: 'utf8', maxBuffer: 1 << 24, cwd: tree, env: { ...process.env, SOB_VALIDATOR_CACHE: cache } },
  );
  if (r.status !== 0) throw new Error(`${tree}: ${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Measure;
}

/** One side of the comparison: a tree and bench/score.ts's child mode in it. */
interface Side {
  name: string;
  tree: string;
  mode: string;
}

function main(): void {
  const before = flag('--before');
  if (before !== undefined && !existsSync(join(before, 'bench/score.ts')))
    throw new Error('--before <dir>: a tree of the commit before fields.jsonl (with bench/score.ts)');
  const data = flag('--data', join(ROOT, '../shared/data/sob/images_responses'))!;
  const runs = Math.max(1, Number(flag('--runs', '3')));
  const samples = Number(flag('--samples', '0'));
  const mode = `score:${samples}`;
  // Without --before: the same tree, --no-fields ("without") against fields.jsonl ("with").
  const sides: [Side, Side] = before
    ? [
        { name: 'before', tree: before, mode },
        { name: 'after', tree: flag('--after', ROOT)!, mode },
      ]
    : [
        { name: 'without', tree: ROOT, mode: `${mode}:nofields` },
        { name: 'with', tree: ROOT, mode },
      ];
  const tmp = mkdtempSync(join(tmpdir(), 'sob-fields-cost-'));
  const load = loadavg()[0];
  try {
    const best: Record<string, Measure> = {};
    const all: Record<string, number[]> = Object.fromEntries(sides.map((x) => [x.name, []]));
    const run = (x: Side) =>
      once(x.tree, x.mode, data, join(tmp, `o-${x.name}`), join(tmp, `cache-${x.name}`));
    // One run each first to fill each side's validator cache (not measured).
    for (const x of sides) run(x);
    for (let r = 0; r < runs; r++) {
      for (const x of sides) {
        const m = run(x);
        all[x.name].push(m.cpuMs);
        if (!best[x.name] || m.cpuMs < best[x.name].cpuMs) best[x.name] = m;
      }
    }
    const fieldsFiles = (name: string) =>
      readdirSync(join(tmp, `o-${name}`), { recursive: true }).filter((f) =>
        String(f).endsWith('fields.jsonl'),
      ).length;
    const w = Math.max(...sides.map((x) => x.name.length));
    const row = (k: string) =>
      `${k.padEnd(w)} wall ${(best[k].ms / 1000).toFixed(2).padStart(6)} s | cpu ${(best[k].cpuMs / 1000).toFixed(2).padStart(6)} s (runs: ${all[k].map((x) => (x / 1000).toFixed(2)).join(', ')}) | ${best[k].maxRssMb.toFixed(0)} MB peak | ${fieldsFiles(k)} fields.jsonl files`;
    const [a, b] = sides.map((x) => x.name);
    console.log(
      `input: ${data} (${readdirSync(data).filter((f) => f.endsWith('.jsonl')).length} files); ${before ? `${mode} in two trees` : `${mode} with fields.jsonl vs ${mode}:nofields (--no-fields), this tree`}; fastest of ${runs} alternate runs; load ${load.toFixed(2)} -> ${loadavg()[0].toFixed(2)} on ${cpus().length} cores`,
    );
    console.log(row(a));
    console.log(row(b));
    console.log(
      `cpu ${b}/${a} ${(best[b].cpuMs / best[a].cpuMs).toFixed(3)}x, wall ${(best[b].ms / best[a].ms).toFixed(3)}x, peak ${(best[b].maxRssMb / best[a].maxRssMb).toFixed(3)}x`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
