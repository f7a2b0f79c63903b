/**
 * Whether dist/ (what `npm run build` writes) is as new as the sources: built after the last
 * change to any TypeScript file under src/, metrics/, sources/ and judges/. `bin/sob.js` runs
 * dist/ only then, and the tests' kit rebuilds when it is not, so nothing runs stale JavaScript.
 */
import { readdirSync, statSync } from 'node:fs';

export const SOURCE_DIRS = ['src', 'metrics', 'sources', 'judges'];

/** `root`: the package's folder, as a file URL ending in `/`. */
export function builtIsFresh(root) {
  let stamp;
  try {
    stamp = statSync(new URL('dist/.stamp', root)).mtimeMs;
  } catch {
    return false;
  }
  const pending = SOURCE_DIRS.map((d) => new URL(`${d}/`, root));
  while (pending.length > 0) {
    const dir = pending.pop();
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.isDirectory()) pending.push(new URL(`${e.name}/`, dir));
      else if (e.name.endsWith('.ts') && statSync(new URL(e.name, dir)).mtimeMs > stamp) return false;
    }
  }
  return true;
}
