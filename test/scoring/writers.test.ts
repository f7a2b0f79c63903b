/**
 * Issue 9 items 4 and 7 (the scoring part): one writer per evaluation folder, and writes that
 * never follow a link out.
 * - Inputs that map to one `<modality>/<model>` folder fail before scoring, with one line.
 * - A folder being written is locked: a second `sob score` into it is refused with one line.
 * - Symlinks planted in an evaluation directory are replaced, never written through.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readOut, responseLine, SOB, sobInProcess as sob, sob as sobChild } from './cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-writers-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function lines(n: number, source?: string): string {
  return `${Array.from({ length: n }, (_, i) =>
    responseLine(`r${i}`, { name: 'x', n: i }, { metadata: source ? { source } : {} }),
  ).join('\n')}\n`;
}

function dir(...parts: string[]): string {
  const d = join(tmp, ...parts);
  mkdirSync(d, { recursive: true });
  return d;
}

test('the same file name in two folders: one line naming both, nothing scored', async () => {
  const a = dir('same', 'a');
  const b = dir('same', 'b');
  writeFileSync(join(a, 'response_m_image.jsonl'), lines(3));
  writeFileSync(join(b, 'response_m_image.jsonl'), lines(5));
  const out = join(tmp, 'same', 'out');
  const r = await sob(['score', a, b, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 1);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('sob:'));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(
    errors[0],
    /a\/response_m_image\.jsonl and .*b\/response_m_image\.jsonl would both be written to .*image\/m/,
  );
  assert.match(errors[0], /nothing was scored/);
  assert.equal(existsSync(join(out, 'image', 'm')), false);
});

test('a file given twice fails; names that only look alike (text vs image records) do not', async () => {
  const d = dir('twice');
  const f = join(d, 'response_m_image.jsonl');
  writeFileSync(f, lines(2));
  const out = join(d, 'out');
  const r = await sob(['score', f, f, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /response_m_image\.jsonl is given twice/);
  // response_m.jsonl holds text records (text/m), response_m_image.jsonl image ones (image/m).
  writeFileSync(join(d, 'response_m.jsonl'), lines(4));
  const ok = await sob(['score', d, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(readOut(out, 'text', 'm').summary.num_records, 4);
  assert.equal(readOut(out, 'image', 'm').summary.num_records, 2);
  // ...unless a record's own source sends it to the other one's folder.
  writeFileSync(join(d, 'response_m.jsonl'), lines(4, 'image'));
  const clash = await sob(['score', d, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(clash.code, 1);
  assert.match(
    clash.stderr,
    /response_m\.jsonl and .*response_m_image\.jsonl would both be written to .*image\/m/,
  );
  assert.equal(readOut(out, 'image', 'm').summary.num_records, 2); // the folder as it was
});

test('two run directories of one model scored into one --out: one line, nothing scored', async () => {
  for (const run of ['run1', 'run2']) {
    const d = dir('runs', run);
    writeFileSync(join(d, 'manifest.json'), JSON.stringify({ model: 'openai:gpt-x', status: 'complete' }));
    writeFileSync(join(d, 'responses.jsonl'), lines(3, 'text'));
  }
  const out = join(tmp, 'runs-out');
  const r = await sob(['score', join(tmp, 'runs'), '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /run1\/responses\.jsonl and .*run2\/responses\.jsonl would both be written to .*text\/openai_gpt-x/,
  );
  assert.equal(existsSync(join(out, 'text')), false);
  // Each into its own evaluation/ (no --out): fine.
  const own = await sob(['score', join(tmp, 'runs'), '--bootstrap-samples', '0'], tmp);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(readOut(join(tmp, 'runs/run2/evaluation'), 'text', 'openai_gpt-x').rows.length, 3);
});

test('a folder another live sob process is writing is refused with one line, and left as it was', async () => {
  const d = dir('locked');
  const f = join(d, 'response_m_image.jsonl');
  writeFileSync(f, lines(2));
  const out = join(d, 'out');
  assert.equal((await sobChild(['score', f, '--out', out, '--bootstrap-samples', '0'], tmp)).code, 0);
  const before = readFileSync(join(out, 'image/m/eval_summary.json'), 'utf8');
  // This test process is alive: its lock is held (so the runs here are child processes).
  const lock = join(out, 'image', '.m.lock');
  writeFileSync(
    lock,
    JSON.stringify({
      pid: process.pid,
      host: hostname(),
      command: 'score x',
      started: new Date().toISOString(),
    }),
  );
  writeFileSync(f, lines(7));
  const r = await sobChild(['score', f, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /evaluation folder m in .*image is in use by another sob process \(pid \d+/);
  assert.equal(readFileSync(join(out, 'image/m/eval_summary.json'), 'utf8'), before);
  rmSync(lock);
  const again = await sobChild(['score', f, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readOut(out, 'image', 'm').rows.length, 7);
  assert.deepEqual(
    readdirSync(join(out, 'image')).filter((n) => n.startsWith('.')),
    [],
  );
});

test('two sob score processes into one --out at once never interleave: each folder is one run whole', async () => {
  const d = dir('concurrent');
  const f = join(d, 'response_m_image.jsonl');
  writeFileSync(f, lines(3000));
  const out = join(d, 'out');
  const run = () =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [SOB, 'score', f, '--out', out, '--bootstrap-samples', '0'], {
        cwd: tmp,
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      child.on('exit', (code) => resolve({ code, stderr }));
    });
  const results = await Promise.all([run(), run()]);
  for (const r of results) {
    if (r.code !== 0) assert.match(r.stderr, /is in use by another sob process/);
  }
  assert.ok(results.some((r) => r.code === 0));
  const { rows, summary } = readOut(out, 'image', 'm');
  assert.equal(rows.length, 3000);
  assert.equal(summary.num_records, 3000);
  assert.equal(new Set(rows.map((r) => r.record_id)).size, 3000);
});

test('symlinks planted in an evaluation folder are replaced, never written through', async () => {
  const d = dir('links');
  const f = join(d, 'response_m_image.jsonl');
  writeFileSync(f, lines(2));
  const out = join(d, 'out');
  const model = join(out, 'image', 'm');
  mkdirSync(model, { recursive: true });
  const outsideSummary = join(d, 'outside-summary.json');
  const outsideRows = join(d, 'outside-rows.jsonl');
  writeFileSync(outsideSummary, 'KEEP SUMMARY');
  writeFileSync(outsideRows, 'KEEP ROWS');
  symlinkSync(outsideSummary, join(model, 'eval_summary.json'));
  symlinkSync(outsideRows, join(model, 'eval_records.jsonl'));
  const r = await sob(['score', f, '--out', out, '--bootstrap-samples', '0'], tmp);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(outsideSummary, 'utf8'), 'KEEP SUMMARY');
  assert.equal(readFileSync(outsideRows, 'utf8'), 'KEEP ROWS');
  assert.equal(lstatSync(join(model, 'eval_summary.json')).isFile(), true);
  assert.equal(lstatSync(join(model, 'eval_records.jsonl')).isFile(), true);
  assert.equal(readOut(out, 'image', 'm').summary.num_records, 2);

  // The model folder itself a link to a folder elsewhere: the link is replaced, the folder kept.
  const elsewhere = dir('links', 'elsewhere');
  writeFileSync(join(elsewhere, 'eval_summary.json'), 'KEEP');
  rmSync(model, { recursive: true });
  symlinkSync(elsewhere, model);
  assert.equal((await sob(['score', f, '--out', out, '--bootstrap-samples', '0'], tmp)).code, 0);
  assert.deepEqual(readdirSync(elsewhere), ['eval_summary.json']);
  assert.equal(readFileSync(join(elsewhere, 'eval_summary.json'), 'utf8'), 'KEEP');
  assert.equal(lstatSync(model).isDirectory(), true);

  // A modality folder that is a link: refused with one line, nothing written there.
  const out2 = join(d, 'out2');
  mkdirSync(out2);
  const target = dir('links', 'modality-target');
  symlinkSync(target, join(out2, 'image'));
  const refused = await sob(['score', f, '--out', out2, '--bootstrap-samples', '0'], tmp);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refusing to write through a symbolic link: .*out2\/image/);
  assert.deepEqual(readdirSync(target), []);
});
