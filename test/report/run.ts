/**
 * What the report tests share: the real `sob` command, the JSON a report embeds, and Debian's
 * Chromium driven by playwright-core.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BIN, ensureBuilt, sobIn } from '../kit/cli.ts';
import { sharedData } from '../kit/shared-data.ts';

export { ROOT } from '../kit/cli.ts';
export const SOB = sharedData('sob');
export const CHROMIUM = '/usr/bin/chromium';

/** Runs `sob <args>` and returns its status, stdout and stderr. */
export function sob(...args: string[]) {
  ensureBuilt();
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
}

/** `sob <args>` in this process (test/kit/cli.ts), its result in `sob`'s shape. */
export async function sobInProcess(...args: string[]) {
  const r = await sobIn(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** The data a report.html embeds (`<script id="sob-data">`). */
export function reportData<T = Record<string, unknown>>(file: string): T {
  const m = readFileSync(file, 'utf8').match(
    /<script type="application\/json" id="sob-data">(.*?)<\/script>/s,
  );
  if (!m) throw new Error(`${file}: no embedded report data`);
  return JSON.parse(m[1]) as T;
}

/** Headless Chromium (the caller closes it). */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}
