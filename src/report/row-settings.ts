/**
 * What a leaderboard row was asked with, from its run manifest (beside the response file its
 * summaries were scored from): the input mode (`--input`) and the prompt template. Set on the
 * rows only where they differ between rows, so a leaderboard of text-only rows with one prompt
 * is what it always was; then every row carries them (`input`, `prompt` in JSON and CSV).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LeaderboardRow } from '../../metrics/leaderboard.ts';
import type { EvaluationFolder } from './evaluation.ts';
import { responseFilesOf } from './usage.ts';

interface Asked {
  input: string;
  prompt: string;
  promptSha: string | null;
}

/** The mode and prompt of the run a row's answers came from (text and `default` when unsaid). */
function askedOf(ev: EvaluationFolder, model: string): Asked {
  for (const f of responseFilesOf(ev, model)) {
    const file = join(dirname(f), 'manifest.json');
    if (!existsSync(file)) continue;
    try {
      const m = JSON.parse(readFileSync(file, 'utf8')) as {
        settings?: { input?: unknown };
        prompt?: { file?: unknown; sha256?: unknown };
      };
      const input = typeof m.settings?.input === 'string' ? m.settings.input : 'text';
      const pf = m.prompt?.file;
      return {
        input,
        prompt: typeof pf === 'string' ? basename(pf) : 'default',
        promptSha: typeof m.prompt?.sha256 === 'string' ? m.prompt.sha256 : null,
      };
    } catch {
      // not a manifest we can read: the row says nothing of it
    }
  }
  return { input: 'text', prompt: 'default', promptSha: null };
}

/** Sets `input` (when some row's is not text) and `prompt` (when rows' prompts differ) on every row. */
export function attachRunSettings(rows: LeaderboardRow[], ev: EvaluationFolder): void {
  const asked = rows.map((r) => askedOf(ev, r.model));
  const modes = asked.some((a) => a.input !== 'text');
  const prompts = new Set(asked.map((a) => a.promptSha)).size > 1;
  rows.forEach((r, i) => {
    if (modes) r.input = asked[i].input;
    if (prompts) r.prompt = asked[i].prompt;
  });
}
