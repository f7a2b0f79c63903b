/**
 * The floors (docs/architecture.md "The floors"): every import of every module under src/,
 * sources/, judges/ and metrics/ is read (static, type-only, re-exports and `import()` alike) and
 * checked against what its floor may import; the product's import graph has no cycle; bench/
 * imports nothing of test/ but test/kit/. The checker itself is tested on a small tree first, so a
 * green run on the repository means "no violation", not "nothing read".
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { ROOT } from './kit/cli.ts';
import { tempDir } from './kit/temp.ts';

/** A part of the house: a folder (or src/lib.ts), matched by the longest prefix. */
const PARTS = [
  'src/core',
  'metrics',
  'sources',
  'src/providers',
  'judges',
  'src/runner',
  'src/report',
  'src/scoring',
  'src/app',
  'src/cli',
  'src/lib.ts',
] as const;
type Part = (typeof PARTS)[number];

/** What each part may import besides itself (docs/architecture.md draws this table as floors). */
const MAY_IMPORT: Record<Part, readonly Part[]> = {
  // floor 0
  'src/core': [],
  // floor 1
  metrics: ['src/core'],
  sources: ['src/core'],
  'src/providers': ['src/core'],
  // floor 2
  judges: ['src/core', 'src/providers'],
  'src/runner': ['src/core', 'src/providers'],
  'src/report': ['src/core', 'metrics'],
  // floor 3: the application layer for scoring (the metrics over files, and the LLM matcher that
  // asks a provider with the runner's backoff)
  'src/scoring': ['src/core', 'metrics', 'src/providers', 'src/runner'],
  // floor 4: the use cases (one function per command), the commands and the library API;
  // nothing imports src/cli, and nothing but src/cli and src/lib.ts imports src/app
  'src/app': [
    'src/core',
    'metrics',
    'sources',
    'src/providers',
    'judges',
    'src/runner',
    'src/report',
    'src/scoring',
  ],
  'src/cli': [
    'src/core',
    'metrics',
    'sources',
    'src/providers',
    'judges',
    'src/runner',
    'src/report',
    'src/scoring',
    'src/app',
  ],
  'src/lib.ts': [
    'src/core',
    'metrics',
    'sources',
    'src/providers',
    'judges',
    'src/runner',
    'src/report',
    'src/scoring',
    'src/app',
  ],
};

/**
 * Imports allowed against the table, each with its reason. Empty: every crossing found was fixed
 * by moving code. An entry here is a debt to pay, not a rule.
 */
const ALLOWED: ReadonlyArray<{ from: string; to: string; why: string }> = [];

const PRODUCT = ['src', 'sources', 'judges', 'metrics'];
const MODULE = /\.(ts|mts|mjs)$/;

interface Edge {
  from: string;
  to: string;
  line: number;
}

function modulesUnder(root: string, folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (MODULE.test(e.name) && !e.name.endsWith('.d.ts'))
        out.push(relative(root, p).split(sep).join('/'));
    }
  };
  walk(join(root, folder));
  return out.sort();
}

/** Every relative import of each module (repo-relative paths, `/`-separated), with its line. */
function importGraph(root: string, folders: string[]): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  for (const folder of folders) {
    for (const file of modulesUnder(root, folder)) {
      const text = readFileSync(join(root, file), 'utf8');
      // preProcessFile lists static imports (type-only too), `export ... from`, `import()` and
      // `require()` of string literals.
      const info = ts.preProcessFile(text, true, true);
      const edges: Edge[] = [];
      for (const ref of info.importedFiles) {
        if (!ref.fileName.startsWith('.')) continue;
        const to = posix.normalize(posix.join(posix.dirname(file), ref.fileName));
        const line = text.slice(0, ref.pos).split('\n').length;
        edges.push({ from: file, to, line });
      }
      graph.set(file, edges);
    }
  }
  return graph;
}

function partOf(file: string): Part | undefined {
  let best: Part | undefined;
  for (const p of PARTS) {
    if ((file === p || file.startsWith(`${p}/`)) && (!best || p.length > best.length)) best = p;
  }
  return best;
}

/** One line per import that crosses the table: `file:line imports target (part may import ...)`. */
function floorViolations(graph: Map<string, Edge[]>): string[] {
  const out: string[] = [];
  for (const edges of graph.values()) {
    for (const e of edges) {
      const a = partOf(e.from);
      const b = partOf(e.to);
      if (!a || !b || a === b) continue;
      if (MAY_IMPORT[a].includes(b)) continue;
      if (ALLOWED.some((x) => x.from === e.from && x.to === e.to)) continue;
      const may = MAY_IMPORT[a].length ? MAY_IMPORT[a].join(', ') : 'packages only';
      out.push(`${e.from}:${e.line} imports ${e.to} (${a} may import ${may})`);
    }
  }
  return out;
}

