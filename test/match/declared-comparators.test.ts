/**
 * issue 33 item 2: comparators declared in the schema. ExtractBench's deterministic
 * `evaluation_config`s decide a leaf with its evaluator's semantics. Every expected verdict below
 * is what ExtractBench's own evaluator (ContextualAI/extract-bench at 88bc6ac,
 * `src/extract_bench/evaluation/metrics/`) returned as `passed` for that case, run in Python 3.11
 * on its code (the metric classes with their `evaluate`):
 * - null on either side first: `metric_utils.py:17-107` (`apply_missing_null_policy`: both null
 *   pass, one null fails);
 * - `string_exact` `string_metrics.py:42-61` (`str(gold) == str(extracted)`);
 * - `string_case_insensitive` `string_metrics.py:83-100` (`casefold`);
 * - `string_fuzzy` `string_metrics.py:142-163` (lower-cased unless `case_sensitive`,
 *   `SequenceMatcher(None, a, b).ratio() >= threshold`, default 0.8 at line 118);
 * - `number_exact` `number_metrics.py:14-53` (`float()` on both, None == None);
 * - `number_tolerance` `number_metrics.py:76-100` (absolute: `delta <= tolerance or
 *   isclose(delta, tolerance, rel_tol=1e-9, abs_tol=1e-12)`, default 1e-6 at line 59);
 * - `integer_exact` `number_metrics.py:132-141` (`int()` on both: truncation, None == None);
 * - `boolean_exact` `boolean_metrics.py:12-49` (only booleans; None is None).
 * A params of null is `{"metrics": [{"metric_id": m}]}` (the metric's own defaults).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sequenceRatio } from '../../metrics/match/extractbench.ts';
import { compilePolicy, evaluationConfigEntry, withoutJudge } from '../../metrics/match/policy.ts';
import { scoreLenient } from '../../metrics/match/score.ts';
import { J, leaf } from './helpers.ts';

/** [metric, params, gold, extracted] as JSON text, and ExtractBench's `passed`. */
const CASES: [string, boolean][] = [
  ['["string_exact",null,"Acme Corp","Acme Corp"]', true],
  ['["string_exact",null,"Acme Corp","acme corp"]', false],
  ['["string_exact",null,"Acme Corp","Acme Corp "]', false],
  ['["string_exact",null,"Acme  Corp","Acme Corp"]', false],
  ['["string_exact",null,"5",5]', true],
  ['["string_exact",null,"5",5.0]', false],
  ['["string_exact",null,"True",true]', true],
  ['["string_exact",null,null,null]', true],
  ['["string_exact",null,"x",null]', false],
  ['["string_exact",null,null,""]', false],
  ['["string_case_insensitive",null,"USD","usd"]', true],
  ['["string_case_insensitive",null,"Stra\u00dfe","STRASSE"]', true],
  ['["string_case_insensitive",null,"USD"," usd"]', false],
  ['["string_case_insensitive",null,"usd",null]', false],
  ['["string_fuzzy",{"threshold":0.8},"abcde","abcdf"]', true],
  ['["string_fuzzy",{"threshold":0.8},"abcd","abce"]', false],
  ['["string_fuzzy",{"threshold":0.8},"abcde"," abcde "]', true],
  ['["string_fuzzy",{"threshold":0.8},"abcd","  abcd  "]', false],
  ['["string_fuzzy",{"threshold":0.8},"JPMorgan Chase Bank","jpmorgan chase bank"]', true],
  ['["string_fuzzy",{"threshold":0.8,"case_sensitive":true},"ABCDE","abcde"]', false],
  ['["string_fuzzy",{"threshold":0.86},"JPMorgan Chase Bank, N.A.","JPMorgan Chase Bank"]', true],
  ['["string_fuzzy",{"threshold":0.87},"JPMorgan Chase Bank, N.A.","JPMorgan Chase Bank"]', false],
  ['["string_fuzzy",null,"abcde","abcdf"]', true],
  ['["string_fuzzy",{"threshold":0.8},null,null]', true],
  ['["number_tolerance",{"tolerance":0.001},1.0,1.001]', true],
  ['["number_tolerance",{"tolerance":0.001},1.0,1.0011]', false],
  ['["number_tolerance",{"tolerance":0.001},100,100.001]', true],
  ['["number_tolerance",{"tolerance":0.001},100,100.0010001]', false],
  ['["number_tolerance",{"tolerance":0.001},1000000000,1000000001]', false],
  ['["number_tolerance",{"tolerance":0.001},1.5,"1.5"]', true],
  ['["number_tolerance",{"tolerance":0.001},1000,"1,000"]', false],
  ['["number_tolerance",{"tolerance":0.001},"n/a","tbd"]', true],
  ['["number_tolerance",{"tolerance":0.001},null,0]', false],
  ['["number_tolerance",{"tolerance":0.001},null,null]', true],
  ['["number_tolerance",null,1.0,1.000001]', true],
  ['["number_tolerance",null,1.0,1.0000011]', false],
  ['["number_exact",null,5,5.0]', true],
  ['["number_exact",null,"5",5]', true],
  ['["number_exact",null,"5.0",5]', true],
  ['["number_exact",null," 1e3 ",1000]', true],
  ['["number_exact",null,0.30000000000000004,0.3]', false],
  ['["number_exact",null,"abc","xyz"]', true],
  ['["number_exact",null,1,true]', true],
  ['["integer_exact",null,3,3.9]', true],
  ['["integer_exact",null,-3,-3.7]', true],
  ['["integer_exact",null,3,"3"]', true],
  ['["integer_exact",null,3,"3.0"]', false],
  ['["integer_exact",null,3," 3 "]', true],
  ['["integer_exact",null,1,true]', true],
  ['["integer_exact",null,3,true]', false],
  ['["integer_exact",null,"abc","3.5"]', true],
  ['["integer_exact",null,3,null]', false],
  ['["boolean_exact",null,true,true]', true],
  ['["boolean_exact",null,true,false]', false],
  ['["boolean_exact",null,true,"true"]', false],
  ['["boolean_exact",null,true,1]', false],
  ['["boolean_exact",null,"yes","no"]', true],
  ['["boolean_exact",null,false,null]', false],
  ['["boolean_exact",null,null,null]', true],
];

