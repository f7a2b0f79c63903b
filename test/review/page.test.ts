/**
 * `sob review` in headless Chromium over a real `sob eval` of three replayed models
 * (test/review/fixture.ts): a reviewer walks five flagged leaves by keyboard (two gold fixes, one
 * typed value the schema refuses first, one accepted alternative, a decision taken back with
 * undo, one dropped record); the server is killed with SIGKILL and started again; the four
 * decisions are in review/decisions.jsonl and the page resumes at the sixth leaf. Also: no token
 * or a path outside the folder is refused; hostile record content stays text; a second reviewer's
 * different decision shows on the first one's page.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BIN, ensureBuilt, sobIn } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';
import { CHROMIUM, launchChromium } from '../report/run.ts';
import { HOSTILE, writeFixture, writeJudgments } from './fixture.ts';

const tmp = tempDir('sob-review-page-');
const ev = join(tmp, 'ev');
const servers: ChildProcess[] = [];

// The page's globals, for the functions Playwright runs in it (the suite compiles without the DOM lib).
declare const document: {
  getElementById(
    id: string,
  ): { textContent: string | null; dataset: Record<string, string>; replaceChildren(): void } | null;
};
declare const window: unknown;

/** Starts `sob review` as a child; resolves with the URL it prints. */
function startReview(reviewer: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, 'review', ev, '--reviewer', reviewer], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  servers.push(child);
  return new Promise((ok, fail) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(out);
      if (m) ok({ child, url: m[1] });
    });
    child.stderr!.on('data', (c) => {
      err += c;
    });
    child.on('exit', (code) => fail(new Error(`sob review exited ${code}: ${err}`)));
  });
}

function decisionLines(): Record<string, unknown>[] {
  const f = join(ev, 'review', 'decisions.jsonl');
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

before(async () => {
  ensureBuilt();
  const f = writeFixture(tmp);
  const r = await sobIn(
    [
      'eval',
      '--benchmark',
      f.benchmark,
      '--allow-invalid-ground-truth',
      ...f.responses.flatMap((x) => ['--model', `replay:${x}`]),
      '--eval-dir',
      ev,
      '--bootstrap-samples',
      '0',
    ],
    { cwd: tmp },
  );
  assert.equal(r.code, 0, r.stderr);
  writeJudgments(ev);
});

after(() => {
  for (const s of servers) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
});

test('the token, the folder and the host are enforced', async () => {
  const { child, url } = await startReview('probe');
  const u = new URL(url);
  const token = u.searchParams.get('token')!;
  const base = `${u.protocol}//${u.host}`;
  const status = async (path: string, init?: RequestInit) => (await fetch(base + path, init)).status;
  assert.equal(await status('/'), 403, 'the page without the token');
  assert.equal(await status('/api/state'), 403, 'the API without the token');
  assert.equal(await status('/api/state?token=x'), 403, 'a wrong token');
  assert.equal(await status(`/api/state?token=${token.slice(0, -1)}A`), 403, 'a token one character off');
  assert.equal(await status(`/api/state?token=${token}`), 200);
  // Outside the folder: a relative escape, an absolute path, a symbolic link out of it.
  writeFileSync(join(tmp, 'secret.png'), 'not for the page');
  mkdirSync(join(ev, 'pics'), { recursive: true });
  symlinkSync(join(tmp, 'secret.png'), join(ev, 'pics', 'link.png'));
  writeFileSync(join(ev, 'pics', 'ok.png'), 'png bytes');
  for (const p of [
    '../secret.png',
    join(tmp, 'secret.png'),
    'pics/link.png',
    '%2e%2e/secret.png',
    '/etc/passwd',
  ])
    assert.equal(await status(`/api/file?token=${token}&path=${encodeURIComponent(p)}`), 403, p);
  // Inside, only images; and a page of another host name (DNS rebinding) is refused.
  assert.equal(await status(`/api/file?token=${token}&path=pics/ok.png`), 200);
  assert.equal(await status(`/api/file?token=${token}&path=runs/replay_m1/manifest.json`), 403);
  const rebound = await new Promise<number>((ok) => {
    import('node:http').then(({ request }) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: u.port,
          path: `/api/state?token=${token}`,
          headers: { host: `evil.example:${u.port}` },
        },
        (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        },
      );
      req.end();
    });
  });
  assert.equal(rebound, 403);
  child.kill('SIGKILL');
});

