/**
 * Cost and speed beside accuracy: the leaderboards (table, md, csv, json) and the report show each
 * model's tokens in/out, cost, latency p50/p95 and time to first token, from its answers' eval_info,
 * on the value track and the compliance track. The real `sob` on data written here; the answers
 * come over HTTP from a local server that speaks OpenAI's protocol (usage and streaming included).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { summarizeUsage, UsageAccumulator } from '../../metrics/usage.ts';
import { evalInfoOf } from '../../src/report/usage.ts';
import { responseLine } from '../compliance/fixtures.ts';
import { type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { sobHere as sob, writeBenchmark } from '../runner/sob-cli.ts';
import { CHROMIUM, launchChromium } from './run.ts';

let tmp: string;

/** One CSV line's cells (quoted cells may hold commas). */
function csvCells(line: string): string[] {
  return [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)]
    .map((m) => m[1])
    .slice(0, -1)
    .map((c) => (c.startsWith('"') ? c.slice(1, -1).replaceAll('""', '"') : c));
}
let server: ProtocolServer;
const env = { OPENAI_API_KEY: 'sk-usage' };

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-usage-'));
  // Record r<i> costs (i+1) x 100 input tokens, (i+1) x 10 output tokens and $0.25; its first
  // token comes after 40 ms, the last 30 ms later.
  server = await startProtocolServer({
    script: (r) => {
      const i = Number(r.key!.slice(1));
      return {
        kind: 'answer',
        text: JSON.stringify({ id: r.key }),
        usage: { input: (i + 1) * 100, output: (i + 1) * 10, cost: 0.25 },
        stream: { pieces: ['{"id": ', JSON.stringify(r.key), '}'], firstMs: 40, gapMs: 15 },
      };
    },
  });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('percentiles and totals: p50/p95 by linear interpolation, sums over the answers that recorded them', () => {
  const u = summarizeUsage([
    { input_tokens: 10, output_tokens: 1, latency_ms: 100, ttft_ms: null },
    { input_tokens: 20, output_tokens: 2, latency_ms: 200, cost: 0.5 },
    { input_tokens: 30, output_tokens: null, latency_ms: 300, ttft_ms: 40 },
    { latency_ms: 1000 },
  ]);
  assert.equal(u.answers, 4);
  assert.equal(u.input_tokens, 60);
  assert.equal(u.output_tokens, 3);
  assert.equal(u.cost, 0.5);
  // sorted 100, 200, 300, 1000: p50 at rank 1.5 = 250; p95 at rank 2.85 = 300 + 0.85 x 700 = 895
  assert.equal(u.latency_ms.p50, 250);
  assert.ok(Math.abs(u.latency_ms.p95! - 895) < 1e-9);
  assert.deepEqual(u.ttft_ms, { n: 1, p50: 40, p95: 40 });
  assert.equal(summarizeUsage([{ latency_ms: 5 }]).cost, null); // no answer priced: unknown, not $0
});

test('the streamed accumulator (UsageAccumulator) gives the figures of sorting every answer: 20,001 answers, some unrecorded', () => {
  const acc = new UsageAccumulator();
  const lat: number[] = [];
  let tokens = 0;
  let x = 7;
  for (let i = 0; i < 20_001; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const ms = i % 7 === 0 ? null : (x % 100_000) / 10;
    if (ms !== null) lat.push(ms);
    tokens += i % 5 === 0 ? 0 : i;
    acc.add({ input_tokens: i % 5 === 0 ? null : i, latency_ms: ms, ttft_ms: null });
  }
  const sorted = [...lat].sort((a, b) => a - b);
  const q = (p: number) => {
    const h = (sorted.length - 1) * p;
    return sorted[Math.floor(h)] + (sorted[Math.ceil(h)] - sorted[Math.floor(h)]) * (h - Math.floor(h));
  };
  const u = acc.result();
  assert.equal(u.answers, 20_001);
  assert.equal(u.input_tokens, tokens);
  assert.equal(u.cost, null);
  assert.deepEqual(u.latency_ms, { n: lat.length, p50: q(0.5), p95: q(0.95) });
  assert.equal(u.latency_ms.n, 20_001 - 2858); // every 7th unrecorded
  assert.deepEqual(u.ttft_ms, { n: 0, p50: null, p95: null });
});

