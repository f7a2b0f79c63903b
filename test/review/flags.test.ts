/**
 * The flag rules of `sob review` (src/report/review-flags.ts): the "models agree against the
 * gold" rule at its threshold edges, judge flags and a gold failing its schema at the leaf ajv
 * names; and on the SOB image set (../shared/data/sob, skipped where absent) how many leaves the
 * rule flags at its default threshold (docs/review.md, with leaves looked at by hand).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadReviewData } from '../../src/app/review-data.ts';
import { parsePyJson } from '../../src/core/pyjson.ts';
import {
  DEFAULT_AGREE_SHARE,
  flagRecords,
  modelsAgreeAgainstGold,
  pointerToLeafPath,
  type ReviewRecord,
} from '../../src/report/review-flags.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const v = (s: string) => parsePyJson(s);
function record(gold: string, answers: string[]): ReviewRecord {
  return {
    id: 'x',
    context: '',
    question: '',
    schema: { type: 'object' },
    gold: v(gold),
    answers: answers.map((a, i) => ({ model: `m${i}`, candidate: v(a) })),
  };
}

test('models agree against the gold: at least 60% of the answering models and at least 2, folded text', () => {
  assert.equal(DEFAULT_AGREE_SHARE, 0.6);
  // 3 of 5 = 0.6 agree on "b": flagged; 2 of 5 = 0.4: not.
  const five = (xs: string[]) =>
    record(
      '{"k":"a"}',
      xs.map((x) => `{"k":"${x}"}`),
    );
  assert.equal(modelsAgreeAgainstGold(five(['b', 'B ', 'b', 'a', 'c'])).length, 1);
  assert.match(
    modelsAgreeAgainstGold(five(['b', 'B ', 'b', 'a', 'c']))[0].reasons[0].detail,
    /^3 of 5 models agree on "b"/,
  );
  assert.equal(modelsAgreeAgainstGold(five(['b', 'b', 'c', 'a', 'd'])).length, 0);
  // Agreeing with the gold up to case and spaces is agreeing with it.
  assert.equal(modelsAgreeAgainstGold(five(['A', ' a', 'a', 'a', 'a'])).length, 0);
  // One model alone is never "models agree", whatever the share; min 1 lets it through.
  assert.equal(modelsAgreeAgainstGold(record('{"k":1}', ['{"k":2}'])).length, 0);
  assert.equal(modelsAgreeAgainstGold(record('{"k":1}', ['{"k":2}']), { minAgree: 1 }).length, 1);
  // Numbers by value (2 and 2.0 agree), and an unanswered model does not count in the share.
  const r = record('{"n":1}', ['{"n":2}', '{"n":2.0}', '{"n":3}']);
  r.answers.push({ model: 'none', candidate: undefined });
  assert.match(modelsAgreeAgainstGold(r)[0].reasons[0].detail, /^2 of 3 models agree on 2/);
});

test('a gold failing its schema is flagged at the leaf ajv names; judge flags join the same leaf', () => {
  const r: ReviewRecord = {
    ...record('{"a":{"b":"7"},"c":"x"}', []),
    schema: { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'integer' } } } } },
  };
  assert.equal(pointerToLeafPath('/a/0/b~1c'), 'a[0].b/c');
  const items = flagRecords(
    [r],
    [{ record_id: 'x', path: 'a.b', kind: 'judge_flag', detail: 'j: unsupported' }],
  );
  assert.deepEqual(
    items.map((i) => [i.path, i.reasons.map((x) => x.kind)]),
    [['a.b', ['gold_schema', 'judge_flag']]],
  );
  assert.match(items[0].reasons[0].detail, /\/a\/b must be integer/);
});

test('the SOB image set: leaves where most models agree against the gold, at the default threshold', {
  skip: needsData('sob'),
}, () => {
  const data = loadReviewData(sharedData('sob', 'images_responses'));
  assert.equal(data.records.length, 209);
  assert.equal(data.models.length, 34);
  const flagged = data.records.flatMap((r) => modelsAgreeAgainstGold(r));
  assert.equal(flagged.length, 196);
  assert.equal(new Set(flagged.map((f) => f.record_id)).size, 85);
  // One looked at by hand (docs/review.md): the gold lists only 1964's 294 pints; the text has
  // 1962's 211 first, which 33 of 33 models give at position [0]: the gold misses an item.
  const blood = flagged.filter((f) => f.record_id.startsWith('7eb29a39'));
  assert.deepEqual(
    blood.map((f) => [f.path, f.reasons[0].detail]),
    [
      ['historical_collections[0].year', '33 of 33 models agree on 1962, the gold says 1964'],
      ['historical_collections[0].pints_collected', '33 of 33 models agree on 211, the gold says 294'],
    ],
  );
});
