/**
 * The compliance track end to end against a local OpenAI-protocol server (issue 11, "Must
 * show"): schema records built with `sob build schemas`, asked through the real `sob eval
 * --constrained` (run, score, leaderboard, report). The server refuses some schemas in
 * structured-output mode (HTTP 400, as OpenAI's strict mode does), answers some records with
 * invalid instances and one with text that is not JSON: declared coverage, empirical coverage and
 * compliance equal the hand counts, the planted invalid answer's violations are all listed with
 * their paths, and the efficiency figures are the quantiles of the timings the runner recorded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Outcome, type ProtocolServer, startProtocolServer } from '../helpers/protocol-server.ts';
import { reportData } from '../report/run.ts';
import { rows, sobHere as sob } from '../runner/sob-cli.ts';
import { json, PLANTED_ANSWER, PLANTED_SCHEMA, PLANTED_VIOLATIONS, q, violationTriples } from './fixtures.ts';

const S = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
/** Per record: its dataset, its schema, and what the server does with it. */
const RECORDS: [string, string, unknown, 'valid' | 'refuse' | 'invalid' | 'planted' | 'not-json'][] = [
  ['e1', 'Easy', S, 'valid'],
  ['e2', 'Easy', S, 'refuse'],
  ['e3', 'Easy', PLANTED_SCHEMA, 'planted'],
  ['e4', 'Easy', S, 'valid'],
  ['h1', 'Hard', S, 'refuse'],
  ['h2', 'Hard', S, 'not-json'],
  ['h3', 'Hard', S, 'valid'],
  ['h4', 'Hard', S, 'invalid'],
];
// Hand counts. Easy: 4 records, 3 declared, 2 valid. Hard: 4 records, 3 declared, 1 valid.
const EXPECTED = {
  Easy: ['3/4', '2/4', '2/3'],
  Hard: ['3/4', '1/4', '1/3'],
  overall: ['6/8', '3/8', '3/6'],
};
const DELAY_MS = 40;

let tmp: string;
let server: ProtocolServer;
let bench: string;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-compliance-server-'));
  const what = new Map(RECORDS.map(([id, , , w]) => [id, w]));
  server = await startProtocolServer({
    script: (r): Outcome => {
      const w = what.get(r.key ?? '');
      const constrained = (r.body.response_format as { type?: string } | undefined)?.type === 'json_schema';
      if (w === 'refuse' && constrained)
        return {
          kind: 'status',
          status: 400,
          message: "Invalid schema for response_format 'answer': In context=(), 'minimum' is not permitted.",
        };
      const text =
        w === 'planted'
          ? PLANTED_ANSWER
          : w === 'invalid'
            ? '{"n": 0}'
            : w === 'not-json'
              ? 'n is 5'
              : '{"n": 5}';
      return { kind: 'answer', text, delayMs: DELAY_MS, usage: { input: 30, output: 6 } };
    },
  });
  const schemas = join(tmp, 'schemas.jsonl');
  writeFileSync(
    schemas,
    RECORDS.map(([id, category, schema]) =>
      JSON.stringify({
        id,
        category,
        question: `You need to generate a JSON object that matches the schema below. [rid:${id}]`,
        json_schema: schema,
      }),
    ).join('\n'),
  );
  bench = join(tmp, 'bench', 'records.jsonl');
  const b = await sob(['build', 'schemas', schemas, '--out', bench], { cwd: tmp }).done;
  assert.equal(b.code, 0, b.stderr);
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const env = { OPENAI_API_KEY: 'sk-test' };
const counts = (g: Record<string, { count: number; of: number }>) =>
  ['declared_coverage', 'empirical_coverage', 'compliance'].map((k) => `${g[k].count}/${g[k].of}`);