test('evalInfoOf reads eval_info from the end of a line, and from the whole line where it is not last', () => {
  const lines = [
    { metadata: { record_id: 'a' }, output: {}, eval_info: { input_tokens: 3, latency_ms: 1.5 } },
    { eval_info: { cost: 0.1 }, output: { note: '"eval_info": {"cost": 9}' } }, // not last; a decoy in a string
    { output: { eval_info: { cost: 9 } } }, // nested only: no top-level eval_info
    { output: { x: { eval_info: 7 } } },
    { metadata: {}, eval_info: null },
  ];
  for (const l of lines) {
    const text = JSON.stringify(l);
    assert.deepEqual(evalInfoOf(text), (l as { eval_info?: unknown }).eval_info, text);
    // Python's spacing (`"key": value`) too
    const spaced = text.replaceAll('":', '": ').replaceAll(',"', ', "');
    assert.deepEqual(evalInfoOf(spaced), (l as { eval_info?: unknown }).eval_info, spaced);
  }
  assert.equal(evalInfoOf('not json'), undefined);
});

test('sob eval against an OpenAI-protocol server: tokens, cost, latency and TTFT in every leaderboard format and the report', async () => {
  const bench = writeBenchmark(join(tmp, 'b.jsonl'), ['r0', 'r1', 'r2', 'r3']);
  const res = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--eval-dir',
      'ev',
      '--bootstrap-samples',
      '0',
      '--fail-under',
      'value_accuracy=0.9',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(res.code, 0, res.stderr);
  const [row] = JSON.parse(readFileSync(join(tmp, 'ev/leaderboard.json'), 'utf8'));
  assert.equal(row.value_accuracy, 1);
  assert.equal(row.usage.answers, 4);
  assert.equal(row.usage.input_tokens, 100 + 200 + 300 + 400);
  assert.equal(row.usage.output_tokens, 10 + 20 + 30 + 40);
  assert.equal(row.usage.cost, 1);
  assert.equal(row.usage.latency_ms.n, 4);
  assert.equal(row.usage.ttft_ms.n, 4);
  // The first token waits 40 ms, the whole answer 70 ms: measured by the client, so at least that.
  assert.ok(row.usage.ttft_ms.p50 >= 40, JSON.stringify(row.usage));
  assert.ok(row.usage.latency_ms.p95 >= row.usage.latency_ms.p50);
  assert.ok(row.usage.latency_ms.p50 >= 70, JSON.stringify(row.usage));

  const md = readFileSync(join(tmp, 'ev/leaderboard.md'), 'utf8');
  assert.match(md, /\| Tok\. in \| Tok\. out \| Cost \| Latency p50\/p95 ms \| TTFT p50\/p95 ms \|/);
  assert.match(md, /\| 1000 \| 100 \| \$1\.00 \| \d+\/\d+ \| \d+\/\d+ \|/);
  const csv = readFileSync(join(tmp, 'ev/leaderboard.csv'), 'utf8').split('\n');
  const head = csvCells(csv[0]);
  const cells = csvCells(csv[1]);
  assert.equal(cells[head.indexOf('input_tokens')], '1000');
  assert.equal(cells[head.indexOf('output_tokens')], '100');
  assert.equal(cells[head.indexOf('cost')], '1');
  assert.equal(Number(cells[head.indexOf('ttft_ms_p50')]), row.usage.ttft_ms.p50);
  assert.match(res.stdout, /Tok\. in\s+Tok\. out\s+Cost/); // the terminal table too
  const table = await sob(['leaderboard', 'ev'], { cwd: tmp }).done;
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /openai_m .* 1000\s+100\s+\$1\.00\s+\d+\/\d+\s+\d+\/\d+$/m);

  // The pull-request summary shows cost and latency beside the gated figures.
  const gate = readFileSync(join(tmp, 'ev/gate-summary.md'), 'utf8');
  assert.match(gate, /^\| Model \| Value Accuracy \| Cost \| Latency p50 \/ p95 ms \|$/m);
  assert.match(
    gate,
    new RegExp(
      `^\\| openai_m \\| 1\\.000 \\| \\$1\\.00 \\| ${Math.round(row.usage.latency_ms.p50)} / ${Math.round(row.usage.latency_ms.p95)} \\|$`,
      'm',
    ),
  );

  // The report's data carries the same figures for its leaderboard columns.
  const html = readFileSync(join(tmp, 'ev/report.html'), 'utf8');
  const data = JSON.parse(
    /<script type="application\/json" id="sob-data">([\s\S]*?)<\/script>/
      .exec(html)![1]
      .replaceAll('\\u003c', '<'),
  );
  assert.deepEqual(data.leaderboard[0].usage, row.usage);
});

