/**
 * Issue 21 finding 5: the lock file held the command line, so a `--base-url` with credentials
 * (user:password@, an unredacted `?api-key=`) was written to `.sob.lock`, left there after
 * SIGKILL, and printed on stderr by a second `sob` on the same folder. The lock now holds the
 * pid, the host and the start time only.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sob, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-lock-content-'));
  server = await startProtocolServer({
    script: (r) => ({ kind: 'answer', delayMs: 20_000, text: JSON.stringify({ id: r.key }) }),
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('the lock holds pid, host and start time only: no credential in it, none printed by a second sob, none left after SIGKILL', async () => {
  const bench = writeBenchmark(join(tmp, 'bench.jsonl'), ['a', 'b']);
  const dir = join(tmp, 'run');
  const url = server.openaiBaseUrl.replace('://', '://alice:hunter2pw@');
  const baseUrl = `${url}?api-key=SECRETQUERYKEY`;
  const args = ['run', '--model', 'openai:m', '--base-url', baseUrl, '--benchmark', bench, '--run-dir', dir];
  const first = sob(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-lock' } });
  const lock = join(dir, '.sob.lock');
  await until(() => existsSync(lock) && readFileSync(lock, 'utf8').endsWith('\n'), 30_000, 'the lock file');
  await until(() => server.total > 0, 30_000, 'the first request');
  const text = readFileSync(lock, 'utf8');
  const owner = JSON.parse(text);
  assert.deepEqual(Object.keys(owner).sort(), ['host', 'pid', 'started']);
  assert.equal(owner.pid, first.child.pid);
  assert.equal(owner.host, hostname());
  assert.ok(!Number.isNaN(Date.parse(owner.started)));
  for (const secret of ['hunter2pw', 'SECRETQUERYKEY', 'alice']) assert.ok(!text.includes(secret), text);

  const second = await sob(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-lock' } }).done;
  assert.equal(second.code, 1);
  assert.match(second.stderr, /is in use by another sob process \(pid \d+ on \S+, since /);
  for (const secret of ['hunter2pw', 'SECRETQUERYKEY'])
    assert.ok(!second.stderr.includes(secret), second.stderr);

  first.child.kill('SIGKILL');
  await first.done;
  const left = readFileSync(lock, 'utf8');
  for (const secret of ['hunter2pw', 'SECRETQUERYKEY', 'alice']) assert.ok(!left.includes(secret), left);
});
