/**
 * Issue 29, finding 6: a batch output file with one line longer than V8's longest string
 * (1,200 MB, no newline) killed `sob run --batch` with `RangeError: Invalid string length` and a
 * stack trace, and a re-run downloaded it again and died the same way. Provider files are now
 * split into lines byte by byte with a cap (src/core/capped-lines.ts, 64 MiB; SOB_MAX_LINE_BYTES
 * sets it): a line over it is a bad line, logged with its number, its record asked again; the
 * other answers are collected and the run finishes.
 *
 * Here the local Files + Batches server sends the output file with one record's line replaced by
 * a line over the cap, streamed in 1 MiB pieces (never held): 6 MiB against a 1 MiB cap, and,
 * with SOB_TEST_HUGE_LINE=1, the 1,200 MB line of the finding against the default cap.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { readLines, sobRun, writeBenchmark } from './sob-cli.ts';

const MiB = 1024 * 1024;

let tmp: string;
let server: ProtocolServer;
/** The size of the long line the next output file carries (bytes), and what was sent of it. */
let longLine = 0;
let sent = 0;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-batch-line-cap-'));
  server = await startProtocolServer({
    batch: {
      states: () => ['in_progress', 'completed'],
      fileLines: (b, kind, lines) => {
        // The first batch's output: its second line (record cap1) becomes one long line.
        if (kind !== 'out' || b.index !== 0) return lines;
        return (function* () {
          yield lines[0];
          const piece = Buffer.alloc(MiB, 'x');
          yield Buffer.from('{"custom_id": "r1", "filler": "');
          for (let left = longLine; left > 0; left -= MiB) {
            const p = left >= MiB ? piece : piece.subarray(0, left);
            sent += p.length;
            yield p;
          }
          yield Buffer.from('"}\n');
          yield* lines.slice(2);
        })();
      },
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function collect(name: string, bytes: number, env: Record<string, string>) {
  longLine = bytes;
  sent = 0;
  server.batches.length = 0;
  const keys = Array.from({ length: 4 }, (_, i) => `cap${i}`);
  const dir = join(tmp, name);
  const r = sobRun(server, 'openai:m', writeBenchmark(join(tmp, `${name}.jsonl`), keys), dir, {
    cwd: tmp,
    env: { OPENAI_API_KEY: 'sk-cap', ...env },
    extra: ['--batch', '--batch-poll-ms', '20', '--no-stream'],
  });
  const res = await r.done;
  return { res, dir };
}

test('a batch output line over the line cap is a bad line with its number; the other answers are collected and the run finishes', async () => {
  const { res, dir } = await collect('small-cap', 6 * MiB, { SOB_MAX_LINE_BYTES: String(MiB) });
  assert.equal(res.code, 0, res.stderr);
  assert.equal(sent, 6 * MiB);
  assert.match(
    res.stderr,
    /batch batch_1: output file file-out-batch_1 line 2: 6,291,489 bytes \(6 MB\) long, over the 1,048,576 bytes \(1 MB\) line limit; skipped \(its record is asked again\)/,
  );
  assert.doesNotMatch(res.stderr, /RangeError|Invalid string length|\n\s+at /);
  // Every record answered: three from the first file, the skipped one by a follow-up batch.
  const ids = readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l).metadata.record_id);
  assert.deepEqual(ids.sort(), ['cap0', 'cap1', 'cap2', 'cap3']);
  assert.equal(server.batches.length, 2, 'one follow-up batch, for the skipped line');
  assert.equal(server.batches[1].requests.length, 1);
});

test('the 1,200 MB single line of the finding, against the default 64 MiB cap (SOB_TEST_HUGE_LINE=1)', async (t) => {
  if (process.env.SOB_TEST_HUGE_LINE !== '1') return t.skip('set SOB_TEST_HUGE_LINE=1 to send 1,200 MB');
  const started = Date.now();
  const { res, dir } = await collect('huge', 1200 * MiB, {});
  assert.equal(res.code, 0, res.stderr);
  assert.equal(sent, 1200 * MiB);
  assert.match(
    res.stderr,
    /line 2: 1,258,291,233 bytes \(1,200 MB\) long, over the 67,108,864 bytes \(64 MB\) line limit/,
  );
  const ids = readLines(join(dir, 'responses.jsonl')).map((l) => JSON.parse(l).metadata.record_id);
  assert.deepEqual(ids.sort(), ['cap0', 'cap1', 'cap2', 'cap3']);
  t.diagnostic(
    `1,200 MB line sent and skipped; run finished in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});
