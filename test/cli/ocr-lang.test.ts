/**
 * `sob ocr --lang eng+fra`: tesseract.js with the French traineddata from npm
 * (`@tesseract.js-data/fra`) beside the English one, on a French page the test prints and scans.
 * The accented words come out right with French and mostly wrong without; ocr_pages.jsonl records
 * the languages each OCR'd page was read in; an unknown language is a usage error naming the
 * installed ones.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { openPdfData, renderPagePng } from '../../sources/pdf/pdfjs.ts';
import { sobAsync } from '../helpers/sob-async.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ocr-lang-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const LINES = [
  "Les élèves étudièrent à l'école près du château.",
  'Le garçon a reçu une lettre très détaillée de sa soeur.',
  "Où êtes-vous allés pendant l'été dernier, à Noël ?",
  'La société a déclaré un bénéfice supérieur à celui prévu.',
  'Les députés ont adopté la réforme après un débat animé.',
];
/** The words with a diacritic: what English traineddata gets wrong. */
const ACCENTED = LINES.join(' ')
  .split(/[\s.,?]+/)
  .filter((w) => /[à-ÿ]/i.test(w));

const png = join(tmp, 'french.png');
before(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  const page = doc.addPage([612, 792]);
  LINES.forEach((l, i) => {
    page.drawText(l, { x: 60, y: 700 - 28 * i, size: 16, font });
  });
  const pdf = await openPdfData(await doc.save());
  writeFileSync(png, await renderPagePng(pdf, await pdf.getPage(1), 200 / 72));
  await pdf.destroy();
});

/** Share of the accented words found as words of the transcript. */
function accentRecall(md: string): number {
  const words = new Set(md.split(/[\s.,?]+/));
  return ACCENTED.filter((w) => words.has(w)).length / ACCENTED.length;
}

describe('sob ocr --lang', () => {
  test("eng+fra reads a French scan's accented words (recall >= 0.9); English alone misses most of them; the languages are recorded per page", async () => {
    const recall: Record<string, number> = {};
    for (const lang of ['eng', 'eng+fra']) {
      const out = join(tmp, `out-${lang}`);
      const r = await sobAsync(
        ['ocr', png, '--out', out, '--lang', lang, '--engine', 'tesseract', '--no-cache', '--workers', '1'],
        tmp,
        170_000,
      );
      assert.equal(r.code, 0, r.stderr);
      recall[lang] = accentRecall(readFileSync(join(out, 'french_pg1.md'), 'utf8'));
      const line = JSON.parse(readFileSync(join(out, 'ocr_pages.jsonl'), 'utf8'));
      assert.deepEqual(line.languages, lang.split('+'));
    }
    assert.equal(ACCENTED.length, 28);
    assert.ok(recall['eng+fra'] >= 0.9, `eng+fra: ${recall['eng+fra'].toFixed(2)}`);
    assert.ok(recall.eng <= 0.6, `eng: ${recall.eng.toFixed(2)}`);
  });

  test('an unknown language: exit 2, one line naming the installed languages', async () => {
    const r = await sobAsync(['ocr', png, '--out', join(tmp, 'out-x'), '--lang', 'eng+xyz'], tmp);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      'sob: --lang eng+xyz: no traineddata for xyz; installed: eng, fra (join them with +, e.g. eng+fra)\n',
    );
  });
});

describe('sob build pdf --lang', () => {
  test("eng+fra: the scanned French page's record reads the accented words (recall >= 0.9) and records its languages; English alone records eng", async () => {
    // The scan as a PDF of one image page (no text layer): the build OCRs it.
    const dir = join(tmp, 'build-pdfs');
    mkdirSync(dir, { recursive: true });
    const doc = await PDFDocument.create();
    const img = await doc.embedPng(readFileSync(png));
    doc.addPage([612, 792]).drawImage(img, { x: 0, y: 0, width: 612, height: 792 });
    writeFileSync(join(dir, 'lettre.pdf'), await doc.save());
    const ann = join(tmp, 'build-ann.jsonl');
    writeFileSync(
      ann,
      `${JSON.stringify({
        source_id: 'lettre_pg1',
        question: 'Who received a letter, from whom, and where did the pupils study?',
        json_schema: {
          type: 'object',
          properties: { who: { type: 'string' }, from: { type: 'string' }, where: { type: 'string' } },
          required: ['who', 'from', 'where'],
        },
        ground_truth: { who: 'Le garçon', from: 'sa soeur', where: "l'école" },
      })}\n`,
    );
    // The OCR cache of the builds in this test's folder, not the user's.
    process.env.XDG_CACHE_HOME = join(tmp, 'xdg');
    const build = async (lang: string | undefined) => {
      const out = join(tmp, `build-${lang ?? 'default'}`, 'records.jsonl');
      const r = await sobAsync(
        [
          'build',
          'pdf',
          dir,
          '--annotations',
          ann,
          '--out',
          out,
          '--engine',
          'tesseract',
          ...(lang ? ['--lang', lang] : []),
        ],
        tmp,
        170_000,
      );
      assert.equal(r.code, 0, r.stderr);
      return readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    };
    const fra = await build('eng+fra');
    assert.equal(fra.length, 1);
    assert.deepEqual(fra[0].metadata.ocr_languages, ['eng', 'fra']);
    assert.equal(fra[0].metadata.ocr_method, 'ocr');
    const recallFra = accentRecall(fra[0].input.context);
    assert.ok(recallFra >= 0.9, `eng+fra: ${recallFra.toFixed(2)}`);
    const eng = await build(undefined);
    assert.deepEqual(eng[0].metadata.ocr_languages, ['eng']);
    const recallEng = accentRecall(eng[0].input.context);
    assert.ok(recallEng <= 0.6, `eng: ${recallEng.toFixed(2)}`);
  });

  test('an unknown language: exit 2 naming the installed ones; --lang on another kind: exit 2', async () => {
    const r = await sobAsync(
      [
        'build',
        'pdf',
        tmp,
        '--annotations',
        join(tmp, 'none.jsonl'),
        '--out',
        join(tmp, 'x.jsonl'),
        '--lang',
        'eng+xyz',
      ],
      tmp,
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--lang eng\+xyz: no traineddata for xyz; installed: eng, fra/);
    const h = await sobAsync(
      [
        'build',
        'ami',
        tmp,
        '--annotations',
        join(tmp, 'none.jsonl'),
        '--out',
        join(tmp, 'y.jsonl'),
        '--lang',
        'fra',
      ],
      tmp,
    );
    assert.equal(h.code, 2, h.stderr);
    assert.match(h.stderr, /--lang is for pdf inputs only/);
  });
});
