/**
 * A scoring worker primes the scorer on made-up records before its first file (so V8 compiles it
 * once for the paths real records take now and then). The priming must reach those paths, and
 * leave nothing behind that a real record could meet: no schema in the schema cache, no ajv.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { primeScorer } from '../../metrics/record.ts';
import { isKnownSchemaText } from '../../src/core/schema.ts';
import { primeScoring } from '../../src/scoring/score-line.ts';

test('the priming records take the scorer through its less common paths', () => {
  const scores = primeScorer();
  assert.equal(scores.length, 20);
  const s = scores.map((x) => x.score);
  // A perfect answer, a structured answer that is not, an answer that is not structured at all.
  assert.ok(s.some((r) => r.perfect === 1 && r.jsonPass === 1));
  assert.ok(
    s.some((r) => r.perfect === 0 && r.jsonParse === 1 && r.valueAccuracy > 0 && r.valueAccuracy < 1),
  );
  assert.ok(s.some((r) => r.jsonParse === 0 && r.explanation.not_structured !== undefined));
  // A schema that is not valid, a validation error, each modality.
  assert.ok(s.some((r) => r.explanation.schema_error === 'not a schema'));
  assert.ok(s.some((r) => r.explanation.validation_error === '/a must be string'));
  assert.deepEqual([...new Set(scores.map((x) => x.modality))].sort(), ['audio', 'image', 'text']);
  // The number quirks: an int written as a float, -0.0 written as 0.0.
  const quirks = s.flatMap((r) => r.explanation.sob_quirks ?? []).map((q) => q.quirk);
  assert.ok(quirks.includes('negative_zero'), quirks.join(', '));
  assert.ok(quirks.includes('int_float_lexeme'), quirks.join(', '));
});

test('priming leaves no schema in the cache, and its rows are written like any other', () => {
  const rows = primeScoring();
  assert.equal(rows.length, 20);
  for (const r of rows) {
    assert.equal(r.kind, 'row');
    if (r.kind === 'row') assert.doesNotThrow(() => JSON.parse(r.json));
  }
  assert.equal(isKnownSchemaText(''), false);
  assert.equal(isKnownSchemaText('{"type": "object"}'), false);
});
