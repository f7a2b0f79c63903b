/**
 * Report size and time to first paint in headless Chromium:
 * - the 34 SOB image models (209 records each, with response files for the leaf diffs);
 * - a synthetic 34 models x 5,324 records (text 5,000 + image 209 + audio 115), scores only.
 *
 *   node --import tsx bench/report.ts
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { failedRecordScore, toReferenceRow } from '../metrics/record.ts';
import { buildSummary, SummaryAccumulator } from '../metrics/summary.ts';
import { dumpsPy } from '../src/core/pyjson.ts';
import { PyRandom } from '../src/core/pyrandom.ts';
import type { Modality } from '../src/core/record.ts';
import { writeReport } from '../src/report/html.ts';

const ROOT = join(import.meta.dirname, '..');
const SOB = join(ROOT, '../shared/data/sob');

/** A synthetic evaluation folder: per model and source, rows with plausible scores. */
function synthetic(dir: string): void {
  const rng = new PyRandom(7);
  const sizes: [Modality, number][] = [
    ['text', 5000],
    ['image', 209],
    ['audio', 115],
  ];
  for (let m = 0; m < 34; m++) {
    const skill = 0.5 + 0.4 * rng.random();
    for (const [source, n] of sizes) {
      const out = join(dir, source, `model-${String(m).padStart(2, '0')}`);
      mkdirSync(out, { recursive: true });
      const acc = new SummaryAccumulator();
      const lines: string[] = [];
      for (let i = 0; i < n; i++) {
        const meta = new Map<string, never>([
          ['record_id', `${source}-${i}` as never],
          ['model_id', `model-${m}` as never],
          ['schema_complexity', (['easy', 'medium', 'hard'] as const)[i % 3] as never],
        ]);
        const s = failedRecordScore(meta, '');
        s.explanation = {};
        const pass = rng.random() < 0.9 ? 1 : 0;
        s.jsonParse = s.rootStructured = pass || rng.random() < 0.5 ? 1 : 0;
        s.schemaValidInput = 1;
        s.jsonPass = pass;
        s.valueAccuracy = pass * Math.min(1, skill * rng.random() * 1.6);
        s.faithfulness = pass * Math.min(1, s.valueAccuracy + 0.2 * rng.random());
        s.pathRecall = s.structureCoverage = pass * (0.8 + 0.2 * rng.random());
        s.typeSafety = pass;
        s.perfect = s.valueAccuracy === 1 ? 1 : 0;
        acc.add(s);
        lines.push(dumpsPy(toReferenceRow(s, source)));
      }
      writeFileSync(join(out, 'eval_records.jsonl'), `${lines.join('\n')}\n`);
      writeFileSync(
        join(out, 'eval_summary.json'),
        dumpsPy(
          buildSummary(acc.data(), 'synthetic', {
            bootstrapSamples: 200,
            seed: 42,
            topKErrors: 20,
            errorAnalysis: false,
          }),
          { indent: 2 },
        ),
      );
    }
  }
}

async function paint(file: string): Promise<{ fcp: number; ready: number }> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  try {
    const page = await browser.newPage();
    const t = Date.now();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('#records tbody tr');
    const ready = Date.now() - t;
    const fcp = await page.evaluate(
      () =>
        (performance as unknown as { getEntriesByType(t: string): { name: string; startTime: number }[] })
          .getEntriesByType('paint')
          .find((e) => e.name === 'first-contentful-paint')?.startTime ?? -1,
    );
    return { fcp: Math.round(fcp), ready };
  } finally {
    await browser.close();
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'sob-bench-report-'));
try {
  const rows: string[] = [];
  let t = Date.now();
  const sobOut = join(tmp, 'sob.html');
  await writeReport({ dir: join(SOB, 'evaluation'), out: sobOut, responses: join(SOB, 'images_responses') });
  let built = Date.now() - t;
  let p = await paint(sobOut);
  rows.push(
    `SOB image, 34 models x 209 records, with diffs: ${(statSync(sobOut).size / 1e6).toFixed(1)} MB, built in ${(built / 1000).toFixed(1)} s, first contentful paint ${p.fcp} ms, records list ready ${p.ready} ms`,
  );
  const synth = join(tmp, 'synthetic');
  synthetic(synth);
  t = Date.now();
  const synOut = join(tmp, 'synthetic.html');
  await writeReport({ dir: synth, out: synOut, samples: 100 });
  built = Date.now() - t;
  p = await paint(synOut);
  rows.push(
    `synthetic, 34 models x 5,324 records, scores only: ${(statSync(synOut).size / 1e6).toFixed(1)} MB, built in ${(built / 1000).toFixed(1)} s, first contentful paint ${p.fcp} ms, records list ready ${p.ready} ms`,
  );
  console.log(rows.join('\n'));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
