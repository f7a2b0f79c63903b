/**
 * The grounding check on the SOB image set (209 records, one model's response file: the ground
 * truths and contexts are the same in every file) and the hotpotqa examples: how each ground-truth
 * string is found (as written, date, number, near match) and how many are not, against the check
 * as it was before it read dates and numbers (as written or near match only).
 *   node --import tsx bench/grounding.ts [../shared/data/sob/images_responses/response_<model>_image.jsonl]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bestSubstringDistance,
  editWindow,
  groundingCounts,
  groundLeaves,
  normaliseForGrounding,
} from '../src/core/grounding.ts';

const dir = join(import.meta.dirname, '../../shared/data/sob/images_responses');
const file = process.argv[2] ?? join(dir, readdirSync(dir).sort()[0]);
const records = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { input: { context: string }; output: { ground_truth: unknown } });

/** The check before: as written, or within the edit window. */
function before(value: string, text: string): boolean {
  const v = normaliseForGrounding(value);
  if (v.length === 0 || text.includes(` ${v} `)) return true;
  const k = editWindow(v.length);
  return k > 0 && bestSubstringDistance(v, text, k) <= k;
}

const t0 = performance.now();
const leaves = records.flatMap((r) => groundLeaves(r.output.ground_truth, r.input.context));
const ms = performance.now() - t0;
let beforeMissing = 0;
let recordsBefore = 0;
let recordsAfter = 0;
for (const r of records) {
  const text = ` ${normaliseForGrounding(r.input.context)} `;
  const ls = groundLeaves(r.output.ground_truth, r.input.context);
  const miss = ls.filter((l) => !before(l.value, text)).length;
  beforeMissing += miss;
  if (miss > 0) recordsBefore++;
  if (ls.some((l) => l.by === null)) recordsAfter++;
}
const c = groundingCounts(leaves);
console.log(`${file}: ${records.length} records, ${leaves.length} string values (${ms.toFixed(0)} ms)`);
console.log(
  `now:    as written ${c.text}, date ${c.date}, number ${c.number}, near ${c.near}, not found ${c.none} (records with one: ${recordsAfter})`,
);
console.log(`before: not found ${beforeMissing} (records with one: ${recordsBefore})`);