const configOf = (metric: string, params: unknown) =>
  params === null ? { metrics: [{ metric_id: metric }] } : { metrics: [{ metric_id: metric, params }] };

test("each deterministic comparator at its boundaries: the verdicts of ExtractBench's evaluator", () => {
  assert.equal(CASES.length, 59);
  let passed = 0;
  for (const [text, expected] of CASES) {
    const [metric, params] = JSON.parse(text) as [string, unknown];
    // gold and extracted as the case writes them (5 an int, 5.0 a float), read losslessly.
    const out = leaf(jsonOf(text, 2), jsonOf(text, 3), {
      prop: { evaluation_config: configOf(metric, params) },
    });
    assert.equal(
      out.verdict === 'match',
      expected,
      `${text}: ExtractBench says ${expected}, got ${out.verdict}`,
    );
    if (expected) {
      assert.equal(out.by, metric, text);
      passed++;
    }
  }
  // 33 of the 59 pass under ExtractBench.
  assert.equal(passed, 33);
});

/** The JSON text of the i-th element of a case, as written (so `5.0` stays a float). */
function jsonOf(text: string, i: number): string {
  // Split the top-level array's elements by walking the text (no element here holds a bracket).
  const body = text.slice(1, -1);
  const parts: string[] = [];
  let depth = 0;
  let inStr = false;
  let cur = '';
  for (let k = 0; k < body.length; k++) {
    const ch = body[k];
    if (inStr) {
      cur += ch;
      if (ch === '\\') cur += body[++k];
      else if (ch === '"') inStr = false;
      continue;
    }
    if (ch === '"') inStr = true;
    if (ch === '{' || ch === '[') depth++;
    if (ch === '}' || ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts[i].trim();
}

test("string_fuzzy's ratio is difflib's SequenceMatcher, autojunk included (values from CPython 3.11 difflib)", () => {
  const s = (n: number, k: number) =>
    Array.from({ length: n }, (_, i) => 'ab c'[(i * i * k + i * 7 + k) % 4]).join('');
  const t = (n: number, k: number) =>
    Array.from({ length: n }, (_, i) => 'abcdefgh ij'[(i * k + Math.floor(i / 3)) % 11]).join('');
  // SequenceMatcher(None, a, b).ratio() in Python for the same strings.
  assert.equal(sequenceRatio(s(150, 3), s(160, 5)), 0.967741935483871);
  assert.equal(sequenceRatio(s(250, 3), s(260, 5)), 0.0);
  assert.equal(sequenceRatio(s(400, 1), s(410, 2)), 0.0);
  assert.equal(sequenceRatio(t(300, 3), t(320, 7)), 0.0032258064516129032);
  // autojunk starts at a b of 200 code points: 199 is not pruned, 200 is.
  assert.equal(sequenceRatio(t(199, 2), t(199, 5)), 0.08040201005025126);
  assert.equal(sequenceRatio(t(199, 2), t(200, 5)), 0.005012531328320802);
  assert.equal(sequenceRatio('abcde', 'abcdf'), 0.8);
  assert.equal(sequenceRatio('', ''), 1);
});

test('the string form is the preset (string_fuzzy 0.8, number_tolerance 1e-3); the object form its params', () => {
  assert.deepEqual(evaluationConfigEntry('string_fuzzy').entry, {
    match: { match: 'string_fuzzy', threshold: 0.8 },
  });
  assert.deepEqual(evaluationConfigEntry('number_tolerance').entry, {
    match: { match: 'number_tolerance', tolerance: 0.001 },
  });
  // presets.py: number_tolerance carries 1e-3, so 1.0 vs 1.0005 passes by name...
  assert.equal(leaf('1.0', '1.0005', { prop: { evaluation_config: 'number_tolerance' } }).verdict, 'match');
  // ...and fails under the metric's own default (1e-6, number_metrics.py:59).
  assert.equal(
    leaf('1.0', '1.0005', { prop: { evaluation_config: { metrics: [{ metric_id: 'number_tolerance' }] } } })
      .verdict,
    'no_match',
  );
  assert.match(evaluationConfigEntry('skip').why!, /not skipped here/);
  assert.match(evaluationConfigEntry('string_rot13').why!, /not a comparator sob knows/);
});

test("our keyword x-sob-match takes the same comparators for a user's own schemas", () => {
  assert.equal(
    leaf('"USD"', '"usd"', { prop: { 'x-sob-match': 'string_case_insensitive' } }).verdict,
    'match',
  );
  assert.equal(leaf('"USD"', '"usd"', { prop: { 'x-sob-match': 'string_exact' } }).verdict, 'no_match');
  const tol = { 'x-sob-match': { match: 'number_tolerance', tolerance: 0.5 } };
  assert.equal(leaf('10', '10.5', { prop: tol }).verdict, 'match');
  assert.equal(leaf('10', '10.6', { prop: tol }).verdict, 'no_match');
});

const SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', evaluation_config: 'string_semantic' },
    lenders: { type: 'array', items: { type: 'string' }, evaluation_config: 'array_llm' },
    borrower: { type: 'string', evaluation_config: 'string_fuzzy' },
  },
};
const GOLD = J(
  '{"title": "Attention is all you need", "lenders": ["Bank A", "Bank B"], "borrower": "Acme, Inc."}',
);
const PRED = J(
  '{"title": "Attention Is All You Need", "lenders": ["Bank A", "Bank C"], "borrower": "Acme Inc"}',
);

