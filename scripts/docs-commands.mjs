#!/usr/bin/env node
/**
 * docs/commands.md, the command reference, made from `sob --help` and each command's `--help`
 * (the built `sob`, in a pipe: 80 columns). `npm run docs:commands` writes it; `--check` exits 1
 * when the file differs from what the commands print now (test/cli/docs-commands.test.ts runs it).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const FILE = join(ROOT, 'docs/commands.md');

function help(args) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), ...args, '--help'], {
    encoding: 'utf8',
    env: { ...process.env, COLUMNS: '80' },
  });
  if (r.status !== 0) throw new Error(`sob ${args.join(' ')} --help exited ${r.status}: ${r.stderr}`);
  return r.stdout.trimEnd();
}

export function commandsDoc() {
  const commands = JSON.parse(readFileSync(join(ROOT, 'dist/commands.json'), 'utf8'));
  const parts = [
    '# Command reference',
    '',
    "<!-- Made by `npm run docs:commands` from the commands' own `--help`; do not edit by hand:",
    '     a test fails when this file and the commands differ. -->',
    '',
    'Every command: exit 0 on success, 1 on a failure (one line on stderr; `--debug` adds the stack',
    'trace), 2 on a usage error, 130 after Ctrl-C or SIGTERM (`run`, `eval` and `judge` stop cleanly',
    'and resume when run again; a second Ctrl-C quits at once). Progress goes to stderr, results to',
    'stdout or files.',
    '',
    ...commands.map((c) => `- [\`sob ${c.term}\`](#sob-${c.name}): ${c.description}`),
    '',
    '## sob',
    '',
    '```text',
    help([]),
    '```',
  ];
  for (const c of commands) parts.push('', `## sob ${c.name}`, '', '```text', help([c.name]), '```');
  return `${parts.join('\n')}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const doc = commandsDoc();
  if (process.argv.includes('--check')) {
    let now = '';
    try {
      now = readFileSync(FILE, 'utf8');
    } catch {}
    if (now !== doc) {
      process.stderr.write(
        "docs/commands.md differs from the commands' --help: run `npm run docs:commands`\n",
      );
      process.exit(1);
    }
  } else {
    writeFileSync(FILE, doc);
    process.stderr.write(`wrote ${FILE}\n`);
  }
}
