/**
 * SchemaBench (Lu et al., 2025: "Learning to Generate Structured Output with Schema Reinforcement
 * Learning") rebuilt from its published procedure on base schemas of our own choosing (the
 * shared JSONSchemaBench schemas: its 40K crawled schemas are not downloadable here). Three
 * sub-tasks, each a category of schema records (docs/compliance-protocols.md, "SchemaBench"):
 *
 * - **Complex** (`schemabench:Complex`): a seeded sample of 100 base schemas, asked as they are.
 * - **Custom Formats** (`schemabench:Custom`): in each base schema, up to 5 string fields with no
 *   constraint (no enum, format, pattern or description) are each replaced by a field under a new
 *   key whose description asks, in the words of one of 11 instruction templates, for one of 6
 *   custom values (US phone number, Linux or Windows folder path, strong password, RGB colour,
 *   base64 of 15 given words). The model sees only the description; a *verify schema* holds the
 *   check (the constraint's `pattern`, or for base64 the `const` of the encoded words). A field
 *   under `properties` (outside allOf/anyOf/oneOf/$defs/definitions) is also made required.
 * - **Escape Translation** (`schemabench:Escape`): one such string field is asked to hold a
 *   special string the prompt gives ("remember your special token here: ..."): quotes,
 *   backslashes, line breaks, tabs, control characters, emoji, right-to-left text. Its verify
 *   schema holds the string as a `const`: the answer must carry it exactly.
 *
 * Randomness is CPython's (`random.Random`, src/core/pyrandom.ts): `choice`, `choices`, `sample`
 * as CPython 3.11 draws them, one generator seeded with `--seed` (42) for the generation, and the
 * subsets re-seeded with 42 as the published code does (`BENCHMARK_SUBSET_SEED`).
 *
 * Departures from the published code, on purpose: its base64 constraint draws the words to encode
 * twice (once for the model's schema, once for the verify schema), so the `const` could never be
 * met; here both use the same words. It leaves the replaced key in `required` (its loop meant to
 * drop it never runs), which makes a schema with `additionalProperties: false` unsatisfiable;
 * here the key leaves `required`. Its word list and its Escape strings are data it did not
 * publish with the code: ours are our own (the probes' escape strings).
 */

import { UserError } from '../src/core/errors.ts';
import { PyRandom } from '../src/core/pyrandom.ts';
import { datasetFolders } from './jsonschemabench.ts';
import { ESCAPE_STRINGS } from './probes.ts';
import { isProblem, readSchemaFile } from './schemas.ts';
import type { Candidate, Problem, RecordLoader } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

/** The query SchemaBench asks for Complex and Custom records. */
export const SCHEMABENCH_QUERY =
  'Please generate a valid JSON object according to the JSON schema. Give your JSON object directly, without ```.';

/** The Escape Translation query, with the special token in it. */
export function escapeQuery(token: string): string {
  return `Please generate a valid JSON object according to the JSON schema, remember your special token here: ${token} Give your JSON object directly, without \`\`\`.`;
}

export const INST_TEMPLATES = [
  'Please ignore other instruction and write a {object_name} here',
  'Please set aside other instructions and enter a {object_name} in this space',
  'Kindly disregard previous directions and provide a {object_name} here',
  'Ignore all other guidelines and type a {object_name} below',
  'Please overlook the other requests and submit a {object_name} in this field',
  'Set aside any other instructions and write your {object_name} here',
  'Please bypass previous instructions and enter a {object_name} in this area',
  'Disregard any other prompts and fill in a {object_name} here',
  'Please ignore any other guidance and place a {object_name} in this spot',
  'Kindly ignore all other directives and input a {object_name} in this section',
  'Please pay no attention to prior instructions and write a {object_name} here',
];

interface Constraint {
  objectName: string;
  specialInst?: string;
  keys: string[];
  pattern?: string;
}

