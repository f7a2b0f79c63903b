/**
 * `sob` starts like a CLI: the built JavaScript runs, `--version` and `--help` load no command
 * and no heavy package, what the lazy program prints is what the whole program prints, and the
 * scoring workers and the validator cache work from the built files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
// @ts-expect-error: a JavaScript module without types (scripts/ is plain Node).
import { builtIsFresh } from '../../scripts/dist-fresh.mjs';
import { BIN, ensureBuilt, ROOT, sobIn } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const HEAVY = [
  'openai',
  '@google/genai',
  '@huggingface/transformers',
  'tesseract.js',
  'pdfjs-dist',
  'ajv',
  'zod',
  'onnxruntime-node',
  'pdf-lib',
  'esbuild',
  'tsx',
];

/** `node bin/sob.js <args>` with every module it loads written down. */
function traced(args: string[], env: Record<string, string> = {}) {
  ensureBuilt();
  const trace = join(tempDir(), 'loads.txt');
  writeFileSync(trace, '');
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(ROOT, 'test/kit/load-trace.mjs')).href, BIN, ...args],
    { encoding: 'utf8', env: { ...process.env, ...env, SOB_LOAD_TRACE: trace } },
  );
  const loads = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  return { ...r, loads };
}

function heavyIn(loads: string[]): string[] {
  return loads.filter((l) => HEAVY.some((p) => l.includes(`/node_modules/${p}/`) || l === `require ${p}`));
}

describe('sob starts from the built JavaScript', () => {
  test('sob --help loads no command module and none of the heavy packages', () => {
    const r = traced(['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Commands:/);
    assert.ok(
      r.loads.some((l) => l.endsWith('/dist/src/cli/main.js')),
      'the built main.js ran',
    );
    assert.deepEqual(heavyIn(r.loads), []);
    const commands = r.loads.filter((l) => /\/src\/cli\/(?!main\.)[a-z-]+\.[jt]s$/.test(l));
    assert.deepEqual(commands, []);
  });

  test('sob --version loads nothing but itself and prints the package version', () => {
    const r = traced(['--version']);
    assert.equal(r.status, 0, r.stderr);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(r.stdout, `${pkg.version}\n`);
    assert.deepEqual(heavyIn(r.loads), []);
    assert.equal(r.loads.filter((l) => l.includes('/dist/')).length, 0);
  });

  test('sob score --help loads the score command only', () => {
    const r = traced(['score', '--help']);
    assert.equal(r.status, 0, r.stderr);
    const commands = r.loads
      .map((l) => l.match(/\/dist\/src\/cli\/([a-z-]+)\.js$/)?.[1])
      .filter((c): c is string => c !== undefined && c !== 'main' && c !== 'common');
    assert.ok(commands.includes('score'));
    for (const other of ['eval', 'run', 'ocr', 'judge', 'author', 'build', 'report'])
      assert.ok(!commands.includes(other), `${other} was loaded`);
  });

  test('the lazy --help, help and a mistyped command print what the whole program prints', async () => {
    ensureBuilt();
    for (const args of [['--help'], ['help'], ['scroe'], ['help', 'score'], ['leaderboard', '--help']]) {
      const built = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
      const whole = await sobIn(args); // the TypeScript program, every command loaded
      assert.equal(built.stdout, whole.stdout, `stdout of sob ${args.join(' ')}`);
      assert.equal(built.stderr, whole.stderr, `stderr of sob ${args.join(' ')}`);
      assert.equal(built.status, whole.code, `exit code of sob ${args.join(' ')}`);
    }
  });

  test('scoring workers and the validator cache run from the built files, scores equal to the sources', async () => {
    const dir = tempDir();
    const cache = join(dir, 'validators');
    const input = join(ROOT, 'examples/responses/response_example-model.jsonl');
    const r = traced(['score', input, '--out', join(dir, 'built'), '--bootstrap-samples', '50'], {
      SOB_VALIDATOR_CACHE: cache,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      r.loads.filter((l) => l.includes('/node_modules/tsx/')),
      [],
      'no TypeScript loader in a built run',
    );
    assert.ok(
      readdirSync(cache).some((f) => f.endsWith('.vc')),
      'compiled validators were cached',
    );
    const src = await sobIn(['score', input, '--out', join(dir, 'source'), '--bootstrap-samples', '50'], {
      env: { SOB_VALIDATOR_CACHE: 'off' },
    });
    assert.equal(src.code, 0, src.stderr);
    for (const m of ['text', 'image', 'audio']) {
      const read = (side: string) =>
        readFileSync(join(dir, side, m, 'example-model/eval_records.jsonl'), 'utf8');
      assert.equal(read('built'), read('source'), `${m} rows`);
    }
  });
});

describe('dist/ is used only while it is as new as the sources', () => {
  test('a source file newer than the build stamp makes it stale; an older one does not', () => {
    const root = tempDir();
    mkdirSync(join(root, 'dist'));
    mkdirSync(join(root, 'src/core'), { recursive: true });
    writeFileSync(join(root, 'dist/.stamp'), '');
    writeFileSync(join(root, 'src/core/a.ts'), '');
    const url = pathToFileURL(`${root}/`);
    utimesSync(join(root, 'dist/.stamp'), 2000, 2000);
    utimesSync(join(root, 'src/core/a.ts'), 1000, 1000);
    assert.equal(builtIsFresh(url), true);
    utimesSync(join(root, 'src/core/a.ts'), 3000, 3000);
    assert.equal(builtIsFresh(url), false);
    utimesSync(join(root, 'src/core/a.ts'), 1000, 1000);
    writeFileSync(join(root, 'src/core/b.md'), ''); // not a source
    assert.equal(builtIsFresh(url), true);
  });
});

describe('main(argv, io) runs a command in this process', () => {
  test('captures stdout, stderr and the exit code, and leaves process.exitCode alone', async () => {
    process.exitCode = undefined;
    const ok = await sobIn(['--version']);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.deepEqual(ok, { code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const bad = await sobIn(['leaderboard', join(tempDir(), 'missing')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^sob: .*missing/m);
    assert.equal(bad.stdout, '');
    const usage = await sobIn(['score', '--profile', 'nope', 'x.jsonl']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--profile/);
    assert.equal(process.exitCode, undefined);
  });
});
