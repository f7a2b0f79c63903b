import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findFurniture, furnitureKey, isPageNumber } from '../../sources/pdf/furniture.ts';
import { composeAccents, joinLines, layoutPage, type TextBox } from '../../sources/pdf/layout.ts';
import { buildSegments, splitLeaders } from '../../sources/pdf/segments.ts';
import { findTables, renderTable } from '../../sources/pdf/tables.ts';

/** One box per word, as pdf.js gives them: width 0.5 em a character, a 0.25 em space. */
function line(text: string, x: number, baseline: number, size = 10): TextBox[] {
  const boxes: TextBox[] = [];
  let cx = x;
  for (const w of text.split(' ')) {
    const width = w.length * 0.5 * size;
    boxes.push({
      text: w,
      x0: cx,
      x1: cx + width,
      top: baseline - 0.8 * size,
      bottom: baseline + 0.2 * size,
      size,
    });
    cx += width + 0.25 * size;
  }
  return boxes;
}

const PAGE = { width: 612, height: 792 };

function paragraphs(md: string): string[] {
  return md.split('\n\n');
}

describe('lines and paragraphs', () => {
  test('a word hyphenated at a line end is rejoined; a capital after the hyphen keeps it', () => {
    assert.equal(joinLines(['the exam-', 'ple is', 'here']), 'the example is here');
    assert.equal(joinLines(['Anglo-', 'Saxon']), 'Anglo- Saxon');
    const md = layoutPage(
      [...line('a long hyphen-', 72, 100), ...line('ated word ends here', 72, 112)],
      PAGE,
    );
    assert.equal(md, 'a long hyphenated word ends here');
  });
  test('a wider gap between lines starts a new paragraph', () => {
    const md = layoutPage(
      [
        ...line('first paragraph line one', 72, 100),
        ...line('line two', 72, 112),
        ...line('second paragraph', 72, 140),
      ],
      PAGE,
    );
    assert.deepEqual(paragraphs(md), ['first paragraph line one line two', 'second paragraph']);
  });
  test('a line set much larger than the body is a heading', () => {
    const boxes = [...line('Big Title', 72, 80, 20)];
    for (let i = 0; i < 4; i++) boxes.push(...line(`body text line number ${i}`, 72, 120 + 12 * i));
    assert.deepEqual(paragraphs(layoutPage(boxes, PAGE)), [
      '# Big Title',
      'body text line number 0 body text line number 1 body text line number 2 body text line number 3',
    ]);
  });
  test('a drop cap is glued to the word beside it', () => {
    const cap: TextBox = { text: 'O', x0: 60, x1: 84, top: 92, bottom: 124, size: 32 };
    const md = layoutPage(
      [cap, ...line('nce upon a time there', 88, 100), ...line('was a page', 88, 112)],
      PAGE,
    );
    assert.equal(md, 'Once upon a time there was a page');
  });
  test("TeX's spacing accents compose with the letter after them", () => {
    assert.equal(composeAccents('J\u00b4an Min\u00b4a\u02c7c'), 'J\u00e1n Min\u00e1\u010d');
  });
});

describe('reading order', () => {
  test('two columns are read left column first, then right', () => {
    const boxes: TextBox[] = [];
    for (let i = 0; i < 5; i++) {
      boxes.push(...line(`left column sentence number ${i} goes`, 72, 100 + 12 * i));
      boxes.push(...line(`right column sentence number ${i} goes`, 320, 100 + 12 * i));
    }
    const text = layoutPage(boxes, PAGE);
    const order = [...text.matchAll(/(left|right) column sentence number (\d)/g)].map(
      (m) => `${m[1][0]}${m[2]}`,
    );
    assert.deepEqual(order, ['l0', 'l1', 'l2', 'l3', 'l4', 'r0', 'r1', 'r2', 'r3', 'r4']);
  });
  test('a grid of short cells is a table kept row by row', () => {
    const boxes: TextBox[] = [];
    const rows = [
      ['Source', 'Type', 'Tokens'],
      ['DCLM', 'Web', '3.71T'],
      ['arXiv', 'Papers', '20.8B'],
    ];
    rows.forEach((r, i) => {
      r.forEach((cell, j) => {
        boxes.push(...line(cell, 100 + 120 * j, 300 + 14 * i));
      });
    });
    assert.equal(
      layoutPage(boxes, PAGE),
      [
        '| Source | Type | Tokens |',
        '| --- | --- | --- |',
        '| DCLM | Web | 3.71T |',
        '| arXiv | Papers | 20.8B |',
      ].join('\n'),
    );
  });
});