test('string_semantic and array_llm without a judge: "needs a judge", never decided as exact', () => {
  const s = scoreLenient(GOLD, PRED, SCHEMA, { policy: withoutJudge(compilePolicy({})) });
  const by = new Map(s.leaves.map((l) => [l.path, l]));
  assert.equal(by.get('title')!.verdict, 'needs_judge');
  assert.equal(by.get('title')!.matcher, 'string_semantic');
  assert.equal(by.get('lenders[1]')!.verdict, 'needs_judge');
  assert.equal(by.get('lenders[1]')!.matcher, 'array_llm');
  // The same value on both sides needs no judge.
  assert.equal(by.get('lenders[0]')!.accepted_by, 'exact');
  // "Acme, Inc." vs "Acme Inc": ratio 2*8/18 = 0.889 >= 0.8.
  assert.equal(by.get('borrower')!.accepted_by, 'string_fuzzy');
  assert.equal(s.needs_judge_leaves, 2);
  assert.equal(s.accepted_leaves, 2);
  assert.equal(s.unsettled.length, 0);
});

test('with a judge they go to it (pending pairs), and the verdicts decide', () => {
  const policy = compilePolicy({});
  const s = scoreLenient(GOLD, PRED, SCHEMA, { policy });
  assert.deepEqual(
    s.unsettled.map((u) => u.path),
    ['title', 'lenders[1]'],
  );
  const verdicts = new Map(
    s.unsettled.map((u) => [u.hash, u.path === 'title' ? 'match' : 'no_match'] as const),
  );
  const r = scoreLenient(GOLD, PRED, SCHEMA, { policy, verdicts });
  const by = new Map(r.leaves.map((l) => [l.path, l]));
  assert.equal(by.get('title')!.accepted_by, 'judge');
  assert.equal(by.get('lenders[1]')!.verdict, 'no_match');
  assert.equal(r.accepted_leaves, 3);
});

test("a record's field_policy (sob build extractbench) decides where its schema says nothing", () => {
  const plain = { type: 'object', properties: { unit: { type: 'string' }, n: { type: 'integer' } } };
  const g = J('{"unit": "USD", "n": 3}');
  const p = J('{"unit": "usd", "n": 3.9}');
  const withPolicy = scoreLenient(g, p, plain, {
    policy: compilePolicy({}),
    fieldPolicy: { unit: 'string_exact', n: 'integer_exact' },
  });
  const by = new Map(withPolicy.leaves.map((l) => [l.path, l]));
  assert.equal(by.get('unit')!.verdict, 'no_match');
  // int(3.9) == 3 (number_metrics.py:133).
  assert.equal(by.get('n')!.accepted_by, 'integer_exact');
  // The policy's own fields rank above a declared comparator.
  const over = scoreLenient(
    g,
    p,
    { ...plain },
    {
      policy: compilePolicy({ fields: { unit: 'text' } }),
      fieldPolicy: { unit: 'string_exact' },
    },
  );
  assert.equal(over.leaves.find((l) => l.path === 'unit')!.accepted_by, 'text');
});
