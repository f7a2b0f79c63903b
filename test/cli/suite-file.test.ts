/**
 * `sob eval --config sob.yaml` (docs/ci.md "A suite file"): two models and two prompts give four
 * rows, a gate its exit code, and the same leaderboard as the equivalent flags; the same keys in
 * JSON; flags win over the file; a model's own options reach the server; a typo'd key, a bad
 * value and a bad file are refused in one line naming the file, line and key, before any
 * request. The schema shipped in schemas/ accepts the files and names the same keys as the
 * reader. The real `sob` against the local server speaking OpenAI's wire protocol.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildProgram } from '../../src/cli/main.ts';
import { suiteKeys } from '../../src/cli/suite-file.ts';
import { type ProtocolServer, ROOT, sobIn, startProtocolServer, tempDir } from '../kit/index.ts';

let server: ProtocolServer;
const dir = tempDir('sob-suite-');
const IDS = ['s1', 's2', 's3', 's4'];
const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, year: { type: 'integer' } },
  required: ['name', 'year'],
};
const truth = (i: number) => ({ name: `item ${i}`, year: 1990 + i });

before(async () => {
  // Names right unless the prompt asks for capitals (p2); years right unless the model is m-b.
  server = await startProtocolServer({
    answer: (r) => {
      const i = IDS.indexOf(r.key ?? '');
      const t = truth(i);
      return JSON.stringify({
        name: r.userText.includes('CAPITALS') ? t.name.toUpperCase() : t.name,
        year: r.model === 'm-b' ? t.year + 1 : t.year,
      });
    },
  });
  writeFileSync(
    join(dir, 'bench.jsonl'),
    IDS.map((id, i) =>
      JSON.stringify({
        metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
        input: {
          context: `[rid:${id}] ${truth(i).name} was made in ${truth(i).year}.`,
          question: 'Name and year?',
          json_schema: SCHEMA,
        },
        output: { ground_truth: truth(i) },
      }),
    ).join('\n'),
  );
  const tpl = (extra: string) =>
    `Context:\n{{context}}\n\nQuestion: {{question}}\nSchema: {{schema}}\n${extra}Answer with JSON only.\n`;
  writeFileSync(join(dir, 'p1.txt'), tpl(''));
  writeFileSync(join(dir, 'p2.txt'), tpl('Answer in CAPITALS.\n'));
  writeFileSync(join(dir, 'sob.yaml'), suiteYaml('suite-eval'));
});
after(() => server.close());

function suiteYaml(evalDir: string, extra = ''): string {
  return `# yaml-language-server: $schema=${join(ROOT, 'schemas/sob-config.schema.json')}
benchmark: bench.jsonl
eval_dir: ${evalDir}
base_url: ${server.openaiBaseUrl}
models:
  - openai:m-a
  - openai:m-b
prompts:
  - p1.txt
  - p2.txt
bootstrap_samples: 50
report: false
gates:
  fail_under:
    value_accuracy: 0.9
${extra}`;
}

const sob = (args: string[], cwd = dir) =>
  sobIn(args, { cwd, env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: '' } });
const board = (evalDir: string) =>
  JSON.parse(readFileSync(join(dir, evalDir, 'leaderboard.json'), 'utf8')) as Record<string, unknown>[];
/** A leaderboard without what only timing makes (latencies, tokens): the figures and names. */
const figures = (rows: Record<string, unknown>[]) => rows.map(({ usage: _, ...rest }) => rest);
const gateLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('gate failed:'));

test('a suite file with two models, two prompts and a gate: four rows, exit 3, one line per failed gate', async () => {
  const from = server.total;
  const r = await sob(['eval', '--config', 'sob.yaml']);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(server.total - from, 16, 'four records for each of four rows');
  const rows = board('suite-eval');
  assert.deepEqual(
    rows.map((x) => [x.model, x.display_name, x.prompt, x.value_accuracy]),
    [
      ['openai_m-a+p1', 'openai:m-a · p1', 'p1.txt', 1],
      ['openai_m-a+p2', 'openai:m-a · p2', 'p2.txt', 0.5],
      ['openai_m-b+p1', 'openai:m-b · p1', 'p1.txt', 0.5],
      ['openai_m-b+p2', 'openai:m-b · p2', 'p2.txt', 0],
    ],
  );
  // Each gate line names the row by its folder (unique, and what the run directory is called).
  assert.deepEqual(gateLines(r.stderr), [
    'gate failed: openai_m-a+p2: value_accuracy 0.500 < 0.9',
    'gate failed: openai_m-b+p1: value_accuracy 0.500 < 0.9',
    'gate failed: openai_m-b+p2: value_accuracy 0.000 < 0.9',
  ]);
  for (const f of ['openai_m-a+p1', 'openai_m-b+p2'])
    assert.ok(existsSync(join(dir, 'suite-eval/runs', f, 'responses.jsonl')), f);
});

test('the equivalent flags give the same leaderboard and the same exit code', async () => {
  const r = await sob([
    'eval',
    '--benchmark',
    'bench.jsonl',
    '--eval-dir',
    'flags-eval',
    '--base-url',
    server.openaiBaseUrl,
    '--model',
    'openai:m-a',
    '--model',
    'openai:m-b',
    '--prompt-template',
    'p1.txt',
    '--prompt-template',
    'p2.txt',
    '--bootstrap-samples',
    '50',
    '--no-report',
    '--fail-under',
    'value_accuracy=0.9',
  ]);
  assert.equal(r.code, 3, r.stderr);
  assert.deepEqual(figures(board('flags-eval')), figures(board('suite-eval')));
  assert.equal(gateLines(r.stderr).length, 3);
});

