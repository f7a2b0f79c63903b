/**
 * Writes never follow a link out (issue 9, item 7): a symlink planted in a run directory (or a
 * judge output folder) in place of a log is refused with one line, and the file it points to is
 * left byte for byte as it was; the manifest's symlink is replaced by the new file, never
 * written through.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { exampleRecords, readLines, sobHere as sob, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-links-'));
  server = await startProtocolServer({
    script: (r) =>
      r.model === 'judge'
        ? {
            kind: 'answer',
            text: '{"accuracy": 90, "grounding": 90, "schema_quality": 90, "needs_multiple_turns": null, "rationale": "ok"}',
          }
        : { kind: 'answer', text: JSON.stringify({ id: r.key }) },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-links' };
// A file outside every run directory, ending in a "torn" line the resume repair would cut.
const VICTIM = 'precious data line 1\nprecious data line 2 without newline';

function runArgs(bench: string, dir: string): string[] {
  return [
    'run',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--run-dir',
    dir,
  ];
}

test('responses.jsonl or errors.jsonl linked to a file outside: the resume refuses with one line and the file is untouched', async () => {
  const bench = writeBenchmark(join(tmp, 'b.jsonl'), ['s1', 's2', 's3']);
  for (const log of ['responses.jsonl', 'errors.jsonl']) {
    const dir = join(tmp, `run-${log}`);
    const first = await sob([...runArgs(bench, dir), '--limit', '2'], { cwd: tmp, env }).done;
    assert.equal(first.code, 0, first.stderr);
    const victim = join(tmp, `victim-${log}`);
    writeFileSync(victim, VICTIM);
    rmSync(join(dir, log), { force: true });
    symlinkSync(victim, join(dir, log));
    const before = server.total;
    const res = await sob(runArgs(bench, dir), { cwd: tmp, env }).done;
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.equal(
      res.stderr.trim(),
      `sob: refusing to write through a symbolic link: ${join(dir, log)} (the ${log === 'errors.jsonl' ? 'log' : 'response log'} must be a plain file)`,
    );
    assert.equal(readFileSync(victim, 'utf8'), VICTIM);
    assert.equal(server.total, before, 'nothing asked');
  }
});

test('manifest.json linked to a file outside: the run replaces the link with its manifest, the outside file is untouched', async () => {
  const bench = writeBenchmark(join(tmp, 'm.jsonl'), ['m1', 'm2']);
  const dir = join(tmp, 'run-manifest');
  mkdirSync(dir, { recursive: true });
  const first = await sob([...runArgs(bench, dir), '--limit', '1'], { cwd: tmp, env }).done;
  assert.equal(first.code, 0, first.stderr);
  const victim = join(tmp, 'victim-manifest.json');
  writeFileSync(victim, readFileSync(join(dir, 'manifest.json')));
  const original = readFileSync(victim, 'utf8');
  rmSync(join(dir, 'manifest.json'));
  symlinkSync(victim, join(dir, 'manifest.json'));
  const res = await sob(runArgs(bench, dir), { cwd: tmp, env }).done;
  assert.equal(res.code, 0, res.stderr);
  assert.equal(readFileSync(victim, 'utf8'), original);
  assert.equal(lstatSync(join(dir, 'manifest.json')).isSymbolicLink(), false);
  assert.equal(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status, 'complete');
  assert.equal(readLines(join(dir, 'responses.jsonl')).length, 2);
});

test('sob judge: judgments.jsonl linked outside is refused, untouched; summary.json linked outside is replaced, not written through', async () => {
  const records = join(tmp, 'records.jsonl');
  await exampleRecords(records);
  const args = (out: string) => [
    'judge',
    records,
    '--judge',
    'openai:judge',
    '--base-url',
    server.openaiBaseUrl,
    '--out',
    out,
  ];
  const out = join(tmp, 'judged');
  mkdirSync(out);
  const victim = join(tmp, 'victim-judgments');
  writeFileSync(victim, VICTIM);
  symlinkSync(victim, join(out, 'judgments.jsonl'));
  const res = await sob(args(out), { cwd: tmp, env }).done;
  assert.equal(res.code, 1, res.stderr);
  assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  assert.match(res.stderr, /^sob: refusing to write through a symbolic link: .*judgments\.jsonl/);
  assert.equal(readFileSync(victim, 'utf8'), VICTIM);

  const out2 = join(tmp, 'judged2');
  mkdirSync(out2);
  const victim2 = join(tmp, 'victim-summary');
  writeFileSync(victim2, VICTIM);
  symlinkSync(victim2, join(out2, 'summary.json'));
  const ok = await sob(args(out2), { cwd: tmp, env }).done;
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(readFileSync(victim2, 'utf8'), VICTIM);
  assert.equal(lstatSync(join(out2, 'summary.json')).isSymbolicLink(), false);
  assert.ok(existsSync(join(out2, 'accepted.jsonl')));
});
