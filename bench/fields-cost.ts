/**
 * What `fields.jsonl` costs (issue 33 item 3's target: scoring time +20% at most on the 34 SOB
 * image files): `sob score` of the same files by this tree and by a tree of the commit before
 * fields.jsonl landed (822c875^, which wrote no fields.jsonl), run alternately so a busy machine
 * weighs on both alike, each the fastest of `--runs`.
 *
 *   git archive 822c875^ | tar -x -C /tmp/before && ln -s $PWD/node_modules /tmp/before/
 *   node --import tsx bench/fields-cost.ts --before /tmp/before [--runs 3] [--samples 0]
 *   ... --after /tmp/fields      (another tree as "after", e.g. 822c875 itself: fields.jsonl alone)
 *
 * Each measurement is bench/score.ts's child mode in that tree (`score:<samples>`: scoreFiles on
 * every file, its own process, warm validator cache of its own tree): wall, CPU of every thread.
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

function main(): void {
  const before = flag('--before');
  if (!before || !existsSync(join(before, 'bench/score.ts')))
    throw new Error('--before <dir>: a tree of the commit before fields.jsonl (with bench/score.ts)');
  const data = flag('--data', join(ROOT, '../shared/data/sob/images_responses'))!;
  const runs = Math.max(1, Number(flag('--runs', '3')));
  const samples = Number(flag('--samples', '0'));
  const mode = `score:${samples}`;
  const tmp = mkdtempSync(join(tmpdir(), 'sob-fields-cost-'));
  const load = loadavg()[0];
  try {
    const trees = { before, after: flag('--after', ROOT)! };
    const best: Record<string, Measure> = {};
    const all: Record<string, number[]> = { before: [], after: [] };
    // One run each first to fill each tree's validator cache (not measured).
    for (const [k, t] of Object.entries(trees))
      once(t, mode, data, join(tmp, `o-${k}`), join(tmp, `cache-${k}`));
    for (let r = 0; r < runs; r++) {
      for (const [k, t] of Object.entries(trees)) {
        const m = once(t, mode, data, join(tmp, `o-${k}`), join(tmp, `cache-${k}`));
        all[k].push(m.cpuMs);
        if (!best[k] || m.cpuMs < best[k].cpuMs) best[k] = m;
      }
    }
    const fieldsFiles = readdirSync(join(tmp, 'o-after'), { recursive: true }).filter((f) =>
      String(f).endsWith('fields.jsonl'),
    ).length;
    const row = (k: string) =>
      `${k.padEnd(7)} wall ${(best[k].ms / 1000).toFixed(2).padStart(6)} s | cpu ${(best[k].cpuMs / 1000).toFixed(2).padStart(6)} s (runs: ${all[k].map((x) => (x / 1000).toFixed(2)).join(', ')}) | ${best[k].maxRssMb.toFixed(0)} MB peak`;
    console.log(
      `input: ${data} (${readdirSync(data).filter((f) => f.endsWith('.jsonl')).length} files); ${mode}; fastest of ${runs} alternate runs; load ${load.toFixed(2)} -> ${loadavg()[0].toFixed(2)} on ${cpus().length} cores`,
    );
    console.log(row('before'));
    console.log(row('after'));
    console.log(
      `fields.jsonl files written after: ${fieldsFiles}; cpu after/before ${(best.after.cpuMs / best.before.cpuMs).toFixed(3)}x, wall ${(best.after.ms / best.before.ms).toFixed(3)}x`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
