import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  bestSubstringDistance,
  buildGrid,
  categoryOf,
  ceilingOf,
  checkTranscripts,
  exactlyContradicts,
  formatOcrReport,
  loadOcrTests,
  matchStartRange,
  normalizeText,
  type OcrTest,
  pageKey,
  parseHtmlTables,
  parseMarkdownTables,
  parseOcrTest,
  runOcrTest,
  similarity,
} from '../../sources/ocr-check.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const DATA = sharedData('olmocr-bench');

function cps(s: string): number[] {
  return [...s].map((c) => c.codePointAt(0)!);
}

function make(raw: Record<string, unknown>): OcrTest {
  const t = parseOcrTest({ pdf: 'x.pdf', page: 1, id: 't', ...raw });
  assert.ok(!('skipped' in t));
  return t;
}

const tmp = mkdtempSync(join(tmpdir(), 'sob-ocr-check-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('normalizeText', () => {
  test('drops bold/italic markers and <b>/<i>, turns <br> into a space, collapses whitespace', () => {
    assert.equal(
      normalizeText('**Bold** and __strong__ <b>b</b> <i>i</i>\n\n*it* _em_<br/>next'),
      'Bold and strong b i it em next',
    );
  });
  test('markers never pair across a line break', () => {
    assert.equal(normalizeText('a *b\nc* d'), 'a *b c* d');
  });
  test('curly quotes, dashes, minus and the micro sign become plain forms; NFC composes', () => {
    assert.equal(
      normalizeText('\u201cq\u201d \u2018s\u2019 a\u2013b\u2014c\u2212d\u2011e 5\u00b5m e\u0301'),
      '"q" \'s\' a-b-c-d-e 5\u03bcm \u00e9',
    );
  });
  test('Python whitespace: \\x1c and \\x85 are spaces, \\ufeff is not', () => {
    assert.equal(normalizeText('a\x1cb\x85c\ufeffd'), 'a b c\ufeffd');
  });
});

describe('fuzzy matching (semi-global edit distance)', () => {
  test('best substring distance counts substitutions, insertions and deletions', () => {
    assert.equal(bestSubstringDistance(cps('kitten'), cps('a sitting cat')), 2);
    assert.equal(bestSubstringDistance(cps('hello world'), cps('xx helo world yy')), 1);
    assert.equal(bestSubstringDistance(cps('hello world'), cps('xx hello  world yy')), 1);
    assert.equal(bestSubstringDistance(cps('abc'), cps('')), 3);
    assert.equal(bestSubstringDistance(cps('abc'), cps('zzabczz')), 0);
  });
  test('match start range finds the earliest and latest starting points', () => {
    assert.deepEqual(matchStartRange(cps('ab'), cps('ab..ab..ab'), 0), { earliest: 0, latest: 8 });
    assert.equal(matchStartRange(cps('abc'), cps('xyz'), 1), null);
  });
});