test('sob eval --constrained: declared and empirical coverage and compliance equal the hand counts', async () => {
  const evalDir = join(tmp, 'eval');
  const r = await sob(
    [
      'eval',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--constrained',
      '--benchmark',
      bench,
      '--eval-dir',
      evalDir,
      '--bootstrap-samples',
      '200',
    ],
    { cwd: tmp, env },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  // Refused records are asked once and never again.
  assert.equal(server.counts.get('e2'), 1);
  assert.equal(server.counts.get('h1'), 1);

  const summary = json(join(evalDir, 'evaluation/schema/openai_m/eval_summary.json'));
  const c = summary.compliance;
  assert.deepEqual(counts(c.datasets.Easy), EXPECTED.Easy);
  assert.deepEqual(counts(c.datasets.Hard), EXPECTED.Hard);
  assert.deepEqual(counts(c.overall), EXPECTED.overall);
  assert.deepEqual(
    [c.overall.declared_coverage.rate, c.overall.empirical_coverage.rate, c.overall.compliance.rate],
    [0.75, 0.375, 0.5],
  );
  assert.deepEqual(
    [summary.data_quality.schema_rejected_count, summary.data_quality.json_parse_fail_count],
    [2, 1],
  );

  // The leaderboard the eval wrote, in the paper's shape, says the same.
  const [row] = json(join(evalDir, 'leaderboard-compliance.json'));
  assert.deepEqual(
    [row.model, row.declared_coverage, row.empirical_coverage, row.compliance],
    ['openai_m', 0.75, 0.375, 0.5],
  );
  assert.deepEqual(counts(row.datasets.Hard), EXPECTED.Hard);
  assert.match(
    r.stdout,
    /Empirical coverage: .*\n#\s+Model\s+n\s+Easy\s+Hard\s+Overall\n1\s+openai_m\s+8\s+0\.500\s+0\.250\s+0\.375/,
  );

  // Every violation of the planted answer, with its paths, in the row.
  const recs = rows(join(evalDir, 'evaluation/schema/openai_m/eval_records.jsonl'));
  const e3 = recs.find((x) => x.record_id === 'e3');
  assert.deepEqual(violationTriples(e3.compliance), PLANTED_VIOLATIONS);
  const h4 = recs.find((x) => x.record_id === 'h4');
  assert.deepEqual(violationTriples(h4.compliance), [['/n', '#/properties/n/minimum', 'minimum']]);

  // Efficiency: the medians and 90th percentiles of what the runner recorded for the declared
  // records (time to first token and per token only where it streamed).
  const responses = rows(join(evalDir, 'runs/openai_m/responses.jsonl'));
  const declared = responses.filter((x) => x.eval_info.schema_rejected !== true);
  assert.equal(declared.length, 6);
  for (const k of ['latency_ms', 'ttft_ms', 'tpot_ms'] as const) {
    const xs = declared.map((x) => x.eval_info[k]).filter((x): x is number => typeof x === 'number');
    const e = c.overall.efficiency[k];
    assert.equal(e.n, xs.length, k);
    if (xs.length > 0) assert.deepEqual([e.median, e.p90], [q(xs, 0.5), q(xs, 0.9)], k);
  }
  assert.equal(c.overall.efficiency.latency_ms.n, 6);
  for (const x of declared)
    assert.ok(x.eval_info.latency_ms >= DELAY_MS, `${x.metadata.record_id}: ${x.eval_info.latency_ms} ms`);

  // The report has the compliance section's data: the refused, invalid and unparsable records.
  const d = reportData<{ compliance: { outcomes: string[]; rows: [number, unknown[][]][] } }>(
    join(evalDir, 'report.html'),
  );
  const outcomes = d.compliance.rows[0][1].map((x) => d.compliance.outcomes[x[1] as number]).sort();
  assert.deepEqual(outcomes, [
    'invalid',
    'invalid',
    'not JSON',
    'refused',
    'refused',
    'valid',
    'valid',
    'valid',
  ]);
});

test('without --constrained nothing is refused: every schema is declared (sob run + sob score)', async () => {
  const runDir = join(tmp, 'run-free');
  const r = await sob(
    [
      'run',
      '--model',
      'openai:m',
      '--base-url',
      server.openaiBaseUrl,
      '--benchmark',
      bench,
      '--run-dir',
      runDir,
    ],
    {
      cwd: tmp,
      env,
    },
  ).done;
  assert.equal(r.code, 0, r.stderr);
  const s = await sob(['score', runDir, '--bootstrap-samples', '0'], { cwd: tmp }).done;
  assert.equal(s.code, 0, s.stderr);
  const c = json(join(runDir, 'evaluation/schema/openai_m/eval_summary.json')).compliance;
  // e2 and h1 are answered validly when nobody refuses their schema.
  assert.deepEqual(counts(c.overall), ['8/8', '5/8', '5/8']);
  assert.equal(c.overall.declared_coverage.ci95, null, 'no resamples, no interval');
});