test('the compliance track: the cost-and-speed table from the answers its summaries were scored from', async (t) => {
  const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
  const lines = [0, 1, 2].map((i) =>
    responseLine({
      id: `s${i}`,
      category: 'd1',
      schema,
      raw: JSON.stringify({ a: i }),
      evalInfo: {
        input_tokens: 50,
        output_tokens: 5 * (i + 1),
        latency_ms: 100 * (i + 1),
        ttft_ms: 10 * (i + 1),
        cost: 0.01,
      },
    }),
  );
  writeFileSync(join(tmp, 'response_c.jsonl'), `${lines.join('\n')}\n`);
  const sc = await sob(['score', 'response_c.jsonl', '--out', 'evc', '--bootstrap-samples', '0'], {
    cwd: tmp,
  }).done;
  assert.equal(sc.code, 0, sc.stderr);
  const js = await sob(['leaderboard', 'evc', '--track', 'compliance', '--format', 'json'], { cwd: tmp })
    .done;
  assert.equal(js.code, 0, js.stderr);
  const [row] = JSON.parse(js.stdout);
  // latency 100, 200, 300: p50 200, p95 290; TTFT 10, 20, 30: p50 20, p95 29
  assert.deepEqual(row.usage, {
    answers: 3,
    input_tokens: 150,
    output_tokens: 30,
    cost: 0.03,
    latency_ms: { n: 3, p50: 200, p95: 290 },
    ttft_ms: { n: 3, p50: 20, p95: 29 },
  });
  const md = await sob(['leaderboard', 'evc', '--track', 'compliance', '--format', 'md'], { cwd: tmp }).done;
  assert.match(md.stdout, /\*\*Cost and speed\*\*/);
  assert.match(md.stdout, /\| 1 \| c \| 150 \| 30 \| \$0\.0300 \| 200\/290 \| 20\/29 \|/);
  const tb = await sob(['leaderboard', 'evc', '--track', 'compliance'], { cwd: tmp }).done;
  assert.match(tb.stdout, /^1\s+c\s+150\s+30\s+\$0\.0300\s+200\/290\s+20\/29$/m);
  const csv = await sob(['leaderboard', 'evc', '--track', 'compliance', '--format', 'csv'], { cwd: tmp })
    .done;
  assert.match(csv.stdout, /^cost,1,c,c,3,,0\.03$/m);

  // The report's compliance section: the same figures in its Cost and speed table, in Chromium.
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser part cannot run');
    return;
  }
  const rep = await sob(['report', 'evc', '--out', 'c.html'], { cwd: tmp }).done;
  assert.equal(rep.code, 0, rep.stderr);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(pathToFileURL(join(tmp, 'c.html')).href);
    await page.waitForSelector('#compliance-usage tbody tr');
    const cells = await page.$$eval('#compliance-usage tbody tr td', (tds) =>
      tds.map((td) => td.textContent),
    );
    assert.deepEqual(cells, ['c', '3', '150', '30', '$0.0300', '200 / 290', '20 / 29']);
  } finally {
    await browser.close();
  }
});