describe('present / absent', () => {
  test('max_diffs 0 is an exact substring test after normalisation', () => {
    const t = make({ type: 'present', text: 'The \u201cterm\u201d' });
    assert.equal(runOcrTest(t, 'x **The** "term" y').passed, true);
    assert.equal(runOcrTest(t, 'The "tern"').passed, false);
  });
  test('max_diffs allows that many edits, not one more', () => {
    const t1 = make({ type: 'present', text: 'corporate social responsibility', max_diffs: 1 });
    assert.equal(runOcrTest(t1, 'a corporate sociel responsibility b').passed, true);
    assert.equal(runOcrTest(t1, 'a corporate sociel responsibilty b').passed, false);
    const t2 = make({ type: 'present', text: 'corporate social responsibility', max_diffs: 2 });
    assert.equal(runOcrTest(t2, 'a corporate sociel responsibilty b').passed, true);
  });
  test("fuzzy matches score as rapidfuzz's partial_ratio does (Indel windows), float for float", () => {
    // Values from rapidfuzz 3.14: fuzz.partial_ratio(text, transcript) / 100 against 1 - max_diffs / len.
    // Two edits (": " -> " | "), but the window's ratio is 0.9487179487179486, one ulp under the
    // threshold 0.9487179487179487: the checker fails it (orbit-bench-en, f_Ro47rBoX_pg96).
    const atThreshold = make({
      type: 'present',
      text: 'Salaries and other staff costs: 471,361',
      max_diffs: 2,
    });
    assert.equal(runOcrTest(atThreshold, '| Salaries and other staff costs | 471,361 |').passed, false);
    // Indel windows forgive a swap as one edit: three Levenshtein edits, 0.913 >= 0.913.
    const swapped = make({ type: 'present', text: 'Net profit for the year', max_diffs: 2 });
    assert.equal(runOcrTest(swapped, 'in the Net profit for tha yaer').passed, true);
    const absent = make({ type: 'absent', text: 'abcdefghij', max_diffs: 1 });
    assert.equal(runOcrTest(absent, 'xx abcdefhgij xx').passed, false);
    // A shorter transcript is aligned inside the text, as rapidfuzz swaps them (the length guard
    // still decides first).
    const long = make({ type: 'present', text: 'Ending intangible asset, net', max_diffs: 2 });
    assert.equal(runOcrTest(long, '| Ending intangible asset | net |').passed, true);
  });
  test('absent fails when the text is there within max_diffs', () => {
    const t = make({ type: 'absent', text: 'Download date: 28 Dec 2018', max_diffs: 1 });
    assert.equal(runOcrTest(t, 'body text').passed, true);
    assert.equal(runOcrTest(t, 'Download date: 28 Dec 2O18').passed, false);
  });
  test('case_sensitive false folds case; the default is case-sensitive', () => {
    const strict = make({ type: 'present', text: 'Master Bath' });
    const loose = make({ type: 'present', text: 'Master Bath', case_sensitive: false });
    assert.equal(runOcrTest(strict, 'MASTER BATH - 7 1/4').passed, false);
    assert.equal(runOcrTest(loose, 'MASTER BATH - 7 1/4').passed, true);
  });
  test('last_n / first_n look only at that many characters of the normalised transcript', () => {
    const pageNo = make({ type: 'absent', text: '1', last_n: 20 });
    // 30 characters without a '1' at the end; a '1' further back does not count.
    assert.equal(runOcrTest(pageNo, `Figure 1 shows ${'x'.repeat(20)}`).passed, true);
    assert.equal(runOcrTest(pageNo, `${'x'.repeat(30)} page 1`).passed, false);
    const head = make({ type: 'present', text: 'Title', first_n: 10 });
    assert.equal(runOcrTest(head, 'Title and more').passed, true);
    assert.equal(runOcrTest(head, 'A long preamble. Title').passed, false);
  });
});

describe('order', () => {
  test('passes when some before starts before some after', () => {
    const t = make({ type: 'order', before: '150.', after: '157.' });
    assert.equal(runOcrTest(t, '150. a 157. b').passed, true);
    assert.equal(runOcrTest(t, '157. a 150. b').passed, false);
    assert.equal(runOcrTest(t, '157. a 150. b 157.').passed, true);
    assert.match(runOcrTest(t, '150. only').explanation, /'after' text/);
  });
  test('order is fuzzy within max_diffs', () => {
    const t = make({ type: 'order', before: 'Euler Identity', after: 'Pythagorean Theorem', max_diffs: 1 });
    assert.equal(runOcrTest(t, 'Eular Identity ... Pythagorean Theorem').passed, true);
    assert.equal(runOcrTest(t, 'Eular Identty ... Pythagorean Theorem').passed, false);
  });
  test('max_diffs over half a search string is rejected, as the benchmark does', () => {
    assert.throws(() =>
      parseOcrTest({
        pdf: 'x.pdf',
        page: 1,
        id: 'o',
        type: 'order',
        before: 'ab',
        after: 'abcdef',
        max_diffs: 2,
      }),
    );
  });
});

