/**
 * `sob eval` as named steps (src/app/eval.ts, src/app/eval-plan.ts): no function of either over
 * 150 lines; the rows an eval makes (model x input mode x prompt), their folders and display
 * names, with text only and one prompt exactly the model's folder as before.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { loadPrompts, planVariants } from '../../src/app/eval-plan.ts';
import { ROOT } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

/** Every function of a file (declarations, and arrow functions and methods), with its line count. */
function functionLengths(file: string): [string, number][] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: [string, number][] = [];
  const line = (pos: number) => src.getLineAndCharacterOfPosition(pos).line;
  const visit = (n: ts.Node) => {
    if (ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n)) {
      const name =
        (n as ts.FunctionDeclaration).name?.getText(src) ?? `(anonymous at ${line(n.getStart()) + 1})`;
      out.push([name, line(n.getEnd()) - line(n.getStart()) + 1]);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test('evaluate is named steps: no function of src/app/eval.ts or eval-plan.ts over 150 lines', () => {
  for (const f of ['src/app/eval.ts', 'src/app/eval-plan.ts']) {
    const lengths = functionLengths(join(ROOT, f));
    assert.ok(lengths.length >= 3, f);
    const long = lengths.filter(([, n]) => n > 150);
    assert.deepEqual(long, [], `${f}: ${JSON.stringify(long)}`);
  }
  const names = functionLengths(join(ROOT, 'src/app/eval.ts')).map(([n]) => n);
  for (const step of ['evaluate', 'openBenchmark', 'askVariant', 'scoreRun', 'writeLeaderboards', 'finish'])
    assert.ok(names.includes(step), step);
});

test('rows: text only and one prompt keep the model folder and no display name; modes add @mode, prompts +name', () => {
  const one = loadPrompts([]);
  assert.deepEqual(
    planVariants([{ model: 'openai:gpt-x' }, { model: 'baseline:gold' }], [], one).map((v) => [
      v.folder,
      v.display,
      v.inputGiven,
    ]),
    [
      ['openai_gpt-x', undefined, false],
      ['baseline_gold', undefined, false],
    ],
  );
  const dir = tempDir();
  const tpl = (n: string) => {
    writeFileSync(join(dir, n), '{{context}} {{question}}');
    return join(dir, n);
  };
  const two = loadPrompts([undefined, tpl('terse.txt')]);
  assert.deepEqual(
    planVariants([{ model: 'openai:gpt-x' }], ['text', 'document'], two).map((v) => [v.folder, v.display]),
    [
      ['openai_gpt-x+default', 'openai:gpt-x · text · default'],
      ['openai_gpt-x+terse', 'openai:gpt-x · text · terse'],
      ['openai_gpt-x@document+default', 'openai:gpt-x · document · default'],
      ['openai_gpt-x@document+terse', 'openai:gpt-x · document · terse'],
    ],
  );
  // One non-text mode alone is still said.
  assert.deepEqual(
    planVariants([{ model: 'openai:gpt-x' }], ['both'], one).map((v) => [v.folder, v.display]),
    [['openai_gpt-x@both', 'openai:gpt-x · both']],
  );
  // A model's own modes over the eval's; the other model's text row then says text.
  assert.deepEqual(
    planVariants([{ model: 'openai:a', input: ['document'] }, { model: 'openai:b' }], ['text'], one).map(
      (v) => v.display,
    ),
    ['openai:a · document', 'openai:b · text'],
  );
});

test('rows that would share a folder, and prompts that would share a name, are refused (exit 2)', () => {
  assert.throws(
    () =>
      planVariants(
        [{ model: 'openai:a' }, { model: 'openai:a', ask: { temperature: 1 } }],
        [],
        loadPrompts([]),
      ),
    /openai:a and openai:a would share the row openai_a: give one of them its own name/,
  );
  const dir = tempDir();
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  for (const d of [a, b]) {
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'p.txt'), '{{context}}');
  }
  assert.throws(
    () => loadPrompts([join(a, 'p.txt'), join(b, 'p.txt')]),
    /two prompt templates would share the row name "p"/,
  );
});
