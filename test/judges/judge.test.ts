/**
 * `sob judge` against the local OpenAI-protocol server with scripted judge answers: thresholds
 * per dimension, a malformed answer becomes judge_error after its retries, planted defects are
 * caught before any judge is asked, agreement between two judges, and resume.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'sob-judge-'));
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome = () => ({ kind: 'answer', text: '{}' });

before(async () => {
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const CONTEXT = 'The Harbour Light was built in 1872 by Ada Finch. It stands 31 metres tall on Gull Rock.';
const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, built: { type: 'integer' }, builder: { type: 'string' } },
  required: ['name', 'built', 'builder'],
};
function rec(
  id: string,
  gt: Record<string, unknown> = { name: 'Harbour Light', built: 1872, builder: 'Ada Finch' },
  schema: object = SCHEMA,
) {
  return JSON.stringify({
    metadata: { record_id: id, source: 'text', schema_complexity: 'easy' },
    input: { context: CONTEXT, question: 'Which lighthouse, when, by whom?', json_schema: schema },
    output: { ground_truth: gt },
  });
}

const scores = (accuracy: number, grounding: number, schema_quality: number) =>
  JSON.stringify({ accuracy, grounding, schema_quality, needs_multiple_turns: null, rationale: 'scripted' });

function sob(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], {
      env: { ...process.env, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('thresholds per dimension, judge_error after retries, planted defects never reach a judge', async () => {
  const records = join(tmp, 'records.jsonl');
  writeFileSync(
    records,
    [
      rec('good'),
      rec('low-grounding'),
      rec('edge-60'),
      rec('malformed'),
      rec('bad-gt', { name: 'Harbour Light', built: '1872', builder: 'Ada Finch' }), // violates its schema
      rec('ungrounded', { name: 'Harbour Light', built: 1872, builder: 'Bram Stoker' }),
      rec(
        'two-props',
        { name: 'Harbour Light', built: 1872 },
        { type: 'object', properties: { name: { type: 'string' }, built: { type: 'integer' } } },
      ),
      rec('good'), // duplicate id
    ].join('\n'),
  );
  script = (r) => {
    if (r.key === 'good') return { kind: 'answer', text: scores(90, 95, 85) };
    if (r.key === 'low-grounding') return { kind: 'answer', text: scores(90, 59, 85) };
    if (r.key === 'edge-60') return { kind: 'answer', text: scores(60, 60, 60) };
    if (r.key === 'malformed') return { kind: 'answer', text: 'I think this record is pretty good!' };
    return { kind: 'answer', text: scores(100, 100, 100) };
  };
  const out = join(tmp, 'out');
  const r = await sob([
    'judge',
    records,
    '--judge',
    'openai:judge',
    '--base-url',
    server.openaiBaseUrl,
    '--out',
    out,
    '--retry-base-ms',
    '5',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /2 accepted, 6 rejected \(4 by the checks: 1 for ground-truth values not found in the context \(--allow-ungrounded keeps them\), 3 for other checks, 1 judge errors\)/,
  );

  const accepted = lines(join(out, 'accepted.jsonl')).map(
    (x) => (x.metadata as { record_id: string }).record_id,
  );
  assert.deepEqual(accepted, ['good', 'edge-60']);
  const rejected = new Map(
    lines(join(out, 'rejected.jsonl')).map((x) => [
      `${x.record_id}@${x.origin}`,
      (x.reasons as string[]).join(' | '),
    ]),
  );
  const reasonOf = (id: string) => [...rejected.entries()].find(([k]) => k.startsWith(`${id}@`))?.[1] ?? '';
  assert.match(reasonOf('low-grounding'), /grounding 59 < 60/);
  assert.match(reasonOf('malformed'), /judge_error \(openai:judge\): not JSON/);
  assert.match(reasonOf('bad-gt'), /ground truth does not validate/);
  assert.match(reasonOf('ungrounded'), /builder is not found in the context/);
  assert.match(reasonOf('two-props'), /at least 3 are needed/);
  assert.match([...rejected.values()].join('\n'), /duplicate record_id "good"/);

  // No judge was asked about a record the checks rejected; the malformed answer was asked 3 times.
  for (const id of ['bad-gt', 'ungrounded', 'two-props']) assert.equal(server.counts.get(id) ?? 0, 0, id);
  assert.equal(server.counts.get('malformed'), 3);
  assert.equal(server.counts.get('good'), 1);
  const judgments = lines(join(out, 'judgments.jsonl'));
  assert.equal(judgments.length, 4);
  const m = judgments.find((j) => j.record_id === 'malformed')!;
  assert.equal(m.attempts, 3);
  assert.match(String(m.judge_error), /not JSON/);
  assert.equal(typeof m.prompt_sha256, 'string');
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.deepEqual(summary.per_source.text, { records: 4, accepted: 2, acceptance: 0.5 });

  // Resume: judged records are not asked again; the judge_error one is.
  const before = server.total;
  const again = await sob([
    'judge',
    records,
    '--judge',
    'openai:judge',
    '--base-url',
    server.openaiBaseUrl,
    '--out',
    out,
    '--retry-base-ms',
    '5',
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total - before, 3); // only 'malformed', three attempts
  assert.equal(server.counts.get('good'), 1);
});

test('two judges: agreement statistics and the combination rule', async () => {
  const records = join(tmp, 'two.jsonl');
  writeFileSync(records, ['r1', 'r2', 'r3', 'r4'].map((id) => rec(id)).join('\n'));
  // Judge A (model a) and judge B (model b) differ on r3 only.
  script = (r) => {
    const b = r.model === 'b';
    const table: Record<string, [number, number]> = {
      r1: [90, 90],
      r2: [40, 40],
      r3: [80, 30],
      r4: [70, 75],
    };
    const [sa, sb] = table[r.key ?? ''] ?? [0, 0];
    return { kind: 'answer', text: scores(b ? sb : sa, 90, 90) };
  };
  const out = join(tmp, 'two-out');
  const r = await sob([
    'judge',
    records,
    '--judge',
    'openai:a',
    '--judge',
    'openai:b',
    '--base-url',
    server.openaiBaseUrl,
    '--combine',
    'mean',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  const ag = s.agreement[0];
  assert.equal(ag.n, 4);
  // Accept/reject: A = [T,F,T,T], B = [T,F,F,T]: po 0.75, pe 0.75*0.5 + 0.25*0.5 = 0.5, kappa 0.5
  assert.equal(ag.kappa, 0.5);
  // Accuracy scores A [90,40,80,70], B [90,40,30,75]: |diff| = [0,0,50,5] -> 13.75
  assert.equal(ag.mean_abs_diff.accuracy, 13.75);
  // Ranks A [4,1,3,2], B [4,2,1,3]: d = [0,-1,2,-1], sum d^2 = 6, rho = 1 - 6*6/(4*15) = 0.4
  assert.ok(Math.abs(ag.spearman.accuracy - 0.4) < 1e-12, String(ag.spearman.accuracy));
  // Both judges gave grounding 90 to every record: no ranks to correlate (null), no difference.
  assert.equal(ag.spearman.grounding, null);
  assert.equal(ag.mean_abs_diff.grounding, 0);
  assert.match(r.stdout, /kappa 0\.500, spearman accuracy 0\.400 grounding n\/a/);
  // Histograms in 10-point bins: judge A's accuracy 40, 70, 80, 90.
  assert.deepEqual(s.histograms['openai:a'].accuracy, [0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0]);
  assert.deepEqual(s.histograms['openai:b'].grounding, [0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0]);
  // The mean rule's reason names the mean that fell short.
  const r3 = lines(join(out, 'rejected.jsonl')).find((x) => x.record_id === 'r3')!;
  assert.equal(r3.stage, 'quality');
  assert.match((r3.reasons as string[])[0], /^mean accuracy 55 < 60/);
  // Mean rule: r3 averages 55 < 60 -> rejected; r1, r4 accepted.
  const accepted = lines(join(out, 'accepted.jsonl')).map(
    (x) => (x.metadata as { record_id: string }).record_id,
  );
  assert.deepEqual(accepted, ['r1', 'r4']);
  assert.ok(existsSync(join(out, 'judgments.jsonl')));
});