describe("table tests (the benchmark checker's TableTest)", () => {
  const MD = [
    'intro',
    '',
    '| Source | Type | Tokens |',
    '| --- | :--: | ---: |',
    '| DCLM | Web | 3.71T |',
    '| arXiv | Papers | 20.8B |',
    '',
    'after',
  ].join('\n');
  const table = (raw: Record<string, unknown>) => make({ type: 'table', ...raw });
  test('a Markdown table: a run of lines with pipes, the separator dropped, row 0 and column 0 are headings', () => {
    const [grid] = parseMarkdownTables(MD);
    assert.deepEqual(
      [...grid.cells.values()].map((c) => [c.row, c.col, c.text, c.heading]),
      [
        [0, 0, 'Source', true],
        [0, 1, 'Type', true],
        [0, 2, 'Tokens', true],
        [1, 0, 'DCLM', true],
        [1, 1, 'Web', false],
        [1, 2, '3.71T', false],
        [2, 0, 'arXiv', true],
        [2, 1, 'Papers', false],
        [2, 2, '20.8B', false],
      ],
    );
    // One line with a pipe is no table.
    assert.deepEqual(parseMarkdownTables('a | b\nplain'), []);
  });
  test('neighbours and headings of a Markdown cell', () => {
    assert.equal(
      runOcrTest(table({ cell: 'Web', up: 'Type', down: 'Papers', left: 'DCLM', right: '3.71T' }), MD).passed,
      true,
    );
    assert.equal(
      runOcrTest(table({ cell: '20.8B', top_heading: 'Tokens', left_heading: 'arXiv' }), MD).passed,
      true,
    );
    assert.equal(runOcrTest(table({ cell: '20.8B', top_heading: 'Source' }), MD).passed, false);
    const r = runOcrTest(table({ cell: 'Web', right: '20.8B' }), MD);
    assert.equal(r.passed, false);
    assert.match(r.explanation, /right is '3\.71T', not '20\.8B'/);
    assert.match(runOcrTest(table({ cell: 'Web' }), 'no tables here').explanation, /no tables found/);
    assert.match(runOcrTest(table({ cell: 'Code' }), MD).explanation, /no table cell matches 'Code'/);
    // An empty neighbour is not checked; the top row has no cell above.
    assert.equal(runOcrTest(table({ cell: 'Type', up: '' }), MD).passed, true);
    assert.match(runOcrTest(table({ cell: 'Type', up: 'x' }), MD).explanation, /no up cell/);
  });
  test('cells match by the fuzzy ratio within max_diffs (at least 0.5), after normalisation', () => {
    assert.equal(similarity('abc', 'abd').toFixed(3), '0.667');
    // fuzz.ratio's float steps: (1 - 4/78) * 100 / 100, not 74/78.
    assert.equal(
      similarity('Salaries and other staff costs: 471,361', 'Salaries and other staff costs | 471,36'),
      0.9487179487179486,
    );
    assert.equal(similarity('', ''), 1);
    assert.equal(similarity('abc', ''), 0);
    assert.equal(runOcrTest(table({ cell: 'DCLX', max_diffs: 1 }), MD).passed, true);
    assert.equal(runOcrTest(table({ cell: 'DCXX', max_diffs: 1 }), MD).passed, false);
    assert.equal(runOcrTest(table({ cell: '**Web**' }), MD).passed, true);
  });
  test('HTML tables: colspan and rowspan fill a grid, <th> and <thead> cells are headings, <br> breaks words', () => {
    const html = [
      '<table><thead><tr><th></th><th colspan="2">Year ended</th></tr>',
      '<tr><th></th><th>2024</th><th>2023</th></tr></thead>',
      '<tbody><tr><th rowspan="2">Fares</th><td>1<br>2</td><td>3</td></tr>',
      '<tr><td>4</td><td>5</td></tr></tbody></table>',
    ].join('');
    const [grid] = parseHtmlTables(html);
    assert.equal(grid.cells.size, 10);
    const run = (raw: Record<string, unknown>) => runOcrTest(table(raw), html);
    // The spanning heading is above both year columns; the row heading spans two rows.
    assert.equal(run({ cell: '2023', up: 'Year ended', top_heading: 'Year ended' }).passed, true);
    assert.equal(run({ cell: '2024', up: 'Year ended' }).passed, true);
    assert.equal(run({ cell: '5', left: '4', left_heading: 'Fares', top_heading: '2023' }).passed, true);
    assert.equal(run({ cell: '1 2', down: '4', right: '3', left: 'Fares' }).passed, true);
    assert.equal(run({ cell: 'Year ended', down: '2023' }).passed, true);
    assert.equal(run({ cell: '4', left_heading: '2024' }).passed, false);
    // ignore_markdown_tables leaves Markdown tables out.
    assert.equal(runOcrTest(table({ cell: 'Web', ignore_markdown_tables: true }), MD).passed, false);
  });
  test('the grid follows the checker for a rowspan of 0 (to the end) and spans past the last row', () => {
    const html =
      '<table><tr><td rowspan="0">a</td><td>b</td></tr><tr><td>c</td></tr><tr><td>d</td></tr></table>' +
      '<table><tr><td rowspan="3">x</td><td>y</td></tr></table>';
    const [g1, g2] = parseHtmlTables(html);
    assert.deepEqual(
      [...g1.cells.values()].map((c) => [c.row, c.col, c.text]),
      [
        [0, 0, 'a'],
        [0, 1, 'b'],
        [1, 1, 'c'],
        [2, 1, 'd'],
      ],
    );
    assert.deepEqual([...(g1.left.get('2,1') ?? [])], ['0,0']);
    assert.deepEqual([...(g2.down.get('0,1') ?? [])], []);
    assert.equal(buildGrid([]), null);
  });
});

