/**
 * The `judge` matcher through the real command: `sob score --match default --match-judge
 * openai:judge-1 --base-url <local OpenAI-protocol server>`. Only pairs the deterministic matchers
 * leave unsettled are asked, each once (across files and scoring workers), none on a rerun (the
 * on-disk cache); a malformed judge answer makes the leaf unscored (not accepted, never cached:
 * issue 21 finding 4); a failed
 * request leaves it pending (asked again next run); waiting for the judge does not count against
 * a record's time budget; an unreachable judge stops with one line, the rows still written.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { sobHere as sob } from '../runner/sob-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'sob-lenient-judge-'));
let server: ProtocolServer;

function script(r: SeenRequest): Outcome {
  const t = r.userText;
  // Slower than the records' time budget below: waiting must not count against it.
  if (t.includes('Prediction: "New York City"'))
    return { kind: 'answer', text: '{"same_meaning": true}', delayMs: 1200 };
  if (t.includes('Prediction: "Gotham"')) return { kind: 'answer', text: '{"same_meaning": false}' };
  if (t.includes('Prediction: "Big Town"')) return { kind: 'answer', text: 'It depends on the context.' };
  if (t.includes('Prediction: "Down Town"')) return { kind: 'status', status: 400, message: 'bad' };
  return { kind: 'answer', text: '{"same_meaning": false}' };
}

const SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    country: { type: 'string' },
    amount: { type: 'number' },
    note: { type: 'string' },
  },
  required: ['city', 'country', 'amount', 'note'],
};

function line(id: string, gold: Record<string, unknown>, pred: Record<string, unknown>): string {
  return JSON.stringify({
    metadata: { record_id: id, model_id: 'm', schema_complexity: 'easy', source: 'text' },
    input: { context: 'c', question: 'q', json_schema: SCHEMA },
    output: { ground_truth: gold, candidate_response: pred },
  });
}

const G = { city: 'NYC', country: 'France', amount: 1200, note: 'on time' };
const P = { city: 'NYC', country: 'FR', amount: 1200.0, note: 'On time.' };
// r1: the judge accepts; r2: the judge rejects; r3: the judge's answer is unreadable;
// r4: settled by `text` (never asked). The other fields are settled without the judge
// (country by the countries table, note by text, amount exactly).
const FILE_A = [
  line('r1', G, { ...P, city: 'New York City' }),
  line('r2', G, { ...P, city: 'Gotham' }),
  line('r3', { ...G, city: 'Paris' }, { ...P, city: 'Big Town' }),
  line('r4', G, { ...P, city: 'nyc' }),
];
// Another model with r1's pair again: asked once for both files.
const FILE_B = [line('r1', G, { ...P, city: 'New York City' }), line('r5', G, P)];

const dir = join(tmp, 'responses');
before(async () => {
  server = await startProtocolServer({ script });
  mkdirSync(dir);
  writeFileSync(join(dir, 'response_model-a.jsonl'), `${FILE_A.join('\n')}\n`);
  writeFileSync(join(dir, 'response_model-b.jsonl'), `${FILE_B.join('\n')}\n`);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `sob score <input> --match default` with the judge at `baseUrl` (default: the test server). */
function score(
  out: string,
  extra: string[] = [],
  o: { input?: string; baseUrl?: string; cache?: string } = {},
) {
  return sob(
    [
      'score',
      o.input ?? dir,
      '--out',
      out,
      '--match',
      'default',
      '--match-judge',
      'openai:judge-1',
      '--base-url',
      o.baseUrl ?? server.openaiBaseUrl,
      '--match-cache',
      o.cache ?? join(tmp, 'cache'),
      '--bootstrap-samples',
      '100',
      ...extra,
    ],
    { cwd: tmp, env: { OPENAI_API_KEY: 'test-key' } },
  ).done;
}

