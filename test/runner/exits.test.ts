/**
 * Every long command shows progress; every failure exits non-zero (issue 9, item 10): the
 * runner's progress line in `sob eval` and `sob judge`; an empty benchmark, judge/author where
 * every item failed and a run with zero answers exit 1 with one line; Ctrl-C exits 130; `npx
 * sob` prints no npm warning about the project's configuration.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { exampleRecords, ROOT, readLines, sob, until, writeBenchmark } from './sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
const JUDGE_OK = JSON.stringify({
  accuracy: 90,
  grounding: 90,
  schema_quality: 90,
  needs_multiple_turns: null,
  rationale: 'ok',
});
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });
let records: string;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-exits-'));
  server = await startProtocolServer({ script: (r) => script(r) });
  records = join(tmp, 'records.jsonl');
  await exampleRecords(records);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-exits' };
const lastLine = (s: string) => s.trim().split('\n').at(-1) ?? '';

function evalArgs(bench: string, dir: string, extra: string[] = []): string[] {
  return [
    'eval',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--eval-dir',
    dir,
    '--bootstrap-samples',
    '10',
    '--no-report',
    ...extra,
  ];
}

function judgeArgs(input: string, out: string, extra: string[] = []): string[] {
  return [
    'judge',
    input,
    '--judge',
    'openai:judge',
    '--base-url',
    server.openaiBaseUrl,
    '--out',
    out,
    '--retry-base-ms',
    '5',
    ...extra,
  ];
}

test('sob eval and sob judge show the progress line while a model runs', async () => {
  script = (r) => ({
    kind: 'answer',
    delayMs: 60,
    text: r.model === 'judge' ? JUDGE_OK : JSON.stringify({ id: r.key }),
  });
  const ids = Array.from({ length: 24 }, (_, i) => `p${i}`);
  const ev = await sob(
    evalArgs(writeBenchmark(join(tmp, 'p.jsonl'), ids), join(tmp, 'eval-p'), [
      '--concurrency',
      '2',
      '--progress-interval-ms',
      '100',
    ]),
    { cwd: tmp, env },
  ).done;
  assert.equal(ev.code, 0, ev.stderr);
  const evLines = ev.stderr.split('\n').filter((l) => /^openai:m: \d+\/24 \(/.test(l));
  const evDone = new Set(evLines.map((l) => Number(/^openai:m: (\d+)\//.exec(l)![1])));
  assert.ok(evDone.size >= 3, `progress lines: ${evLines.join(' | ')}`);
  assert.ok(evDone.has(24));
  assert.match(evLines[0], /rec\/s {2}ETA \S+ {2}errors 0/);

  const jd = await sob(
    judgeArgs(records, join(tmp, 'judged-p'), ['--progress-interval-ms', '100', '--concurrency', '1']),
    {
      cwd: tmp,
      env,
    },
  ).done;
  assert.equal(jd.code, 0, jd.stderr);
  const n = readLines(records).length;
  const jdLines = jd.stderr.split('\n').filter((l) => new RegExp(`^judgments: \\d+/${n} \\(`).test(l));
  assert.ok(jdLines.length >= 2, jd.stderr);
  assert.match(jdLines.at(-1)!, new RegExp(`^judgments: ${n}/${n} \\(100\\.0%\\)`));
});

test('an empty benchmark: sob run, sob eval, sob judge and sob author exit 1 with one line', async () => {
  const empty = join(tmp, 'empty.jsonl');
  writeFileSync(empty, '');
  const cases: [string[], RegExp][] = [
    [
      ['run', '--model', 'baseline:gold', '--benchmark', empty, '--run-dir', join(tmp, 'empty-run')],
      /^sob: .*empty\.jsonl: no records to run/,
    ],
    [evalArgs(empty, join(tmp, 'empty-eval')), /^sob: .*empty\.jsonl: no records to run/],
    [judgeArgs(empty, join(tmp, 'empty-judged')), /^sob: .*empty\.jsonl: no records to judge/],
    [
      [
        'author',
        empty,
        '--model',
        'openai:author',
        '--base-url',
        server.openaiBaseUrl,
        '--out',
        join(tmp, 'd.jsonl'),
      ],
      /^sob: .*empty\.jsonl: no items to draft/,
    ],
  ];
  for (const [args, line] of cases) {
    const res = await sob(args, { cwd: tmp, env }).done;
    assert.equal(res.code, 1, `${args[0]}: ${res.stderr}`);
    assert.match(lastLine(res.stderr), line);
    assert.equal(res.stderr.split('\n').filter((l) => l.startsWith('sob: ')).length, 1, res.stderr);
  }
});

test('judge where every judgment failed, author where every item failed: exit 1 with one line', async () => {
  script = () => ({ kind: 'status', status: 400, message: 'scripted refusal' });
  const jd = await sob(judgeArgs(records, join(tmp, 'judged-fail'), ['--max-attempts', '1']), {
    cwd: tmp,
    env,
  }).done;
  assert.equal(jd.code, 1, jd.stderr);
  assert.match(
    lastLine(jd.stderr),
    /^sob: every record judged failed: \d+ judge errors \(see .*rejected\.jsonl/,
  );

  const items = join(tmp, 'items.jsonl');
  writeFileSync(
    items,
    `${JSON.stringify({ id: 'i1', context: 'c' })}\n${JSON.stringify({ id: 'i2', context: 'c' })}\n`,
  );
  const au = await sob(
    [
      'author',
      items,
      '--model',
      'openai:author',
      '--base-url',
      server.openaiBaseUrl,
      '--out',
      join(tmp, 'drafts.jsonl'),
      '--max-attempts',
      '1',
      '--retry-base-ms',
      '5',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(au.code, 1, au.stderr);
  assert.match(lastLine(au.stderr), /^sob: every item failed: 2 rejected \(see .*drafts\.rejected\.jsonl\)/);
});

test('sob eval where the model answers nothing: exit 1 with one line, nothing scored', async () => {
  script = () => ({ kind: 'status', status: 400, message: 'bad request' });
  const dir = join(tmp, 'eval-zero');
  const res = await sob(evalArgs(writeBenchmark(join(tmp, 'z.jsonl'), ['z1', 'z2']), dir), { cwd: tmp, env })
    .done;
  assert.equal(res.code, 1, res.stderr);
  const sobLines = res.stderr.split('\n').filter((l) => l.startsWith('sob: '));
  assert.deepEqual(sobLines, [
    `sob: no model answered any record (openai:m); see errors.jsonl in ${join(dir, 'runs')}/<model>/`,
  ]);
});

test('Ctrl-C exits 130 in sob eval and sob judge, with a line saying how to resume', async () => {
  script = (r) => ({
    kind: 'answer',
    delayMs: 100,
    text: r.model === 'judge' ? JUDGE_OK : JSON.stringify({ id: r.key }),
  });
  const ids = Array.from({ length: 60 }, (_, i) => `c${i}`);
  const dir = join(tmp, 'eval-c');
  const ev = sob(evalArgs(writeBenchmark(join(tmp, 'c.jsonl'), ids), dir, ['--concurrency', '1']), {
    cwd: tmp,
    env,
  });
  await until(() => readLines(join(dir, 'runs/openai_m/responses.jsonl')).length >= 2, 30_000, 'answers');
  ev.child.kill('SIGINT');
  const er = await ev.done;
  assert.equal(er.code, 130, er.stderr);
  assert.match(lastLine(er.stderr), /interrupted: re-run the same command to resume/);

  const out = join(tmp, 'judged-c');
  const jd = sob(judgeArgs(records, out, ['--concurrency', '1']), { cwd: tmp, env });
  await until(() => readLines(join(out, 'judgments.jsonl')).length >= 1, 30_000, 'a judgment');
  jd.child.kill('SIGINT');
  const jr = await jd.done;
  assert.equal(jr.code, 130, jr.stderr);
  assert.match(lastLine(jr.stderr), /interrupted: re-run the same command to resume/);
});

test('npx sob prints no npm warning about the project configuration', () => {
  const r = spawnSync('npx', ['sob', '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '0.1.0');
  assert.doesNotMatch(r.stderr, /project config/i);
});
