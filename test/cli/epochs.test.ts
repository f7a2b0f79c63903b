/**
 * `sob eval --epochs N`: each record asked N times over HTTP (a local OpenAI-protocol server that
 * answers differently per epoch), each answer kept with its epoch, each epoch scored on its own;
 * epochs.json gives the epochs' means, their mean and SD, and the records that changed, checked
 * by hand here. A SIGKILL in the middle and a re-run ask no (record, epoch) twice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { readLines, rows, sob, until } from '../runner/sob-cli.ts';

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome;
const env = { OPENAI_API_KEY: 'sk-epochs' };

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-epochs-'));
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, year: { type: 'integer' } },
  required: ['name', 'year'],
};

/** Records `<prefix><i>`: the name and year of item i (year 1900 + i), context tagged for the server. */
function benchmark(file: string, prefix: string, n: number): string {
  writeFileSync(
    file,
    Array.from(
      { length: n },
      (_, i) =>
        `${JSON.stringify({
          metadata: { record_id: `${prefix}${i}`, schema_complexity: 'easy', source: 'text' },
          input: {
            context: `[rid:${prefix}${i}] Item ${i} was made in ${1900 + i}.`,
            question: 'Name and year?',
            json_schema: SCHEMA,
          },
          output: { ground_truth: { name: `item ${i}`, year: 1900 + i } },
        })}\n`,
    ).join(''),
  );
  return file;
}

function evalArgs(bench: string, dir: string, extra: string[] = []): string[] {
  return [
    'eval',
    '--model',
    'openai:m',
    '--base-url',
    server.openaiBaseUrl,
    '--benchmark',
    bench,
    '--eval-dir',
    dir,
    '--bootstrap-samples',
    '0',
    '--no-report',
    '--epochs',
    '3',
    ...extra,
  ];
}

test('--epochs 3: per-epoch answers and scores, and the between-epoch figures, as computed by hand', async () => {
  // The n-th request for a record is its epoch n (epochs run one after another). Epoch 1: all
  // right; epoch 2: e0's year wrong; epoch 3: e0's and e1's years wrong.
  script = (r) => {
    const i = Number(r.key!.slice(1));
    const wrong = (r.n === 2 && i === 0) || (r.n === 3 && i <= 1);
    return { kind: 'answer', text: JSON.stringify({ name: `item ${i}`, year: wrong ? 1800 : 1900 + i }) };
  };
  const res = await sob(evalArgs(benchmark(join(tmp, 'e.jsonl'), 'e', 4), 'ev'), { cwd: tmp, env }).done;
  assert.equal(res.code, 0, res.stderr);
  for (const id of ['e0', 'e1', 'e2', 'e3']) assert.equal(server.counts.get(id), 3, id);

  // Each answer kept with its epoch, in that epoch's run directory.
  const files = ['ev/runs/openai_m', 'ev/epochs/2/runs/openai_m', 'ev/epochs/3/runs/openai_m'];
  files.forEach((d, e) => {
    const lines = rows(join(tmp, d, 'responses.jsonl'));
    assert.equal(lines.length, 4);
    assert.ok(lines.every((l) => l.metadata.epoch === e + 1));
    const e0 = lines.find((l) => l.metadata.record_id === 'e0');
    assert.equal(e0.output.candidate_response.year, e === 0 ? 1900 : 1800);
  });
  // Per-epoch rows: e0 has 1 of its 2 leaves right from epoch 2 on, e1 in epoch 3.
  const va = (e: number, id: string) =>
    rows(
      join(tmp, e === 1 ? 'ev/evaluation' : `ev/epochs/${e}/evaluation`, 'text/openai_m/eval_records.jsonl'),
    ).find((r) => r.record_id === id).leaf_value_em;
  assert.deepEqual(
    [1, 2, 3].map((e) => ['e0', 'e1', 'e2'].map((id) => va(e, id))),
    [
      [1, 1, 1],
      [0.5, 1, 1],
      [0.5, 0.5, 1],
    ],
  );

  const [entry] = JSON.parse(readFileSync(join(tmp, 'ev/epochs.json'), 'utf8'));
  assert.equal(entry.subject, 'text/openai_m');
  assert.equal(entry.records, 4);
  const v = entry.metrics.leaf_value_em;
  assert.equal(v.name, 'Value Accuracy');
  // Epoch means: 4/4, 3.5/4, 3/4; their mean 0.875; SD sqrt((0.125^2 + 0 + 0.125^2) / 2) = 0.125.
  assert.deepEqual(v.per_epoch, [1, 0.875, 0.75]);
  assert.equal(v.mean, 0.875);
  assert.ok(Math.abs(v.sd - 0.125) < 1e-12, String(v.sd));
  // e0 and e1 change between epochs, e2 and e3 never: 2 of 4.
  assert.equal(v.changed, 2);
  assert.equal(v.changed_share, 0.5);
  // Perfect Response: 4/4, 3/4, 2/4 -> mean 0.75, SD 0.25; JSON Pass never moves.
  const p = entry.metrics.strict_json_em;
  assert.deepEqual(p.per_epoch, [1, 0.75, 0.5]);
  assert.equal(p.mean, 0.75);
  assert.ok(Math.abs(p.sd - 0.25) < 1e-12);
  assert.deepEqual(
    { ...entry.metrics.schema_compliance, name: undefined },
    { name: undefined, per_epoch: [1, 1, 1], mean: 1, sd: 0, changed: 0, changed_share: 0 },
  );
  const md = readFileSync(join(tmp, 'ev/epochs.md'), 'utf8');
  assert.match(
    md,
    /\| text\/openai_m \| Value Accuracy \| 1\.000 \| 0\.875 \| 0\.750 \| 0\.875 \| 0\.125 \| 2\/4 \(50\.0%\) \|/,
  );
  assert.match(res.stdout, /\| text\/openai_m \| Value Accuracy \| 1\.000 \| 0\.875 \| 0\.750 \|/);
  // The leaderboard stays epoch 1's (the first sample), as a plain sob eval would give.
  assert.equal(JSON.parse(readFileSync(join(tmp, 'ev/leaderboard.json'), 'utf8'))[0].value_accuracy, 1);

  // Re-running the same command asks nothing: every (record, epoch) is answered.
  const total = server.total;
  const again = await sob(evalArgs(join(tmp, 'e.jsonl'), 'ev'), { cwd: tmp, env }).done;
  assert.equal(again.code, 0, again.stderr);
  assert.equal(server.total, total);
});

