/**
 * `sob review --apply` then `sob score` (docs/review.md), on a real `sob eval` of three replayed
 * models (test/review/fixture.ts): the new version beside the old, the old byte for byte as it
 * was, each record naming its gold version, the manifest listing every change; the before/after
 * table checked against figures worked out by hand below. And two reviewers: both decisions
 * kept, `--agreement`'s figures worked out by hand.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { prepareReview, ReviewServer } from '../../src/app/review.ts';
import { ensureBuilt, sobIn } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';
import { writeFixture } from './fixture.ts';

const tmp = tempDir('sob-review-apply-');
const ev = join(tmp, 'ev');
let bench: string;

before(async () => {
  ensureBuilt();
  const f = writeFixture(tmp);
  bench = f.benchmark;
  const r = await sobIn(
    [
      'eval',
      '--benchmark',
      f.benchmark,
      '--allow-invalid-ground-truth',
      ...f.responses.flatMap((x) => ['--model', `replay:${x}`]),
      '--eval-dir',
      ev,
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp },
  );
  assert.equal(r.code, 0, r.stderr);
  cpSync(ev, join(tmp, 'ev2'), { recursive: true });
});

/** A reviewer's server over a folder, decisions made through its API functions (no browser). */
function reviewer(dir: string, name: string): ReviewServer {
  return new ReviewServer(prepareReview({ evalDir: dir }), name);
}

// biome-ignore lint/suspicious/noExplicitAny: test reads of written JSON
type Rec = Record<string, any>;
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);

test('--apply writes a new version beside the old; sob score prints before and after per model', async () => {
  const ana = reviewer(ev, 'ana');
  ana.decide({
    record_id: 'r1',
    path: 'city',
    decision: 'gold_wrong',
    value: '"Paris"',
    note: 'the text says Paris',
  });
  ana.decide({ record_id: 'r1', path: 'year', decision: 'gold_wrong', value: '1902' });
  ana.decide({ record_id: 'r2', path: 'city', decision: 'alternative', model: 'replay_m2' });
  ana.decide({ record_id: 'r3', path: 'year', decision: 'gold_right' });
  ana.decide({ record_id: 'r4', path: 'name', decision: 'drop', note: 'markup in the gold' });
  const oldRecords = readFileSync(bench);
  const folder = () =>
    readdirSync(join(tmp, 'bench')).map((f) => [f, readFileSync(join(tmp, 'bench', f)).toString('base64')]);
  const oldFolder = folder();

  const ap = await sobIn(['review', ev, '--apply'], { cwd: tmp });
  assert.equal(ap.code, 0, ap.stderr);
  const dir = join(tmp, 'bench-gold-v2');
  assert.match(
    ap.stdout,
    /5 records kept, 1 dropped, 2 gold values changed, 1 alternatives accepted, 1 confirmed/,
  );
  assert.ok(readFileSync(bench).equals(oldRecords), 'the old records byte for byte');
  assert.deepEqual(folder(), oldFolder, 'nothing added to or changed in the old folder');

  const recs = lines(join(dir, 'records.jsonl'));
  assert.deepEqual(
    recs.map((r) => r.metadata.record_id),
    ['r1', 'r2', 'r3', 'r5', 'r6'],
  );
  assert.ok(recs.every((r) => r.metadata.gold_version === 2));
  assert.deepEqual(recs[0].output.ground_truth, { city: 'Paris', year: 1902, name: 'Ada' });
  assert.deepEqual(
    recs[1].output.ground_truth,
    { city: 'Rome', year: 1950, name: 'Bo' },
    'an alternative keeps the gold',
  );
  assert.deepEqual(recs[1].metadata.accepted_alternatives, { city: ['Roma'] });
  assert.deepEqual(recs[2].output.ground_truth.year, 2000);
  // Unchanged records keep their lexemes: r5's gold year stays the string it was.
  assert.equal(recs[3].output.ground_truth.year, '1900');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.equal(manifest.gold.version, 2);
  assert.equal(manifest.gold.previous.benchmark, '../bench/records.jsonl');
  assert.equal(manifest.gold.previous.version, 1);
  assert.equal(manifest.sources.text.records, 5);
  assert.equal(manifest.sources.text.weight, 5);
  assert.deepEqual(
    manifest.gold.changes.map((c: Record<string, unknown>) => [
      c.record_id,
      c.path,
      c.decision,
      c.before,
      c.after,
      c.reviewer,
    ]),
    [
      ['r1', 'city', 'gold_wrong', 'Lyon', 'Paris', 'ana'],
      ['r1', 'year', 'gold_wrong', 1901, 1902, 'ana'],
      ['r2', 'city', 'alternative', 'Rome', 'Roma', 'ana'],
      ['r3', 'year', 'gold_right', 2000, 2000, 'ana'],
      ['r4', 'name', 'drop', null, null, 'ana'],
    ],
  );
  assert.equal(manifest.gold.changes[0].note, 'the text says Paris');

  const sc = await sobIn(
    [
      'score',
      ...['replay_m1', 'replay_m2', 'replay_m3'].map((m) => join(ev, 'runs', m)),
      '--benchmark',
      join(dir, 'records.jsonl'),
      '--allow-invalid-ground-truth',
      '--match',
      'default',
      '--out',
      join(tmp, 'v2-eval'),
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp },
  );
  assert.equal(sc.code, 0, sc.stderr);
  const table = sc.stdout.slice(sc.stdout.indexOf('gold v1 -> v2'));
  const rows = Object.fromEntries(
    table
      .split('\n')
      .slice(2)
      .filter((l) => l.trim() !== '')
      .map((l) => l.trim().split(/\s+/))
      .map((c) => [c[0], c.slice(1)]),
  );
  // Each record weighs 1 (easy), every answer passes its schema and covers every path (gates 1),
  // so each figure is the mean over records of the share of the 3 leaves right.
  // v1 (6 records). Exact, every model: r1 1/3 (only name), r2 2/3 (city differs), r3 2/3,
  //   r4 2/3 (name), r5 2/3 ("1900" is a string, the answers an integer), r6 1 -> 4/6 = 0.667.
  // v2 (5 records, r4 dropped): r1 3/3 now, r2 2/3 (an accepted alternative is still not the
  //   gold in exact scoring), r3 2/3, r5 2/3, r6 1 -> 4/5 = 0.800.
  // Lenient v1: m1's ROME is Rome (text matcher), m2/m3's Roma is not; r5's 1900 matches "1900"
  //   (number matcher): m1 1/3 + 1 + 2/3 + 2/3 + 1 + 1 = 14/3 -> /6 = 0.778; m2, m3 1/3 + 2/3 +
  //   2/3 + 2/3 + 1 + 1 = 13/3 -> /6 = 0.722.
  // Lenient v2: r1 1, r2 1 (m1: ROME; m2, m3: Roma, the accepted alternative), r3 2/3, r5 1,
  //   r6 1 -> 14/3 / 5 = 0.933 for every model.
  // Perfect v1: r6 only -> 1/6 = 0.167; v2: r1 and r6 -> 2/5 = 0.400.
  // columns: source, n v1, n v2, VA v1, VA v2, change, Len v1, Len v2, change, Perfect v1, v2
  assert.deepEqual(rows.replay_m1, [
    'text',
    '6',
    '5',
    '0.667',
    '0.800',
    '+0.133',
    '0.778',
    '0.933',
    '+0.156',
    '0.167',
    '0.400',
  ]);
  assert.deepEqual(rows.replay_m2, [
    'text',
    '6',
    '5',
    '0.667',
    '0.800',
    '+0.133',
    '0.722',
    '0.933',
    '+0.211',
    '0.167',
    '0.400',
  ]);
  assert.deepEqual(rows.replay_m3, rows.replay_m2);
  assert.ok(readFileSync(bench).equals(oldRecords), 'scoring left the old records as they were');
});