describe('reading dataset.jsonl', () => {
  test('blank lines are allowed; table tests are run and reported apart, math tests are skipped', async () => {
    const f = join(tmp, 'd.jsonl');
    writeFileSync(
      f,
      [
        '{"pdf": "a/x.pdf", "page": 1, "id": "p", "type": "present", "text": "hi"}',
        '',
        '{"pdf": "x.pdf", "page": 2, "id": "t", "type": "table", "cell": "1"}',
        '{"pdf": "x.pdf", "page": 2, "id": "m", "type": "math", "math": "a"}',
        '   ',
        '{"pdf": "x.pdf", "page": 2, "id": "o", "type": "order", "before": "a", "after": "b"}',
      ].join('\n'),
    );
    const loaded = await loadOcrTests(f);
    assert.equal(loaded.tests.length, 3);
    assert.deepEqual(loaded.skipped, { math: 1 });
    assert.equal(loaded.tests[0].category, 'a');
    assert.equal(loaded.tests[1].category, '(top)');
    const report = checkTranscripts(loaded, (pdf, page) =>
      pdf === 'a/x.pdf' ? 'hi there' : page === 2 ? 'b a\n\n| 1 | 2 |\n|---|---|' : undefined,
    );
    // The headline counts present/absent/order; table tests are reported apart.
    assert.equal(report.tests, 2);
    assert.equal(report.passed, 1);
    assert.deepEqual(report.tables, { tests: 1, passed: 1, pass_rate: 1 });
    assert.deepEqual(report.by_type, {
      present: { tests: 1, passed: 1, pass_rate: 1 },
      table: { tests: 1, passed: 1, pass_rate: 1 },
      order: { tests: 1, passed: 0, pass_rate: 0 },
    });
    assert.deepEqual(Object.keys(report.by_page), ['a/x_pg1', 'x_pg2']);
  });
  test('a bad line is reported as file:line', async () => {
    const f = join(tmp, 'bad.jsonl');
    writeFileSync(
      f,
      '{"pdf": "x.pdf", "page": 1, "id": "p", "type": "present", "text": "hi"}\n\n{"pdf": "x.pdf", "page": 0}\n',
    );
    await assert.rejects(loadOcrTests(f), (e: Error) => e.message.startsWith(`${f}:3: page`));
  });
  test('a page with no transcript fails its tests and is listed', () => {
    const report = checkTranscripts(
      { tests: [make({ type: 'present', text: 'x' })], skipped: {} },
      () => undefined,
    );
    assert.equal(report.pass_rate, 0);
    assert.deepEqual(report.missing_transcripts, ['x_pg1']);
  });
  test('category is the PDF folder', () => {
    assert.equal(categoryOf('headers_footers/ff.pdf'), 'headers_footers');
    assert.equal(categoryOf('x.pdf'), '(top)');
    assert.equal(pageKey('headers_footers/ff_pg2.pdf', 1), 'headers_footers/ff_pg2_pg1');
  });
});

