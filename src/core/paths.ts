/**
 * Where the package's own files are, whether `sob` runs from the TypeScript sources
 * (`src/core/paths.ts`) or from the JavaScript that `npm run build` writes (`dist/src/core/paths.js`):
 * the built tree mirrors the sources one folder deeper, so paths to the package's data
 * (`package.json`, `sources/examples/`, `node_modules/.cache/`) go through `PACKAGE_ROOT`.
 */
import { resolve } from 'node:path';

/** True when this code is the built JavaScript under `dist/`. */
export const BUILT = import.meta.url.endsWith('.js');

/** The package's folder (the one holding `package.json`). */
export const PACKAGE_ROOT = resolve(import.meta.dirname, BUILT ? '../../..' : '../..');

/**
 * The module `rel` (named by its TypeScript source, `./x.ts`) next to the module at `base`, as it
 * is where `base` runs: `./x.js` when `base` is built JavaScript.
 */
export function moduleUrl(rel: string, base: string | URL): URL {
  const url = new URL(rel, base);
  if (String(base).endsWith('.js')) url.pathname = url.pathname.replace(/\.ts$/, '.js');
  return url;
}
