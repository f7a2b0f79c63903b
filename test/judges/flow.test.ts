/**
 * The whole benchmark-building flow on the bundled example corpus, with scripted models on the
 * local OpenAI-protocol server: author (drafts, an invalid one asked again) -> build -> judge
 * (with the cross-check reviewer) -> sob eval on the accepted records.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadHotpotQA } from '../../sources/hotpotqa.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { sobIn } from '../kit/cli.ts';

const ROOT = join(import.meta.dirname, '../..');
const EX = join(ROOT, 'sources/examples/text');
const tmp = mkdtempSync(join(tmpdir(), 'sob-flow-'));
let server: ProtocolServer;

// What a good drafting model would write: the first hand annotation of each passage.
const annotations = new Map<string, { question: string; json_schema: unknown; ground_truth: unknown }>();
for (const l of readFileSync(join(EX, 'annotations.jsonl'), 'utf8').split('\n').filter(Boolean)) {
  const a = JSON.parse(l) as {
    source_id: string;
    question: string;
    json_schema: unknown;
    ground_truth: unknown;
  };
  if (!annotations.has(a.source_id)) annotations.set(a.source_id, a);
}

function script(r: SeenRequest): Outcome {
  const key = r.key ?? '';
  if (r.model === 'author') {
    const a = annotations.get(key)!;
    // The first draft for ex-text-002 has a ground truth that breaks its own schema.
    if (key === 'ex-text-002' && r.n === 1)
      return { kind: 'answer', text: JSON.stringify({ ...a, ground_truth: { wrong: true } }) };
    return {
      kind: 'answer',
      text: JSON.stringify({
        question: a.question,
        json_schema: a.json_schema,
        ground_truth: a.ground_truth,
      }),
    };
  }
  if (r.model === 'reviewer') {
    const issues = key.startsWith('ex-text-003')
      ? [{ kind: 'missing_field', path: 'note', reason: 'scripted flag' }]
      : [];
    return { kind: 'answer', text: JSON.stringify({ issues }) };
  }
  // The judge: ex-text-004's draft scores low on schema quality.
  const low = key.startsWith('ex-text-004');
  return {
    kind: 'answer',
    text: JSON.stringify({
      accuracy: 95,
      grounding: 92,
      schema_quality: low ? 40 : 88,
      needs_multiple_turns: null,
      rationale: 'scripted',
    }),
  };
}

before(async () => {
  server = await startProtocolServer({ script });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `sob <args>` in this process (test/kit/cli.ts), with a made-up key. */
function sob(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return sobIn(args, { cwd: tmp, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' } });
}

test('author -> build -> judge -> eval on the bundled text corpus', async () => {
  const items = loadHotpotQA(join(EX, 'passages.json')).items.map((it) => ({
    id: it.id,
    context: it.context,
    source: 'text',
  }));
  writeFileSync(join(tmp, 'items.jsonl'), items.map((i) => JSON.stringify(i)).join('\n'));
  const base = ['--base-url', server.openaiBaseUrl, '--retry-base-ms', '5'];

  const author = await sob([
    'author',
    'items.jsonl',
    '--model',
    'openai:author',
    '--out',
    'drafts.jsonl',
    ...base,
  ]);
  assert.equal(author.code, 0, author.stderr);
  assert.match(author.stdout, /4 drafts written, 0 rejected/);
  assert.equal(server.counts.get('ex-text-002'), 2); // the invalid draft was asked again

  const build = await sob([
    'build',
    'hotpotqa',
    join(EX, 'passages.json'),
    '--annotations',
    'drafts.jsonl',
    '--out',
    'bench/records.jsonl',
  ]);
  assert.equal(build.code, 0, build.stderr);
  assert.match(build.stdout, /4 records written, 0 rejected/);

  const judge = await sob([
    'judge',
    'bench/records.jsonl',
    '--judge',
    'openai:judge',
    '--reviewer',
    'openai:reviewer',
    '--out',
    'judged',
    ...base,
  ]);
  assert.equal(judge.code, 0, judge.stderr);
  assert.match(
    judge.stdout,
    /3 accepted, 1 rejected \(0 by the checks, 0 judge errors, 1 flagged by the reviewer, kept \(--reject-flagged rejects them\)\)/,
  );
  const rejected = readFileSync(join(tmp, 'judged/rejected.jsonl'), 'utf8');
  assert.match(rejected, /schema_quality 40 < 60/);

  const ev = await sob([
    'eval',
    '--benchmark',
    'judged/accepted.jsonl',
    '--model',
    'baseline:gold',
    '--eval-dir',
    'ev',
    '--bootstrap-samples',
    '50',
    '--no-report',
  ]);
  assert.equal(ev.code, 0, ev.stderr);
  const lb = JSON.parse(readFileSync(join(tmp, 'ev/leaderboard.json'), 'utf8')) as {
    model: string;
    value_accuracy: number;
  }[];
  assert.equal(lb[0].model, 'baseline_gold');
  assert.equal(lb[0].value_accuracy, 1);
});
