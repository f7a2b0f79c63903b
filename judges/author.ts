/**
 * `sob author`: an LLM drafts, for each source item (an id and a context), a question, a JSON
 * schema that captures the reasoning structure (entities, relations, attributes and the final
 * answer; at least three properties) and the ground truth. Each draft is validated as it comes
 * back (a valid draft-07 schema, a ground truth that validates against it, enough properties);
 * an invalid one is asked again, then set aside with its reasons. The drafts are annotations in
 * the format `sob build` ingests, for a person to read and edit first.
 */
import { closeSync, existsSync, mkdirSync, readFileSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { UserError } from '../src/core/errors.ts';
import { acquireLock, openNoFollow, refuseSymlink, truncateNoFollow } from '../src/core/files.ts';
import { dumpsPy, getField, type PyValue, parsePyJson } from '../src/core/pyjson.ts';
import { checkDraft7Schema, validateInstance } from '../src/core/schema.ts';
import {
  type AskOptions,
  askStructured,
  jsonText,
  type Parsed,
  parseJsonAnswer,
} from '../src/providers/ask.ts';
import type { Provider } from '../src/providers/types.ts';

export interface SourceItem {
  id: string;
  context: string;
  source?: string;
}

/**
 * A benchmark record (what `sob build` writes) as a source item: its source item's id
 * (`metadata.source_id`, else the record id), its context and source. Anything else is left alone.
 */
function recordAsItem(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const r = v as { metadata?: Record<string, unknown>; input?: Record<string, unknown>; context?: unknown };
  if (r.context !== undefined || typeof r.input?.context !== 'string' || !r.metadata) return v;
  const m = r.metadata;
  return {
    id: typeof m.source_id === 'string' ? m.source_id : m.record_id,
    context: r.input.context,
    ...(typeof m.source === 'string' ? { source: m.source } : {}),
  };
}

const Item = z
  .object({ context: z.string().min(1), source: z.string().optional() })
  .passthrough()
  .transform((v, ctx) => {
    const o = v as Record<string, unknown>;
    const id = [o.id, o.record_id, o.source_id, o._id].find((x) => typeof x === 'string' && x.length > 0);
    if (typeof id !== 'string') {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: 'an item needs an id (id, record_id, source_id or _id)',
      });
      return z.NEVER;
    }
    return { id, context: v.context, source: v.source } as SourceItem;
  });

/**
 * Source items from JSONL or a JSON array: `{id (or record_id, source_id, _id), context, source?}`
 * objects, or benchmark records (one item per distinct source item: several records on one
 * passage give one draft). A bad one is named by its line.
 */
export function loadItems(file: string): SourceItem[] {
  if (!existsSync(file)) throw new UserError(`no such file: ${file}`);
  const text = readFileSync(file, 'utf8');
  const values: [string, unknown][] = [];
  if (text.trimStart().startsWith('[')) {
    (JSON.parse(text) as unknown[]).forEach((v, i) => {
      values.push([`${file}: item ${i}`, v]);
    });
  } else {
    text.split(/\r?\n/).forEach((l, i) => {
      if (l.trim()) {
        try {
          values.push([`${file}:${i + 1}`, JSON.parse(l)]);
        } catch {
          throw new UserError(`${file}:${i + 1}: not JSON`);
        }
      }
    });
  }
  const items = new Map<string, SourceItem>();
  for (const [where, v] of values) {
    const r = Item.safeParse(recordAsItem(v));
    if (!r.success) throw new UserError(`${where}: ${r.error.issues[0].message}`);
    if (!items.has(r.data.id)) items.set(r.data.id, r.data);
  }
  return [...items.values()];
}

export const DRAFT_SCHEMA = {
  type: 'object',
  properties: {
    question: { type: 'string' },
    json_schema: { type: 'object' },
    ground_truth: {},
  },
  required: ['question', 'json_schema', 'ground_truth'],
} as const;

const Draft = z.object({
  question: z.string().min(1),
  json_schema: z.record(z.unknown()),
  ground_truth: z.unknown(),
});
export type Draft = z.infer<typeof Draft> & {
  /** The ground truth as the model wrote it (`17.0` stays a float), for writing the annotation. */
  lossless?: PyValue;
};

const GT_MARK = '\u0000sob-eval:ground_truth\u0000';

/** An annotation as one JSON line, its ground truth written with the model's number lexemes. */
function annotationLine(a: Record<string, unknown>, lossless: PyValue | undefined): string {
  if (lossless === undefined) return JSON.stringify(a);
  const text = JSON.stringify({ ...a, ground_truth: GT_MARK });
  const gt = dumpsPy(lossless, { ensureAscii: false, separators: [',', ':'] });
  return text.replace(JSON.stringify(GT_MARK), () => gt);
}