describe('running headers, footers and page numbers', () => {
  const body: TextBox[] = [];
  for (let i = 0; i < 12; i++)
    body.push(...line(`This is line ${i} of the running text of the page body`, 72, 120 + 12 * i));
  const header = line('Journal of Examples Vol 3', 72, 60, 8);
  const footer = line('17', 300, 740);
  test('a line alone in the top margin and a bare page number at the foot are dropped', () => {
    const md = layoutPage([...header, ...body, ...footer], PAGE);
    assert.equal(md.includes('Journal of Examples'), false);
    assert.equal(md.endsWith('running text of the page body'), true);
    assert.equal(md.startsWith('This is line 0'), true);
  });
  test('dropMargins false keeps them', () => {
    const md = layoutPage([...header, ...body, ...footer], { ...PAGE, dropMargins: false });
    assert.equal(md.startsWith('Journal of Examples Vol 3'), true);
    assert.equal(md.endsWith('17'), true);
  });
  test('a page of a few lines keeps its first and last line', () => {
    const md = layoutPage([...line('THE VISION', 200, 60, 20), ...line('A poster', 200, 700, 30)], PAGE);
    assert.equal(md.includes('THE VISION'), true);
    assert.equal(md.includes('A poster'), true);
  });
});

describe('segments', () => {
  test('dot leaders are cut out: the label and the value become two pieces', () => {
    const pieces = splitLeaders({
      text: 'Total assets .......... 1,234',
      x0: 0,
      x1: 300,
      top: 0,
      bottom: 10,
      size: 10,
    });
    assert.deepEqual(
      pieces.map((p) => p.text),
      ['Total assets', '1,234'],
    );
    assert.ok(pieces[0].x1 < pieces[1].x0);
    // A line of dots alone is a rule, kept.
    assert.equal(
      splitLeaders({ text: '. . . . . .', x0: 0, x1: 60, top: 0, bottom: 10, size: 10 }).length,
      1,
    );
  });
  test('a hanging list label joins its text; a currency sign joins its amount; a number after a number does not', () => {
    const md = layoutPage(
      [
        ...line('a)', 72, 100),
        ...line('The first item of the list', 120, 100),
        ...line('b)', 72, 112),
        ...line('The second item of the list', 120, 112),
      ],
      PAGE,
    );
    assert.equal(md, 'a) The first item of the list b) The second item of the list');
    const segs = buildSegments(
      [
        ...line('$', 300, 100),
        ...line('1,234', 360, 100),
        ...line('12.1', 420, 100),
        ...line('3.4', 480, 100),
      ],
      10,
    );
    assert.deepEqual(
      segs.map((s) => s.text),
      ['$ 1,234', '12.1', '3.4'],
    );
  });
  test('letter-spaced titles read as words; raised note digits become superscripts', () => {
    const spaced: TextBox[] = [];
    let x = 72;
    for (const ch of 'ANNUAL REPORT') {
      if (ch === ' ') {
        x += 4;
        continue;
      }
      spaced.push({ text: ch, x0: x, x1: x + 7, top: 92, bottom: 102, size: 10 });
      x += 10;
    }
    assert.equal(buildSegments(spaced, 10)[0].text, 'ANNUAL REPORT');
    const note: TextBox = { text: '2', x0: 111, x1: 114, top: 91, bottom: 97, size: 6 };
    assert.equal(buildSegments([...line('Bonuses paid', 72, 100), note], 10)[0].text, 'Bonuses paid²');
  });
});

