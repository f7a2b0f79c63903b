/**
 * The reader of `sob eval --config sob.yaml` (src/cli/eval-config.ts): a suite in one file (docs/ci.md "A suite file"). Its keys are the
 * flags' (`eval_dir` for `--eval-dir`, `stream: false` for `--no-stream`), plus `models` (each a
 * `provider:model` string or an object with its own options), `prompts` (the templates) and
 * `gates`; JSON is read as well (YAML's subset). Each value goes through the flag's own parser,
 * so a bad value is refused as the flag would be; an unknown key is refused with the nearest
 * known one; both in one line naming the file, the line and the key (exit 2), before anything
 * runs. Paths are relative to the file's folder. A flag given on the command line wins over the
 * file's key; `--model` replaces the file's `models`. The schema editors complete it from:
 * schemas/sob-config.schema.json.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command, Option } from 'commander';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { ModelSpec } from '../app/eval-plan.ts';
import { errorMessage, UserError } from '../core/errors.ts';
import { didYouMean } from '../core/record-checks.ts';

/** Flags a list may be given for (each item as one more use of the flag). */
const REPEATABLE = new Set(['baseUrl', 'input', 'promptTemplate', 'failUnder', 'model']);
/** Flags that are keys of their own block: `models`, `prompts`, `gates`. */
const GROUPED: Record<string, string> = {
  model: 'models',
  promptTemplate: 'prompts',
  failUnder: 'gates.fail_under',
  failOnRegression: 'gates.fail_on_regression',
  gateSummary: 'gates.gate_summary',
  config: '',
};
/** Values that are paths, resolved against the file's folder. */
const PATHS = new Set([
  'benchmark',
  'evalDir',
  'cache',
  'match',
  'promptTemplate',
  'failOnRegression',
  'gateSummary',
]);
/** What a `models:` object may set for its model (beside `model` and `name`). */
const MODEL_KEYS = [
  'base_url',
  'temperature',
  'max_tokens',
  'timeout_ms',
  'max_retries',
  'concurrency',
  'constrained',
  'stream',
  'input',
];
const GATE_KEYS = ['fail_under', 'fail_on_regression', 'gate_summary'];