const SYSTEM = `You write records for a structured-extraction benchmark. Given a context, write:
- question: a question whose answer needs reasoning over the context (several facts, often linked);
- json_schema: a draft-07 JSON Schema for the answer that captures the reasoning structure (the
  entities, their relations and attributes, and the final answer), with at least three properties,
  precise types and "required" keys;
- ground_truth: the answer, valid under that schema, with every value taken from the context.
Reply with one JSON object only: {"question", "json_schema", "ground_truth"}.`;

/** A draft checked as it comes back: schema valid, ground truth valid under it, enough properties. */
export function checkDraft(
  d: Draft,
  countProperties: (schema: unknown) => number,
  minProperties = 3,
): string[] {
  const errors: string[] = [];
  const s = checkDraft7Schema(d.json_schema);
  if (!s.valid) return [`invalid draft-07 schema: ${s.reason}`];
  const gt = validateInstance(d.json_schema, d.ground_truth);
  if (!gt.valid) errors.push(`ground truth does not validate against the schema: ${gt.reason}`);
  const n = countProperties(d.json_schema);
  if (n < minProperties)
    errors.push(`the schema declares ${n} properties; at least ${minProperties} are needed`);
  return errors;
}

export interface AuthorOptions extends AskOptions {
  items: SourceItem[];
  model: Provider;
  out: string;
  countProperties: (schema: unknown) => number;
  log?: (line: string) => void;
}

export async function authorDrafts(
  o: AuthorOptions,
): Promise<{ written: number; rejected: number; skipped: number }> {
  const rejectedFile = o.out.replace(/\.jsonl$/i, '') + '.rejected.jsonl';
  // The output folder is made when missing; one `sob author` writes it at a time; the drafts are
  // appended without following a symbolic link, after cutting off a torn last line (a crash
  // mid-write), so a resumed run's first draft does not land on the end of a broken line.
  mkdirSync(dirname(o.out), { recursive: true });
  const lock = acquireLock(dirname(o.out), 'drafts folder', `.${basename(o.out)}.lock`);
  try {
    for (const [f, what] of [
      [o.out, 'drafts file'],
      [rejectedFile, 'rejected drafts file'],
    ] as const) {
      refuseSymlink(f, what);
      if (!existsSync(f)) continue;
      const data = readFileSync(f);
      if (data.length > 0 && data[data.length - 1] !== 0x0a) truncateNoFollow(f, data.lastIndexOf(0x0a) + 1);
    }
    return await authorLocked(o, rejectedFile);
  } finally {
    lock.release();
  }
}

async function authorLocked(
  o: AuthorOptions,
  rejectedFile: string,
): Promise<{ written: number; rejected: number; skipped: number }> {
  const append = (file: string, line: string) => {
    const fd = openNoFollow(file, 'a');
    try {
      writeSync(fd, `${line}\n`);
    } finally {
      closeSync(fd);
    }
  };
  const done = new Set<string>();
  if (existsSync(o.out)) {
    for (const l of readFileSync(o.out, 'utf8').split('\n')) {
      try {
        const v = JSON.parse(l) as { source_id?: string };
        if (v.source_id) done.add(v.source_id);
      } catch {
        // a torn last line: that item is drafted again
      }
    }
  }
  let written = 0;
  let rejected = 0;
  let skipped = 0;
  for (const item of o.items) {
    if (done.has(item.id)) {
      skipped++;
      continue;
    }
    const user = `Item [rid:${item.id}]${item.source ? ` (source: ${item.source})` : ''}\n\nContext:\n${item.context}`;
    let lastErrors: string[] = [];
    const parse = (text: string): Parsed<Draft> => {
      const j = parseJsonAnswer(text);
      if (!j.ok) return j;
      const d = Draft.safeParse(j.value);
      if (!d.success)
        return {
          ok: false,
          error: `${d.error.issues[0].path.join('.') || 'draft'}: ${d.error.issues[0].message}`,
        };
      lastErrors = checkDraft(d.data, o.countProperties);
      if (lastErrors.length > 0) return { ok: false, error: lastErrors.join('; ') };
      let lossless: PyValue | undefined;
      try {
        lossless = getField(parsePyJson(jsonText(text)), 'ground_truth');
      } catch {
        lossless = undefined; // JSON.parse read it, so this does not happen; the plain value is kept
      }
      return { ok: true, value: { ...d.data, lossless } };
    };
    const res = await askStructured(
      o.model,
      item.id,
      { system: SYSTEM, user },
      DRAFT_SCHEMA as unknown as Record<string, unknown>,
      parse,
      o,
      false,
    );
    if (res.value) {
      const annotation = {
        source_id: item.id,
        record_id: `${item.id}-draft`,
        question: res.value.question,
        json_schema: res.value.json_schema,
        ground_truth: res.value.ground_truth,
        metadata: { drafted_by: o.model.id },
      };
      append(o.out, annotationLine(annotation, res.value.lossless));
      written++;
    } else {
      append(rejectedFile, JSON.stringify({ source_id: item.id, reasons: [res.error] }));
      rejected++;
    }
    o.log?.(`${item.id}: ${res.value ? 'drafted' : `rejected (${res.error})`}`);
  }
  return { written, rejected, skipped };
}