describe('olmOCR-bench sample', { skip: needsData('olmocr-bench') }, () => {
  test("olmOCR's own transcripts pass 59 of the 67 present/absent/order tests (0.881) and 17 of the 20 table tests", async () => {
    const loaded = await loadOcrTests(join(DATA, 'dataset.jsonl'));
    assert.equal(loaded.tests.length, 87);
    assert.deepEqual(loaded.skipped, { math: 12 });
    const report = checkTranscripts(loaded, (pdf, page) => {
      const f = join(DATA, 'olmocr_pipeline', `${pageKey(pdf, page)}_repeat1.md`);
      return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
    });
    assert.equal(report.passed, 59);
    assert.equal(report.pass_rate.toFixed(3), '0.881');
    assert.deepEqual(
      Object.fromEntries(Object.entries(report.by_type).map(([k, v]) => [k, [v.passed, v.tests]])),
      { present: [24, 30], absent: [23, 24], order: [12, 13], table: [17, 20] },
    );
    assert.deepEqual(report.tables, { tests: 20, passed: 17, pass_rate: 0.85 });
    assert.deepEqual(report.by_category.headers_footers, { tests: 19, passed: 18, pass_rate: 18 / 19 });
    assert.deepEqual(report.by_category['(top)'], { tests: 68, passed: 58, pass_rate: 58 / 68 });
    assert.deepEqual(report.missing_transcripts, []);
    // olmOCR's Markdown tables: one left heading, one top heading and one cell its tables miss.
    assert.deepEqual(
      report.results.filter((r) => r.type === 'table' && !r.passed).map((r) => r.id),
      ['olmo2-pg4_table08', 'olmo2-discoverworld_crazy_table4_t02', 'earnings_table00'],
    );
    const failed = report.results.filter((r) => !r.passed && r.type !== 'table').map((r) => r.id);
    assert.deepEqual(failed, [
      'discoverworld_crazy_table4_02',
      'mattsnotes_minediff_03',
      'building_notes_02',
      'lincoln_letter_minediff_00',
      'mathfuncscol_01',
      'test_graphical_text_00',
      'test_graphical_text_01',
      'ff3d6e051903fe5ca9bc172ece14964c5632_01a',
    ]);
  });
});