describe('running heads and folios', () => {
  const body: TextBox[] = [];
  for (let i = 0; i < 12; i++)
    body.push(...line(`This is line ${i} of the running text of the page body`, 72, 140 + 12 * i));
  const segs = (boxes: TextBox[]) => buildSegments(boxes, 10);
  test('a short line in the top margin with clear space below is dropped, with its reason', () => {
    const r = findFurniture(segs([...line('Acme Review 2024', 72, 40, 8), ...body]), {
      pageHeight: 792,
      body: 10,
    });
    assert.deepEqual(r.dropped, [
      { text: 'Acme Review 2024', edge: 'top', why: 'in the top margin, 90 pt clear of the body' },
    ]);
  });
  test('a long line ending in a colon in the top margin leads into the body and stays; the same line without the colon is dropped', () => {
    // orbit-bench-en f_aTi7ja8UQUbrQ6JyHRWiSC_pg85: the page's first line, 15 pt over a table.
    const lead = 'The following sets forth the activity related to intangible assets (in thousands):';
    const at = (text: string) =>
      findFurniture(segs([...line(text, 72, 40, 10), ...body]), { pageHeight: 792, body: 10 }).dropped.map(
        (d) => d.text,
      );
    assert.deepEqual(at(lead), []);
    assert.deepEqual(at(lead.slice(0, -1)), [lead.slice(0, -1)]);
    // A short heading ending in a colon is still a running head when it sits in the margin.
    assert.deepEqual(at('Notes:'), ['Notes:']);
  });
  test('a title set large below the very edge stays; a numbered bold heading stays; "Chapter 1" is not a page number', () => {
    const title = line('Notes to the Accounts', 72, 70, 18);
    assert.deepEqual(findFurniture(segs([...title, ...body]), { pageHeight: 792, body: 10 }).dropped, []);
    const heading = line('15. Leases', 72, 70).map((b) => ({ ...b, bold: true }));
    assert.deepEqual(findFurniture(segs([...heading, ...body]), { pageHeight: 792, body: 10 }).dropped, []);
    // A line right under the text at the foot: "Page 1" is a folio, "Chapter 1" is not.
    const full: TextBox[] = [];
    for (let i = 0; i < 50; i++)
      full.push(...line(`Line ${i} of a page full of running text down to its foot`, 72, 170 + 12 * i));
    const at = (s: string) =>
      findFurniture(segs([...full, ...line(s, 72, 770)]), { pageHeight: 792, body: 10 }).dropped;
    assert.deepEqual(at('Chapter 1'), []);
    assert.deepEqual(
      at('Page 1').map((d) => d.why),
      ['page number line'],
    );
    assert.equal(isPageNumber('- 12 -'), true);
    assert.equal(isPageNumber('Page 3 of 40'), true);
    assert.equal(isPageNumber('Chapter 1'), false);
  });
  test('a folio line anywhere as the last row, and a footer beside it, are dropped', () => {
    const foot = [...line('Annual Report 2016', 72, 770, 8), ...line('19', 520, 770, 8)];
    const r = findFurniture(segs([...body, ...foot]), { pageHeight: 792, body: 10 });
    assert.deepEqual(
      r.dropped.map((d) => [d.edge, d.text]),
      [['bottom', 'Annual Report 2016 19']],
    );
  });
  test('a row repeated at the same edge of other pages is dropped even without clear space', () => {
    const head = line('Quarterly Bulletin of the Society', 72, 128, 10);
    const boxes = [...head, ...body];
    assert.deepEqual(findFurniture(segs(boxes), { pageHeight: 792, body: 10 }).dropped, []);
    const repeated = new Set([`top:${furnitureKey('Quarterly Bulletin of the Society')}`]);
    assert.deepEqual(
      findFurniture(segs(boxes), { pageHeight: 792, body: 10, repeated }).dropped.map((d) => d.why),
      ['repeats at this edge on other pages'],
    );
    assert.equal(furnitureKey('Page 12 | Annual Report'), furnitureKey('Page 13 | Annual Report'));
  });
});

describe('tables from positions', () => {
  /** A financial table: label column, two right-aligned amount columns, headings over them. */
  function financial(extraHeading: TextBox[] = []): TextBox[] {
    const boxes: TextBox[] = [...extraHeading];
    const right = (s: string, xr: number, y: number) => line(s, xr - s.length * 5, y);
    boxes.push(...right('Fair value of', 400, 200), ...right('Number of', 500, 200));
    boxes.push(...right('rights', 400, 212), ...right('rights', 500, 212));
    const rows = [
      ['Granted in the year', '1,250', '300'],
      ['Forfeited', '(75)', '(20)'],
      ['Closing balance', '1,175', '280'],
    ];
    rows.forEach(([l, a, b], i) => {
      boxes.push(
        ...line(l, 72, 230 + 14 * i),
        ...right(a, 400, 230 + 14 * i),
        ...right(b, 500, 230 + 14 * i),
      );
    });
    return boxes;
  }
  test('heading lines merge column by column into one heading row of a Markdown table', () => {
    const { tables, rest } = findTables(buildSegments(financial(), 10), 10, 'page');
    assert.equal(tables.length, 1);
    assert.equal(rest.length, 0);
    assert.equal(
      renderTable(tables[0]),
      [
        '|  | Fair value of rights | Number of rights |',
        '| --- | --- | --- |',
        '| Granted in the year | 1,250 | 300 |',
        '| Forfeited | (75) | (20) |',
        '| Closing balance | 1,175 | 280 |',
      ].join('\n'),
    );
  });
  test('a heading centred over both value columns spans them: an HTML table with colspan', () => {
    const banner = line('Year ended 2024', 400, 186);
    const md = layoutPage(financial(banner), PAGE);
    assert.match(md, /^<table>\n<thead>\n<tr><th><\/th><th colspan="2">Year ended 2024<\/th><\/tr>/);
    assert.match(md, /<tr><th>Forfeited<\/th><td>\(75\)<\/td><td>\(20\)<\/td><\/tr>/);
  });
  test('two columns of running text side by side are not a table', () => {
    const boxes: TextBox[] = [];
    for (let i = 0; i < 6; i++) {
      boxes.push(
        ...line(`the left column carries on with sentence number ${i} and more`, 72, 100 + 12 * i, 8),
      );
      boxes.push(
        ...line(`the right column carries on with sentence number ${i} and more`, 330, 100 + 12 * i, 8),
      );
    }
    assert.deepEqual(findTables(buildSegments(boxes, 8), 8, 'page').tables, []);
  });
});

