/**
 * Scoring speed and memory, as ratios against a floor measured in the same run.
 *
 *   npm run bench:score            (or: node --import tsx bench/score.ts [--data DIR] [--repeat 10])
 *
 * Each measurement runs in its own child process so its peak RSS is its own:
 * - floor:        read every line of every file and JSON.parse it (one thread);
 * - score-1000:   `sob score` with 1,000 bootstrap samples (worker threads, one per core);
 * - score-0:      the same without the bootstrap;
 * - score-10x:    the same files, each repeated 10 times (10x the records per file), 1,000 samples.
 * Peak memory at 10x is compared with 1x under the same condition (cold with cold, warm with warm).
 * "cold" runs start with an empty validator cache (every schema compiled, once per run); "warm"
 * runs are the next run, with the validators the cold one kept (SOB_VALIDATOR_CACHE).
 *
 * `--runs N` (default 1: one run each, as before) repeats each measurement N times in a row and
 * keeps its fastest run (wall and CPU of that run; peak memory the lowest of the N), floor and
 * scorer alike: the same comparison with less of the noise a shared machine adds to either side.
 */
import { spawnSync } from 'node:child_process';
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};

interface Measure {
  ms: number;
  /** CPU time of every thread (user + system): less sensitive than wall time to a busy machine. */
  cpuMs: number;
  maxRssMb: number;
}

async function child(mode: string, dir: string, out: string): Promise<void> {
  const started = performance.now();
  if (mode === 'floor') {
    let lines = 0;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl'))) {
      for await (const l of createInterface({
        input: createReadStream(join(dir, f)),
        crlfDelay: Number.POSITIVE_INFINITY,
      })) {
        if (l.trim()) {
          JSON.parse(l);
          lines++;
        }
      }
    }
    if (lines === 0) throw new Error('no lines');
  } else {
    const { scoreFiles, expandInputs } = await import('../src/scoring/score-files.ts');
    // `score:<samples>`, or `score:<samples>:nofields` (sob score --no-fields: no fields.jsonl).
    const [, n, extra] = mode.split(':');
    const samples = Number(n);
    const res = await scoreFiles(
      expandInputs([dir]).map((file) => ({ file })),
      {
        outDir: out,
        summary: { bootstrapSamples: samples, seed: 42, topKErrors: 20 },
        ...(extra === 'nofields'
          ? { profile: { profile: 'sob' as const, assertFormats: false, fields: false } }
          : {}),
      },
    );
    for (const r of res) if (r.error) throw new Error(r.error);
  }
  const ru = process.resourceUsage();
  const m: Measure = {
    ms: performance.now() - started,
    cpuMs: (ru.userCPUTime + ru.systemCPUTime) / 1000,
    maxRssMb: ru.maxRSS / 1024,
  };
  process.stdout.write(JSON.stringify(m));
}

function measureOnce(mode: string, dir: string, out: string, cache = 'off'): Measure {
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/score.ts'), '--child', mode, dir, out],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
      env: { ...process.env, SOB_VALIDATOR_CACHE: cache },
    },
  );
  if (r.status !== 0) throw new Error(`${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Measure;
}

const runs = Math.max(1, Number(flag('--runs', '1')));

/**
 * One measurement: the fastest of `--runs`. A cold one starts each repetition on an empty
 * validator cache of its own (the first keeps `cache`, which the warm measurement then reads).
 */
function measure(mode: string, dir: string, out: string, cache = 'off', cold = false): Measure {
  let best: Measure | undefined;
  let lowestRss = Number.POSITIVE_INFINITY;
  for (let r = 0; r < runs; r++) {
    const m = measureOnce(mode, dir, out, cold && r > 0 ? `${cache}-rep${r}` : cache);
    lowestRss = Math.min(lowestRss, m.maxRssMb);
    if (!best || m.ms < best.ms) best = m;
  }
  return { ...best!, maxRssMb: lowestRss };
}

async function main(): Promise<void> {
  if (args[0] === '--child') return child(args[1], args[2], args[3]);
  const data = flag('--data', join(ROOT, '../shared/data/sob/images_responses'));
  const repeat = Number(flag('--repeat', '10'));
  const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-'));
  try {
    const big = join(tmp, 'big');
    mkdirSync(big);
    for (const f of readdirSync(data).filter((x) => x.endsWith('.jsonl'))) {
      const text = readFileSync(join(data, f), 'utf8');
      writeFileSync(join(big, f), (text.endsWith('\n') ? text : `${text}\n`).repeat(repeat));
    }
    const load = loadavg()[0];
    const cacheA = join(tmp, 'cache-1000');
    const cacheB = join(tmp, 'cache-0');
    const floor = measure('floor', data, join(tmp, 'o0'));
    const withBoot = measure('score:1000', data, join(tmp, 'o1'), cacheA, true);
    const noBoot = measure('score:0', data, join(tmp, 'o2'), cacheB, true);
    const withBootWarm = measure('score:1000', data, join(tmp, 'o1'), cacheA);
    const noBootWarm = measure('score:0', data, join(tmp, 'o2'), cacheB);
    const floorBig = measure('floor', big, join(tmp, 'o3'));
    const bigBootCold = measure('score:1000', big, join(tmp, 'o4'), join(tmp, 'cache-10x'), true);
    const bigBoot = measure('score:1000', big, join(tmp, 'o4'), cacheA);
    const row = (name: string, m: Measure, base: Measure) =>
      `${name.padEnd(44)} wall ${(m.ms / 1000).toFixed(2).padStart(6)} s ${(m.ms / base.ms).toFixed(2).padStart(6)}x floor | cpu ${(m.cpuMs / 1000).toFixed(2).padStart(6)} s ${(m.cpuMs / base.cpuMs).toFixed(2).padStart(6)}x | ${m.maxRssMb.toFixed(0).padStart(5)} MB peak`;
    console.log(
      `input: ${data} (34 files x 209 records); ${repeat}x input: each file repeated ${repeat} times; load average ${load.toFixed(2)} -> ${loadavg()[0].toFixed(2)} on ${cpus().length} cores${runs > 1 ? `; each figure the fastest of ${runs} runs (peak memory the lowest)` : ''}`,
    );
    console.log(row('parse floor (JSON.parse per line)', floor, floor));
    console.log(row('sob score, 1000 bootstrap samples, cold', withBoot, floor));
    console.log(row('sob score, no bootstrap, cold', noBoot, floor));
    console.log(row('sob score, 1000 bootstrap samples, warm', withBootWarm, floor));
    console.log(row('sob score, no bootstrap, warm', noBootWarm, floor));
    console.log(row(`parse floor, ${repeat}x input`, floorBig, floorBig));
    console.log(row(`sob score 1000 samples, ${repeat}x input, cold`, bigBootCold, floorBig));
    console.log(row(`sob score 1000 samples, ${repeat}x input, warm`, bigBoot, floorBig));
    console.log(
      `peak memory ${repeat}x / 1x (1000 samples): cold ${(bigBootCold.maxRssMb / withBoot.maxRssMb).toFixed(2)}, warm ${(bigBoot.maxRssMb / withBootWarm.maxRssMb).toFixed(2)}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
