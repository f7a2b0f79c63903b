/**
 * The prompt: context, question and the schema (pretty-printed), and what an answer must look
 * like. A template file may replace it; `[system]` / `[user]` header lines split it into the two
 * messages (without them the whole text is the user message). Placeholders: {{context}},
 * {{question}}, {{schema}}, {{record_id}}, filled in one pass (a context that itself contains
 * "{{schema}}" is left alone).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { InputMode } from '../core/attachments.ts';
import { UserError } from '../core/errors.ts';

export const DEFAULT_TEMPLATE = `[system]
You extract information from a document into JSON that follows a given JSON Schema.
[user]
Context:
{{context}}

Question:
{{question}}

JSON Schema of the answer:
{{schema}}

Answer with the JSON object only: no markdown, no code fences, no text before or after it.
Use only the keys the schema defines and include every required key.
Where the context does not say, use null.`;

export interface PromptTemplate {
  text: string;
  sha256: string;
  /** The file it came from, or undefined for the built-in one. */
  file?: string;
}

export interface Prompt {
  system: string;
  user: string;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function makeTemplate(text: string, file?: string): PromptTemplate {
  if (!text.includes('{{context}}')) {
    throw new UserError(`${file ?? 'prompt template'}: has no {{context}} placeholder`);
  }
  return { text, sha256: sha256(text), file };
}

export function loadTemplate(file?: string): PromptTemplate {
  if (!file) return makeTemplate(DEFAULT_TEMPLATE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UserError(`cannot read the prompt template ${file}`);
  }
  return makeTemplate(text, file);
}

const PLACEHOLDER = /\{\{(context|question|schema|record_id)\}\}/g;
const SECTION = /^\[(system|user)\]\s*$/m;

export interface PromptFields {
  context: string;
  question: string;
  schema: unknown;
  recordId: string;
}

export function renderPrompt(template: PromptTemplate, f: PromptFields): Prompt {
  const values: Record<string, string> = {
    context: f.context,
    question: f.question,
    schema: JSON.stringify(f.schema, null, 2),
    record_id: f.recordId,
  };
  const fill = (s: string) => s.replace(PLACEHOLDER, (_, name: string) => values[name]).trim();
  // Sections are found in the template, before filling, so a context cannot open a new one.
  if (!SECTION.test(template.text)) return { system: '', user: fill(template.text) };
  const parts: Record<'system' | 'user', string[]> = { system: [], user: [] };
  let section: 'system' | 'user' | null = null;
  for (const line of template.text.split('\n')) {
    const m = /^\[(system|user)\]\s*$/.exec(line);
    if (m) section = m[1] as 'system' | 'user';
    else if (section) parts[section].push(line);
  }
  return { system: fill(parts.system.join('\n')), user: fill(parts.user.join('\n')) };
}

/** What the prompt says of the documents sent with it (`document`: in place of the transcript). */
export function documentNote(mode: Exclude<InputMode, 'text'>, sent: readonly { kind: string }[]): string {
  const count = (k: string, one: string, many: string) => {
    const n = sent.filter((a) => a.kind === k).length;
    return n === 0 ? [] : [`${n === 1 ? 'one' : n} ${n === 1 ? one : many}`];
  };
  const list = [
    ...count('pdf', 'PDF', 'PDFs'),
    ...count('image', 'page image', 'page images'),
    ...count('audio', 'audio recording', 'audio recordings'),
  ].join(', ');
  return mode === 'document'
    ? `The document is attached to this message (${list}); no transcript is given: read the attachment itself.`
    : `The document itself is attached to this message as well (${list}); the text above is a transcript of it.`;
}
