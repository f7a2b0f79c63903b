/**
 * Scoring workers run a bundle of their own code, built once with esbuild and cached under
 * `node_modules/.cache/sob-eval/`, keyed by the sources' sizes and mtimes. A worker then starts
 * in tens of milliseconds instead of loading a TypeScript loader and transpiling each module.
 * The bundle is CommonJS, loaded by `require` from a one-line worker script: module hooks a
 * parent registered (tsx's, when `sob` runs from source) then stay out of the worker's loading
 * (through them, every import of a worker's start waited on the hooks' thread: +80 ms each).
 * Without esbuild (or a writable cache) the worker runs through tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Script } from 'node:vm';
import { threadId } from 'node:worker_threads';
import { BUILT, moduleUrl, PACKAGE_ROOT } from '../core/paths.ts';

const ROOT = PACKAGE_ROOT;
const SOURCE_DIRS = ['src/core', 'src/scoring', 'metrics', 'metrics/match'];
// Built, the worker's own JavaScript; from source, a script that loads it through tsx.
const FALLBACK = BUILT
  ? moduleUrl('./worker.ts', import.meta.url)
  : new URL('./worker-entry.mjs', import.meta.url);

function sourceKey(): string {
  const h = createHash('sha256');
  // ajv's version too: a cached validator (and the verdict that its schema is valid) is ajv's.
  try {
    h.update(`ajv ${(createRequire(import.meta.url)('ajv/package.json') as { version: string }).version}\n`);
  } catch {
    h.update('ajv ?\n');
  }
  for (const dir of SOURCE_DIRS) {
    for (const f of readdirSync(join(ROOT, dir)).sort()) {
      if (!f.endsWith('.ts')) continue;
      const st = statSync(join(ROOT, dir, f));
      h.update(`${dir}/${f}:${st.size}:${st.mtimeMs}\n`);
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** How to start a scoring worker: `new Worker(w.script, { eval: w.eval, ... })`. */
export interface WorkerScript {
  script: string | URL;
  eval: boolean;
}

let cached: WorkerScript | undefined;
let cachedBundle: string | undefined;

const DAY_MS = 24 * 3600 * 1000;

/** Whether `path` was last changed more than `ms` ago (false when it cannot be read). */
function olderThan(path: string, ms: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > ms;
  } catch {
    return false;
  }
}

export function scoringWorker(): WorkerScript {
  // A long-lived process (main(argv, io) run many times) checks the bundle is still there: another
  // checkout sharing node_modules/ removes the bundles of sources other than its own.
  if (cached && (cachedBundle === undefined || existsSync(cachedBundle))) return cached;
  try {
    const dir = join(ROOT, 'node_modules/.cache/sob-eval');
    const name = `scoring-worker-${sourceKey()}.cjs`;
    const out = join(dir, name);
    if (!existsSync(out)) {
      const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
      mkdirSync(dir, { recursive: true });
      const tmp = `${out}.${process.pid}.tmp`;
      esbuild.buildSync({
        entryPoints: [join(ROOT, 'src/scoring/worker.ts')],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        packages: 'external',
        outfile: tmp,
        logLevel: 'silent',
        // `createRequire(import.meta.url)` resolves from the bundle's place (under node_modules).
        banner: { js: 'const __sobImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
        define: { 'import.meta.url': '__sobImportMetaUrl', 'import.meta.dirname': '__dirname' },
      });
      renameSync(tmp, out);
      // Bundles of older sources go, once nothing can be using them: a run of another checkout
      // sharing node_modules (or of the sources before an edit) reads its bundle again whenever
      // it replaces a worker, so a bundle is kept for a day after it was last made.
      for (const other of readdirSync(dir))
        if (
          other.startsWith('scoring-worker-') &&
          !other.startsWith(name) &&
          olderThan(join(dir, other), DAY_MS)
        )
          rmSync(join(dir, other), { force: true });
    }
    // CommonJS or ESM eval alike (a parent run with --input-type=module passes it on).
    cached = { script: bundleLoader(out), eval: true };
    cachedBundle = out;
  } catch {
    cached = { script: FALLBACK, eval: false };
    cachedBundle = undefined;
  }
  return cached;
}

/**
 * The worker's one-line script: runs the bundle as `require` would (the same wrapper and
 * arguments), compiled with the V8 code cache kept beside it (`<bundle>.v8`) when there is one,
 * so a worker neither parses the bundle nor compiles its hot functions again. The first worker to
 * finish a file writes that cache (`saveBundleCodeCache`), with what it compiled by then.
 */
function bundleLoader(bundle: string): string {
  const path = JSON.stringify(bundle);
  return [
    `const fs = process.getBuiltinModule('node:fs'), Module = process.getBuiltinModule('node:module');`,
    `const file = ${path}, cacheFile = file + '.v8';`,
    `let cachedData; try { cachedData = fs.readFileSync(cacheFile); } catch {}`,
    // No import() in the bundle's code: Node 20 loses its loader for code from a V8 code cache.
    `const script = new (process.getBuiltinModule('node:vm').Script)(Module.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });`,
    `globalThis.${BUNDLE_GLOBAL} = { script, cacheFile, save: cachedData === undefined || script.cachedDataRejected };`,
    // ...so `--scorer` modules are imported by this script's own import() (custom-scorers.ts).
    `globalThis.${IMPORT_GLOBAL} = (url) => import(url);`,
    `const module = { exports: {} };`,
    `script.runInThisContext()(module.exports, Module.createRequire(file), module, file, process.getBuiltinModule('node:path').dirname(file));`,
  ].join('\n');
}

/** Where the loader leaves an import() that works in a bundle's worker (see `bundleLoader`). */
export const IMPORT_GLOBAL = '__sobImport';

/** Where the loader leaves the bundle's script (see `bundleLoader`). */
const BUNDLE_GLOBAL = '__sobScoringBundle';

/**
 * In a worker: writes the bundle's V8 code cache when there is none (or V8 rejected it), once the
 * worker has scored a file (its hot functions compiled). Written under a temp name then renamed:
 * a reader never sees half of it. Nothing happens outside a bundle's worker.
 */
export function saveBundleCodeCache(): void {
  const g = globalThis as { [BUNDLE_GLOBAL]?: { script: Script; cacheFile: string; save: boolean } };
  const b = g[BUNDLE_GLOBAL];
  if (!b?.save) return;
  b.save = false;
  const tmp = `${b.cacheFile}.${process.pid}-${threadId}.tmp`;
  try {
    writeFileSync(tmp, b.script.createCachedData());
    renameSync(tmp, b.cacheFile);
  } catch {
    rmSync(tmp, { force: true });
  }
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
      if (other.startsWith('validators-') && other !== name && olderThan(join(base, other), DAY_MS))
        rmSync(join(base, other), { recursive: true, force: true });
    // Bounded: past VALIDATOR_CACHE_FILES schemas (~15 KB each with its V8 code cache), start again.
    if (readdirSync(dir).length > VALIDATOR_CACHE_FILES) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
    return dir;
  } catch {
    return undefined;
  }
}
