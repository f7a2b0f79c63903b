/**
 * HotpotQA (distractor split) as source items: one item per question, its context the ten
 * paragraphs written as `title: sentence sentence ...`, separated by blank lines. The
 * question type, level, answer and supporting facts travel in the item's metadata; the record's
 * question, schema and ground truth come from an annotations file (see `build.ts`).
 *
 * Input: the JSON array the dataset ships (`hotpot_dev_distractor_v1.json`) or JSONL, one item a line.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { errorMessage, UserError } from '../src/core/errors.ts';
import { assertReadableFile } from '../src/core/jsonl.ts';
import type { ItemLoader, LoadResult, SourceItem } from './types.ts';

const HotpotItem = z
  .object({
    _id: z.string().min(1),
    question: z.string(),
    answer: z.string().optional(),
    type: z.string().optional(),
    level: z.string().optional(),
    supporting_facts: z.array(z.tuple([z.string(), z.number().int()])).default([]),
    context: z.array(z.tuple([z.string(), z.array(z.string())])).min(1),
  })
  .passthrough();
export type HotpotItem = z.infer<typeof HotpotItem>;

/** `title: sentences` per paragraph (the sentences carry their own leading spaces), blank-line separated. */
function hotpotContext(item: HotpotItem): string {
  return item.context.map(([title, sentences]) => `${title}: ${sentences.join('').trim()}`).join('\n\n');
}

function hotpotSourceItem(item: HotpotItem): SourceItem {
  return {
    id: item._id,
    context: hotpotContext(item),
    metadata: {
      dataset: 'hotpotqa',
      source_id: item._id,
      hotpot_question: item.question,
      hotpot_answer: item.answer,
      type: item.type,
      level: item.level,
      supporting_facts: item.supporting_facts,
    },
  };
}

/** Raw items of a HotpotQA file (JSON array, or JSONL), each with where it came from. */
function rawItems(file: string): { origin: string; value: unknown }[] {
  assertReadableFile(file);
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch (e) {
      throw new UserError(`${file}: not valid JSON: ${errorMessage(e)}`);
    }
    if (!Array.isArray(arr)) throw new UserError(`${file}: expected a JSON array of HotpotQA items`);
    return arr.map((value, i) => ({ origin: `${file}: item ${i}`, value }));
  }
  const out: { origin: string; value: unknown }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ origin: `${file}:${i + 1}`, value: JSON.parse(line) });
    } catch (e) {
      out.push({ origin: `${file}:${i + 1}`, value: { __parseError: errorMessage(e) } });
    }
  });
  return out;
}

/** Loads HotpotQA items; an item of the wrong shape is reported, not fatal. */
export function loadHotpotQA(file: string): LoadResult {
  const result: LoadResult = { items: [], problems: [] };
  for (const { origin, value } of rawItems(file)) {
    const bad = (value as { __parseError?: string } | null)?.__parseError;
    if (bad) {
      result.problems.push({ origin, reasons: [`not valid JSON: ${bad}`] });
      continue;
    }
    const parsed = HotpotItem.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      result.problems.push({
        origin,
        reasons: [`not a HotpotQA item: ${issue.path.join('.') || 'item'}: ${issue.message}`],
      });
      continue;
    }
    result.items.push(hotpotSourceItem(parsed.data));
  }
  return result;
}

export const loader: ItemLoader = {
  produces: 'items',
  source: 'text',
  loadItems: async (input) => loadHotpotQA(input),
};
