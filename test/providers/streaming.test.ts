/**
 * The runner streams where the provider supports it (issue 11, item 4) and records time to
 * first token, time per output token and total time in eval_info: `sob run` against the local
 * server streaming tokens with scripted delays, for the OpenAI and Gemini protocols.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type Outcome,
  type ProtocolServer,
  type SeenRequest,
  startProtocolServer,
} from '../helpers/protocol-server.ts';
import { rows, sobRun, writeBenchmark } from '../runner/sob-cli.ts';

const FIRST_MS = 2000;
const GAP_MS = 100;
const PIECES = 12;

let tmp: string;
let server: ProtocolServer;
let script: (r: SeenRequest) => Outcome;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sob-stream-'));
  server = await startProtocolServer({ script: (r) => script(r) });
});
after(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * `{"id": "<key>"}` cut into PIECES pieces, streamed FIRST_MS then GAP_MS apart. FIRST_MS is
 * long enough that the first request's own set-up (a connection, the SDK's first stream) stays
 * well inside the 10% tolerance: it is part of a real time to first token.
 */
function streamed(r: SeenRequest, extra: { cut?: boolean; firstMs?: number; gapMs?: number } = {}): Outcome {
  const text = JSON.stringify({ id: r.key, note: 'streamed piece by piece' });
  // PIECES non-empty pieces (one token each, as usage says).
  const cut = (i: number) => Math.floor((i * text.length) / PIECES);
  const pieces = Array.from({ length: PIECES }, (_, i) => text.slice(cut(i), cut(i + 1)));
  return {
    kind: 'answer',
    text,
    usage: { input: 20, output: PIECES },
    stream: { pieces, firstMs: FIRST_MS, gapMs: GAP_MS, ...extra },
  };
}

function run(model: string, bench: string, dir: string, extra: string[] = []) {
  const env = { OPENAI_API_KEY: 'sk-s', GEMINI_API_KEY: 'g-s' };
  return sobRun(server, model, bench, dir, { cwd: tmp, env, extra: ['--concurrency', '1', ...extra] }).done;
}

for (const model of ['openai:gpt-4.1-mini', 'gemini:gemini-2.5-flash']) {
  test(`${model}: streamed tokens with scripted delays: ttft_ms and tpot_ms within 10% of the delays, latency_ms the whole`, async () => {
    script = (r) => streamed(r);
    const ids = ['s1', 's2'].map((k) => `${model[0]}${k}`);
    const dir = join(tmp, `${model[0]}-timing`);
    const res = await run(model, writeBenchmark(join(tmp, `${model[0]}.jsonl`), ids), dir);
    assert.equal(res.code, 0, res.stderr);
    const lines = rows(join(dir, 'responses.jsonl'));
    assert.equal(lines.length, 2);
    for (const l of lines) {
      const { ttft_ms, tpot_ms, latency_ms, output_tokens } = l.eval_info;
      console.log(
        `${model} ${l.metadata.record_id}: ttft ${ttft_ms} ms, tpot ${tpot_ms} ms, latency ${latency_ms} ms`,
      );
      assert.deepEqual(l.output.candidate_response, {
        id: l.metadata.record_id,
        note: 'streamed piece by piece',
      });
      assert.equal(output_tokens, PIECES);
      assert.ok(Math.abs(ttft_ms - FIRST_MS) <= 0.1 * FIRST_MS, `ttft ${ttft_ms} vs ${FIRST_MS}`);
      assert.ok(Math.abs(tpot_ms - GAP_MS) <= 0.1 * GAP_MS, `tpot ${tpot_ms} vs ${GAP_MS}`);
      const whole = FIRST_MS + (PIECES - 1) * GAP_MS;
      assert.ok(latency_ms >= whole && latency_ms <= whole * 1.2, `latency ${latency_ms} vs ${whole}`);
    }
    const seen = server.requests.filter((q) => ids.includes(q.key ?? ''));
    assert.ok(
      seen.every((q) =>
        q.protocol === 'openai'
          ? q.body.stream === true &&
            (q.body.stream_options as { include_usage?: boolean }).include_usage === true
          : q.path.endsWith(':streamGenerateContent'),
      ),
    );
  });

  test(`${model}: a stream cut before its finish reason is a network error, retried; --no-stream asks for whole answers`, async () => {
    script = (r) => streamed(r, { cut: r.n === 1, firstMs: 0, gapMs: 5 });
    const dir = join(tmp, `${model[0]}-cut`);
    const res = await run(model, writeBenchmark(join(tmp, `${model[0]}-cut.jsonl`), [`${model[0]}cut`]), dir);
    assert.equal(res.code, 0, res.stderr);
    const [line] = rows(join(dir, 'responses.jsonl'));
    assert.deepEqual(line.output.candidate_response, {
      id: `${model[0]}cut`,
      note: 'streamed piece by piece',
    });
    assert.equal(line.eval_info.attempts, 2);
    assert.deepEqual(
      rows(join(dir, 'errors.jsonl')).map((e) => `${e.error_class}:${e.outcome}`),
      ['network:retrying'],
    );

    script = (r) => streamed(r, { firstMs: 0, gapMs: 5 });
    const dir2 = join(tmp, `${model[0]}-whole`);
    const key = `${model[0]}whole`;
    const res2 = await run(model, writeBenchmark(join(tmp, `${model[0]}-whole.jsonl`), [key]), dir2, [
      '--no-stream',
    ]);
    assert.equal(res2.code, 0, res2.stderr);
    const [l2] = rows(join(dir2, 'responses.jsonl'));
    assert.equal(l2.eval_info.ttft_ms, undefined);
    assert.equal(l2.eval_info.tpot_ms, undefined);
    const q = server.requests.find((x) => x.key === key)!;
    assert.ok(q.protocol === 'openai' ? q.body.stream === undefined : q.path.endsWith(':generateContent'));
  });
}