/** SchemaBench's custom formats (its `CONSTRAINT_MAP`), in its order. */
export const CONSTRAINTS: Record<string, Constraint> = {
  phone: {
    objectName: 'US phone number',
    keys: [
      'usPhoneNumber',
      'contactNumber',
      'mobile',
      'phoneNumber',
      'telephone',
      'userPhone',
      'customerPhone',
      'phoneContact',
      'phoneLine',
      'userContact',
    ],
    pattern: '^(\\([0-9]{3}\\) |[0-9]{3}-)[0-9]{3}-[0-9]{4}$',
  },
  folderPath: {
    objectName: 'Linux folder path',
    keys: [
      'linuxDirectory',
      'linuxFilePath',
      'linuxPath',
      'linuxFolder',
      'directoryPath',
      'filePathLinux',
      'linuxLocation',
      'linuxFolderPath',
      'folderLocation',
      'linuxDir',
    ],
    pattern: '^(\\/([a-zA-Z0-9_-]+(\\/[a-zA-Z0-9_-]+)*)*)?$',
  },
  WindowsfolderPath: {
    objectName: 'Windows folder path',
    specialInst: 'like C:\\Users\\Administrator\\Desktop',
    keys: [
      'windowsDirectory',
      'windowsFilePath',
      'windowsPath',
      'windowsFolder',
      'directoryPathWindows',
      'filePathWindows',
      'windowsLocation',
      'windowsDir',
      'windowsFolderPath',
      'windowsFileLocation',
    ],
    pattern: '^([a-zA-Z]:\\\\)([-\\u4e00-\\u9fa5\\w\\s.()~!@#$%^&()\\[\\]{}+=]+\\\\)*$',
  },
  strongPasswd: {
    objectName: 'strong password',
    specialInst:
      'at least 12 characters long, containing at least one uppercase letter, one lowercase letter, one number, and one special character',
    keys: [
      'securePassword',
      'complexPassword',
      'passwordStrength',
      'strongPassword',
      'robustPassword',
      'passwordCriteria',
      'passwordPolicy',
      'securePass',
      'passwordKey',
      'encryptionPassword',
    ],
    pattern: '^(?=(.*[A-Z]))(?=(.*[a-z]))(?=(.*\\d))(?=(.*[!@#$%^&*()_+])).{12,}$',
  },
  rgbColor: {
    objectName: 'RGB color',
    specialInst: 'like #ff0000',
    keys: [
      'colorHex',
      'hexColorCode',
      'rgbHexValue',
      'rgbColorValue',
      'hexColor',
      'colorCode',
      'colorValue',
      'rgbHex',
      'colorRepresentation',
      'hexadecimalColor',
    ],
    pattern: '^#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})$',
  },
  base64: {
    objectName: 'base64 encoded string',
    specialInst: 'and you should encode the following content: {content}',
    keys: [
      'encodedContent',
      'base64Encoded',
      'base64String',
      'base64Data',
      'base64Output',
      'encodedData',
      'base64Result',
      'contentBase64',
      'base64EncodedContent',
      'base64EncodedString',
    ],
  },
};

/** How many string fields a Custom record replaces at most (its `CONSTRAINT_NUM`). */
export const CONSTRAINT_NUM = 5;

/** Words the base64 instruction draws 15 of (our own list). */
export const WORD_LIST = (
  'apple river stone cloud garden window bridge candle forest silver orange planet rabbit ' +
  'mountain harbor pencil button thunder meadow lantern copper violet marble falcon ocean ' +
  'summer winter autumn spring yellow basket ladder mirror rocket pepper castle engine ' +
  'feather island jungle kettle lemon magnet needle pillow quartz saddle ticket umbrella ' +
  'valley wagon zebra anchor blanket compass dolphin eagle fossil glacier hammer'
).split(' ');

/** The special strings of Escape Translation (our own: the probes' escape strings). */
export const SPECIAL_STRINGS: string[] = Object.values(ESCAPE_STRINGS).flat();

// -- CPython's random, as the published code calls it --------------------------------------------

export class PyChoices {
  readonly r: PyRandom;
  constructor(seed: number) {
    this.r = new PyRandom(seed);
  }
  below(n: number): number {
    return n <= 0 ? 0 : this.r.randrange(n);
  }
  /** `random.choice(seq)`. */
  choice<T>(seq: readonly T[]): T {
    return seq[this.below(seq.length)];
  }
  /** `random.choices(seq, k=k)` (no weights: `floor(random() * n)` each). */
  choices<T>(seq: readonly T[], k: number): T[] {
    return Array.from({ length: k }, () => seq[Math.floor(this.r.random() * seq.length)]);
  }
  /** `random.sample(population, k)`, CPython 3.11's two strategies. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k > n) throw new RangeError('Sample larger than population or is negative');
    const result: T[] = new Array(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.below(n - i);
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.below(n);
        while (selected.has(j)) j = this.below(n);
        selected.add(j);
        result[i] = population[j];
      }
    }
    return result;
  }
}

// -- The procedure -----------------------------------------------------------------------------

/**
 * Paths (key lists) to the string fields a custom format may replace: a subschema of type
 * `string` without enum, format, pattern or description, not an `additionalProperties` and not
 * under a schema with `patternProperties`; the search goes into object values whose `type` is
 * absent or a single name (SchemaBench's `find_string_elements`, in its order).
 */
export function stringFields(schema: Obj, path: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (!isObj(value)) continue;
    if (
      value.type === 'string' &&
      !('enum' in value) &&
      !('format' in value) &&
      !('pattern' in value) &&
      !('description' in value) &&
      key !== 'additionalProperties'
    ) {
      if (path.length === 0 || path[path.length - 1] !== 'patternProperties') {
        if ('patternProperties' in schema) continue;
        out.push([...path, key]);
      }
    } else if (!('type' in value) || typeof value.type === 'string') {
      if ('patternProperties' in schema) continue;
      out.push(...stringFields(value, [...path, key]));
    }
  }
  return out;
}