test('two reviewers: both decisions kept, the disagreement shown, the agreement figure by hand', async () => {
  const dir = join(tmp, 'ev2');
  const ana = reviewer(dir, 'ana');
  const ben = reviewer(dir, 'ben');
  ana.decide({ record_id: 'r1', path: 'city', decision: 'gold_wrong', value: 'Paris' });
  ana.decide({ record_id: 'r1', path: 'year', decision: 'gold_right' });
  ana.decide({ record_id: 'r3', path: 'year', decision: 'gold_right' });
  ana.decide({ record_id: 'r2', path: 'city', decision: 'alternative', model: 'replay_m2' });
  ben.decide({ record_id: 'r1', path: 'city', decision: 'gold_wrong', value: '"Paris"' });
  ben.decide({ record_id: 'r1', path: 'year', decision: 'gold_right' });
  ben.decide({ record_id: 'r3', path: 'year', decision: 'gold_wrong', value: '2001' });
  ben.decide({ record_id: 'r2', path: 'city', decision: 'alternative', model: 'replay_m3' });
  ben.decide({ record_id: 'r5', path: 'year', decision: 'gold_wrong', value: '1900' });
  const log = lines(join(dir, 'review', 'decisions.jsonl'));
  assert.equal(log.length, 9, 'every decision of both reviewers kept');
  assert.deepEqual(
    log.filter((d) => d.record_id === 'r3').map((d) => `${d.reviewer} ${d.decision} ${d.after}`),
    ['ana gold_right 2000', 'ben gold_wrong 2001'],
  );
  // ana's page state names ben's different decision on r3.year.
  const st = ana.state();
  assert.deepEqual(
    st.others['r3\u0000year'].map((o) => `${o.reviewer} ${o.decision} ${o.after_text}`),
    ['ben gold_wrong 2001'],
  );

  // Shared leaves: r1.city (same: gold_wrong "Paris"), r1.year (same: gold right), r3.year
  // (differ), r2.city (same: alternative "Roma", from different models); r5.year is ben's only.
  // Same decision: 3/4 = 0.750. Kappa on "gold right": ana F,T,T,F; ben F,T,F,F: po = 3/4;
  // pe = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 0.500.
  const ag = await sobIn(['review', dir, '--agreement'], { cwd: tmp });
  assert.equal(ag.code, 0, ag.stderr);
  assert.equal(
    ag.stdout,
    "ana vs ben: 4 leaves both decided; same decision 0.750; Cohen's kappa (gold right vs changed) 0.500\n" +
      '  r3 year: ana gold_right | ben gold_wrong 2001\n',
  );

  // Applied, the later decision stands and the manifest names the one it overruled.
  const ap = await sobIn(['review', dir, '--apply', '--out', join(tmp, 'two-v2')], { cwd: tmp });
  assert.equal(ap.code, 0, ap.stderr);
  const m = JSON.parse(readFileSync(join(tmp, 'two-v2', 'manifest.json'), 'utf8'));
  const r3 = m.gold.changes.find((c: Record<string, unknown>) => c.record_id === 'r3');
  assert.equal(r3.reviewer, 'ben');
  assert.equal(r3.after, 2001);
  assert.deepEqual(
    r3.overruled.map((o: Record<string, unknown>) => `${o.reviewer} ${o.decision}`),
    ['ana gold_right'],
  );
  assert.ok(existsSync(join(tmp, 'two-v2', 'records.jsonl')));
});
