/**
 * The `judge` matcher against a local server speaking the OpenAI protocol (the real openai SDK
 * over HTTP): asked only for pairs the deterministic matchers did not settle, each pair once
 * across records and reruns (the on-disk cache), a malformed answer recorded as unscored.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { UnsettledPair } from '../../metrics/match/judge.ts';
import { compilePolicy } from '../../metrics/match/policy.ts';
import { scoreLenient } from '../../metrics/match/score.ts';
import { OpenAIProvider } from '../../src/providers/openai.ts';
import { judgeCacheName, judgePairs, readJudgeAnswer } from '../../src/scoring/judge-matcher.ts';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { J } from './helpers.ts';

let server: ProtocolServer;
let cache: string;

function script(r: SeenRequest): Outcome {
  const t = r.userText;
  if (t.includes('Prediction: "New York City"')) return { kind: 'answer', text: '{"same_meaning": true}' };
  if (t.includes('Prediction: "Gotham"'))
    return { kind: 'answer', text: '```json\n{"same_meaning": false}\n```' };
  if (t.includes('Prediction: "Big Town"')) return { kind: 'answer', text: 'It depends on the context.' };
  if (t.includes('Prediction: "Flaky"') && r.n === 1) return { kind: 'status', status: 500 };
  if (t.includes('Prediction: "Flaky"')) return { kind: 'answer', text: 'yes' };
  return { kind: 'status', status: 503, message: 'down' };
}

before(async () => {
  server = await startProtocolServer({ script });
  cache = mkdtempSync(join(tmpdir(), 'sob-judge-cache-'));
});
after(async () => {
  await server.close();
  rmSync(cache, { recursive: true, force: true });
});

const policy = compilePolicy({ fields: { city: { match: 'judge', first: 'text' } } });
const RECORDS: [string, string][] = [
  ['{"city": "NYC", "zip": "10001"}', '{"city": "New York City", "zip": "10001"}'],
  ['{"city": "NYC", "zip": "10002"}', '{"city": "New York City", "zip": "10002"}'], // the same pair again
  ['{"city": "NYC"}', '{"city": "nyc"}'], // settled by text: never asked
  ['{"city": "NYC"}', '{"city": "Gotham"}'],
  ['{"city": "NYC"}', '{"city": "Big Town"}'],
  ['{"city": "NYC"}', '{"city": "Flaky"}'],
];

function scoreAll(verdicts?: Map<string, 'match' | 'no_match' | 'unscored'>) {
  return RECORDS.map(([g, p]) => scoreLenient(J(g), J(p), {}, { policy, modality: 'image', verdicts }));
}

const provider = () => new OpenAIProvider('judge-1', { baseUrls: [server.openaiBaseUrl] });
const fast = { baseMs: 1, maxMs: 2 };

test('readJudgeAnswer: JSON (also fenced) or a bare yes/no; anything else is unscored', () => {
  assert.equal(readJudgeAnswer('{"same_meaning": true}'), 'match');
  assert.equal(readJudgeAnswer('```json\n{"same_meaning": false}\n```'), 'no_match');
  assert.equal(readJudgeAnswer('Yes.'), 'match');
  assert.equal(readJudgeAnswer('no'), 'no_match');
  assert.equal(readJudgeAnswer('{"same_meaning": "yes"}'), 'unscored');
  assert.equal(readJudgeAnswer('It depends.'), 'unscored');
});

test('only unsettled pairs are asked, each once; verdicts flow back; malformed is unscored', async () => {
  const first = scoreAll();
  const pairs: UnsettledPair[] = first.flatMap((r) => r.unsettled);
  assert.equal(pairs.length, 5); // records 1, 2, 4, 5, 6 (record 3 settled by text)
  const res = await judgePairs(pairs, {
    provider: provider(),
    cacheDir: cache,
    backoff: fast,
    concurrency: 2,
  });
  assert.equal(res.asked, 4);
  assert.equal(res.cached, 0);
  assert.equal(res.failed, 0);
  // 4 distinct pairs, one retried after a 500: 5 requests; never the settled "nyc".
  assert.equal(server.total, 5);
  assert.ok(server.requests.every((r) => !r.userText.includes('Prediction: "nyc"')));
  assert.ok(
    server.requests.every(
      (r) => r.userText.includes('Field: city') && r.userText.includes('Ground truth: "NYC"'),
    ),
  );

  const final = scoreAll(res.verdicts);
  assert.deepEqual(
    final.map((r) => [r.leaves[0].verdict, r.leaves[0].accepted_by, r.raw_value_accuracy, r.unscored_leaves]),
    [
      ['match', 'judge', 1, 0],
      ['match', 'judge', 1, 0],
      ['match', 'text', 1, 0],
      ['no_match', null, 0, 0],
      ['unscored', null, 0, 1], // unreadable: not accepted (issue 21 finding 4), shown as unscored
      ['match', 'judge', 1, 0],
    ],
  );
  assert.ok(final.every((r) => r.unsettled.length === 0 && r.pending_leaves === 0));
});

test('a rerun asks only the malformed pair again: readable verdicts come from the cache, an unreadable one is never cached', async () => {
  const before = server.total;
  const pairs = scoreAll().flatMap((r) => r.unsettled);
  const p = provider();
  const res = await judgePairs(pairs, { provider: p, cacheDir: cache, backoff: fast });
  assert.equal(server.total, before + 1);
  assert.equal(res.asked, 1);
  assert.equal(res.cached, 3);
  const bigTown = pairs.find((x) => x.pred === '"Big Town"')!;
  assert.equal(res.verdicts.get(bigTown.hash), 'unscored');
  const file = join(cache, judgeCacheName(p), bigTown.hash.slice(0, 2), `${bigTown.hash}.json`);
  assert.equal(existsSync(file), false);
});

test('a transport failure is not cached: the pair stays pending and is asked next time', async () => {
  const r = scoreLenient(J('{"city": "NYC"}'), J('{"city": "Down"}'), {}, { policy, modality: 'image' });
  const res = await judgePairs(r.unsettled, {
    provider: provider(),
    cacheDir: cache,
    backoff: fast,
    maxRetries: 1,
  });
  assert.equal(res.failed, 1);
  assert.equal(res.verdicts.size, 0);
  assert.match(res.errors[0], /^city: server: /);
  const h = r.unsettled[0].hash;
  assert.equal(existsSync(join(cache, 'openai_judge-1', h.slice(0, 2), `${h}.json`)), false);
  const again = scoreLenient(
    J('{"city": "NYC"}'),
    J('{"city": "Down"}'),
    {},
    { policy, modality: 'image', verdicts: res.verdicts },
  );
  assert.equal(again.pending_leaves, 1);
});
