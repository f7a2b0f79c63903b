#!/usr/bin/env node
// The `sob` command. It runs the JavaScript that the build (`npm ci`, `npm run build`) wrote into
// dist/, while no source file is newer than that build; otherwise (a source edited since, or no
// build at all) it runs the TypeScript sources through tsx: slower to start, never stale.
// SOB_FROM_SOURCE=1 forces the sources.
import { readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // What commander prints for --version, without loading it.
  process.stdout.write(`${JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).version}\n`);
  process.exit(0);
}

const { builtIsFresh } = await import('../scripts/dist-fresh.mjs');
let main;
if (process.env.SOB_FROM_SOURCE !== '1' && builtIsFresh(root)) {
  ({ main } = await import('../dist/src/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
await main(process.argv);