test('the same keys in JSON, on the same eval directory: resumed, nothing asked, the same rows', async () => {
  writeFileSync(
    join(dir, 'sob.json'),
    JSON.stringify({
      benchmark: 'bench.jsonl',
      eval_dir: 'suite-eval',
      base_url: server.openaiBaseUrl,
      models: ['openai:m-a', 'openai:m-b'],
      prompts: ['p1.txt', 'p2.txt'],
      bootstrap_samples: 50,
      report: false,
      gates: { fail_under: ['value_accuracy=0.9'] },
    }),
  );
  const before = board('suite-eval');
  const total = server.total;
  const r = await sob(['eval', '--config', 'sob.json']);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(server.total, total);
  assert.deepEqual(figures(board('suite-eval')), figures(before));
});

test('flags win over the file: --model replaces models, --fail-under the gates, --eval-dir the folder', async () => {
  const r = await sob([
    'eval',
    '--config',
    'sob.yaml',
    '--model',
    'openai:m-a',
    '--fail-under',
    'value_accuracy=0.4',
    '--eval-dir',
    'override-eval',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    board('override-eval').map((x) => x.model),
    ['openai_m-a+p1', 'openai_m-a+p2'],
  );
  assert.ok(!existsSync(join(dir, 'override-eval/runs/openai_m-b+p1')));
});

test("a model's own options reach its requests: temperature, max_tokens and the name of its row", async () => {
  writeFileSync(
    join(dir, 'own.yaml'),
    `benchmark: bench.jsonl
eval_dir: own-eval
base_url: ${server.openaiBaseUrl}
temperature: 0.1
report: false
bootstrap_samples: 10
models:
  - openai:m-a
  - model: openai:m-b
    name: hot-b
    temperature: 0.7
    max_tokens: 99
`,
  );
  const from = server.requests.length;
  const r = await sob(['eval', '--config', 'own.yaml']);
  assert.equal(r.code, 0, r.stderr);
  const seen = server.requests.slice(from);
  const of = (m: string) => seen.filter((s) => s.model === m).map((s) => s.body);
  assert.equal(of('m-a').length, 4);
  assert.ok(of('m-a').every((b) => b.temperature === 0.1));
  assert.ok(of('m-b').every((b) => b.temperature === 0.7 && b.max_tokens === 99));
  assert.deepEqual(
    board('own-eval').map((x) => [x.model, x.display_name]),
    [
      ['openai_m-a', 'openai_m-a'],
      ['hot-b', 'hot-b'],
    ],
  );
});

test('a typo, a bad value, a bad file: one line naming the file, line and key, exit 2, nothing asked', async () => {
  const cases: [string, string, RegExp][] = [
    [
      'epoch.yaml',
      suiteYaml('bad-eval', 'epoch: 2\n'),
      /^sob: epoch\.yaml:16: unknown key "epoch"; did you mean "epochs"\?$/,
    ],
    [
      'temp.yaml',
      suiteYaml('bad-eval').replace('  - openai:m-b\n', '  - model: openai:m-b\n    temprature: 0.5\n'),
      /^sob: temp\.yaml:8: unknown key "temprature" in a models entry; did you mean "temperature"\?$/,
    ],
    [
      'model.yaml',
      'model: openai:m-a\n',
      /^sob: model\.yaml:1: unknown key "model"; did you mean "models"\?$/,
    ],
    [
      'gate.yaml',
      'gates:\n  fail_undr: value_accuracy=0.9\n',
      /^sob: gate\.yaml:2: unknown key "fail_undr" in gates; did you mean "fail_under"\?$/,
    ],
    [
      'zero.yaml',
      suiteYaml('bad-eval', 'epochs: 0\n'),
      /^sob: zero\.yaml:16: epochs: --epochs must be an integer >= 1$/,
    ],
    ['list.yaml', 'epochs: [1, 2]\n', /^sob: list\.yaml:1: epochs takes one value, not a list$/],
    ['poll.yaml', 'batch_poll_ms: 5\n', /^sob: poll\.yaml: batch_poll_ms only applies with batch: true$/],
    ['broken.yaml', 'models: [openai:m-a\nepochs: 2\n', /^sob: broken\.yaml:2: not valid YAML or JSON \(/],
  ];
  const total = server.total;
  for (const [name, text, want] of cases) {
    writeFileSync(join(dir, name), text);
    const r = await sob(['eval', '--config', name]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${name}: one line: ${r.stderr}`);
    assert.match(lines[0], want);
  }
  assert.equal(server.total, total, 'no request');
  assert.ok(!existsSync(join(dir, 'bad-eval')), 'no eval directory made');
});

test('the shipped schema accepts the suite files, refuses the typo, and names exactly the keys the reader takes', async () => {
  const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/sob-config.schema.json'), 'utf8'));
  const Ajv = createRequire(import.meta.url)('ajv') as typeof import('ajv').default;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const { parse } = await import('yaml');
  for (const f of ['sob.yaml', 'sob.json', 'own.yaml'])
    assert.ok(
      validate(parse(readFileSync(join(dir, f), 'utf8'))),
      `${f}: ${JSON.stringify(validate.errors)}`,
    );
  assert.equal(validate(parse(suiteYaml('x', 'epoch: 2\n'))), false);
  const cmd = (await buildProgram()).commands.find((c) => c.name() === 'eval')!;
  assert.deepEqual(Object.keys(schema.properties).sort(), suiteKeys(cmd).sort());
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  // Shipped: no `files` list leaves it out (or it lists schemas/).
  assert.ok(!pkg.files || pkg.files.some((f: string) => f.startsWith('schemas')));
});
