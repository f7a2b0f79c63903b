/**
 * Scoring workers run a bundle of their own code, built once with esbuild and cached under
 * `node_modules/.cache/sob-eval/`, keyed by the sources' sizes and mtimes. A worker then starts
 * in tens of milliseconds instead of loading a TypeScript loader and transpiling each module.
 * Without esbuild (or a writable cache) the worker runs through tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
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

const VALIDATOR_CACHE_FILES = 20_000;

/**
 * Where compiled validators are kept between runs (standalone code, one file per schema text),
 * under the worker bundle's key so a code change starts a fresh cache; older caches are removed.
 * `SOB_VALIDATOR_CACHE=off` turns it off (a cold run), or names another folder. Undefined when
 * off or not writable.
 */
export function validatorCacheDir(): string | undefined {
  const env = process.env.SOB_VALIDATOR_CACHE;
  if (env === 'off' || env === '0') return undefined;
  try {
    if (env) {
      mkdirSync(env, { recursive: true });
      return resolve(env);
    }
    const base = join(ROOT, 'node_modules/.cache/sob-eval');
    const name = `validators-${sourceKey()}`;
    const dir = join(base, name);
    mkdirSync(dir, { recursive: true });
    for (const other of readdirSync(base))
      if (other.startsWith('validators-') && other !== name)
        rmSync(join(base, other), { recursive: true, force: true });
    // Bounded: past VALIDATOR_CACHE_FILES schemas (~13 KB each), start again.
    if (readdirSync(dir).length > VALIDATOR_CACHE_FILES) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
    return dir;
  } catch {
    return undefined;
  }
}