/** The import cycles: each strongly connected set of two or more modules, sorted (Tarjan). */
function importCycles(graph: Map<string, Edge[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { to: w } of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1 || (graph.get(v) ?? []).some((e) => e.to === v)) cycles.push(set.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** bench/'s imports of test/ outside test/kit/. */
function benchReachesIntoTests(graph: Map<string, Edge[]>): string[] {
  const out: string[] = [];
  for (const [file, edges] of graph) {
    if (!file.startsWith('bench/')) continue;
    for (const e of edges) {
      if (e.to.startsWith('test/') && !e.to.startsWith('test/kit/'))
        out.push(`${e.from}:${e.line} imports ${e.to}`);
    }
  }
  return out;
}

function write(root: string, file: string, text: string) {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

test('the checker on a small tree: finds 3 floor crossings, 2 cycles and 1 bench import of test/, with their lines', () => {
  const root = tempDir();
  write(root, 'src/core/a.ts', "import { b } from './b.ts';\nexport const a = 1;\n");
  write(root, 'src/core/b.ts', "import type { A } from './a.ts';\nexport const b = 2;\n");
  // metrics may import src/core, not src/runner; the type-only import and import() count too.
  write(
    root,
    'metrics/m.ts',
    "import { a } from '../src/core/a.ts';\nimport type { R } from '../src/runner/r.ts';\nexport async function f() {\n  return import('../src/scoring/s.ts');\n}\n",
  );
  write(root, 'src/runner/r.ts', "export type R = 1;\nexport { x } from '../cli/c.ts';\n");
  write(root, 'src/scoring/s.ts', "import { y } from './t.ts';\nexport const s = 1;\n");
  write(root, 'src/scoring/t.ts', "import { s } from './s.ts';\nexport const y = 1;\n");
  write(root, 'src/cli/c.ts', "import { s } from '../scoring/s.ts';\nexport const x = 1;\n");
  write(
    root,
    'bench/x.ts',
    "import { k } from '../test/kit/index.ts';\nimport { h } from '../test/helpers/h.ts';\n",
  );
  const graph = importGraph(root, [...PRODUCT, 'bench']);
  assert.equal(graph.size, 8);
  assert.deepEqual(floorViolations(graph).sort(), [
    'metrics/m.ts:2 imports src/runner/r.ts (metrics may import src/core)',
    'metrics/m.ts:4 imports src/scoring/s.ts (metrics may import src/core)',
    'src/runner/r.ts:2 imports src/cli/c.ts (src/runner may import src/core, src/providers)',
  ]);
  assert.deepEqual(importCycles(graph).sort(), [
    ['src/core/a.ts', 'src/core/b.ts'],
    ['src/scoring/s.ts', 'src/scoring/t.ts'],
  ]);
  assert.deepEqual(benchReachesIntoTests(graph), ['bench/x.ts:2 imports test/helpers/h.ts']);
});

test('no lower floor imports a higher one in src/, sources/, judges/, metrics/ (and nothing imports src/cli)', () => {
  const graph = importGraph(ROOT, PRODUCT);
  // Sanity: the whole product was read (about 160 modules today).
  assert.ok(graph.size > 120, `only ${graph.size} modules read`);
  for (const part of PARTS) {
    assert.ok(
      [...graph.keys()].some((f) => partOf(f) === part),
      `no module found for ${part}`,
    );
  }
  const bad = floorViolations(graph);
  assert.deepEqual(bad, [], `imports against the floors:\n${bad.join('\n')}`);
});

test('the product has no import cycle', () => {
  const cycles = importCycles(importGraph(ROOT, PRODUCT));
  assert.deepEqual(
    cycles,
    [],
    `import cycles (the modules of each):\n${cycles.map((c) => c.join(', ')).join('\n')}`,
  );
});

test('bench/ imports nothing of test/ but test/kit/', () => {
  const graph = importGraph(ROOT, ['bench']);
  assert.ok(graph.size > 10, `only ${graph.size} bench modules read`);
  const bad = benchReachesIntoTests(graph);
  assert.deepEqual(bad, [], `bench/ reaching into test/:\n${bad.join('\n')}`);
});

test("docs/architecture.md's table of what may import what is the one this test enforces", () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('\n');
  const start = doc.indexOf('| part | may import |');
  assert.ok(start >= 0, 'docs/architecture.md has no "| part | may import |" table');
  const fromDoc = new Map<string, string[]>();
  for (const line of doc.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [parts, allowed] = line
      .split('|')
      .slice(1, 3)
      .map((c) => [...c.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/\/$/, '')));
    const everything = line.includes('everything above');
    for (const p of parts) {
      fromDoc.set(p, everything ? PARTS.filter((x) => x !== 'src/cli' && x !== 'src/lib.ts') : allowed);
    }
  }
  assert.deepEqual(
    [...fromDoc.keys()].sort(),
    [...PARTS].sort(),
    'every part of the house has one row in the docs table',
  );
  for (const p of PARTS)
    assert.deepEqual([...fromDoc.get(p)!].sort(), [...MAY_IMPORT[p]].sort(), `the row of ${p}`);
});
