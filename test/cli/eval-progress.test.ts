/**
 * Progress within a second: `sob eval` with an empty OCR cache (the README's first command, which
 * builds the bundled benchmark and OCRs its scanned page) says what it is doing on stderr within
 * 1 s of starting, then each step and each PDF page with its count. A timing test (listed in
 * SERIAL in scripts/test.mjs): the 1 s is measured from the spawn, over what the same machine
 * takes to start `sob --version` and exit (the time any command needs before it can say anything).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN, ensureBuilt } from '../kit/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-eval-progress-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const env = { ...process.env, XDG_CACHE_HOME: join(tmp, 'cache') };

/** `sob --version`, spawn to exit, in ms. */
function startupMs(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, '--version'], { env, stdio: 'ignore' });
    c.on('exit', () => resolve(performance.now() - t0));
  });
}

test('sob eval with an empty OCR cache prints its first progress line within 1 s, then steps and pages with counts', async () => {
  ensureBuilt();
  const startup = Math.min(await startupMs(), await startupMs());
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'eval', '--eval-dir', join(tmp, 'ev')], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: { ms: number; text: string }[] = [];
  let partial = '';
  const seen = new Promise<void>((resolve) => {
    child.stderr.on('data', (d: Buffer) => {
      const ms = performance.now() - t0;
      partial += d.toString();
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts) lines.push({ ms, text });
      // Enough seen once the first PDF page is read: the scan's OCR need not be waited for.
      if (lines.some((l) => /PDF page 1\/4 read/.test(l.text))) resolve();
    });
    child.on('exit', () => resolve());
  });
  const limit = setTimeout(() => child.kill('SIGTERM'), 240_000);
  await seen;
  clearTimeout(limit);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  if (child.exitCode === null) child.kill('SIGTERM');
  await exited;
  assert.ok(lines.length > 0, 'nothing on stderr');
  assert.match(
    lines[0].text,
    /^sob eval: building the bundled benchmark \(the example corpus: 4 steps\) -> .*; the first time, its scanned PDF page is OCR'd/,
  );
  assert.ok(
    lines[0].ms <= 1000 + startup,
    `first progress line after ${lines[0].ms.toFixed(0)} ms (sob --version starts and exits in ${startup.toFixed(0)} ms)`,
  );
  const text = lines.map((l) => l.text).join('\n');
  assert.match(text, /building the bundled benchmark: step 1\/4, text passages \(passages\.json\)/);
  assert.match(text, /building the bundled benchmark: step 2\/4, PDF pages \(pdf\)/);
  assert.match(
    text,
    /building the bundled benchmark: PDF page 1\/4 read \((invoice|article|report|scan)\.pdf, (text-layer|ocr)\)/,
  );
});
