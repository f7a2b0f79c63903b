import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { joinAnnotations, loadAnnotations } from '../../sources/annotations.ts';
import { checkRecord } from '../../sources/checks.ts';
import { loadHotpotQA } from '../../sources/hotpotqa.ts';
import { validateInstance } from '../../src/core/schema.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const FILE = sharedData('hotpotqa/hotpot_dev_distractor_v1.first53.json');
const raw = (needsData('hotpotqa') ? [] : JSON.parse(readFileSync(FILE, 'utf8'))) as {
  _id: string;
  context: [string, string[]][];
}[];

describe('HotpotQA distractor split from ../shared/data/hotpotqa', { skip: needsData('hotpotqa') }, () => {
  const loaded = loadHotpotQA(FILE);

  test('all 53 records load, each with its ten paragraphs as "title: sentences"', () => {
    assert.equal(loaded.problems.length, 0);
    assert.equal(loaded.items.length, 53);
    assert.equal(new Set(loaded.items.map((i) => i.id)).size, 53);
    let paragraphs = 0;
    loaded.items.forEach((item, k) => {
      assert.equal(item.id, raw[k]._id);
      const parts = item.context.split('\n\n');
      assert.equal(parts.length, raw[k].context.length);
      paragraphs += parts.length;
      for (const [j, p] of parts.entries())
        assert.ok(p.startsWith(`${raw[k].context[j][0]}: `), p.slice(0, 60));
    });
    assert.equal(paragraphs, 522);
    const types = loaded.items.map((i) => i.metadata.type);
    assert.equal(types.filter((t) => t === 'bridge').length, 39);
    assert.equal(types.filter((t) => t === 'comparison').length, 14);
  });

  test('type, level and supporting facts travel in the metadata', () => {
    const first = loaded.items[0];
    assert.equal(first.id, '5a8b57f25542995d1e6f1371');
    assert.equal(first.metadata.type, 'comparison');
    assert.equal(first.metadata.level, 'hard');
    assert.deepEqual(first.metadata.supporting_facts, [
      ['Scott Derrickson', 0],
      ['Ed Wood', 0],
    ]);
    assert.match(
      first.context,
      /\n\nScott Derrickson: Scott Derrickson \(born July 16, 1966\) is an American director, screenwriter and producer\. He lives in Los Angeles, California\./,
    );
  });

  test('a record built from them with a hand-written annotation passes every check', () => {
    const annotation = {
      source_id: '5a8b57f25542995d1e6f1371',
      question:
        'Were Scott Derrickson and Ed Wood of the same nationality? Give each person with birth date and nationality.',
      json_schema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          same_nationality: { type: 'boolean' },
          people: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                born: { type: 'string' },
                nationality: { type: 'string' },
              },
              required: ['name', 'born', 'nationality'],
            },
          },
        },
        required: ['same_nationality', 'people'],
      },
      ground_truth: {
        same_nationality: true,
        people: [
          { name: 'Scott Derrickson', born: 'July 16, 1966', nationality: 'American' },
          { name: 'Edward Davis Wood Jr.', born: 'October 10, 1924', nationality: 'American' },
        ],
      },
    };
    const { candidates, problems } = joinAnnotations('hotpotqa', 'text', loaded.items, [
      { origin: 'hand', annotation },
    ]);
    assert.equal(problems.length, 0);
    assert.equal(candidates.length, 1);
    const res = checkRecord(candidates[0].record);
    assert.deepEqual(res.errors, []);
    assert.deepEqual(res.warnings, []);
    assert.equal(res.derivedComplexity, 'hard');
    const rec = res.record!;
    assert.equal(rec.metadata.record_id, 'hotpotqa-5a8b57f25542995d1e6f1371-1');
    assert.equal(rec.metadata.source, 'text');
    assert.equal(rec.metadata.type, 'comparison');
    assert.deepEqual(validateInstance(rec.input.json_schema, rec.output.ground_truth), { valid: true });
  });

  test('an annotation for an id not in the input is reported', () => {
    const annotation = { source_id: 'no-such-id', question: 'q', json_schema: {}, ground_truth: {} };
    const { candidates, problems } = joinAnnotations('hotpotqa', 'text', loaded.items, [
      { origin: 'a.jsonl:1', annotation },
    ]);
    assert.equal(candidates.length, 0);
    assert.deepEqual(problems[0].reasons, ['no hotpotqa source item with id "no-such-id" in the input']);
  });
});

describe('HotpotQA as JSONL', { skip: needsData('hotpotqa') }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-hotpot-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the same items one a line load the same; a malformed line is reported, not fatal', () => {
    const file = join(dir, 'hotpot.jsonl');
    writeFileSync(
      file,
      [...raw.slice(0, 5).map((r) => JSON.stringify(r)), '{"_id": "x"}', '{oops'].join('\n'),
    );
    const res = loadHotpotQA(file);
    assert.equal(res.items.length, 5);
    assert.deepEqual(
      res.items.map((i) => i.context),
      loadHotpotQA(FILE)
        .items.slice(0, 5)
        .map((i) => i.context),
    );
    assert.equal(res.problems.length, 2);
    assert.match(res.problems[0].origin, /hotpot\.jsonl:6$/);
    assert.match(res.problems[1].reasons[0], /^not valid JSON/);
  });
});

describe('annotation files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-ann-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const a = { question: 'q', json_schema: { type: 'object' }, ground_truth: {} };

  test('a JSON object keyed by source id (one annotation or a list), a JSON array, and JSONL all load', () => {
    const obj = join(dir, 'by-id.json');
    writeFileSync(obj, JSON.stringify({ m1: a, m2: [a, { ...a, record_id: 'own-id' }] }));
    const byId = loadAnnotations(obj);
    assert.deepEqual(
      byId.annotations.map((x) => [
        x.annotation.source_id,
        x.annotation.record_id ?? null,
        x.origin.replace(dir, ''),
      ]),
      [
        ['m1', null, '/by-id.json: m1'],
        ['m2', null, '/by-id.json: m2[0]'],
        ['m2', 'own-id', '/by-id.json: m2[1]'],
      ],
    );
    const arr = join(dir, 'list.json');
    writeFileSync(
      arr,
      JSON.stringify([
        { ...a, _id: 'h1' },
        { ...a, meeting_id: 'ES2002a' },
      ]),
    );
    assert.deepEqual(
      loadAnnotations(arr).annotations.map((x) => x.annotation.source_id),
      ['h1', 'ES2002a'],
    );
    const jsonl = join(dir, 'a.jsonl');
    writeFileSync(jsonl, `${JSON.stringify({ ...a, source_id: 's1' })}\n{"source_id": "s2"}\n`);
    const l = loadAnnotations(jsonl);
    assert.equal(l.annotations.length, 1);
    assert.deepEqual(
      l.problems.map((p) => p.reasons[0]),
      ['not an annotation: question: Required'],
    );
  });
});