describe('honest ceilings: tests forced to fail by exact contradictions', () => {
  const t = (raw: Record<string, unknown>) => make({ max_diffs: 2, ...raw });
  test('an absent text that is an exact substring of a needed text contradicts it; a prefix, another case or a window does not', () => {
    const absent = t({ id: 'a', type: 'absent', text: 'Annual Report 2023' });
    assert.equal(
      exactlyContradicts(
        absent as never,
        t({ id: 'p', type: 'present', text: 'Annual Report 2023 of the Board' }),
      ),
      true,
    );
    assert.equal(
      exactlyContradicts(
        absent as never,
        t({ id: 'o', type: 'order', before: 'Contents', after: 'the Annual Report 2023' }),
      ),
      true,
    );
    // Only the start of the forbidden header: a transcript can hold one without the other.
    assert.equal(
      exactlyContradicts(absent as never, t({ id: 'p', type: 'present', text: 'Annual Report 20' })),
      false,
    );
    // Another case: the benchmark's absent check is case-sensitive.
    assert.equal(
      exactlyContradicts(
        absent as never,
        t({ id: 'p', type: 'present', text: 'ANNUAL REPORT 2023 of the Board' }),
      ),
      false,
    );
    const folded = t({ id: 'a', type: 'absent', text: 'Annual Report 2023', case_sensitive: false });
    assert.equal(
      exactlyContradicts(
        folded as never,
        t({ id: 'p', type: 'present', text: 'ANNUAL REPORT 2023 of the Board' }),
      ),
      true,
    );
    const window = t({ id: 'a', type: 'absent', text: 'Annual Report 2023', last_n: 100 });
    assert.equal(
      exactlyContradicts(
        window as never,
        t({ id: 'p', type: 'present', text: 'Annual Report 2023 of the Board' }),
      ),
      false,
    );
  });

  test('forced failures per page are the fewest tests covering every pair: one absent against two needs forces 1, two against two crossed force 2', () => {
    const page1 = [
      t({ pdf: 'a.pdf', id: 'a1', type: 'absent', text: 'Page 4' }),
      t({ pdf: 'a.pdf', id: 'p1', type: 'present', text: 'See Page 4 below' }),
      t({ pdf: 'a.pdf', id: 'o1', type: 'order', before: 'Page 4 heading', after: 'the end of it' }),
      t({ pdf: 'a.pdf', id: 'p2', type: 'present', text: 'unrelated' }),
    ];
    const page2 = [
      t({ pdf: 'b.pdf', id: 'a2', type: 'absent', text: 'Alpha' }),
      t({ pdf: 'b.pdf', id: 'a3', type: 'absent', text: 'Beta' }),
      t({ pdf: 'b.pdf', id: 'p3', type: 'present', text: 'Alpha and Gamma' }),
      t({ pdf: 'b.pdf', id: 'p4', type: 'present', text: 'Beta and Delta' }),
      t({ pdf: 'b.pdf', id: 't1', type: 'table', cell: 'Alpha' }),
    ];
    const c = ceilingOf([...page1, ...page2], 5);
    assert.equal(c.contradicting_pairs, 4);
    assert.equal(c.pages, 2);
    assert.equal(c.forced_failures, 3);
    // 8 present/absent/order tests (the table test is apart), 3 forced: 5 achievable.
    assert.equal(c.achievable, 5);
    assert.equal(c.ceiling, 5 / 8);
    assert.equal(c.pass_rate_of_achievable, 1);
    assert.deepEqual(c.by_page.a_pg1, [
      { absent: 'a1', needs: 'p1' },
      { absent: 'a1', needs: 'o1' },
    ]);
    const report = checkTranscripts({ tests: [...page1, ...page2], skipped: {} }, () => 'See Page 4 below');
    assert.equal(report.ceiling.forced_failures, 3);
    assert.equal(report.ceiling.pass_rate_of_achievable, report.passed / 5);
    assert.match(
      formatOcrReport(report),
      /^ceiling: 5\/8 = 0\.625 \(4 pairs of tests on 2 pages contradict each other exactly/m,
    );
  });

  const ORBIT = join(import.meta.dirname, '../../../shared/data/orbit-bench-en');
  test('orbit-bench-en: 32 pairs on 28 pages force 28 failures, a ceiling of 434/462 = 0.939; the olmOCR sample has none', async (t) => {
    if (!existsSync(ORBIT) || !existsSync(DATA)) return t.skip(`no data in ${ORBIT} or ${DATA}`);
    const orbit = ceilingOf((await loadOcrTests(join(ORBIT, 'dataset.jsonl'))).tests, 0);
    assert.deepEqual(
      [orbit.contradicting_pairs, orbit.pages, orbit.forced_failures, orbit.achievable],
      [32, 28, 28, 434],
    );
    assert.equal(orbit.ceiling.toFixed(3), '0.939');
    // The pair that differs only in case is no contradiction.
    assert.equal(
      Object.keys(orbit.by_page).some((k) => k === 'f_faAThvNAbWpbvHdBtyg6Xq_pg17_pg1'),
      false,
    );
    const sample = ceilingOf((await loadOcrTests(join(DATA, 'dataset.jsonl'))).tests, 0);
    assert.equal(sample.forced_failures, 0);
  });
});
