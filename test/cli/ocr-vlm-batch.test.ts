/**
 * `sob ocr --engine openai:<model> --batch` (and gemini:, and `sob build pdf --batch`): every
 * page's picture goes through the provider's batch interface (OpenAI's Files + Batches API,
 * Gemini's batch mode) of the local protocol server, driven by the real SDKs; nothing is asked
 * online. A page said to be turned goes in a second round, turned; a request the batch fails
 * with a 500 goes to follow-up batches and then falls back to the local pipeline, as do a
 * refusal and an answer without front matter, each named in ocr_pages.jsonl. A run killed with
 * SIGKILL while its batch is at the provider is run again and collects that batch instead of
 * sending the pages again; --batch-deadline leaves pages pending, read locally and saying so.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type Outcome, type SeenRequest, startProtocolServer } from '../helpers/protocol-server.ts';
import { ROOT, sobAsync } from '../helpers/sob-async.ts';
import { front, jsonLines, pageOf, pagesPdf, pictureOf } from '../helpers/vlm-pages.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-vlm-batch-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const env = { OPENAI_API_KEY: 'sk-vlm', GEMINI_API_KEY: 'gm-vlm' };

/** Requests the server saw outside any batch (online chat completions or generateContent). */
const online = (reqs: SeenRequest[]) => reqs.filter((q) => !q.path.startsWith('/batch/'));

