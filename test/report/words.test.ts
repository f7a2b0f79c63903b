/**
 * The report's words: per-record explanations written for people, and short model names that
 * stay distinct (the pairwise matrix's headers cut "Claude-Opus-4.6" and "Claude-Opus-4.7" to the
 * same 12 characters).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { explainRow } from '../../src/report/explain.ts';
import { shortName, shortNames } from '../../src/report/names.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

test('coverage_gate: 0.3086 reads "coverage gate 0.31: structure F1 0.50 below 0.90 for image"', () => {
  const image = explainRow(
    { coverage_gate: 0.30864197530864196 },
    { source: 'image', jsonPass: 1, structureF1: 0.5 },
  );
  assert.equal(
    image.why,
    'coverage gate 0.31: structure F1 0.50 below 0.90 for image, so Value Accuracy and Faithfulness x 0.31',
  );
  // Hardened (JSON Pass 0): the F1 is read back from the gate, F1 = 0.9 sqrt(gate).
  const hardened = explainRow({ coverage_gate: 0.25 }, { source: 'audio', jsonPass: 0, structureF1: 0 });
  assert.match(hardened.why, /^coverage gate 0\.25: structure F1 0\.45 below 0\.90 for audio/);
  const text = explainRow({ coverage_gate: 0 }, { source: 'text', jsonPass: 1, structureF1: 0.9333 });
  assert.equal(
    text.why,
    'coverage gate 0: structure F1 0.93 below 0.95 for text, so Value Accuracy and Faithfulness are 0',
  );
  const many = explainRow(
    { validation_error: "'x' is a required property", lenient_parse: true, custom_note: 3 },
    { source: 'text', jsonPass: 0, structureF1: 0 },
  );
  assert.equal(
    many.why,
    "the answer fails its schema: 'x' is a required property; the answer parsed only after recovery (a code fence or a prefix was removed); custom note: 3",
  );
});

test('sob_quirks come back as [path, quirk, note], counted in the explanation', () => {
  const r = explainRow(
    {
      sob_quirks: [
        { path: 'count', quirk: 'bool_equals_number', note: 'true == 1 in the reference' },
        { path: 'a.b', quirk: 'dotted_key_collision', note: '' },
      ],
    },
    { source: 'image', jsonPass: 1, structureF1: 1 },
  );
  assert.deepEqual(r.quirks, [
    ['count', 'bool_equals_number', 'true == 1 in the reference'],
    ['a.b', 'dotted_key_collision', ''],
  ]);
  assert.equal(r.why, "the sob profile's quirks decided 2 leaf scores (listed below)");
});

test('short names: at most 12 characters, distinct, the two Claude-Opus columns apart', {
  skip: needsData('sob'),
}, () => {
  assert.equal(shortName('Claude-Opus-4.6', 12), 'Claude-O-4.6');
  assert.equal(shortName('Gemini-3-Flash-Preview', 12), 'Gemini-3-F-P');
  assert.equal(shortName('Phi-4', 12), 'Phi-4');
  const names = Object.entries(
    JSON.parse(readFileSync(sharedData('sob/evaluation/display_names.json'), 'utf8')) as Record<
      string,
      string
    >,
  )
    .filter(([k]) => !k.startsWith('_'))
    .map(([, v]) => v);
  const short = shortNames(names, 12);
  assert.equal(names.length, 32);
  assert.equal(new Set(short).size, names.length);
  for (const s of short) assert.ok(s.length <= 12, s);
  // The old cut gave "Claude-Opus-" twice.
  assert.equal(new Set(names.map((n) => n.slice(0, 12))).size, names.length - 1);
  // Names alike to the end, and equal names, still get distinct headers.
  assert.deepEqual(
    shortNames(['Qwen3-235B-A22B-Instruct-2507', 'Qwen3-30B-A3B-Instruct-2507', 'Phi-4', 'Phi-4']),
    ['Qwen3-2…2507', 'Qwen3-3…2507', 'Phi-4', 'Phi-4~2'],
  );
});