const snake = (attr: string) => attr.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The suite file's top-level keys, as the command's options make them (the schema's, tested). */
export function suiteKeys(cmd: Command): string[] {
  const own = cmd.options
    .filter((o) => !o.hidden && !(o.attributeName() in GROUPED))
    .map((o) => snake(o.attributeName()));
  return ['$schema', ...own, 'models', 'prompts', 'gates'];
}

interface Reader {
  file: string;
  dir: string;
  lines: LineCounter;
  cmd: Command;
}

function at(r: Reader, node: Node | null | undefined): string {
  const pos = node?.range ? r.lines.linePos(node.range[0]) : undefined;
  return pos ? `${r.file}:${pos.line}` : r.file;
}

function fail(r: Reader, node: Node | null | undefined, what: string): never {
  throw new UserError(`${at(r, node)}: ${what}`, 2);
}

function unknown(
  r: Reader,
  node: Node | null | undefined,
  key: string,
  known: string[],
  where: string,
): never {
  const hint = didYouMean(key, known) ?? (GROUPED[camel(key)] || undefined);
  fail(
    r,
    node,
    `unknown key "${key}"${where}${hint ? `; did you mean "${hint}"?` : ` (known: ${known.filter((k) => k !== '$schema').join(', ')})`}`,
  );
}

const camel = (key: string) => key.replace(/[_-]([a-z])/g, (_, c: string) => c.toUpperCase());

/** The entries of a YAML mapping: key text, key node, value node. */
function entries(r: Reader, node: Node | null | undefined, what: string): [string, Node, Node | null][] {
  if (!isMap(node)) fail(r, node, `${what} must be a mapping of keys to values`);
  return node.items.map((p) => {
    const k = p.key as Node;
    if (!isScalar(k)) fail(r, k, `${what}: a key must be a plain name`);
    return [String(k.value), k, (p.value as Node | null) ?? null];
  });
}

/** A value as the flag's parser takes it: each item of a list for a repeatable flag, in order. */
function parseValue(r: Reader, o: Option, key: string, node: Node | null): unknown {
  const js = node === null ? null : (node as { toJSON(): unknown }).toJSON();
  const attr = o.attributeName();
  const isPath = PATHS.has(attr);
  if (!o.required && !o.optional) {
    // A switch (`--constrained`, `--no-stream`): true or false.
    if (typeof js !== 'boolean') fail(r, node, `${key} must be true or false`);
    return js;
  }
  if (o.optional && typeof js === 'boolean') return js; // `cache: true`
  const items = Array.isArray(js) ? js : [js];
  if (Array.isArray(js) && !REPEATABLE.has(attr)) fail(r, node, `${key} takes one value, not a list`);
  let value: unknown = o.defaultValue;
  for (const item of items) {
    if (item === null || typeof item === 'object')
      fail(r, node, `${key} must be a ${isPath ? 'path' : 'value'}`);
    let text = String(item);
    if (isPath && !(attr === 'match' && text === 'default')) text = resolve(r.dir, text);
    try {
      value = o.parseArg ? o.parseArg(text, value) : text;
    } catch (e) {
      fail(r, node, `${key}: ${errorMessage(e)}`);
    }
  }
  return value;
}

function optionOf(r: Reader, attr: string): Option {
  const o = r.cmd.options.find((x) => x.attributeName() === attr);
  if (!o) throw new Error(`no option for ${attr}`);
  return o;
}

/** `models:` as the eval's model list: strings, or specs with their own options. */
function readModels(r: Reader, node: Node | null): (string | ModelSpec)[] {
  if (!isSeq(node))
    fail(r, node, 'models must be a list (each a provider:model, or an object with model: and its options)');
  return node.items.map((item) => {
    const it = item as Node;
    if (isScalar(it)) return String(it.value);
    let spec: ModelSpec | undefined;
    const own: Partial<ModelSpec> & { ask?: ModelSpec['ask'] } = {};
    for (const [key, k, v] of entries(r, it, 'a models entry')) {
      if (key === 'model' || key === 'name') {
        const s = isScalar(v) ? v.value : undefined;
        if (typeof s !== 'string' || s === '') fail(r, v ?? k, `models: ${key} must be a string`);
        if (key === 'model') spec = { ...(spec ?? {}), model: s } as ModelSpec;
        else own.name = s;
        continue;
      }
      if (!MODEL_KEYS.includes(key))
        unknown(r, k, key, ['model', 'name', ...MODEL_KEYS], ' in a models entry');
      const value = parseValue(r, optionOf(r, camel(key)), `models: ${key}`, v);
      if (key === 'base_url') own.baseUrl = value as string[];
      else if (key === 'input') own.input = value as ModelSpec['input'];
      else if (key === 'constrained' || key === 'stream') own[key] = value as boolean;
      else own.ask = { ...own.ask, [camel(key)]: value };
    }
    if (!spec) fail(r, it, 'a models entry needs model: provider:model');
    return { ...own, model: spec.model };
  });
}

/** `gates:` as the gate flags' values. */
function readGates(r: Reader, node: Node | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, k, v] of entries(r, node, 'gates')) {
    if (!GATE_KEYS.includes(key)) unknown(r, k, key, GATE_KEYS, ' in gates');
    // fail_under as a mapping too: {value_accuracy: 0.8, json_pass: 0.95}.
    if (key === 'fail_under' && isMap(v)) {
      out.failUnder = entries(r, v, 'gates: fail_under').map(([m, , n]) => {
        const x = isScalar(n) ? n.value : undefined;
        if (typeof x !== 'number') fail(r, n, `gates: fail_under: ${m} must be a number from 0 to 1`);
        return `${m}=${x}`;
      });
      continue;
    }
    out[camel(key)] = parseValue(r, optionOf(r, camel(key)), `gates: ${key}`, v);
  }
  return out;
}

/**
 * The suite file read into the command's option values (attribute -> value, as the flags would
 * have set them); a bad file, key or value is one line, exit 2.
 */
export function readSuite(file: string, cmd: Command): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`--config: cannot read ${file} (${errorMessage(e)})`, 2);
  }
  const r: Reader = { file, dir: dirname(resolve(file)), lines: new LineCounter(), cmd };
  const doc = parseDocument(text, { lineCounter: r.lines });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    throw new UserError(
      `${file}:${e.linePos?.[0].line ?? 1}: not valid YAML or JSON (${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')})`,
      2,
    );
  }
  const values: Record<string, unknown> = {};
  const known = suiteKeys(cmd);
  for (const [key, k, v] of entries(r, doc.contents as Node, 'a suite file')) {
    if (key === '$schema') continue;
    if (!known.includes(key)) unknown(r, k, key, known, '');
    if (key === 'models') values.model = readModels(r, v);
    else if (key === 'prompts') {
      const o = optionOf(r, 'promptTemplate');
      values.promptTemplate = parseValue(r, o, 'prompts', v);
    } else if (key === 'gates') Object.assign(values, readGates(r, v));
    else values[camel(key)] = parseValue(r, optionOf(r, camel(key)), key, v);
  }
  return values;
}
