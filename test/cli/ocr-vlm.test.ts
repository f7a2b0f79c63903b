/**
 * `sob ocr --engine openai:<model>` and `gemini:<model>`: the real command and the real SDKs
 * against the local protocol server, which answers each page (told apart by the size of its
 * picture: the test's pages differ in width) with scripted olmOCR-style transcripts: front
 * matter and text, a page said to be turned (asked once more, turned), a refusal, a 500 every
 * time, and an answer with no front matter. Pages the model fails on are read by the local
 * pipeline and named in ocr_pages.jsonl; a run killed with SIGKILL and run again asks no
 * answered page twice.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { OLMOCR_PROMPT, parseOlmocrAnswer } from '../../src/runner/vlm-pages.ts';
import { type Outcome, type SeenRequest, startProtocolServer } from '../helpers/protocol-server.ts';
import { ROOT, sobAsync } from '../helpers/sob-async.ts';
import { front, jsonLines, pageOf, pagesPdf, pictureOf } from '../helpers/vlm-pages.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-vlm-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const env = { OPENAI_API_KEY: 'sk-vlm', GEMINI_API_KEY: 'gm-vlm' };

describe('olmOCR answers', () => {
  test('front matter read (True/False, integers, null); no front matter or a bad rotation is no answer', () => {
    const a = parseOlmocrAnswer(`${front(false, 270)}# Title\n\nBody text.`);
    assert.deepEqual(a, {
      front: {
        primary_language: 'en',
        is_rotation_valid: false,
        rotation_correction: 270,
        is_table: false,
        is_diagram: false,
      },
      body: '# Title\n\nBody text.',
    });
    const none = parseOlmocrAnswer(
      '---\nprimary_language: null\nis_rotation_valid: true\nrotation_correction: 0\nis_table: true\nis_diagram: false\n---\n',
    );
    assert.equal(none?.front.primary_language, null);
    assert.equal(none?.body, '');
    assert.equal(parseOlmocrAnswer('Just some text, no front matter.'), undefined);
    assert.equal(parseOlmocrAnswer(front(true, 45)), undefined);
  });
});

describe('sob ocr --engine openai:<model> against an OpenAI-compatible server', () => {
  test('five pages: two read by the model (one asked again turned upright), a refusal, a 500 and garbage read locally and named', async () => {
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
      const r = await sobAsyncEnv([
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
      ]);
      assert.equal(r.code, 0, r.stderr);
      const asks = (page: number) => server.requests.filter((q) => pageOf(q).page === page);
      // olmOCR's prompt and render size: the longest side 1,288 px.
      for (const q of server.requests) {
        assert.ok(q.userText.includes(JSON.stringify(OLMOCR_PROMPT).slice(1, 60)), 'the olmOCR prompt');
        const p = pictureOf(q)!;
        assert.equal(Math.max(p.width, p.height), 1288);
        assert.equal(q.model, 'olmocr-7b');
      }
      assert.equal(asks(1).length, 1);
      // Page 2: said to be turned 90 degrees, asked once more with the picture turned.
      assert.deepEqual(
        asks(2).map((q) => pageOf(q).turned),
        [false, true],
      );
      assert.equal(asks(3).length, 1); // a refusal is the model's word: not asked again
      assert.equal(asks(4).length, 4); // a 500 each time: the first ask and 3 retries (10 requests in all)
      assert.equal(asks(5).length, 2); // no front matter: asked once more
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
      assert.equal(pages[0].fallback, undefined);
      assert.equal(pages[2].fallback, 'openai:olmocr-7b: refused: I cannot help with that document.');
      assert.match(pages[3].fallback, /^openai:olmocr-7b: server: .*500/);
      assert.match(
        pages[4].fallback,
        /^openai:olmocr-7b: no olmOCR front matter in the answer \("Sure! Here is/,
      );
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
      });
      assert.match(
        r.stderr,
        /openai:olmocr-7b: 2 pages read \(10 requests, 0 from cache, 1 asked again turned upright\); 3 pages read by the local pipeline instead/,
      );
    } finally {
      await server.close();
    }
  });

  test('gemini:<model>: the page goes inline, the answer is read the same way', async () => {
    const server = await startProtocolServer({
      script: () => ({ kind: 'answer', text: `${front(true, 0)}Gemini's reading.` }),
    });
    try {
      const pdf = join(tmp, 'one.pdf');
      writeFileSync(pdf, await pagesPdf(1));
      const out = join(tmp, 'out-gemini');
      const r = await sobAsyncEnv([
        'ocr',
        pdf,
        '--out',
        out,
        '--engine',
        'gemini:gemini-2.5-flash',
        '--base-url',
        server.geminiBaseUrl,
        '--no-cache',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 1);
      assert.equal(pictureOf(server.requests[0])?.height, 1288);
      assert.equal(readFileSync(join(out, 'one_pg1.md'), 'utf8'), "Gemini's reading.\n");
    } finally {
      await server.close();
    }
  });

  test("sob build pdf --engine openai:<model>: the record's context is the model's transcript", async () => {
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
      const r = await sobAsyncEnv([
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
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 1);
      const rec = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]);
      assert.equal(rec.input.context, 'Invoice total: 1,250 EUR.');
    } finally {
      await server.close();
    }
  });

  test('killed with SIGKILL while a page is asked, then run again: no answered page is asked twice', async () => {
    let hang = true;
    const script = (req: SeenRequest): Outcome => {
      const { page } = pageOf(req);
      if (page === 3 && hang) return { kind: 'slow', delayMs: 120_000, text: 'never' };
      return { kind: 'answer', text: `${front(true, 0)}Model page ${page}.` };
    };
    const server = await startProtocolServer({ script });
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
        '--cache-dir',
        join(tmp, 'cache-kill'),
        '--workers',
        '1',
      ];
      const child = spawn(process.execPath, args, {
        cwd: tmp,
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const deadline = Date.now() + 60_000;
      while (!server.requests.some((q) => pageOf(q).page === 3)) {
        assert.ok(Date.now() < deadline, 'page 3 never asked');
        await new Promise((r) => setTimeout(r, 50));
      }
      // Pages 1 and 2 were answered before page 3 was asked; a moment for their answers to be kept.
      await new Promise((r) => setTimeout(r, 1000));
      child.kill('SIGKILL');
      await exited;
      const before = server.requests.map((q) => pageOf(q).page).sort();
      assert.deepEqual(before, [1, 2, 3]);
      hang = false;
      const r = await sobAsyncEnv(args.slice(1));
      assert.equal(r.code, 0, r.stderr);
      const pages = server.requests.map((q) => pageOf(q).page).sort();
      // Page 3 had no answer: asked again; pages 1 and 2 come from the cache.
      assert.deepEqual(pages, [1, 2, 3, 3]);
      for (const k of [1, 2, 3])
        assert.equal(readFileSync(join(tmp, 'out-kill', `three_pg${k}.md`), 'utf8'), `Model page ${k}.\n`);
      assert.match(r.stderr, /3 pages read \(1 request, 2 from cache/);
    } finally {
      await server.close();
    }
  });
});

function sobAsyncEnv(args: string[]) {
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
