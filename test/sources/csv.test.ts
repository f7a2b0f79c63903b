import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadFlatRows } from '../../sources/ami.ts';
import { readCsv } from '../../sources/csv.ts';
import { sobIn } from '../kit/cli.ts';

describe('CSV files a user brings (csv-parse)', () => {
  test('quoted fields with commas, doubled quotes and line breaks; a stray quote is text', () => {
    const { header, rows } = readCsv(
      '\uFEFFa,b\r\n"x, y","say ""hi"""\r\n"two\r\nlines",5 " inch\r\n',
      'f.csv',
    );
    assert.deepEqual(header, ['a', 'b']);
    assert.deepEqual(
      rows.map((r) => r.cells),
      [
        ['x, y', 'say "hi"'],
        ['two\nlines', '5 " inch'],
      ],
    );
  });

  test('each row carries the line it starts on, past quoted line breaks, blank lines and mixed endings', () => {
    const { rows } = readCsv('id,text\n1,"a\nb\nc"\n\n\n2,x\r\n3,y\r4,z\n', 'f.csv');
    assert.deepEqual(
      rows.map((r) => [r.cells[0], r.line]),
      [
        ['1', 2],
        ['2', 7],
        ['3', 8],
        ['4', 9],
      ],
    );
  });

  test('an unclosed quote is one error naming the file and the line; an empty file says so', () => {
    assert.throws(
      () => readCsv('a,b\n1,2\n"x,2\n3,4\n', 'rows.csv'),
      /^UserError: rows\.csv:\d+: not valid CSV: a quoted field is never closed/,
    );
    assert.throws(() => readCsv('\n\n', 'rows.csv'), /rows\.csv: empty CSV \(no header row\)/);
  });
});

describe('the line a problem is reported on is the row’s own line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sob-csv-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('sob build records: a bad row after a multi-line cell is named by its line', async () => {
    const csv = join(dir, 'rows.csv');
    const schema = JSON.stringify({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    }).replaceAll('"', '""');
    writeFileSync(
      csv,
      [
        'id,context,question,schema,ground_truth',
        `r1,"first line\nsecond line\nthird line",What is a?,"${schema}","{""a"": ""x""}"`,
        `r2,ctx,What is a?,"${schema}","{""a"": 5}"`,
        '',
      ].join('\n'),
    );
    const r = await sobIn(['build', 'records', csv, '--out', join(dir, 'out')]);
    assert.equal(r.code, 0, r.stderr);
    // r2 starts on line 5 (the header, then r1 over three lines): the old reader said line 3.
    assert.match(r.stderr, /rejected r2: ground truth does not validate .*rows\.csv:5\)/);
  });

  test('AMI flat rows: an unclosed quote stops the file with its line', () => {
    const csv = join(dir, 'meeting.csv');
    writeFileSync(csv, 'meeting_id,speaker,start,end,text\nM1,A,0,1,hello\nM1,B,1,2,"never closed\n');
    assert.throws(() => loadFlatRows(csv), /meeting\.csv:\d+: not valid CSV: a quoted field is never closed/);
  });
});
