/**
 * `sob build pdf` reads only what its annotations name: a PDF none of whose pages (nor the whole
 * document) is named is not opened, and of a named PDF only the named pages are read, except where
 * the running headers need every page (margins dropped, three pages or more); a page's transcript
 * is the same as when every page is read.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { OcrEngine, pdfToTranscripts } from '../../sources/pdf/index.ts';
import { loadPdfs, pagesNamed } from '../../sources/pdf-pages.ts';
import { HEADER, runningHeadsPdf, tempDir, twoColumnPdf } from '../kit/index.ts';

const dir = tempDir('sob-pdf-asked-');
before(async () => {
  writeFileSync(join(dir, 'article.pdf'), await twoColumnPdf());
  writeFileSync(join(dir, 'report.pdf'), await runningHeadsPdf());
  writeFileSync(join(dir, 'broken.pdf'), 'not a PDF');
});

/** The pages the loader transcribed, as its log names them (`report.pdf 2/3`). */
async function load(only: Set<string> | undefined, opts: Record<string, unknown> = {}) {
  const lines: string[] = [];
  const r = await loadPdfs(
    dir,
    { ocr: 'never', cacheDir: null, log: (l: string) => lines.push(l), ...opts },
    only,
  );
  const read = lines
    .map((l) => /([^/]+\.pdf): page (\d+)\/(\d+) \(/.exec(l))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]}/${m[3]}`)
    .sort();
  return { read, items: new Map(r.items.map((it) => [it.id, it.context])), problems: r.problems };
}

test('pagesNamed: the whole document, its named pages, or none', () => {
  assert.equal(pagesNamed('report', undefined), 'all');
  assert.equal(pagesNamed('report', new Set(['report', 'report_pg2'])), 'all');
  assert.deepEqual(
    [...pagesNamed('report', new Set(['report_pg2', 'report_pg3', 'reports_pg1', 'report_pgx']))],
    [2, 3],
  );
  assert.equal((pagesNamed('report', new Set(['article_pg1'])) as Set<number>).size, 0);
});

test('margins kept: only the named page of the named PDF is read; the other PDF is not opened', async () => {
  const all = await load(undefined, { dropMargins: false });
  assert.deepEqual(
    all.problems.map((p) => p.origin.replace(/.*\//, '')),
    ['broken.pdf'],
  );
  assert.deepEqual(all.read, ['article.pdf 1/1', 'report.pdf 1/3', 'report.pdf 2/3', 'report.pdf 3/3']);
  const one = await load(new Set(['report_pg2']), { dropMargins: false });
  assert.deepEqual(one.read, ['report.pdf 2/3']);
  assert.deepEqual([...one.items.keys()], ['report_pg2']);
  assert.equal(one.items.get('report_pg2'), all.items.get('report_pg2'));
  assert.equal(one.problems.length, 0);
});

test('margins dropped: only the named page returned, its running header dropped as when every page is read', async () => {
  const all = await load(undefined);
  const one = await load(new Set(['report_pg2']));
  assert.deepEqual(one.read, ['report.pdf 2/3']);
  assert.deepEqual([...one.items.keys()], ['report_pg2']);
  assert.equal(one.items.get('report_pg2'), all.items.get('report_pg2'));
  assert.ok(!one.items.get('report_pg2')!.includes(HEADER), 'the running header is dropped as before');
});

test('the whole document named: every page and the document item', async () => {
  const r = await load(new Set(['report']));
  assert.deepEqual(r.read, ['report.pdf 1/3', 'report.pdf 2/3', 'report.pdf 3/3']);
  assert.deepEqual([...r.items.keys()], ['report_pg1', 'report_pg2', 'report_pg3', 'report']);
});

test('a PDF not named is not opened; named, its failure is said', async () => {
  assert.equal((await load(new Set(['report_pg1']), { dropMargins: false })).problems.length, 0);
  const named = await load(new Set(['broken_pg1']), { dropMargins: false });
  assert.equal(named.problems.length, 1);
  assert.match(named.problems[0].reasons[0], /PDF could not be transcribed/);
});

test('OCR runs on the named pages only (1 of 3), on all 3 where the running headers need them', async () => {
  const engine = new OcrEngine({ workers: 1, cacheDir: tempDir('sob-pages-asked-'), engine: 'tesseract' });
  try {
    const opts = { engine, ocr: 'always' as const, findUpright: false, pages: new Set([2]) };
    const kept = await pdfToTranscripts(join(dir, 'report.pdf'), { ...opts, dropMargins: false });
    assert.deepEqual(
      kept.map((p) => p.page),
      [2],
    );
    assert.equal(engine.recognised, 1);
    const dropped = await pdfToTranscripts(join(dir, 'report.pdf'), opts);
    assert.deepEqual(
      dropped.map((p) => p.page),
      [2],
    );
    // The two other pages OCR'd now, the named one taken from the cache: all 3 were needed.
    assert.equal(engine.recognised, 1 + 2);
    assert.equal(engine.cached, 1);
  } finally {
    await engine.close();
  }
});
