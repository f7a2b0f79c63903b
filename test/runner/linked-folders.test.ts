/**
 * Issue 21 finding 16 (the run side): a symlinked `runs/<model>` (or `runs/`) inside an eval
 * folder was followed, so `sob eval` wrote its run directory elsewhere; a symlinked shard in the
 * response cache (`--cache`) was written through. Both are refused with one line; nothing is
 * written where the link points, and a refused cache write costs no answer.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { readLines, sob, sobRun, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-linked-'));
  server = await startProtocolServer();
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-links' };

for (const which of ['runs/openai_m', 'runs'] as const) {
  test(`sob eval with a symlinked ${which} in its eval folder: refused, nothing written where it points`, async () => {
    const dir = mkdtempSync(join(tmp, 'eval-'));
    const evalDir = join(dir, 'ev');
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    mkdirSync(join(evalDir, 'runs'), { recursive: true });
    if (which === 'runs') rmSync(join(evalDir, 'runs'), { recursive: true });
    symlinkSync(outside, join(evalDir, which));
    const bench = writeBenchmark(join(dir, 'b.jsonl'), ['a', 'b']);
    const before = server.total;
    const r = await sob(
      [
        'eval',
        '--model',
        'openai:m',
        '--base-url',
        server.openaiBaseUrl,
        '--benchmark',
        bench,
        '--eval-dir',
        evalDir,
        '--bootstrap-samples',
        '0',
        '--no-report',
      ],
      { cwd: dir, env },
    ).done;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`refusing to write through a symbolic link: .*ev/${which}`));
    assert.deepEqual(readdirSync(outside), []);
    assert.equal(server.total, before, 'nothing asked');
  });
}

test('a symlinked shard in the response cache: refused with one line, every answer still written', async () => {
  const dir = mkdtempSync(join(tmp, 'cache-'));
  const cache = join(dir, 'cache');
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  mkdirSync(cache);
  for (let i = 0; i < 256; i++) symlinkSync(outside, join(cache, i.toString(16).padStart(2, '0')));
  const bench = writeBenchmark(join(dir, 'b.jsonl'), ['c1', 'c2', 'c3']);
  const run = join(dir, 'run');
  const r = await sobRun(server, 'openai:m', bench, run, { cwd: dir, env, extra: ['--cache', cache] }).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /response cache: refusing to write through a symbolic link: .*cache\/[0-9a-f]{2}/);
  assert.deepEqual(readdirSync(outside), []);
  assert.equal(readLines(join(run, 'responses.jsonl')).length, 3);
  assert.equal(existsSync(join(run, 'responses.jsonl')), true);
});
