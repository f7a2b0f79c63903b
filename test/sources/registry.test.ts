/**
 * issue 11 item 1 (the loader refactor): every source kind is one file behind one interface,
 * found through one registry; no loader imports the build (the build imports them), and
 * `sob build --help` lists the kinds from that registry.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkBuildRequest, LOADER_KINDS, LOADERS, loadLoader } from '../../sources/registry.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The relative imports of a TypeScript file (static and dynamic). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
}

describe('source loaders: one interface, one registry', () => {
  test('every registered kind loads an object implementing the Loader interface', async () => {
    assert.ok(LOADER_KINDS.length >= 4);
    for (const entry of LOADERS) {
      const loader = await loadLoader(entry);
      if (loader.produces === 'items') {
        assert.equal(entry.annotations, true, `${entry.kind}: item loaders take annotations`);
        assert.equal(typeof loader.loadItems, 'function');
        assert.match(loader.source, /^(text|image|audio)$/);
      } else {
        assert.equal(loader.produces, 'records', entry.kind);
        assert.equal(entry.annotations, false, `${entry.kind}: record loaders need no annotations`);
        assert.equal(typeof loader.loadRecords, 'function');
        assert.match(loader.checks, /^(extraction|probe|compliance|records)$/);
      }
    }
  });

  test('no loader file imports sources/build.ts (the build depends on loaders, not the reverse)', () => {
    const files = new Set(LOADERS.map((e) => e.file));
    assert.equal(files.size, LOADERS.length, 'one file per kind');
    for (const f of [...files, 'types.ts', 'annotations.ts', 'registry.ts', 'checks.ts', 'manifest.ts']) {
      const imports = relativeImports(join(ROOT, 'sources', f));
      assert.ok(!imports.includes('./build.ts'), `${f} imports ./build.ts`);
    }
  });

  test('a request is checked against its kind: input and annotations, exit 2 with one line', () => {
    assert.throws(
      () => checkBuildRequest('wiki', 'x', undefined),
      /unknown source kind "wiki": use one of hotpotqa, /,
    );
    assert.throws(
      () => checkBuildRequest('ami', undefined, 'a.jsonl'),
      /ami needs an <input>: an NXT corpus folder/,
    );
    assert.throws(() => checkBuildRequest('sob', 'r.jsonl', 'a.jsonl'), /sob records need no --annotations/);
    assert.equal(checkBuildRequest('hotpotqa', 'p.json', 'a.jsonl').kind, 'hotpotqa');
  });

  test('sob build --help lists every kind with its input and source', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), 'build', '--help'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0);
    const kinds = /\nKinds:\n([\s\S]*?)\n\n/.exec(r.stdout)![1];
    for (const entry of LOADERS) {
      assert.match(
        kinds,
        new RegExp(`^  ${entry.kind} +${entry.summary.replace(/[()[\]+.*?]/g, '\\$&')}$`, 'm'),
      );
    }
    assert.equal(kinds.split('\n').length, 2 * LOADERS.length);
  });
});