describe('layouts that are not tables, and reading them (round 2)', () => {
  test('two columns of short lines (names under headings) on their own baselines are read column by column', () => {
    const boxes: TextBox[] = [];
    const left = ['DIRECTORS', 'Mr. Joseph Hui', 'Ms. Clara Lam', 'COMPANY SECRETARY', 'Mr. Siu Cheung'];
    const right = ['HEAD OFFICE', '23rd Floor, On Hing Building', 'No. 1 On Hing Terrace', 'Hong Kong'];
    left.forEach((t, i) => {
      boxes.push(...line(t, 72, 100 + 13 * i));
    });
    // The right column's lines sit 3 pt lower: its own baselines, not rows of a table.
    right.forEach((t, i) => {
      boxes.push(...line(t, 330, 103 + 13 * i));
    });
    const segs = buildSegments(boxes, 10);
    assert.deepEqual(findTables(segs, 10, 'page').tables, []);
    // Short lines are no running text: the left column ends where it ends, the right one is a
    // paragraph of its own (not joined onto the left one's last line).
    assert.equal(
      layoutPage(boxes, PAGE),
      'DIRECTORS Mr. Joseph Hui Ms. Clara Lam COMPANY SECRETARY Mr. Siu Cheung\n\nHEAD OFFICE 23rd Floor, On Hing Building No. 1 On Hing Terrace Hong Kong',
    );
  });
  test('the same short lines sharing baselines stay a table; two rows of words alone do not', () => {
    const boxes: TextBox[] = [];
    ['Name', 'Alice Smith', 'Bob Jones', 'Carol White'].forEach((t, i) => {
      boxes.push(...line(t, 72, 100 + 13 * i));
    });
    ['Role', 'Chair', 'Secretary', 'Treasurer'].forEach((t, i) => {
      boxes.push(...line(t, 330, 100 + 13 * i));
    });
    const { tables } = findTables(buildSegments(boxes, 10), 10, 'page');
    assert.equal(tables.length, 1);
    assert.equal(tables[0].rows.length, 4);
    const two = boxes.filter((b) => b.top < 100 + 13);
    assert.deepEqual(findTables(buildSegments(two, 10), 10, 'page').tables, []);
  });
  test('a heading set large over one of two columns is read before both columns', () => {
    const boxes: TextBox[] = [...line('Corporate Information', 330, 70, 16)];
    for (let i = 0; i < 6; i++) {
      boxes.push(...line(`left column sentence number ${i} goes on`, 72, 100 + 12 * i));
      boxes.push(...line(`right column sentence number ${i} goes on`, 330, 100 + 12 * i));
    }
    const md = layoutPage(boxes, PAGE);
    assert.ok(md.startsWith('# Corporate Information\n\nleft column sentence number 0'), md);
    assert.ok(md.indexOf('left column sentence number 5') < md.indexOf('right column sentence number 0'), md);
  });
  test('running text beside a block of figures reads as its own column', () => {
    const boxes: TextBox[] = [];
    const prose = [
      'Revenue grew in every region during the',
      'year, helped by new customers and by the',
      'higher prices agreed at the start of the',
      'year with our largest distributors. The',
      'figures beside this text give the detail',
      'for each of the last four quarters, and',
      'the note below explains the adjustments.',
    ];
    prose.forEach((t, i) => {
      boxes.push(...line(t, 72, 100 + 12 * i));
      boxes.push(...line(`${110 + i},${100 + i * 7} ${90 + i},${200 + i}`, 360, 100 + 12 * i));
    });
    const md = layoutPage(boxes, PAGE);
    assert.ok(
      md.includes(
        'Revenue grew in every region during the year, helped by new customers and by the higher prices',
      ),
      md,
    );
  });
});

