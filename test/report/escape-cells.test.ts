/**
 * Issue 29, finding 11: display names are escaped where Markdown and CSV are written. A `|` or a
 * newline in a name broke the leaderboard table, raw HTML passed into a pull-request comment and a
 * leading `=` was a spreadsheet formula. Through the real `sob eval` and `sob leaderboard`: hostile
 * names round-trip through leaderboard.md and leaderboard.csv inert, numbers stay numbers.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { csvTable, mdCell } from '../../src/report/cells.ts';
import { sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const tmp = tempDir('sob-escape-cells-');

const HOSTILE: Record<string, string> = {
  baseline_gold: '=HYPERLINK("http://evil.example","x")|a\nb<img src=x onerror=alert(1)>',
  baseline_skeleton: '-2+3 **bold** [l](javascript:alert(1)) `c` & <script>x</script> ~~s~~ \\|',
};

/** A Markdown row's cells as a renderer reads them: split at unescaped `|`, escapes undone. */
function mdCells(row: string): string[] {
  const inner = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner
    .split(/(?<!\\)\|/)
    .map((c) =>
      c
        .trim()
        .replace(/\\(.)/g, '$1')
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&amp;', '&'),
    );
}

test('hostile display names round-trip through leaderboard.md and leaderboard.csv inert', async () => {
  const rows = join(tmp, 'rows.jsonl');
  const schema = { type: 'object', properties: { name: { type: 'string' } } };
  writeFileSync(
    rows,
    ['Ann', 'Bo']
      .map((n, i) =>
        JSON.stringify({
          id: `r${i}`,
          context: `${n}.`,
          question: 'Who?',
          schema,
          ground_truth: { name: n },
        }),
      )
      .join('\n'),
  );
  const evalDir = join(tmp, 'ev');
  const ev = await sobAsync(
    ['eval', rows, '--eval-dir', evalDir, '--no-report', '--bootstrap-samples', '10'],
    {
      cwd: tmp,
    },
  );
  assert.equal(ev.code, 0, ev.stderr);
  // The names where sob eval reads them: the leaderboard it writes is re-written with them.
  writeFileSync(join(evalDir, 'evaluation', 'display_names.json'), JSON.stringify(HOSTILE));
  const again = await sobAsync(
    ['eval', rows, '--eval-dir', evalDir, '--no-report', '--bootstrap-samples', '10'],
    { cwd: tmp },
  );
  assert.equal(again.code, 0, again.stderr);

  // Markdown: one table row per model, as many cells as the header, each name as written.
  const md = readFileSync(join(evalDir, 'leaderboard.md'), 'utf8');
  assert.doesNotMatch(md, /<img|<script/, 'no raw HTML');
  const lines = md.split('\n');
  const header = mdCells(lines[0]);
  const body = lines.filter((l) => /^\| [12] \|/.test(l));
  assert.equal(body.length, 2, md);
  const shown = new Map<string, string[]>();
  for (const l of body) {
    const cells = mdCells(l);
    assert.equal(cells.length, header.length, `row keeps ${header.length} cells: ${l}`);
    shown.set(cells[1], cells);
  }
  for (const name of Object.values(HOSTILE)) {
    const cells = shown.get(name.replace(/\n/g, ' '));
    assert.ok(cells, `${JSON.stringify(name)} shown as written in ${md}`);
    assert.match(cells[2], /^\d\.\d{3}$/, 'Overall a number');
  }
  // The same through sob leaderboard --format md, --names given on the command line.
  const names = join(tmp, 'names.json');
  writeFileSync(names, JSON.stringify(HOSTILE));
  const lb = await sobAsync(
    ['leaderboard', join(evalDir, 'evaluation'), '--names', names, '--format', 'md'],
    {
      cwd: tmp,
    },
  );
  assert.equal(lb.code, 0, lb.stderr);
  assert.doesNotMatch(lb.stdout, /<img|<script/);
  assert.equal(lb.stdout.split('\n').filter((l) => /^\| [12] \|/.test(l)).length, 2);

  // CSV: a name that would be a formula gets a leading quote; the numbers are numbers.
  const csv = parse(readFileSync(join(evalDir, 'leaderboard.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(csv.length, 2);
  const byModel = new Map(csv.map((r) => [r.model, r]));
  assert.equal(byModel.get('baseline_gold')?.display_name, `'${HOSTILE.baseline_gold}`);
  assert.equal(byModel.get('baseline_skeleton')?.display_name, `'${HOSTILE.baseline_skeleton}`);
  assert.equal(byModel.get('baseline_gold')?.overall, '1');
  assert.equal(Number(byModel.get('baseline_skeleton')?.overall).toFixed(3), '0.571');
  for (const r of csv) assert.ok(!/^[=+\-@]/.test(r.display_name), r.display_name);
});

test('the escaper: only text cells guarded, numbers such as -0.5 stay numbers', () => {
  const out = parse(
    csvTable(
      [
        { name: '=1+1', delta: -0.5, note: '-0.5', plus: '+x', at: '@SUM(A1)', plain: 'ok' },
        { name: 'safe', delta: 0.25, note: 'a-b', plus: 'x+', at: 'a@b', plain: '\tTAB' },
      ],
      true,
    ),
    { columns: true },
  ) as Record<string, string>[];
  assert.deepEqual(out[0], {
    name: "'=1+1",
    delta: '-0.5',
    note: "'-0.5",
    plus: "'+x",
    at: "'@SUM(A1)",
    plain: 'ok',
  });
  assert.deepEqual(out[1], {
    name: 'safe',
    delta: '0.25',
    note: 'a-b',
    plus: 'x+',
    at: 'a@b',
    plain: "'\tTAB",
  });
  assert.equal(mdCell('a|b\nc<b>&'), 'a\\|b c&lt;b&gt;&amp;');
});
