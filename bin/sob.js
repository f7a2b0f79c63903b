#!/usr/bin/env node
// The `sob` command: TypeScript sources run through tsx, no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
