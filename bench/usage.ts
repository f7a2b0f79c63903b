/**
 * What the cost-and-speed columns add to a leaderboard: the 34 SOB image models' response files
 * (63 MB, 7,106 answers) scored into a scratch folder, then the leaderboard built without
 * (baseline) and with `attachUsage`, in ABBA order, and the ratio with / without. Also the
 * reading of eval_info alone: the tail parse (`evalInfoOf`) against parsing every whole line.
 *
 *   node --import tsx bench/usage.ts [rounds=4]
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLinesSync } from '../src/core/jsonl.ts';
import { buildLeaderboard, loadEvaluation } from '../src/report/evaluation.ts';
import { attachUsage, evalInfoOf } from '../src/report/usage.ts';
import { scoreFiles } from '../src/scoring/score-files.ts';

const RESPONSES = join(import.meta.dirname, '../../shared/data/sob/images_responses');
if (!existsSync(RESPONSES)) {
  console.log(`skipped: no ${RESPONSES}`);
  process.exit(0);
}
const rounds = Number(process.argv[2] ?? 4);
const dir = mkdtempSync(join(tmpdir(), 'sob-bench-usage-'));
try {
  const files = readdirSync(RESPONSES)
    .sort()
    .map((f) => join(RESPONSES, f));
  await scoreFiles(
    files.map((file) => ({ file })),
    { outDir: dir, summary: { bootstrapSamples: 0, seed: 42, topKErrors: 20 } },
  );
  const plain = async () => buildLeaderboard(await loadEvaluation(dir));
  const withUsage = async () => {
    const ev = await loadEvaluation(dir);
    const rows = buildLeaderboard(ev);
    await attachUsage(rows, ev);
    return rows;
  };
  const time = async (f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    return performance.now() - t;
  };
  await plain();
  await withUsage(); // warm: files in the page cache, code compiled
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // ABBA
    a.push(await time(plain));
    b.push(await time(withUsage));
    b.push(await time(withUsage));
    a.push(await time(plain));
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(
    `leaderboard of 34 models: without usage ${med(a).toFixed(0)} ms, with ${med(b).toFixed(0)} ms (median of ${a.length}); ratio ${(med(b) / med(a)).toFixed(2)}x`,
  );
  const whole = () => {
    for (const f of files)
      for (const l of readLinesSync(f)) (JSON.parse(l.text) as { eval_info?: unknown }).eval_info;
  };
  const tail = () => {
    for (const f of files) for (const l of readLinesSync(f)) evalInfoOf(l.text);
  };
  const w: number[] = [];
  const t: number[] = [];
  for (let r = 0; r < rounds; r++) {
    w.push(await time(async () => whole()));
    t.push(await time(async () => tail()));
    t.push(await time(async () => tail()));
    w.push(await time(async () => whole()));
  }
  console.log(
    `eval_info of 7,106 lines: whole-line parse ${med(w).toFixed(0)} ms, tail parse ${med(t).toFixed(0)} ms; ratio ${(med(t) / med(w)).toFixed(2)}x`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