test('a keyboard walk over five flagged leaves, SIGKILL, restart: four decisions kept, resumed at the sixth', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  const browser = await launchChromium();
  try {
    let { child, url } = await startReview('ana');
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(8000);
    const errors: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith(new URL(url).origin)) outside.push(r.url());
    });
    const at = async () => ({
      index: Number(await page.getAttribute('#cursor', 'data-index')),
      record: await page.textContent('#rid'),
      path: await page.textContent('#leaf-path'),
    });
    const savedAfter = async (key: string) => {
      await page.keyboard.press(key);
      try {
        // `data-at`: set once the leaf after the decision is drawn.
        await page.waitForFunction(() => {
          const s = document.getElementById('status')!;
          return /^(saved|undone)/.test(s.textContent ?? '') && s.dataset.at !== undefined;
        });
      } catch (e) {
        throw new Error(`after ${key}: status ${await page.textContent('#status')}: ${e}`);
      }
    };
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]');
    assert.equal(await page.textContent('#count'), '7 flagged');
    assert.deepEqual(await at(), { index: 0, record: 'r1', path: 'city' });
    // The leaf's reasons and the differences marked: three models, all differing from the gold.
    assert.match(
      (await page.textContent('#reasons'))!,
      /3 of 3 models agree on "Paris", the gold says "Lyon"/,
    );
    assert.equal(await page.$$eval('#leaves tr.cur td.diff', (tds) => tds.length), 3);

    // 1. r1.city: the gold is wrong, the right value typed.
    await page.keyboard.press('w');
    await page.fill('#edit', '"Paris"');
    await page.evaluate(() => document.getElementById('status')!.replaceChildren());
    await savedAfter('Enter');
    assert.deepEqual(await at(), { index: 1, record: 'r1', path: 'year' });
    // 2. r1.year: a value the schema refuses first (a string for an integer): not saved.
    await page.keyboard.press('e');
    await page.fill('#edit', 'nineteen-two');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /^not saved/.test(document.getElementById('status')!.textContent ?? ''));
    assert.match((await page.textContent('#edit-error'))!, /fails the schema: \/year must be integer/);
    assert.equal(decisionLines().length, 1, 'the refused value was not written');
    await page.fill('#edit', '1902');
    await savedAfter('Enter');
    assert.deepEqual(await at(), { index: 2, record: 'r2', path: 'city' });
    // 3. r2.city: accept the agreeing models' "Roma" (model 2 is picked: the first that agrees).
    await page.keyboard.press('2');
    await savedAfter('a');
    assert.deepEqual(await at(), { index: 3, record: 'r3', path: 'year' });
    // 4. r3.year: "gold right", then taken back with undo; then passed over.
    await savedAfter('g');
    assert.equal((await at()).index, 4);
    await savedAfter('u');
    await page.waitForFunction(() => document.getElementById('cursor')!.dataset.index === '3');
    assert.equal(await page.textContent('#mine'), 'not decided');
    await page.keyboard.press('j');
    // 5. r4.name: hostile content, shown as text; the record dropped.
    await page.waitForFunction(() => document.getElementById('rid')!.textContent === 'r4');
    assert.deepEqual(await at(), { index: 4, record: 'r4', path: 'name' });
    assert.ok((await page.textContent('#context'))!.includes(HOSTILE), 'the context shown as text');
    assert.ok((await page.textContent('#question'))!.includes(HOSTILE));
    assert.equal(
      await page.$$eval(
        '#leaves td',
        (tds) => tds.filter((td) => td.textContent!.includes('<script>')).length,
      ),
      1,
    );
    assert.equal(
      (await page.$$('main script, main img[src="x"], #leaves img')).length,
      0,
      'no element made from record text',
    );
    await savedAfter('d');
    assert.deepEqual(await at(), { index: 5, record: 'r5', path: 'year' });
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);

    // The log: six lines (two fixes, an alternative, gold right + its undo, a drop), each whole.
    const lines = decisionLines();
    assert.deepEqual(
      lines.map((d) => [d.decision, d.record_id, d.path, d.after]),
      [
        ['gold_wrong', 'r1', 'city', 'Paris'],
        ['gold_wrong', 'r1', 'year', 1902],
        ['alternative', 'r2', 'city', 'Roma'],
        ['gold_right', 'r3', 'year', 2000],
        ['undo', 'r3', 'year', null],
        ['drop', 'r4', 'name', null],
      ],
    );
    assert.equal(lines[2].model, 'replay_m2');
    assert.equal(lines[4].undoes, lines[3].id);
    assert.ok(
      lines.every((d) => d.reviewer === 'ana' && typeof d.time === 'string' && typeof d.reason === 'string'),
    );
    assert.match(String(lines[0].reason), /models_agree: 3 of 3/);
    assert.equal(lines[0].before, 'Lyon');

    // SIGKILL, then a new server (new port, new token): the same four decisions, resumed at the sixth.
    child.kill('SIGKILL');
    await new Promise((ok) => child.once('exit', ok));
    ({ child, url } = await startReview('ana'));
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]');
    await page.waitForFunction(() => document.getElementById('rid')!.textContent === 'r5');
    assert.deepEqual(await at(), { index: 5, record: 'r5', path: 'year' });
    const marks = await page.$$eval('#list li', (lis) =>
      lis.map((li) => li.querySelector('.dec')?.textContent ?? ''),
    );
    assert.deepEqual(marks, ['gold_wrong', 'gold_wrong', 'alternative', '', 'drop', '', '']);

    // A second reviewer disagrees on r1.city: both kept; ana's page says so.
    const ben = await startReview('ben');
    const bu = new URL(ben.url);
    const res = await fetch(`${bu.origin}/api/decision?token=${bu.searchParams.get('token')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        record_id: 'r1',
        path: 'city',
        decision: 'gold_right',
        note: 'Lyon per the registry',
      }),
    });
    assert.equal(res.status, 200);
    await page.reload();
    await page.waitForSelector('body[data-ready="1"]');
    await page.click('#list li >> nth=0');
    await page.waitForFunction(() => document.getElementById('leaf-path')!.textContent === 'city');
    assert.equal(await page.textContent('#others .conflict'), 'ben: gold_right  (disagrees with yours)');
    assert.deepEqual(
      decisionLines()
        .filter((d) => d.record_id === 'r1' && d.path === 'city')
        .map((d) => `${d.reviewer} ${d.decision}`),
      ['ana gold_wrong', 'ben gold_right'],
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(outside, [], 'no request left the local server');
  } finally {
    await browser.close();
  }
});

test('a record with a page image: shown from inside the folder, named but not served from outside', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip('Debian chromium is not installed (apt-get install chromium): the browser test cannot run');
    return;
  }
  // A folder of response files (the SOB layout); the record's attachments are relative to it.
  const dir = join(tmp, 'with-image');
  mkdirSync(join(dir, 'pages'), { recursive: true });
  // A 2x1 PNG.
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwnwEIGAAd8AL+Hbn6lQAAAABJRU5ErkJggg==',
    'base64',
  );
  writeFileSync(join(dir, 'pages', 'p1.png'), png);
  writeFileSync(join(tmp, 'outside.png'), png);
  const line = (model: string, year: number) =>
    `${JSON.stringify({
      metadata: { record_id: 'img1', model_id: model, source: 'image' },
      input: {
        context: 'Page one, 1999.',
        question: 'Year?',
        json_schema: { type: 'object', properties: { year: { type: 'integer' } } },
        attachments: [
          { kind: 'image', path: 'pages/p1.png', sha256: 'x', mime: 'image/png' },
          { kind: 'image', path: '../outside.png', sha256: 'y', mime: 'image/png' },
        ],
      },
      output: { ground_truth: { year: 1998 }, candidate_response: { year } },
    })}\n`;
  writeFileSync(join(dir, 'response_a_image.jsonl'), line('a', 1999));
  writeFileSync(join(dir, 'response_b_image.jsonl'), line('b', 1999));
  const { prepareReview, ReviewServer } = await import('../../src/app/review.ts');
  const server = new ReviewServer(prepareReview({ evalDir: dir }), 'ana');
  const url = await server.listen();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('img.page');
    assert.deepEqual(await at1(page), { rid: 'img1', path: 'year' });
    const img = await page.$eval('img.page', (i) => {
      const im = i as unknown as { naturalWidth: number; naturalHeight: number; alt: string };
      return [im.naturalWidth, im.naturalHeight, im.alt];
    });
    assert.deepEqual(img, [2, 1, 'pages/p1.png']);
    assert.equal((await page.$$('img.page')).length, 1, 'only the image inside the folder');
    assert.match(
      (await page.textContent('#images'))!,
      /\.\.\/outside\.png: outside the evaluation folder: not served/,
    );
  } finally {
    await browser.close();
    await server.close();
  }
});

async function at1(page: import('playwright-core').Page) {
  return { rid: await page.textContent('#rid'), path: await page.textContent('#leaf-path') };
}
