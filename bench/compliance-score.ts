/**
 * What the compliance track adds to the strict profile's per-record scoring, on the SOB image
 * release (34 models x 209 records), against a baseline measured in the same run: the strict row
 * without the compliance block (scoreRecordStrict, the row, its JSON) versus the row `sob score
 * --profile strict` now writes (the same plus the answer's fine-grained validation: every
 * violation, the constraint tally). Single thread, in process, best of `--repeat` passes.
 *
 *   node --import tsx bench/compliance-score.ts [--repeat 3]
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { toReferenceRow } from '../metrics/record.ts';
import { scoreRecordStrict } from '../metrics/strict.ts';
import { type ParsedLine, parseLine, readLinesSync } from '../src/core/jsonl.ts';
import { dumpsPy } from '../src/core/pyjson.ts';
import { SCORING_SKIP_KEYS, SCORING_SPAN_KEYS, scoringView } from '../src/core/record.ts';
import { prepareStrict } from '../src/core/schema.ts';
import { scoreParsedLine } from '../src/scoring/score-line.ts';

const args = process.argv.slice(2);
const i = args.indexOf('--repeat');
const REPEAT = Math.max(1, Number(i >= 0 ? args[i + 1] : '3'));
const DIR = join(import.meta.dirname, '../../shared/data/sob/images_responses');
const PROFILE = { profile: 'strict' as const, assertFormats: false };

await prepareStrict(false);
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
/** Lines as the worker reads them; parsed again each pass (the view is mutated by scoring). */
const texts: { line: number; text: string }[] = [];
for (const f of files) for (const l of readLinesSync(join(DIR, f))) texts.push(l);
const parse = (): ParsedLine[] => texts.map((l) => parseLine(l, SCORING_SPAN_KEYS, SCORING_SKIP_KEYS));

function baseline(lines: ParsedLine[]): number {
  let bytes = 0;
  for (const p of lines) {
    if (!p.ok) continue;
    const v = scoringView(p.value, p.spans);
    if (!v.ok) continue;
    const s = scoreRecordStrict(v.view, { modality: 'image', assertFormats: false });
    bytes += dumpsPy(toReferenceRow(s, 'image')).length;
  }
  return bytes;
}

function withCompliance(lines: ParsedLine[]): number {
  let bytes = 0;
  for (const p of lines) {
    const o = scoreParsedLine(p, { pathModality: 'image', forced: 'image', profile: PROFILE });
    if (o.kind === 'row') bytes += o.json.length;
  }
  return bytes;
}

function best(fn: (lines: ParsedLine[]) => number): { ms: number; bytes: number } {
  let ms = Number.POSITIVE_INFINITY;
  let bytes = 0;
  for (let r = 0; r < REPEAT; r++) {
    const lines = parse();
    const t0 = performance.now();
    bytes = fn(lines);
    ms = Math.min(ms, performance.now() - t0);
  }
  return { ms, bytes };
}

// Warm both paths (schema caches, JIT) before timing.
baseline(parse());
withCompliance(parse());
const b = best(baseline);
const c = best(withCompliance);
console.log(`${texts.length} records (${files.length} files), best of ${REPEAT}`);
console.log(
  `strict row, baseline:         ${b.ms.toFixed(0)} ms  (${(b.ms / texts.length).toFixed(3)} ms/record), rows ${(b.bytes / 1e6).toFixed(1)} MB`,
);
console.log(
  `strict row + compliance block: ${c.ms.toFixed(0)} ms  (${(c.ms / texts.length).toFixed(3)} ms/record), rows ${(c.bytes / 1e6).toFixed(1)} MB`,
);
console.log(`ratio: ${(c.ms / b.ms).toFixed(2)}x time, ${(c.bytes / b.bytes).toFixed(2)}x row bytes`);
