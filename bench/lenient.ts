/**
 * What `sob score --match default` costs and what it changes, on the 34 SOB image files
 * (34 models x 209 records), in one run:
 *
 *   node --import tsx bench/lenient.ts [--data DIR] [--repeat 3]
 *
 * Time: the real scorer (`scoreFiles`: worker threads, one per core, 1,000 bootstrap samples)
 * exact only vs with `--match default`, each pass in its own child process, passes interleaved
 * (exact, lenient, exact, lenient, ...) after one warm-up pair (the worker bundle, disk caches);
 * wall and CPU time (every thread) per pass, medians, and the ratio lenient / exact (target: at
 * most 2x).
 *
 * Then, from the lenient pass's summaries (read back with the leaderboard's own reader): the
 * per-model exact vs lenient Value Accuracy table with the gap, Kendall's tau between the
 * rankings (by Value Accuracy and by Overall), and the three models whose rank moves most.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};

interface Measure {
  ms: number;
  cpuMs: number;
  maxRssMb: number;
}

async function child(mode: string, dir: string, out: string): Promise<void> {
  const started = performance.now();
  const { scoreFiles, expandInputs } = await import('../src/scoring/score-files.ts');
  const { prepareLenientRun } = await import('../src/scoring/lenient-run.ts');
  const match =
    mode === 'lenient'
      ? await prepareLenientRun({ policy: 'default', cacheDir: join(out, '.cache') })
      : undefined;
  const res = await scoreFiles(
    expandInputs([dir]).map((file) => ({ file })),
    { outDir: out, summary: { bootstrapSamples: 1000, seed: 42, topKErrors: 20 }, match },
  );
  for (const r of res) if (r.error) throw new Error(r.error);
  const ru = process.resourceUsage();
  const m: Measure = {
    ms: performance.now() - started,
    cpuMs: (ru.userCPUTime + ru.systemCPUTime) / 1000,
    maxRssMb: ru.maxRSS / 1024,
  };
  process.stdout.write(JSON.stringify(m));
}

function measure(mode: string, dir: string, out: string): Measure {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/lenient.ts'), '--child', mode, dir, out],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Measure;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

async function main(): Promise<void> {
  const dir = flag('--data', join(ROOT, '../shared/data/sob/images_responses'));
  const repeat = Math.max(1, Number(flag('--repeat', '3')));
  const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-lenient-'));
  try {
    console.log(
      `${availableParallelism()} cores, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; ${dir}`,
    );
    measure('exact', dir, join(tmp, 'warm-e'));
    measure('lenient', dir, join(tmp, 'warm-l'));
    const got: Record<string, Measure[]> = { exact: [], lenient: [] };
    for (let i = 0; i < repeat; i++) {
      for (const mode of ['exact', 'lenient']) {
        const m = measure(mode, dir, join(tmp, `${mode}-${i}`));
        got[mode].push(m);
        console.log(
          `  ${mode.padEnd(8)} pass ${i + 1}: wall ${(m.ms / 1000).toFixed(2)} s, CPU ${(m.cpuMs / 1000).toFixed(2)} s, peak RSS ${m.maxRssMb.toFixed(0)} MB`,
        );
      }
    }
    const wall = (m: string) => median(got[m].map((x) => x.ms));
    const cpu = (m: string) => median(got[m].map((x) => x.cpuMs));
    console.log(
      `\nmedian of ${repeat}: exact wall ${(wall('exact') / 1000).toFixed(2)} s, CPU ${(cpu('exact') / 1000).toFixed(2)} s; --match default wall ${(wall('lenient') / 1000).toFixed(2)} s, CPU ${(cpu('lenient') / 1000).toFixed(2)} s`,
    );
    console.log(
      `ratio --match default / exact: wall ${(wall('lenient') / wall('exact')).toFixed(2)}x, CPU ${(cpu('lenient') / cpu('exact')).toFixed(2)}x (target <= 2x)`,
    );

    // What it changes: the leaderboard's own reading of the lenient pass.
    const { loadEvaluation, buildLeaderboard } = await import('../src/report/evaluation.ts');
    const { sensitivity } = await import('../metrics/lenient-leaderboard.ts');
    const rows = buildLeaderboard(await loadEvaluation(join(tmp, 'lenient-0')));
    console.log('\nper model (image, weighted means): exact vs lenient Value Accuracy');
    const w = Math.max(...rows.map((r) => r.model.length));
    console.log(`${'model'.padEnd(w)}  exact VA  lenient VA     gap  share of loss  VA rank  Overall rank`);
    const byVa = sensitivity(rows, 'value_accuracy');
    const byOverall = sensitivity(rows, 'overall');
    const rankVa = new Map(byVa.models.map((m) => [m.model, m.ranks]));
    for (const r of [...rows].sort((a, b) => b.lenient!.value_accuracy - a.lenient!.value_accuracy)) {
      const l = r.lenient!;
      const rv = rankVa.get(r.model)!;
      console.log(
        `${r.model.padEnd(w)}  ${r.value_accuracy!.toFixed(4)}    ${l.value_accuracy.toFixed(4)}  +${l.gap.toFixed(4)}  ${(100 * (l.gap_share ?? 0)).toFixed(0).padStart(12)}%  ${`${rv.exact} -> ${rv.lenient}`.padStart(7)}  ${`${l.rank_exact} -> ${l.rank_lenient}`.padStart(12)}`,
      );
    }
    for (const s of [byVa, byOverall]) {
      const tau = s.tau.find((t) => t.a === 'exact' && t.b === 'lenient')!.tau;
      const top = s.models
        .map((m) => ({ m, d: (m.ranks.exact ?? 0) - (m.ranks.lenient ?? 0) }))
        .sort((a, b) => Math.abs(b.d) - Math.abs(a.d) || (a.m.model < b.m.model ? -1 : 1))
        .slice(0, 3);
      console.log(
        `\nranked by ${s.rank_by}: Kendall's tau exact vs lenient ${tau?.toFixed(3)}; largest moves: ${top
          .map(({ m, d }) => `${m.model} ${m.ranks.exact} -> ${m.ranks.lenient} (${d > 0 ? '+' : ''}${d})`)
          .join(', ')}`,
      );
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (args[0] === '--child') await child(args[1], args[2], args[3]);
else await main();