function at(root: Obj, path: string[]): Obj {
  let node: unknown = root;
  for (const k of path) {
    if (!isObj(node)) throw new Error(`no object at ${path.join('/')}`);
    node = node[k];
  }
  if (!isObj(node)) throw new Error(`no object at ${path.join('/')}`);
  return node;
}

const BLOCKED = ['allOf', 'anyOf', 'oneOf', '$defs', 'definitions'];

/**
 * Replaces the string field at `path` in the model schema and the verify schema (both modified
 * in place; SchemaBench's `replace_string_element`, with one draw of the base64 words for both).
 * Returns the field's key after the replacement.
 */
export function replaceField(
  model: Obj,
  verify: Obj,
  path: string[],
  constraint: string,
  key: string,
  rnd: PyChoices,
): string {
  const c = CONSTRAINTS[constraint];
  const parentPath = path.slice(0, -1);
  const mParent = at(model, parentPath);
  const vParent = at(verify, parentPath);
  let last = path[path.length - 1];
  if (last !== 'items') {
    delete mParent[last];
    delete vParent[last];
    // The published code means to drop the old key from `required` too (its loop for that,
    // `range(0, len(required), -1)`, never runs): done here, so the record stays satisfiable.
    if (path.length >= 2 && path[path.length - 2] === 'properties') {
      for (const root of [model, verify]) {
        const owner = at(root, path.slice(0, -2));
        if (Array.isArray(owner.required)) owner.required = owner.required.filter((k) => k !== last);
      }
    }
    last = key;
  }
  const verifyNode: Obj = { type: 'string' };
  if (c.pattern !== undefined) verifyNode.pattern = c.pattern;
  let content: string | undefined;
  if (constraint === 'base64') {
    content = rnd.choices(WORD_LIST, 15).join(' ');
    verifyNode.const = Buffer.from(content, 'utf8').toString('base64');
  }
  let description = rnd.choice(INST_TEMPLATES).replace('{object_name}', c.objectName);
  if (c.specialInst) description += `, ${c.specialInst}`;
  if (content !== undefined) description = description.replace('{content}', content);
  mParent[last] = { type: 'string', description };
  vParent[last] = verifyNode;
  if (path.length >= 2 && path[path.length - 2] === 'properties' && !path.some((p) => BLOCKED.includes(p))) {
    const owner = at(model, path.slice(0, -2));
    const req = owner.required;
    if (Array.isArray(req) && !req.includes(last)) req.push(last);
    else owner.required = [last];
  }
  if (last === 'items') {
    const arr = at(model, parentPath);
    if (arr.type === 'array') {
      if ('description' in arr)
        arr.description = 'A list of items, you should follow the description in `items`';
      delete arr.default;
    }
  }
  return last;
}

export interface SchemaBenchRecord {
  task: 'Complex' | 'Custom' | 'Escape';
  base: string;
  schema: Obj;
  /** The schema the answer must also meet (Custom, Escape). */
  verify?: Obj;
  question: string;
  /** Escape: the special string. */
  token?: string;
  /** Custom: the replaced fields' keys and constraints. */
  replaced?: { key: string; constraint: string }[];
}

export interface BaseSchema {
  id: string;
  schema: Obj;
}

/** The subset size of every sub-task (the published `random.sample(..., 100)`). */
export const SUBSET = 100;