describe('text from the text layer (round 2)', () => {
  test('comb fields, one character a box at a steady pitch, read as one word; spaced table digits do not', () => {
    const comb = (chars: string, x: number, pitch: number): TextBox[] =>
      [...chars].map((c, i) => ({
        text: c,
        x0: x + i * pitch,
        x1: x + i * pitch + 4,
        top: 92,
        bottom: 102,
        size: 8,
      }));
    const segs = buildSegments([...line('Registration No.', 40, 100, 8), ...comb('012267', 200, 14)], 8);
    assert.deepEqual(
      segs.map((s) => s.text),
      ['Registration No.', '012267'],
    );
    // "N I L" left-aligned in its cells: the left edges keep the pitch, not the centres.
    const nil: TextBox[] = [
      { text: 'N', x0: 200, x1: 206, top: 92, bottom: 102, size: 8 },
      { text: 'I', x0: 214, x1: 216, top: 92, bottom: 102, size: 8 },
      { text: 'L', x0: 228, x1: 232, top: 92, bottom: 102, size: 8 },
    ];
    assert.deepEqual(
      buildSegments(nil, 8).map((s) => s.text),
      ['NIL'],
    );
    // One-digit values in table columns 40 pt apart (5 font sizes) stay apart.
    assert.equal(buildSegments(comb('4434', 200, 40), 8).length, 4);
  });
  test('a hanging parenthesis after an amount closes up: "(45,811 )" reads "(45,811)"', () => {
    const box = (text: string, x0: number): TextBox => ({
      text,
      x0,
      x1: x0 + text.length * 4,
      top: 92,
      bottom: 102,
      size: 8,
    });
    assert.equal(buildSegments([box('(45,811 )', 100)], 8)[0].text, '(45,811)');
    assert.equal(buildSegments([box('(see note 4 )', 100)], 8)[0].text, '(see note 4 )');
  });
});

describe('running heads (round 2)', () => {
  test('a heading closer to the body than to the running head above it stays', () => {
    const body: TextBox[] = [];
    for (let i = 0; i < 12; i++)
      body.push(...line(`This is line ${i} of the running text of the page body`, 72, 100 + 12 * i));
    const head = line('Table of Contents', 72, 30, 8);
    const heading = line('Key Business Metrics', 72, 70).map((b) => ({ ...b, bold: true }));
    const r = findFurniture(buildSegments([...head, ...heading, ...body], 10), { pageHeight: 792, body: 10 });
    assert.deepEqual(
      r.dropped.map((d) => d.text),
      ['Table of Contents'],
    );
  });
});

