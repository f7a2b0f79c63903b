import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { composeAccents, joinLines, layoutPage, type TextBox } from '../../sources/pdf/layout.ts';

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
