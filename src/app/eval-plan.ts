/**
 * What one `sob eval` asks: one row per model x input mode x prompt template (docs/leaderboard.md
 * "Several input modes and prompts"). Each row has its own folder name, stable across re-runs
 * (its run directory `<eval-dir>/runs/<folder>/` resumes like a model's), and a display name.
 *
 * With one mode (`text`) and one prompt, a row's folder is the model's as it always was
 * (`openai_gpt-4.1-mini`) and it has no display name of its own. Otherwise a non-text mode adds
 * `@<mode>` (`openai_gpt-4.1-mini@document`; text keeps the plain folder, so adding a mode later
 * resumes the text run), several prompts add `+<prompt>` (the template file's name without its
 * extension; the built-in prompt is `default`), and every row is shown as
 * `openai:gpt-4.1-mini · document · terse`.
 */
import { basename } from 'node:path';
import type { InputMode } from '../core/attachments.ts';
import { UserError } from '../core/errors.ts';
import { loadTemplate, type PromptTemplate } from '../runner/prompt.ts';
import { sanitizeModelId } from '../runner/run-dir.ts';
import type { AskSettings } from './run.ts';

/** The settings a model of a suite file may set for itself (over the eval's own). */
export type ModelAsk = Partial<
  Pick<AskSettings, 'temperature' | 'maxTokens' | 'timeoutMs' | 'maxRetries' | 'concurrency'>
>;

/** A model and what it sets for itself (a suite file's `models:` entry; a flag's is the string alone). */
export interface ModelSpec {
  /** `provider:model`. */
  model: string;
  /** Its display name, and its folder's (sanitized) in place of the model's. */
  name?: string;
  baseUrl?: string[];
  stream?: boolean;
  constrained?: boolean;
  /** Its input modes, in place of the eval's. */
  input?: InputMode[];
  ask?: ModelAsk;
}

/** A prompt template of the eval, loaded, with the label its rows carry when there are several. */
export interface EvalPrompt {
  template: PromptTemplate;
  /** The file's name without its extension (`default` for the built-in prompt). */
  label: string;
}

/** One leaderboard row to make: a model asked in one mode with one prompt. */
export interface Variant {
  spec: ModelSpec;
  /** Its run directory's and evaluation folder's name. */
  folder: string;
  /** `openai:m · document`; undefined: the folder is the name (today's rows). */
  display?: string;
  input: InputMode;
  /** Whether the mode is written on the run (any mode but a text-only eval's). */
  inputGiven: boolean;
  prompt: EvalPrompt;
}

/** The prompts as loaded (unreadable files and templates without {{context}} refused here). */
export function loadPrompts(files: readonly (string | undefined)[]): EvalPrompt[] {
  const list = files.length > 0 ? files : [undefined];
  const prompts = list.map((f) => ({
    template: loadTemplate(f),
    label: f === undefined ? 'default' : sanitizeModelId(basename(f).replace(/\.[^.]+$/, '')),
  }));
  const seen = new Map<string, string>();
  for (const [i, p] of prompts.entries()) {
    const shown = list[i] ?? 'the built-in prompt';
    const other = seen.get(p.label);
    if (other !== undefined)
      throw new UserError(
        `two prompt templates would share the row name "${p.label}" (${other} and ${shown}): rename one of the files`,
        2,
      );
    seen.set(p.label, shown);
  }
  return prompts;
}

/**
 * The rows of an eval: every model, in each of its modes, with each prompt, in that order. Two
 * rows that would share a folder are refused (exit 2), naming the `name:` that tells them apart.
 */
export function planVariants(
  specs: readonly ModelSpec[],
  modes: readonly InputMode[],
  prompts: readonly EvalPrompt[],
): Variant[] {
  const modesOf = (m: ModelSpec) => (m.input?.length ? m.input : modes.length ? modes : ['text' as const]);
  const allModes = new Set(specs.flatMap(modesOf));
  const showMode = allModes.size > 1 || !allModes.has('text');
  const showPrompt = prompts.length > 1;
  const out: Variant[] = [];
  const byFolder = new Map<string, Variant>();
  for (const spec of specs)
    for (const input of modesOf(spec))
      for (const prompt of prompts) {
        const folder = `${sanitizeModelId(spec.name ?? spec.model)}${input === 'text' ? '' : `@${input}`}${showPrompt ? `+${prompt.label}` : ''}`;
        const parts = [
          spec.name ?? spec.model,
          ...(showMode ? [input] : []),
          ...(showPrompt ? [prompt.label] : []),
        ];
        const v: Variant = {
          spec,
          folder,
          display: parts.length > 1 || spec.name !== undefined ? parts.join(' · ') : undefined,
          input,
          inputGiven: showMode,
          prompt,
        };
        const twin = byFolder.get(folder);
        if (twin)
          throw new UserError(
            `${twin.spec.model} and ${spec.model} would share the row ${folder}: give one of them its own name (models: - model: ..., name: ...)`,
            2,
          );
        byFolder.set(folder, v);
        out.push(v);
      }
  return out;
}