describe('running heads over the page heading (round 3)', () => {
  const body: TextBox[] = [];
  for (let i = 0; i < 14; i++)
    body.push(...line(`This is line ${i} of the running text of the page body`, 72, 150 + 12 * i));
  const bold = (boxes: TextBox[]) => boxes.map((b) => ({ ...b, bold: true }));
  const drops = (boxes: TextBox[]) =>
    findFurniture(buildSegments(boxes, 10), { pageHeight: 792, body: 10 }).dropped.map((d) => d.text);
  // A company name set large at 11% of the page, 2.4 body lines clear of the statement title.
  const company = line('Harbourline Shipping Limited', 72, 96, 16);
  const title = bold(line('Statement of Cash Flows', 72, 126, 12));
  test('a large line clear of the bold title under it is a running head, though below the 10% zone', () => {
    assert.deepEqual(drops([...company, ...title, ...body]), ['Harbourline Shipping Limited']);
  });
  test('the same line straight over the body is the page title and stays', () => {
    assert.deepEqual(drops([...company, ...body]), []);
  });
  test('over a caption standing far above a figure, or over a heading in its own style, it stays', () => {
    const caption = line('Figure 6: the harbour from the air', 72, 126, 12);
    const far: TextBox[] = [];
    for (let i = 0; i < 14; i++)
      far.push(...line(`This is line ${i} of the running text of the page body`, 72, 330 + 12 * i));
    assert.deepEqual(drops([...company, ...caption, ...far]), []);
    const sub = bold(line('Risks related to our strategy', 72, 96));
    const subSub = bold(line('We may not be able to grow as planned', 72, 126));
    assert.deepEqual(drops([...sub, ...subSub, ...body]), []);
  });
  test('a centred title (and subtitle) over the first section heading or the authors stays', () => {
    const text: TextBox[] = [];
    for (let i = 0; i < 14; i++)
      text.push(
        ...line(`Line ${i} of the abstract, set across the whole width of the column`, 72, 180 + 12 * i),
      );
    const mid = (72 + Math.max(...text.map((b) => b.x1))) / 2;
    const centre = (s: string, y: number, size: number) =>
      line(s, mid - (s.length * 0.5 * size) / 2, y, size);
    const title = [
      ...bold(centre('Tidal Currents in Narrow Channels', 90, 16)),
      ...centre('A survey of twelve estuaries', 108, 12),
    ];
    assert.deepEqual(drops([...title, ...bold(line('Introduction', 72, 160, 12)), ...text]), []);
    const authors = [...centre('Ada Marsh and Owen Reed', 140, 12), ...bold(centre('Abstract', 160, 10))];
    assert.deepEqual(drops([...title, ...authors, ...text]), []);
    // Set flush left, the same lines over the heading are a running head.
    const left = [
      ...bold(line('Tidal Currents in Narrow Channels', 72, 90, 16)),
      ...line('A survey of twelve estuaries', 72, 108, 12),
    ];
    assert.deepEqual(drops([...left, ...bold(line('Introduction', 72, 160, 12)), ...text]), [
      'Tidal Currents in Narrow Channels',
      'A survey of twelve estuaries',
    ]);
  });
  test('a running title set large at the top edge and wrapped onto a touching second line is dropped whole', () => {
    // 14 pt bold over a 10 pt body: line one starts in the outermost 6% of the page, line two
    // touches it (no space between the lines) and ends in the 10% zone.
    const wrappedTitle = (y1: number, y2: number) => [
      ...bold(line('Notes to the Financial Statements for the financial year ended', 72, y1, 14)),
      ...bold(line('31 October 2016', 200, y2, 14)),
    ];
    assert.deepEqual(drops([...wrappedTitle(50, 63), ...body]), [
      'Notes to the Financial Statements for the financial year ended',
      '31 October 2016',
    ]);
    // With space between its lines, or starting below the outermost 6%, it is the page's title.
    assert.deepEqual(drops([...wrappedTitle(50, 70), ...body]), []);
    assert.deepEqual(drops([...wrappedTitle(62, 75), ...body]), []);
  });
  test('lower than 16% of the page it stays', () => {
    const low = line('Harbourline Shipping Limited', 72, 136, 16);
    const lowTitle = bold(line('Statement of Cash Flows', 72, 166, 12));
    const rest = body.map((b) => ({ ...b, top: b.top + 40, bottom: b.bottom + 40 }));
    assert.deepEqual(drops([...low, ...lowTitle, ...rest]), []);
  });
});

describe('tables (round 3)', () => {
  test('a section heading inside a table, wrapped onto a second line with its column headings, is one row', () => {
    const right = (s: string, xr: number, y: number) => line(s, xr - s.length * 5, y);
    const boxes: TextBox[] = [];
    const row = (l: string, a: string, b: string, y: number) =>
      boxes.push(...line(l, 72, y), ...right(a, 400, y), ...right(b, 500, y));
    row('Raw materials consumed', '657,066', '21%', 200);
    row('Indigenous raw materials', '2,448,271', '79%', 214);
    // The section label and the third column's heading both wrap.
    boxes.push(...line('(f) Value of imported and indigenous', 72, 234), ...right('% to total', 500, 234));
    boxes.push(...line('stores and spares consumed :', 72, 246), ...right('consumption', 500, 246));
    row('Imported stores and spares', '6,692', '4%', 262);
    row('Indigenous stores and spares', '150,411', '96%', 276);
    const { tables } = findTables(buildSegments(boxes, 10), 10, 'page');
    assert.equal(tables.length, 1);
    const md = renderTable(tables[0]);
    assert.match(
      md,
      /\| \(f\) Value of imported and indigenous stores and spares consumed : \|\s+\| % to total consumption \|/,
    );
    assert.equal(md.split('\n').length, 6, md);
  });
});
