/**
 * What the scorer adds to its files (HELPERS.md contracts) shows where a reader looks: the
 * `profile` of each summary (a mixed-profile leaderboard warns, in one line and in the report),
 * `data_quality.duplicate_record_id_count` and the benchmark's missing / unknown ids, and each
 * row's `explanation.sob_quirks` in the record view. The fields are written by hand here.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { needsData } from '../kit/shared-data.ts';
import { CHROMIUM, launchChromium, SOB, sob } from './run.ts';

// Every test here reads the SOB evaluation folders: the whole file needs them.
describe('profiles, data quality and quirks in leaderboard and report', { skip: needsData('sob') }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sob-fields-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  // "strict-model": phi-4's results, scored (say) with the strict profile, 12 ids repeated, 12
  // benchmark records not answered; "sob-model": gpt-oss's, with the sob profile.
  const ev = join(tmp, 'evaluation');
  const responses = join(tmp, 'responses');
  cpSync(join(SOB, 'evaluation/image/phi-4'), join(ev, 'image/strict-model'), { recursive: true });
  cpSync(join(SOB, 'evaluation/image/gpt-oss'), join(ev, 'image/sob-model'), { recursive: true });
  mkdirSync(responses);
  cpSync(
    join(SOB, 'images_responses/response_phi-4_image.jsonl'),
    join(responses, 'response_strict-model_image.jsonl'),
  );
  const edit = (file: string, f: (s: Record<string, unknown>) => void) => {
    const s = JSON.parse(readFileSync(file, 'utf8'));
    f(s);
    writeFileSync(file, JSON.stringify(s, null, 2));
  };
  edit(join(ev, 'image/strict-model/eval_summary.json'), (s) => {
    s.profile = 'strict';
    Object.assign(s.data_quality as object, { duplicate_record_id_count: 12, distinct_record_ids: 197 });
    s.benchmark = {
      path: join(tmp, 'bench/records.jsonl'),
      sha256: 'ab',
      records: 209,
      missing_ids: 12,
      unknown_ids: 0,
    };
  });
  edit(join(ev, 'image/sob-model/eval_summary.json'), (s) => {
    s.profile = 'sob';
  });
  // A row where the sob profile's quirk decided a leaf (the first record, its first leaf).
  const rows = readFileSync(join(ev, 'image/strict-model/eval_records.jsonl'), 'utf8').trim().split('\n');
  const first = JSON.parse(rows[0]);
  first.explanation = {
    sob_quirks: [
      {
        path: 'market_dynamics_differences[0].characteristics[3]',
        quirk: 'missing_is_null',
        note: 'a missing leaf read as null',
      },
    ],
  };
  rows[0] = JSON.stringify(first);
  writeFileSync(join(ev, 'image/strict-model/eval_records.jsonl'), `${rows.join('\n')}\n`);

  test('sob leaderboard warns of mixed profiles and carries profile, repeated and missing ids', () => {
    const r = sob('leaderboard', ev, '--format', 'json');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /\nwarning: mixed scoring profiles: 1 with sob, 1 with strict \(a summary that names none is the sob profile\): their numbers do not compare; score them all with one --profile\n/,
    );
    assert.match(
      r.stderr,
      /\nwarning: image\/strict-model: 12 repeated record ids, 12 benchmark records not answered\n/,
    );
    const rows = JSON.parse(r.stdout) as {
      model: string;
      coverage: number;
      data_quality: Record<string, Record<string, unknown>>;
    }[];
    const strict = rows.find((x) => x.model === 'strict-model')!;
    assert.deepEqual(strict.data_quality.image, {
      profile: 'strict',
      duplicate_record_id_count: 12,
      missing_ids: 12,
      unknown_ids: 0,
    });
    // Coverage counts the 197 distinct ids, not the 209 rows.
    assert.equal(strict.coverage, 197 / 209);
    assert.deepEqual(rows.find((x) => x.model === 'sob-model')!.data_quality.image, { profile: 'sob' });
    const table = sob('leaderboard', ev);
    assert.match(
      table.stdout,
      /\nWarning: these rows were scored with different profiles \(sob, strict\): their numbers do not compare\.$/m,
    );
    const csv = sob('leaderboard', ev, '--format', 'csv').stdout.split('\n');
    const col = csv[0].split(',').indexOf('profile');
    assert.deepEqual(
      csv
        .slice(1, 3)
        .map((l) => l.split(',')[col])
        .sort(),
      ['sob', 'strict'],
    );
  });

  test('the report shows the profiles, the data quality and the quirk that decided a leaf', async (t) => {
    const out = join(tmp, 'report.html');
    const r = sob('report', ev, '--responses', responses, '--out', out, '--samples', '20');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /warning: mixed scoring profiles/);
    if (!existsSync(CHROMIUM)) {
      t.skip('Debian chromium is not installed: the browser part cannot run');
      return;
    }
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(pathToFileURL(out).href);
      await page.waitForSelector('#quality-table tbody tr');
      assert.match(
        (await page.textContent('#warnings'))!,
        /mixed scoring profiles: 1 with sob, 1 with strict/,
      );
      assert.match((await page.textContent('#mixed-profiles'))!, /^Mixed profiles: sob, strict\./);
      const q = await page.$$eval('#quality-table tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
      assert.deepEqual(q, [
        // ... parse failures, then "parsed after recovery" (none under sob, 0 here), then the rest.
        ['sob-model', 'image', 'sob', '209', '-', '-', '-', '-', '51', '-', '-', '-'],
        ['strict-model', 'image', 'strict', '209', '197', '12', '12', '0', '3', '0', '-', '-'],
      ]);
      // The record whose leaf a quirk decided: said in the record view and flagged in the diff.
      await page.selectOption('#f-model', 'strict-model');
      await page.fill('#f-text', first.record_id.slice(0, 16));
      await page.click('#records tbody tr.rec >> nth=0');
      await page.waitForSelector('#quirks');
      assert.equal(
        await page.textContent('#quirks li'),
        "the sob profile's quirk decided this leaf: market_dynamics_differences[0].characteristics[3] (missing_is_null: a missing leaf read as null)",
      );
      assert.equal(
        await page.textContent('#why'),
        "Why: the sob profile's quirks decided 1 leaf score (listed below)",
      );
      const flagged = await page.$$eval('#diff tbody tr', (trs) =>
        trs.filter((tr) => tr.querySelector('.quirk')).map((tr) => tr.children[0].firstChild?.textContent),
      );
      assert.deepEqual(flagged, ['market_dynamics_differences[0].characteristics[3]']);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});