describe('sob ocr --engine openai:<model> --batch', () => {
  test('five pages in batches: two read by the model (one sent again turned), a refusal, a 500 and garbage read locally and named; nothing asked online', async () => {
    const script = (req: SeenRequest): Outcome => {
      const { page, turned } = pageOf(req);
      switch (page) {
        case 1:
          return { kind: 'answer', text: `${front(true, 0)}# Page one\n\nThe model's reading of page 1.` };
        case 2:
          return turned
            ? { kind: 'answer', text: `${front(true, 0)}The model's reading of page 2, upright.` }
            : { kind: 'answer', text: `${front(false, 90)}gibberish of a turned page` };
        case 3:
          return { kind: 'refusal', text: 'I cannot help with that document.' };
        case 4:
          return { kind: 'status', status: 500, message: 'internal error' };
        default:
          return { kind: 'answer', text: 'Sure! Here is the page text without any front matter.' };
      }
    };
    const server = await startProtocolServer({ script });
    try {
      const pdf = join(tmp, 'five.pdf');
      writeFileSync(pdf, await pagesPdf(5));
      const out = join(tmp, 'out-five');
      const r = await sobEnv([
        'ocr',
        pdf,
        '--out',
        out,
        '--engine',
        'openai:olmocr-7b',
        '--base-url',
        server.openaiBaseUrl,
        '--cache-dir',
        join(tmp, 'cache-five'),
        '--workers',
        '1',
        '--batch',
        '--batch-poll-ms',
        '5',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(online(server.requests), []);
      // Batch 1: the five pages; batches 2-4: page 4's 500 sent again (3 retries); batch 5: page 2 turned.
      assert.deepEqual(
        server.batches.map((b) => b.requests.length),
        [5, 1, 1, 1, 1],
      );
      const asks = (page: number) => server.requests.filter((q) => pageOf(q).page === page);
      for (const q of server.requests) {
        assert.equal(Math.max(pictureOf(q)!.width, pictureOf(q)!.height), 1288);
        assert.equal(q.model, 'olmocr-7b');
      }
      assert.deepEqual(
        asks(2).map((q) => [q.path, pageOf(q).turned]),
        [
          ['/batch/batch_1', false],
          ['/batch/batch_5', true],
        ],
      );
      assert.equal(asks(4).length, 4);
      assert.deepEqual(
        [1, 3, 5].map((k) => asks(k).length),
        [1, 1, 1],
      );
      const read = (k: number) => readFileSync(join(out, `five_pg${k}.md`), 'utf8');
      assert.equal(read(1), "# Page one\n\nThe model's reading of page 1.\n");
      assert.equal(read(2), "The model's reading of page 2, upright.\n");
      for (const k of [3, 4, 5])
        assert.match(read(k), new RegExp(`Local text of page ${k}, read from its text layer`));
      const pages = jsonLines(join(out, 'ocr_pages.jsonl'));
      assert.deepEqual(
        pages.map((p) => [p.page, p.method, p.engine]),
        [
          [1, 'vlm', 'openai:olmocr-7b'],
          [2, 'vlm', 'openai:olmocr-7b'],
          [3, 'text-layer', null],
          [4, 'text-layer', null],
          [5, 'text-layer', null],
        ],
      );
      assert.equal(pages[0].model.batch, 'batch_1');
      assert.deepEqual(pages[1].model, {
        asks: 2,
        turn: 90,
        front_matter: {
          primary_language: 'en',
          is_rotation_valid: true,
          rotation_correction: 0,
          is_table: false,
          is_diagram: false,
        },
        batch: 'batch_5',
      });
      assert.equal(pages[2].fallback, 'openai:olmocr-7b: refused: I cannot help with that document.');
      assert.match(pages[3].fallback, /^openai:olmocr-7b: server in its batch request: .*500/);
      assert.match(
        pages[4].fallback,
        /^openai:olmocr-7b: no olmOCR front matter in the answer \("Sure! Here is/,
      );
      assert.match(r.stderr, /batches done: 9 pictures sent, 5 answers collected, 1 failed/);
      assert.match(
        r.stderr,
        /openai:olmocr-7b: 2 pages read \(5 answered in batches, 0 requests, 0 from cache, 1 asked again turned upright\); 3 pages read by the local pipeline instead/,
      );
    } finally {
      await server.close();
    }
  });

  test('gemini:<model> --batch: the page goes through Gemini batch mode, inline', async () => {
    const server = await startProtocolServer({
      script: () => ({ kind: 'answer', text: `${front(true, 0)}Gemini's batched reading.` }),
    });
    try {
      const pdf = join(tmp, 'one.pdf');
      writeFileSync(pdf, await pagesPdf(1));
      const out = join(tmp, 'out-gemini');
      const r = await sobEnv([
        'ocr',
        pdf,
        '--out',
        out,
        '--engine',
        'gemini:gemini-2.5-flash',
        '--base-url',
        server.geminiBaseUrl,
        '--no-cache',
        '--batch',
        '--batch-poll-ms',
        '5',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.batches.length, 1);
      assert.equal(server.batches[0].protocol, 'gemini');
      assert.deepEqual(online(server.requests), []);
      assert.equal(pictureOf(server.requests[0])?.height, 1288);
      assert.equal(readFileSync(join(out, 'one_pg1.md'), 'utf8'), "Gemini's batched reading.\n");
    } finally {
      await server.close();
    }
  });

  test('killed with SIGKILL while its batch is at the provider, then run again: the batch is collected, no page is sent twice', async () => {
    let release = false;
    const server = await startProtocolServer({
      // The batch stays in progress until released; then its next status check finds it done.
      batch: {
        states: () => (release ? ['validating', 'in_progress', 'completed'] : ['validating', 'in_progress']),
      },
      script: (req) => ({ kind: 'answer', text: `${front(true, 0)}Model page ${pageOf(req).page}.` }),
    });
    try {
      const dir = join(tmp, 'kill');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'three.pdf'), await pagesPdf(3));
      const args = [
        join(ROOT, 'bin/sob.js'),
        'ocr',
        join(dir, 'three.pdf'),
        '--out',
        join(tmp, 'out-kill'),
        '--engine',
        'openai:olmocr-7b',
        '--base-url',
        server.openaiBaseUrl,
        '--no-cache',
        '--workers',
        '1',
        '--batch',
        '--batch-poll-ms',
        '20',
      ];
      const child = spawn(process.execPath, args, {
        cwd: tmp,
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const deadline = Date.now() + 60_000;
      while (server.batches.length === 0 || server.batches[0].polls < 3) {
        assert.ok(Date.now() < deadline, 'the batch was never polled');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGKILL');
      await exited;
      assert.equal(server.batches.length, 1);
      assert.equal(server.requests.length, 0); // the batch has answered nothing yet
      release = true;
      const r = await sobEnv(args.slice(1));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.batches.length, 1, 'no batch sent again');
      assert.deepEqual(server.requests.map((q) => pageOf(q).page).sort(), [1, 2, 3]);
      assert.deepEqual(online(server.requests), []);
      for (const k of [1, 2, 3])
        assert.equal(readFileSync(join(tmp, 'out-kill', `three_pg${k}.md`), 'utf8'), `Model page ${k}.\n`);
      assert.match(r.stderr, /3 already at the provider \(collected, not sent again\)/);
      assert.match(r.stderr, /batches done: 0 pictures sent, 3 answers collected, 0 failed/);
    } finally {
      await server.close();
    }
  });

  test('--batch-deadline: pages still at the provider are read locally and say so; a re-run collects them', async () => {
    let release = false;
    const server = await startProtocolServer({
      batch: {
        states: () => (release ? ['validating', 'in_progress', 'completed'] : ['validating', 'in_progress']),
      },
      script: (req) => ({ kind: 'answer', text: `${front(true, 0)}Model page ${pageOf(req).page}.` }),
    });
    try {
      const pdf = join(tmp, 'two.pdf');
      writeFileSync(pdf, await pagesPdf(2));
      const out = join(tmp, 'out-deadline');
      const args = [
        'ocr',
        pdf,
        '--out',
        out,
        '--engine',
        'openai:olmocr-7b',
        '--base-url',
        server.openaiBaseUrl,
        '--no-cache',
        '--batch',
        '--batch-poll-ms',
        '50',
        '--batch-deadline',
        '1',
      ];
      const r = await sobEnv(args);
      assert.equal(r.code, 0, r.stderr);
      const pages = jsonLines(join(out, 'ocr_pages.jsonl'));
      assert.deepEqual(
        pages.map((p) => [p.method, p.fallback]),
        [1, 2].map(() => [
          'text-layer',
          'openai:olmocr-7b: still pending in a batch at the provider: re-run the same command to collect it',
        ]),
      );
      assert.match(r.stderr, /--batch-deadline reached: 2 records still pending in batch batch_1/);
      release = true;
      const again = await sobEnv(args);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.batches.length, 1);
      assert.equal(readFileSync(join(out, 'two_pg2.md'), 'utf8'), 'Model page 2.\n');
      assert.deepEqual(
        jsonLines(join(out, 'ocr_pages.jsonl')).map((p) => p.method),
        ['vlm', 'vlm'],
      );
    } finally {
      await server.close();
    }
  });

  test('a batch whose requests meet a 401: the batches stop, every page is read locally naming the error, exit 0', async () => {
    const server = await startProtocolServer({
      script: () => ({ kind: 'status', status: 401, message: 'invalid api key' }),
    });
    try {
      const pdf = join(tmp, 'auth.pdf');
      writeFileSync(pdf, await pagesPdf(2));
      const out = join(tmp, 'out-auth');
      const r = await sobEnv([
        'ocr',
        pdf,
        '--out',
        out,
        '--engine',
        'openai:olmocr-7b',
        '--base-url',
        server.openaiBaseUrl,
        '--no-cache',
        '--batch',
        '--batch-poll-ms',
        '5',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.batches.length, 1, 'no follow-up batch after an auth error');
      const pages = jsonLines(join(out, 'ocr_pages.jsonl'));
      for (const p of pages) {
        assert.equal(p.method, 'text-layer');
        assert.match(p.fallback, /^openai:olmocr-7b: auth in its batch request: .*401/);
      }
      assert.match(r.stderr, /batches done: 2 pictures sent, 0 answers collected, 0 failed; stopped: .*401/);
    } finally {
      await server.close();
    }
  });

  test('--batch without a model engine, or a --batch-* option without --batch: exit 2, one line', async () => {
    const pdf = join(tmp, 'usage.pdf');
    writeFileSync(pdf, await pagesPdf(1));
    const a = await sobEnv(['ocr', pdf, '--out', join(tmp, 'u1'), '--engine', 'tesseract', '--batch']);
    assert.equal(a.code, 2);
    assert.equal(
      a.stderr,
      "sob: --batch is for a vision-language model's pages (--engine openai:<model> or gemini:<model>), not --engine tesseract\n",
    );
    const b = await sobEnv(['ocr', pdf, '--out', join(tmp, 'u2'), '--batch-deadline', '5']);
    assert.equal(b.code, 2);
    assert.equal(b.stderr, 'sob: --batch-deadline only applies with --batch\n');
  });
});

describe('sob build pdf --engine openai:<model> --batch', () => {
  test("the page goes through a batch; the record's context is the model's transcript", async () => {
    const server = await startProtocolServer({
      script: () => ({ kind: 'answer', text: `${front(true, 0)}Invoice total: 1,250 EUR.` }),
    });
    try {
      const dir = join(tmp, 'build');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'invoice.pdf'), await pagesPdf(1));
      const ann = join(tmp, 'build-ann.jsonl');
      writeFileSync(
        ann,
        `${JSON.stringify({
          source_id: 'invoice_pg1',
          question: 'What is the invoice total?',
          json_schema: {
            type: 'object',
            properties: {
              total: { type: 'string' },
              amount: { type: 'integer' },
              currency: { type: 'string' },
            },
            required: ['total', 'amount', 'currency'],
          },
          ground_truth: { total: '1,250 EUR', amount: 1250, currency: 'EUR' },
        })}\n`,
      );
      const out = join(tmp, 'build-bench', 'records.jsonl');
      const r = await sobEnv([
        'build',
        'pdf',
        dir,
        '--annotations',
        ann,
        '--out',
        out,
        '--engine',
        'openai:olmocr-7b',
        '--base-url',
        server.openaiBaseUrl,
        '--cache-dir',
        join(tmp, 'cache-build'),
        '--batch',
        '--batch-poll-ms',
        '5',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.batches.length, 1);
      assert.deepEqual(online(server.requests), []);
      const rec = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]);
      assert.equal(rec.input.context, 'Invoice total: 1,250 EUR.');
      assert.deepEqual(
        JSON.parse(readFileSync(join(tmp, 'build-bench', 'vlm-batch', 'batches.json'), 'utf8')).batches
          .length,
        1,
      );
    } finally {
      await server.close();
    }
  });
});

function sobEnv(args: string[]) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return sobAsync(args, tmp, 170_000);
  } finally {
    for (const k of Object.keys(env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}
