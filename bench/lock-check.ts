/**
 * Requests saved by the run-directory lock (issue 9 item 4): two `sob run` started together on
 * one --run-dir against a local OpenAI-protocol server; prints requests served, records asked
 * twice and each run's exit. `node --import tsx bench/lock-check.ts [repo-root] [records]`:
 * run it with an older checkout's root to see the figure without the lock.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeBenchmark } from '../test/kit/fixtures.ts';
import { startProtocolServer } from '../test/kit/protocol-server.ts';

const root = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const n = Number(process.argv[3] ?? 800);
const tmp = mkdtempSync(join(tmpdir(), 'sob-lock-check-'));
const server = await startProtocolServer({
  script: (r) => ({ kind: 'answer', delayMs: 20, text: JSON.stringify({ id: r.key }) }),
});
const ids = Array.from({ length: n }, (_, i) => `K${i}`);
const bench = writeBenchmark(join(tmp, 'b.jsonl'), ids);
const run = () =>
  new Promise<number | null>((done) => {
    const c = spawn(
      process.execPath,
      [
        join(root, 'bin/sob.js'),
        'run',
        '--model',
        'openai:m',
        '--base-url',
        server.openaiBaseUrl,
        '--benchmark',
        bench,
        '--run-dir',
        join(tmp, 'run'),
        '--concurrency',
        '8',
      ],
      { cwd: tmp, env: { ...process.env, OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: '' }, stdio: 'ignore' },
    );
    c.on('exit', (code) => done(code));
  });
const codes = await Promise.all([run(), run()]);
let total = 0;
let twice = 0;
for (const k of ids) {
  const c = server.counts.get(k) ?? 0;
  total += c;
  if (c > 1) twice++;
}
console.log(
  `${root}: ${n} records, two runs at once -> exits ${codes.join(', ')}; requests ${total}; records asked twice ${twice}`,
);
await server.close();
rmSync(tmp, { recursive: true, force: true });
