/**
 * Issue 9 item 6: evaluation folders are whole or absent. `sob score` is SIGKILLed at 16 moments
 * spread over its run (12 over earlier results, 4 into a fresh folder); after each kill every
 * model folder is either absent or whole and consistent (its rows and summary are those of the
 * previous run or of the new one, and the summary's num_records is its number of rows); after the
 * next complete run no temp folder, folder moved aside or lock file remains, inside or beside the
 * model folders.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { SOB, sob } from './cli.ts';

const SKIP = needsData('sob');
const DATA = sharedData('sob/images_responses');
const FILES = (SKIP ? [] : readdirSync(DATA))
  .filter((f) => f.endsWith('.jsonl'))
  .sort()
  .slice(0, 6)
  .map((f) => join(DATA, f));
const MODELS = FILES.map((f) =>
  f
    .split('/')
    .pop()!
    .replace(/^response_/, '')
    .replace(/_image\.jsonl$/, ''),
);
const tmp = mkdtempSync(join(tmpdir(), 'sob-crash-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The two runs told apart: the previous one (sob profile) and the new one (strict). */
const PREVIOUS = ['--profile', 'sob', '--bootstrap-samples', '200'];
const NEW = ['--profile', 'strict', '--bootstrap-samples', '200'];

function folder(out: string, model: string): { rows: string; summary: string } | null {
  const dir = join(out, 'image', model);
  if (!existsSync(dir)) return null;
  return {
    rows: readFileSync(join(dir, 'eval_records.jsonl'), 'utf8'),
    summary: readFileSync(join(dir, 'eval_summary.json'), 'utf8'),
  };
}

/** Every dot-entry (temp file or folder, folder moved aside, lock) anywhere under `dir`. */
function dotEntries(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) out.push(join(dir, e.name));
    else if (e.isDirectory()) out.push(...dotEntries(join(dir, e.name)));
  }
  return out;
}

function killAfter(args: string[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SOB, ...args], { cwd: tmp, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

test('SIGKILL at 16 moments over a run (6 files): every folder whole and consistent, or absent; no leftovers', {
  skip: SKIP,
}, async () => {
  // The expected folders of each run, and how long a whole run takes.
  const expected = { previous: join(tmp, 'previous'), next: join(tmp, 'new') };
  assert.equal(sob(['score', ...FILES, '--out', expected.previous, ...PREVIOUS], tmp).code, 0);
  const started = Date.now();
  assert.equal(sob(['score', ...FILES, '--out', expected.next, ...NEW], tmp).code, 0);
  const fullMs = Date.now() - started;

  const out = join(tmp, 'out');
  const again = Date.now();
  assert.equal(sob(['score', ...FILES, '--out', out, ...PREVIOUS], tmp).code, 0);
  // Kills spread over 1.3 runs (a busy machine stretches a run), half of them on the new run.
  const spanMs = 1.3 * ((fullMs + Date.now() - again) / 2);
  const kills = 12;
  const seen = { previous: 0, next: 0, absent: 0 };
  for (let i = 0; i < kills; i++) {
    // Stratified: kill i lands somewhere in the i-th twelfth of a run (start-up included).
    const at = Math.round((spanMs * (i + Math.random())) / kills);
    await killAfter(['score', ...FILES, '--out', out, ...(i % 2 === 0 ? NEW : PREVIOUS)], at);
    for (const model of MODELS) {
      const got = folder(out, model);
      if (got === null) {
        seen.absent++;
        continue;
      }
      const prev = folder(expected.previous, model)!;
      const next = folder(expected.next, model)!;
      const rows = got.rows.trim().split('\n').length;
      assert.equal((JSON.parse(got.summary) as { num_records: number }).num_records, rows, model);
      if (got.rows === prev.rows && got.summary === prev.summary) seen.previous++;
      else if (got.rows === next.rows && got.summary === next.summary) seen.next++;
      else assert.fail(`kill ${i} at ${at} ms: ${model} is neither the previous nor the new run's folder`);
    }
  }
  // Into a fresh folder: what a killed first run leaves is absent or whole, never rows alone.
  for (let i = 0; i < 4; i++) {
    const fresh = join(tmp, `fresh-${i}`);
    const at = Math.round((spanMs * (i + Math.random())) / 4);
    await killAfter(['score', ...FILES, '--out', fresh, ...NEW], at);
    for (const model of MODELS) {
      const got = folder(fresh, model);
      if (got === null) seen.absent++;
      else {
        assert.deepEqual(got, folder(expected.next, model), `fresh kill ${i} at ${at} ms: ${model}`);
        seen.next++;
      }
    }
  }
  console.log(
    `16 kills over ${Math.round(spanMs)} ms (a run: ${fullMs} ms); folders seen: ${JSON.stringify(seen)}`,
  );
  assert.ok(seen.previous + seen.next > 0);

  // The next complete run: every folder the new one, nothing left beside or inside them.
  assert.equal(sob(['score', ...FILES, '--out', out, ...NEW], tmp).code, 0);
  for (const model of MODELS) assert.deepEqual(folder(out, model), folder(expected.next, model));
  assert.deepEqual(dotEntries(out), []);
  assert.deepEqual(readdirSync(join(out, 'image')).sort(), [...MODELS].sort());
});
