/**
 * Scoring workers run a bundle of their own code, built once with esbuild and cached under
 * `node_modules/.cache/sob-eval/`, keyed by the sources' sizes and mtimes. A worker then starts
 * in tens of milliseconds instead of loading a TypeScript loader and transpiling each module.
 * Without esbuild (or a writable cache) the worker runs through tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['src/core', 'src/scoring', 'metrics', 'metrics/match'];
const FALLBACK = new URL('./worker-entry.mjs', import.meta.url);

function sourceKey(): string {
  const h = createHash('sha256');
  for (const dir of SOURCE_DIRS) {
    for (const f of readdirSync(join(ROOT, dir)).sort()) {
      if (!f.endsWith('.ts')) continue;
      const st = statSync(join(ROOT, dir, f));
      h.update(`${dir}/${f}:${st.size}:${st.mtimeMs}\n`);
    }
  }
  return h.digest('hex').slice(0, 16);
}

let cached: URL | undefined;

export function scoringWorkerUrl(): URL {
  if (cached) return cached;
  try {
    const out = join(ROOT, 'node_modules/.cache/sob-eval', `scoring-worker-${sourceKey()}.mjs`);
    if (!existsSync(out)) {
      const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
      mkdirSync(join(ROOT, 'node_modules/.cache/sob-eval'), { recursive: true });
      const tmp = `${out}.${process.pid}.tmp`;
      esbuild.buildSync({
        entryPoints: [join(ROOT, 'src/scoring/worker.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        outfile: tmp,
        logLevel: 'silent',
      });
      renameSync(tmp, out);
    }
    cached = pathToFileURL(out);
  } catch {
    cached = FALLBACK;
  }
  return cached;
}
