/**
 * From a fresh clone to a leaderboard of a user's own JSONL (10 records, a local OpenAI-compatible
 * server), and how many commands it takes:
 *
 *   node --import tsx bench/own-data.ts
 *
 * Clones this repository (git clone, local), gives the clone this checkout's node_modules (a
 * stand-in for `npm ci`, which needs the registry and is not timed), writes 10 records the way a
 * user has them (`qid`, `passage`, `question`, `schema`, `answer`: not our field names, no
 * schema_complexity), starts the local protocol server as the model, then runs, in the clone:
 *
 *   sob build records data.jsonl --map id=qid,context=passage,ground_truth=answer --out mine/records.jsonl
 *   sob eval --benchmark mine --model openai:local --base-url <server> --eval-dir runs/mine
 *
 * and prints each command's wall time, the total, and the leaderboard row. The baseline in the
 * same run is `node -e ''` (a bare Node start) so the figures read as multiples of it on any
 * machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startProtocolServer } from '../test/kit/protocol-server.ts';

const ROOT = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'sob-own-data-'));
const clone = join(work, 'sob-eval');

/** Runs a command (asynchronously: the server answering it lives in this process) and times it. */
async function timed(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const t = performance.now();
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const status = await new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const ms = performance.now() - t;
  if (status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${status}\n${stderr}`);
  return { ms, stdout, stderr, status };
}

const PEOPLE = [
  ['Ann Lee', 41, 'Oslo'],
  ['Bo Chen', 29, 'Lyon'],
  ['Cy Diaz', 35, 'Lima'],
  ['Di Kova', 52, 'Kyiv'],
  ['Ed Moss', 23, 'Cork'],
  ['Flo Park', 47, 'Pune'],
  ['Gus Roy', 61, 'Oran'],
  ['Hal Sen', 38, 'Riga'],
  ['Ida Toft', 44, 'Bern'],
  ['Jo Ueda', 31, 'Nara'],
] as const;

const server = await startProtocolServer({
  // The model: answers each record from its passage (the right values, names upper-cased for two).
  script: (r) => {
    const i = Number((r.key ?? 'q0').slice(1));
    const [name, age, city] = PEOPLE[i];
    return { kind: 'answer', text: JSON.stringify({ name: i < 2 ? name.toUpperCase() : name, age, city }) };
  },
});
try {
  const node0 = performance.now();
  for (let i = 0; i < 3; i++) spawnSync(process.execPath, ['-e', ''], { encoding: 'utf8' });
  const nodeMs = (performance.now() - node0) / 3;

  const c = await timed('git', ['clone', '--quiet', '--local', ROOT, clone], work);
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' } },
    required: ['name', 'age', 'city'],
  };
  writeFileSync(
    join(clone, 'data.jsonl'),
    PEOPLE.map(([name, age, city], i) =>
      JSON.stringify({
        qid: `q${i}`,
        passage: `[rid:q${i}] ${name} (${age}) lives in ${city}.`,
        question: 'Who is this, how old, and where do they live?',
        schema,
        answer: { name, age, city },
      }),
    ).join('\n'),
  );
  const sob = join(clone, 'bin/sob.js');
  const build = await timed(
    process.execPath,
    [
      sob,
      'build',
      'records',
      'data.jsonl',
      '--map',
      'id=qid,context=passage,ground_truth=answer',
      '--out',
      'mine/records.jsonl',
    ],
    clone,
  );
  const ev = await timed(
    process.execPath,
    [
      sob,
      'eval',
      '--benchmark',
      'mine',
      '--model',
      'openai:local',
      '--base-url',
      server.openaiBaseUrl,
      '--eval-dir',
      'runs/mine',
      '--match',
      'default',
    ],
    clone,
    { OPENAI_API_KEY: 'sk-local' },
  );
  const board = join(clone, 'runs/mine/leaderboard.json');
  if (!existsSync(board)) throw new Error(`no leaderboard: ${ev.stderr}`);
  const [row] = JSON.parse(readFileSync(board, 'utf8'));
  const total = build.ms + ev.ms;
  const f = (ms: number) => `${(ms / 1000).toFixed(2)} s (${(ms / nodeMs).toFixed(1)}x a bare node start)`;
  console.log(`node start (baseline):   ${(nodeMs / 1000).toFixed(3)} s`);
  console.log(`git clone (local):       ${f(c.ms)}  [npm ci not timed: node_modules linked]`);
  console.log(`1. sob build records:    ${f(build.ms)}`);
  console.log(`2. sob eval:             ${f(ev.ms)}  (exit ${ev.status}; requests ${server.total})`);
  console.log(`commands after install:  2; their time ${f(total)}; with the clone ${f(total + c.ms)}`);
  console.log(
    `leaderboard: ${row.model} overall ${row.overall.toFixed(3)}, Val.Acc. ${row.value_accuracy.toFixed(3)}, lenient ${row.lenient?.value_accuracy?.toFixed(3) ?? '-'}, coverage ${row.coverage.toFixed(3)}`,
  );
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
