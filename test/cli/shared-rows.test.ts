/**
 * Issue 29, finding 10: two `sob run` of different models over one rows file at once. The second
 * was refused by the lock on the shared `runs/benchmarks/<name>-<hash>/` folder, though the two
 * share nothing but read-only records. Now the folder is built beside it and renamed in whole,
 * and a complete one is reused without a lock: while a slow model (the local OpenAI server, each
 * answer delayed) still reads the records, a second model over the same rows starts, reuses them
 * untouched, and finishes; so does the first.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobAsync } from '../kit/cli.ts';

let tmp: string;
let server: ProtocolServer;
/** Set once the second run has ended: until then each answer of the first is 3 s late. */
let released = false;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-shared-rows-'));
  // Each answer 3 s late until the second run has ended: 6 rows one at a time keep the
  // first run asking for as long as the second takes (then it finishes at once).
  server = await startProtocolServer({
    script: (r) => ({
      kind: 'answer',
      text: JSON.stringify({ name: r.key ?? '?', city: 'Oslo', age: 30 }),
      delayMs: released ? 0 : 3000,
    }),
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('two sob run of different models over one rows file at once both finish; the second reuses the records unlocked', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, city: { type: 'string' }, age: { type: 'integer' } },
  };
  const rows = join(tmp, 'rows.jsonl');
  writeFileSync(
    rows,
    Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({
        id: `p${i}`,
        context: `[rid:p${i}] p${i} lives in Oslo and is 30.`,
        question: 'Who?',
        schema,
        ground_truth: { name: `p${i}`, city: 'Oslo', age: 30 },
      }),
    ).join('\n'),
  );
  const env = { OPENAI_API_KEY: 'sk-shared' };
  const slow = sobAsync(
    [
      'run',
      '--model',
      'openai:slow',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      rows,
      '--concurrency',
      '1',
    ],
    { cwd: tmp, env },
  );
  // Wait for the first run to have built the shared folder, then start the second while it runs.
  const shared = join(tmp, 'runs', 'benchmarks');
  let folder = '';
  let slowEnded = false;
  slow.then(() => {
    slowEnded = true;
  });
  for (let i = 0; i < 800 && !folder; i++) {
    await sleep(25);
    const done = existsSync(shared)
      ? readdirSync(shared).filter((n) => !n.startsWith('.') && existsSync(join(shared, n, 'records.jsonl')))
      : [];
    if (done.length === 1) folder = join(shared, done[0]);
  }
  assert.ok(folder, 'the first run built runs/benchmarks/<name>-<hash>/');
  const records = join(folder, 'records.jsonl');
  const before = statSync(records);
  const fast = await sobAsync(['run', '--model', 'baseline:gold', '--benchmark', rows], { cwd: tmp, env });
  assert.equal(slowEnded, false, 'the second run ended while the first was still asking');
  released = true;
  const first = await slow;
  assert.equal(fast.code, 0, fast.stderr);
  assert.equal(first.code, 0, first.stderr);
  assert.match(fast.stdout, /\tcomplete\t6\/6 answered\t0 failed/);
  assert.match(first.stdout, /\tcomplete\t6\/6 answered\t0 failed/);
  assert.doesNotMatch(fast.stderr, /in use by another sob process/);
  assert.match(fast.stderr, /using the records built from them before/);
  // Read only: the records the first run reads were not replaced under it.
  const now = statSync(records);
  assert.equal(now.ino, before.ino, 'records.jsonl is the same file');
  assert.equal(now.mtimeMs, before.mtimeMs);
  // No scratch folder left beside it.
  assert.deepEqual(
    readdirSync(shared).filter((n) => n.startsWith('.')),
    [],
  );
});