// biome-ignore lint/suspicious/noExplicitAny: rows read back from files, checked field by field
function rows(out: string, model: string): any[] {
  return readFileSync(join(out, 'text', model, 'eval_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('only unsettled pairs are asked, each once across files; verdicts score; unreadable = unscored', async () => {
  const out = join(tmp, 'eval1');
  const r = await score(out, ['--record-timeout-ms', '500', '--jobs', '2']);
  assert.equal(r.code, 0, r.stderr);
  // 3 distinct unsettled pairs (NYC/New York City twice, in two files; NYC/Gotham; Paris/Big Town).
  assert.equal(server.total, 3, server.requests.map((q) => q.userText).join('\n---\n'));
  assert.ok(server.requests.every((q) => q.userText.includes('Field: city')));
  assert.ok(server.requests.every((q) => !q.userText.includes('Prediction: "nyc"')));
  assert.match(r.stderr, /judge openai:judge-1: 3 pairs asked, 0 from the cache, 1 answers unreadable/);

  const a = rows(out, 'model-a');
  // Exact: amount only (1200 == 1200.0); lenient: country (countries table), note (text) too.
  assert.deepEqual(
    a.map((x) => x.leaf_value_em),
    [0.25, 0.25, 0.25, 0.25],
  );
  assert.deepEqual(
    a.map((x) => [x.lenient_value_accuracy, x.lenient_leaves.unscored, x.lenient_leaves.pending]),
    [
      [1, 0, 0], // the judge accepted New York City
      [0.75, 0, 0], // the judge said Gotham is not NYC
      [0.75, 1, 0], // unreadable answer: not accepted (3 of 4), shown as unscored
      [1, 0, 0], // text
    ],
  );
  assert.deepEqual(a[0].matcher_counts, { exact: 1, judge: 1, synonyms: 1, text: 1 });
  assert.deepEqual(a[3].matcher_counts, { exact: 1, synonyms: 1, text: 2 });
  // No record ran out of its 500 ms budget while the judge took 1.2 s to answer.
  assert.ok(a.every((x) => x.explanation?.scoring_error === undefined));
  const side = readFileSync(join(out, 'text', 'model-a', 'lenient_records.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    side.map((s) => s.leaves.find((l: string[]) => l[0] === 'city')),
    [
      ['city', 'city', 'judge', 'judge', 'match', 1],
      ['city', 'city', 'judge', null, 'no_match', 0],
      ['city', 'city', 'judge', null, 'unscored', 0],
      ['city', 'city', 'judge', 'text', 'match', 1],
    ],
  );
  const b = rows(out, 'model-b');
  assert.deepEqual(
    b.map((x) => x.lenient_value_accuracy),
    [1, 1],
  );

  // The summary: with and without the judge (r1: 0.75 without it, r3: 0.75).
  const s = JSON.parse(readFileSync(join(out, 'text', 'model-a', 'eval_summary.json'), 'utf8'));
  assert.equal(s.lenient.judge, 'openai:judge-1');
  assert.equal(s.lenient.policy, 'default');
  assert.equal(s.lenient.summary.overall.metrics.lenient_value_accuracy.mean, (1 + 0.75 + 0.75 + 1) / 4);
  assert.equal(
    s.lenient.without_judge.overall.metrics.lenient_value_accuracy.mean,
    (0.75 + 0.75 + 0.75 + 1) / 4,
  );
  assert.deepEqual(s.lenient.leaves, {
    gold: 16,
    accepted: 14,
    missed: 0,
    invented: 0,
    pending: 0,
    unscored: 1,
  });
});

test('a rerun asks only the unreadable pair again: the readable verdicts come from the cache', async () => {
  const before = server.total;
  const out = join(tmp, 'eval2');
  const r = await score(out, ['--jobs', '2']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.total, before + 1);
  assert.ok(server.requests.at(-1)?.userText.includes('Prediction: "Big Town"'));
  assert.match(r.stderr, /1 pairs asked, 2 from the cache, 1 answers unreadable/);
  for (const m of ['model-a', 'model-b'])
    assert.deepEqual(
      rows(out, m).map((x) => [x.lenient_value_accuracy, x.matcher_counts, x.lenient_leaves]),
      rows(join(tmp, 'eval1'), m).map((x) => [x.lenient_value_accuracy, x.matcher_counts, x.lenient_leaves]),
    );
  const [folder] = readdirSync(join(tmp, 'cache'));
  assert.match(folder, /^openai_judge-1-[0-9a-f]{12}$/);
  const cached = readdirSync(join(tmp, 'cache', folder), { recursive: true }).filter((f) =>
    String(f).endsWith('.json'),
  );
  assert.equal(cached.length, 2);
});

test('a failed request leaves the pair pending (not accepted) and it is asked again on the next run', async () => {
  const file = join(tmp, 'response_model-c.jsonl');
  writeFileSync(file, `${line('r6', G, { ...P, city: 'Down Town' })}\n`);
  const run = () => score(join(tmp, 'eval3'), [], { input: file });
  const before = server.total;
  const r = await run();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(server.total, before + 1);
  assert.match(r.stderr, /city: bad_request: .*left pending/);
  const row = rows(join(tmp, 'eval3'), 'model-c')[0];
  assert.equal(row.lenient_leaves.pending, 1);
  assert.equal(row.lenient_value_accuracy, 0.75);
  const again = await run();
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total, before + 2);
});

test('an unreachable judge: one line, exit 1, the rows written with the pairs pending', async () => {
  const out = join(tmp, 'eval4');
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise((r) => closed.close(r));
  const r = await score(out, [], {
    input: join(dir, 'response_model-a.jsonl'),
    baseUrl: `http://127.0.0.1:${port}/v1`,
    cache: join(tmp, 'cache-empty'),
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `^sob: judge openai:judge-1: .*cannot reach http://127\\.0\\.0\\.1:${port}/v1: connection refused`,
      'm',
    ),
  );
  const a = rows(out, 'model-a');
  assert.deepEqual(
    a.map((x) => x.lenient_leaves.pending),
    [1, 1, 1, 0],
  );
});

test('usage errors: --match-judge without --match, --base-url without a judge', async () => {
  const f = join(dir, 'response_model-b.jsonl');
  const r1 = await sob(['score', f, '--match-judge', 'openai:x'], { cwd: tmp }).done;
  assert.equal(r1.code, 2);
  assert.match(r1.stderr, /--match-judge needs --match/);
  const r2 = await sob(['score', f, '--match', 'default', '--base-url', 'http://x/v1'], { cwd: tmp }).done;
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /go with --match-judge/);
  writeFileSync(join(tmp, 'bad.yaml'), 'version: 1\nfields:\n  amount: {match: number, abs_tol: -1}\n');
  const r3 = await sob(['score', f, '--match', join(tmp, 'bad.yaml')], { cwd: tmp }).done;
  assert.equal(r3.code, 1);
  assert.match(r3.stderr, /bad\.yaml:3: fields\.amount\.abs_tol: Number must be greater than or equal to 0/);
});
