/**
 * Every relative link and image in docs/ and the README resolves to a file of the repository
 * (issue 32, item 7: docs/leaderboard.md's images pointed to docs/docs/...).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../kit/cli.ts';

/** Markdown links and images `[text](target)` / `![alt](target "title")`, and HTML `src`/`href`. */
function targets(md: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  // Code is not a link: fenced blocks and inline code are blanked first (lines kept).
  const text = md
    .replace(/```[\s\S]*?```/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (m) => ' '.repeat(m.length));
  const lineOf = (i: number) => text.slice(0, i).split('\n').length;
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    out.push({ target: m[1], line: lineOf(m.index ?? 0) });
  for (const m of text.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g))
    out.push({ target: m[1], line: lineOf(m.index ?? 0) });
  return out;
}

function docs(): string[] {
  const dir = join(ROOT, 'docs');
  return [
    join(ROOT, 'README.md'),
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(dir, f)),
  ];
}

test('every relative link and image in docs/ and README.md resolves', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of docs()) {
    for (const { target, line } of targets(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue; // a URL or an anchor
      const path = decodeURIComponent(target.split('#')[0].split('?')[0]);
      checked++;
      const full = resolve(dirname(file), path);
      if (!existsSync(full))
        broken.push(`${relative(ROOT, file)}:${line}: ${target} (no ${relative(ROOT, full)})`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked >= 20, `only ${checked} relative links found: the parser reads none?`);
});

test('the parser finds links and images, and not code', () => {
  const got = targets(
    'See [a](x.md#y) and ![img](pic.png "t").\n`[no](code.md)`\n```\n[no](fence.md)\n```\n<img src="b.png">',
  );
  assert.deepEqual(
    got.map((t) => [t.target, t.line]),
    [
      ['x.md#y', 1],
      ['pic.png', 1],
      ['b.png', 6],
    ],
  );
});