test('--epochs 3: SIGKILL in the middle of epoch 2, then a re-run: no (record, epoch) asked twice, each answered once', async () => {
  script = (r) => ({
    kind: 'answer',
    text: JSON.stringify({ name: `item ${r.key!.slice(1)}`, year: 1900 + Number(r.key!.slice(1)) }),
    delayMs: 20,
  });
  const n = 10;
  const bench = benchmark(join(tmp, 'k.jsonl'), 'k', n);
  const dirs = ['kv/runs/openai_m', 'kv/epochs/2/runs/openai_m', 'kv/epochs/3/runs/openai_m'].map((d) =>
    join(tmp, d, 'responses.jsonl'),
  );
  const first = sob(evalArgs(bench, 'kv', ['--concurrency', '2']), { cwd: tmp, env });
  await until(() => readLines(dirs[1]).length >= 3, 60_000, 'three answers of epoch 2');
  first.child.kill('SIGKILL');
  const killed = await first.done;
  assert.equal(killed.signal, 'SIGKILL');
  const killedAt = Date.now();
  // What was on disk at the kill, per record: the epochs it was answered in.
  const writtenBefore = new Map<string, number>();
  for (const f of dirs)
    for (const l of readLines(f)) {
      const id = JSON.parse(l).metadata.record_id as string;
      writtenBefore.set(id, (writtenBefore.get(id) ?? 0) + 1);
    }
  assert.equal(readLines(dirs[0]).length, n);
  assert.ok(readLines(dirs[1]).length < n, 'epoch 2 finished before the kill');

  const res = await sob(evalArgs(bench, 'kv', ['--concurrency', '2']), { cwd: tmp, env }).done;
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /epoch 2\/3: resuming .*: \d+\/10 records already answered/);
  dirs.forEach((f, e) => {
    const ids = readLines(f).map((l) => JSON.parse(l).metadata.record_id as string);
    assert.equal(ids.length, n, `epoch ${e + 1}`);
    assert.equal(new Set(ids).size, n, `epoch ${e + 1}: a record answered twice`);
    assert.ok(readLines(f).every((l) => JSON.parse(l).metadata.epoch === e + 1));
  });
  // After the kill each record is asked exactly as often as it had epochs left unanswered.
  for (let i = 0; i < n; i++) {
    const id = `k${i}`;
    const after = server.requests.filter((q) => q.key === id && q.time >= killedAt).length;
    assert.equal(after, 3 - (writtenBefore.get(id) ?? 0), id);
  }
  const [entry] = JSON.parse(readFileSync(join(tmp, 'kv/epochs.json'), 'utf8'));
  assert.ok(entry, res.stderr);
  assert.equal(entry.records, n);
  assert.deepEqual(entry.metrics.leaf_value_em.per_epoch, [1, 1, 1]);
});