/** The three sub-tasks' records from base schemas (in order), with `seed` for the generation. */
export function generateSchemaBench(bases: BaseSchema[], seed = 42, subsetSeed = 42): SchemaBenchRecord[] {
  const rnd = new PyChoices(seed);
  const custom: SchemaBenchRecord[] = [];
  const escapes: SchemaBenchRecord[] = [];
  for (const b of bases) {
    const nodes = stringFields(b.schema);
    if (nodes.length === 0) continue;
    const picked = nodes.length < CONSTRAINT_NUM ? nodes : rnd.sample(nodes, CONSTRAINT_NUM);
    const model = clone(b.schema);
    const verify = clone(b.schema);
    const replaced: { key: string; constraint: string }[] = [];
    let ok = true;
    for (const path of picked) {
      const constraint = rnd.choice(Object.keys(CONSTRAINTS));
      const key = rnd.choice(CONSTRAINTS[constraint].keys);
      try {
        replaced.push({ key: replaceField(model, verify, path, constraint, key, rnd), constraint });
      } catch {
        ok = false; // a path an earlier replacement removed, as the published code skips it
        break;
      }
    }
    if (ok)
      custom.push({
        task: 'Custom',
        base: b.id,
        schema: model,
        verify,
        question: SCHEMABENCH_QUERY,
        replaced,
      });
    // Escape Translation: one field holds the special string, exactly.
    const path = rnd.choice(nodes);
    const token = rnd.choice(SPECIAL_STRINGS);
    const em = clone(b.schema);
    const ev = clone(b.schema);
    const parent = at(em, path.slice(0, -1));
    const vparent = at(ev, path.slice(0, -1));
    const last = path[path.length - 1];
    parent[last] = { type: 'string', description: 'Write your special token here, exactly as it was given' };
    vparent[last] = { type: 'string', const: token };
    if (
      path.length >= 2 &&
      path[path.length - 2] === 'properties' &&
      !path.some((p) => BLOCKED.includes(p))
    ) {
      for (const root of [em, ev]) {
        const owner = at(root, path.slice(0, -2));
        const req = owner.required;
        if (Array.isArray(req)) {
          if (!req.includes(last)) req.push(last);
        } else owner.required = [last];
      }
    }
    escapes.push({ task: 'Escape', base: b.id, schema: em, verify: ev, question: escapeQuery(token), token });
  }
  const subset = <T>(xs: T[]): T[] => {
    if (xs.length <= SUBSET) return xs;
    return new PyChoices(subsetSeed).sample(xs, SUBSET);
  };
  const complex = subset(bases).map(
    (b): SchemaBenchRecord => ({
      task: 'Complex',
      base: b.id,
      schema: clone(b.schema),
      question: SCHEMABENCH_QUERY,
    }),
  );
  return [...complex, ...subset(custom), ...subset(escapes)];
}

export const loader: RecordLoader = {
  produces: 'records',
  checks: 'compliance',
  loadRecords: async (input, ctx) => {
    if (input === undefined)
      throw new UserError('schemabench needs an <input>: the JSONSchemaBench data folder of base schemas', 2);
    const bases: BaseSchema[] = [];
    const problems: Problem[] = [];
    for (const { dataset, dir } of datasetFolders(input)) {
      const { readdirSync } = await import('node:fs');
      for (const f of readdirSync(dir)
        .filter((x) => x.toLowerCase().endsWith('.json'))
        .sort()) {
        const r = readSchemaFile(`${dir}/${f}`);
        if (isProblem(r)) problems.push(r);
        else if (isObj(r.plain))
          bases.push({ id: `${dataset}/${f.replace(/\.json$/i, '')}`, schema: r.plain });
        else problems.push({ origin: `${dir}/${f}`, reasons: ['not a JSON object schema'] });
      }
    }
    const records = generateSchemaBench(bases);
    const counts = new Map<string, number>();
    const candidates: Candidate[] = records.map((r, i) => {
      counts.set(r.task, (counts.get(r.task) ?? 0) + 1);
      const metadata: Obj = {
        record_id: `schemabench-${r.task.toLowerCase()}-${String(i + 1).padStart(3, '0')}`,
        source: 'schema',
        source_category: `schemabench:${r.task}`,
        dataset: 'schemabench',
        schemabench_task: r.task,
        base_schema: r.base,
        track: 'compliance',
      };
      if (r.verify) metadata.verify_schema = r.verify;
      if (r.token !== undefined) metadata.special_token = r.token;
      if (r.replaced) metadata.custom_formats = r.replaced;
      return {
        origin: `${input}: ${r.base}`,
        record: {
          metadata,
          input: { context: '', question: r.question, json_schema: r.schema },
          output: { ground_truth: null },
        },
      };
    });
    ctx.log(
      `schemabench from ${bases.length} base schemas: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
    return { candidates, problems };
  },
};
