/**
 * Whether dist/ (what `npm run build` writes) is as new as the sources: built after the last
 * change to any TypeScript file under src/, metrics/, sources/ and judges/. `bin/sob.js` runs
 * dist/ only then, and the tests' kit rebuilds when it is not, so nothing runs stale JavaScript.
 */
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SOURCE_DIRS = ['src', 'metrics', 'sources', 'judges'];

/** `root`: the package's folder, as a file URL ending in `/`. Paths as strings: ~2x faster than URLs. */
export function builtIsFresh(root) {
  const base = fileURLToPath(root);
  let stamp;
  try {
    stamp = statSync(`${base}dist/.stamp`).mtimeMs;
  } catch {
    return false;
  }
  const pending = SOURCE_DIRS.map((d) => `${base}${d}`);
  while (pending.length > 0) {
    const dir = pending.pop();
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.isDirectory()) pending.push(`${dir}/${e.name}`);
      else if (e.name.endsWith('.ts') && statSync(`${dir}/${e.name}`).mtimeMs > stamp) return false;
    }
  }
  return true;
}
