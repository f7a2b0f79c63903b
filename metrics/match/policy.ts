/**
 * Match policies: which matcher decides each leaf and how each array is aligned.
 *
 * A policy is plain data (JSON or YAML; `src/scoring/policy-file.ts` reads the file), validated
 * here by zod:
 *
 *   version: 1
 *   use_judge: true          # false: every `judge` matcher acts as its `first` matcher
 *   floor: 0.5               # default similarity floor for `align: auto`
 *   align: auto              # default rule for every array
 *   types:                   # default matcher per leaf kind (overrides the built-in defaults)
 *     number: { match: number, abs_tol: 0.01 }
 *   tables:                  # user synonym tables; a shipped name (countries, currencies,
 *     products:              # us_states) is extended, not replaced
 *       - [Widget, WDG-1]
 *   fields:                  # path pattern -> matcher and/or alignment
 *     "line_items[*].amount": { match: number, abs_tol: 0.01 }
 *     line_items: { align: match_by, keys: [sku] }
 *     "**.date": date
 *
 * Patterns: keys joined by `.`, `[*]` (or `[]`) for any array index, `*` for any one key, `**`
 * for any number of steps. The same entries may sit in the schema as `x-sob-match` annotations.
 *
 * Precedence, per leaf (matcher) and per array (alignment), the first that says something:
 * 1. the policy's `fields` entry whose pattern matches (most literal segments first, then fewest
 *    `**`, then the earlier entry);
 * 2. the schema's `x-sob-match` annotation at that node;
 * 3. the policy's `types` entry for the leaf's kind (or `align` for arrays);
 * 4. the built-in default (`defaultMatcherFor`): by schema type and hints, else by value type.
 */
import { z } from 'zod';
import { declaredComparators } from '../../src/core/declared-comparators.ts';
import type { DateOptions } from '../../src/core/values/dates.ts';
import type { NumberOptions } from '../../src/core/values/numbers.ts';
import {
  EXTRACTBENCH_LLM_METRICS,
  EXTRACTBENCH_METRICS,
  type ExtractBenchMetric,
  type ExtractBenchParams,
} from './extractbench.ts';
import {
  hintsOf,
  type LeafHints,
  type SchemaNode,
  schemaChild,
  schemaRoot,
  type WStep,
} from './schema-walk.ts';
import { buildTables, SHIPPED_TABLES, type SynonymTable } from './tables.ts';
import type { TextOptions } from './text.ts';

// -- Entries ---------------------------------------------------------------------------------------

const MATCHERS = [
  'default',
  'exact',
  'text',
  'number',
  'date',
  'enum',
  'synonyms',
  'fuzzy',
  'judge',
  // ExtractBench's deterministic comparators, with its evaluator's semantics (./extractbench.ts).
  ...EXTRACTBENCH_METRICS,
] as const;
export type MatcherName = (typeof MATCHERS)[number];
const ALIGNS = ['auto', 'ordered', 'set', 'multiset', 'match_by'] as const;
export type AlignName = (typeof ALIGNS)[number];

const unit = z.number().min(0).max(1);
const tablesList = z.array(z.string().min(1)).min(1);
const textOpts = {
  ignore_case: z.boolean().optional(),
  ignore_punctuation: z.boolean().optional(),
  ignore_articles: z.boolean().optional(),
  ignore_accents: z.boolean().optional(),
};

const MATCH_OPTIONS = {
  default: z.object({ match: z.literal('default') }).strict(),
  exact: z.object({ match: z.literal('exact') }).strict(),
  text: z.object({ match: z.literal('text'), ...textOpts, tables: tablesList.optional() }).strict(),
  number: z
    .object({ match: z.literal('number'), abs_tol: z.number().min(0).optional(), rel_tol: unit.optional() })
    .strict(),
  date: z
    .object({
      match: z.literal('date'),
      order: z.enum(['mdy', 'dmy', 'either']).optional(),
      digits: z.boolean().optional(),
    })
    .strict(),
  enum: z
    .object({
      match: z.literal('enum'),
      values: z.array(z.string()).optional(),
      tables: tablesList.optional(),
    })
    .strict(),
  synonyms: z.object({ match: z.literal('synonyms'), tables: tablesList }).strict(),
  fuzzy: z.object({ match: z.literal('fuzzy'), threshold: unit.optional(), ...textOpts }).strict(),
  judge: z
    .object({ match: z.literal('judge'), first: z.unknown().optional(), metric: z.string().optional() })
    .strict(),
  string_exact: z.object({ match: z.literal('string_exact') }).strict(),
  string_case_insensitive: z.object({ match: z.literal('string_case_insensitive') }).strict(),
  string_fuzzy: z
    .object({
      match: z.literal('string_fuzzy'),
      threshold: unit.optional(),
      case_sensitive: z.boolean().optional(),
    })
    .strict(),
  integer_exact: z.object({ match: z.literal('integer_exact') }).strict(),
  number_exact: z.object({ match: z.literal('number_exact') }).strict(),
  number_tolerance: z
    .object({ match: z.literal('number_tolerance'), tolerance: z.number().min(0).optional() })
    .strict(),
  boolean_exact: z.object({ match: z.literal('boolean_exact') }).strict(),
} as const;

export type MatchSpec =
  | { match: 'default' }
  | { match: 'exact' }
  | ({ match: 'text'; tables?: string[] } & TextOptions)
  | ({ match: 'number' } & NumberOptions)
  | ({ match: 'date' } & DateOptions)
  | { match: 'enum'; values?: string[]; tables?: string[] }
  | { match: 'synonyms'; tables: string[] }
  | ({ match: 'fuzzy'; threshold?: number } & TextOptions)
  | { match: 'judge'; first?: MatchSpec; metric?: string }
  | ({ match: ExtractBenchMetric } & ExtractBenchParams);

const ALIGN_OPTIONS = {
  auto: z.object({ align: z.literal('auto'), floor: unit.optional() }).strict(),
  ordered: z.object({ align: z.literal('ordered') }).strict(),
  set: z.object({ align: z.literal('set') }).strict(),
  multiset: z.object({ align: z.literal('multiset') }).strict(),
  match_by: z.object({ align: z.literal('match_by'), keys: z.array(z.string().min(1)).min(1) }).strict(),
} as const;

export type AlignSpec =
  | { align: 'auto'; floor?: number }
  | { align: 'ordered' }
  | { align: 'set' }
  | { align: 'multiset' }
  | { align: 'match_by'; keys: string[] };

export interface Entry {
  match?: MatchSpec;
  align?: AlignSpec;
}

/** A problem in a policy: where (a path into the policy document) and what. */
export interface PolicyProblem {
  path: (string | number)[];
  message: string;
}

export class PolicyError extends Error {
  constructor(readonly problem: PolicyProblem) {
    super(`${formatPolicyPath(problem.path)}: ${problem.message}`);
    this.name = 'PolicyError';
  }
}

/** `fields["line_items[*].amount"].abs_tol` */
export function formatPolicyPath(path: (string | number)[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out || '(top level)';
}

function zodProblem(e: z.ZodError, at: (string | number)[]): PolicyProblem {
  const i = e.issues[0];
  let message = i.message;
  if (i.code === 'unrecognized_keys') message = `unknown key ${i.keys.map((k) => `"${k}"`).join(', ')}`;
  return { path: [...at, ...i.path], message };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Parses a matcher spec (a name, or an object with `match`). */
function parseMatch(raw: unknown, at: (string | number)[]): MatchSpec {
  const obj = typeof raw === 'string' ? { match: raw } : raw;
  if (!isPlainObject(obj) || typeof obj.match !== 'string')
    throw new PolicyError({ path: at, message: `expected a matcher name (${MATCHERS.join(', ')})` });
  const name = obj.match as MatcherName;
  if (!(MATCHERS as readonly string[]).includes(name))
    throw new PolicyError({
      path: [...at, ...(typeof raw === 'string' ? [] : ['match'])],
      message: `unknown matcher "${name}" (use one of ${MATCHERS.join(', ')})`,
    });
  const r = MATCH_OPTIONS[name].safeParse(obj);
  if (!r.success) throw new PolicyError(zodProblem(r.error, at));
  if (name === 'judge' && obj.first !== undefined) {
    const first = parseMatch(obj.first, [...at, 'first']);
    if (first.match === 'judge')
      throw new PolicyError({ path: [...at, 'first'], message: 'a judge cannot come first' });
    return { ...(r.data as MatchSpec), match: 'judge', first };
  }
  return r.data as MatchSpec;
}

function parseAlign(raw: unknown, at: (string | number)[]): AlignSpec {
  const obj = typeof raw === 'string' ? { align: raw } : raw;
  if (!isPlainObject(obj) || typeof obj.align !== 'string')
    throw new PolicyError({ path: at, message: `expected an alignment (${ALIGNS.join(', ')})` });
  const name = obj.align as AlignName;
  if (!(ALIGNS as readonly string[]).includes(name))
    throw new PolicyError({
      path: [...at, ...(typeof raw === 'string' ? [] : ['align'])],
      message: `unknown alignment "${name}" (use one of ${ALIGNS.join(', ')})`,
    });
  const r = ALIGN_OPTIONS[name].safeParse(obj);
  if (!r.success) throw new PolicyError(zodProblem(r.error, at));
  return r.data as AlignSpec;
}

/**
 * One `fields` entry or `x-sob-match` annotation: a matcher or alignment name, or an object
 * with `match` and its options and/or `align` and its options.
 */
function parseEntry(raw: unknown, at: (string | number)[] = []): Entry {
  if (typeof raw === 'string') {
    if ((ALIGNS as readonly string[]).includes(raw)) return { align: parseAlign(raw, at) };
    return { match: parseMatch(raw, at) };
  }
  if (!isPlainObject(raw))
    throw new PolicyError({ path: at, message: 'expected a matcher or alignment name, or an object' });
  if (raw.match === undefined && raw.align === undefined)
    throw new PolicyError({ path: at, message: 'needs "match" or "align"' });
  const matchPart: Record<string, unknown> = {};
  const alignPart: Record<string, unknown> = {};
  const matchKeys = raw.match !== undefined ? keysOf(MATCH_OPTIONS, raw.match, 'match') : new Set<string>();
  const alignKeys = raw.align !== undefined ? keysOf(ALIGN_OPTIONS, raw.align, 'align') : new Set<string>();
  for (const [k, v] of Object.entries(raw)) {
    if (matchKeys.has(k)) matchPart[k] = v;
    else if (alignKeys.has(k)) alignPart[k] = v;
    else {
      const what = [
        raw.match !== undefined ? `match: ${String(raw.match)}` : '',
        raw.align !== undefined ? `align: ${String(raw.align)}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      throw new PolicyError({ path: [...at, k], message: `unknown option "${k}" for ${what}` });
    }
  }
  const entry: Entry = {};
  if (raw.match !== undefined) entry.match = parseMatch(matchPart, at);
  if (raw.align !== undefined) entry.align = parseAlign(alignPart, at);
  return entry;
}

/** The option keys of one matcher or alignment (just the discriminator when the name is unknown). */
function keysOf(table: Record<string, z.AnyZodObject>, name: unknown, discriminator: string): Set<string> {
  const s = typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;
  return new Set(s ? Object.keys(s.shape) : [discriminator]);
}

// -- Patterns --------------------------------------------------------------------------------------

type Seg = { key: string } | { anyKey: true } | { anyIndex: true } | { deep: true };

/** Parses `a.b[*].c`, `[*].name`, `*.date`, `**.amount`. */
export function parsePattern(p: string): Seg[] {
  const segs: Seg[] = [];
  if (p.length === 0) throw new Error('empty path');
  let i = 0;
  let expectKey = true;
  while (i < p.length) {
    const ch = p[i];
    if (ch === '[') {
      const end = p.indexOf(']', i);
      if (end < 0) throw new Error(`"[" without "]" at character ${i + 1}`);
      const inner = p.slice(i + 1, end);
      if (inner !== '*' && inner !== '') {
        throw new Error(`array steps are written [*] (a fixed index like [${inner}] is not supported)`);
      }
      segs.push({ anyIndex: true });
      i = end + 1;
      expectKey = false;
      continue;
    }
    if (ch === '.') {
      if (expectKey) throw new Error(`empty key at character ${i + 1}`);
      i++;
      expectKey = true;
      if (i >= p.length) throw new Error('path ends with "."');
      continue;
    }
    if (!expectKey) throw new Error(`expected "." or "[" at character ${i + 1}`);
    let j = i;
    while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
    const key = p.slice(i, j);
    if (key === '**') segs.push({ deep: true });
    else if (key === '*') segs.push({ anyKey: true });
    else segs.push({ key });
    i = j;
    expectKey = false;
  }
  return segs;
}

function matchSegs(segs: Seg[], steps: readonly WStep[], si = 0, pi = 0): boolean {
  if (si === segs.length) return pi === steps.length;
  const s = segs[si];
  if ('deep' in s) {
    for (let k = pi; k <= steps.length; k++) if (matchSegs(segs, steps, si + 1, k)) return true;
    return false;
  }
  if (pi >= steps.length) return false;
  const step = steps[pi];
  if ('anyIndex' in s) return 'index' in step && matchSegs(segs, steps, si + 1, pi + 1);
  if (!('key' in step)) return false;
  if ('anyKey' in s || s.key === step.key) return matchSegs(segs, steps, si + 1, pi + 1);
  return false;
}

interface FieldRule {
  pattern: string;
  segs: Seg[];
  entry: Entry;
  literal: number;
  deep: number;
  order: number;
}

// -- The policy ------------------------------------------------------------------------------------

const LEAF_KINDS = ['string', 'number', 'integer', 'boolean', 'null', 'date', 'enum'] as const;
export type LeafKind = (typeof LEAF_KINDS)[number];

const PolicyShape = z
  .object({
    version: z.literal(1).optional(),
    use_judge: z.boolean().optional(),
    floor: unit.optional(),
    align: z.unknown().optional(),
    types: z.record(z.unknown()).optional(),
    tables: z.record(z.array(z.array(z.string().min(1)).min(1))).optional(),
    fields: z.record(z.unknown()).optional(),
  })
  .strict();

export interface Policy {
  /** "default", or what the caller named it (a file name). */
  name: string;
  useJudge: boolean;
  floor: number;
  align: AlignSpec;
  types: Partial<Record<LeafKind, MatchSpec>>;
  tables: Map<string, SynonymTable>;
  rules: FieldRule[];
  /** Resolved paths per schema object (schemas recur across the models scored). */
  readonly roots: WeakMap<object, PathInfo>;
  /** The root for a record without a usable schema. */
  noSchemaRoot?: PathInfo;
}

export const DEFAULT_FLOOR = 0.5;

/** Validates a parsed policy document (JSON or YAML value). Throws PolicyError. */
export function compilePolicy(doc: unknown, name = 'policy'): Policy {
  if (doc === null || doc === undefined) doc = {};
  const shape = PolicyShape.safeParse(doc);
  if (!shape.success) throw new PolicyError(zodProblem(shape.error, []));
  const d = shape.data;
  const tables = buildTables(d.tables ?? {});
  const known = new Set(tables.keys());
  const checkTables = (spec: MatchSpec | undefined, at: (string | number)[]) => {
    if (spec === undefined) return;
    if (spec.match === 'judge') return checkTables(spec.first, [...at, 'first']);
    if ('tables' in spec && spec.tables) {
      spec.tables.forEach((t, i) => {
        if (!known.has(t))
          throw new PolicyError({
            path: [...at, 'tables', i],
            message: `unknown table "${t}" (known: ${[...known].join(', ')})`,
          });
      });
    }
  };
  const types: Partial<Record<LeafKind, MatchSpec>> = {};
  for (const [k, v] of Object.entries(d.types ?? {})) {
    if (!(LEAF_KINDS as readonly string[]).includes(k))
      throw new PolicyError({
        path: ['types', k],
        message: `unknown leaf kind "${k}" (use ${LEAF_KINDS.join(', ')})`,
      });
    const spec = parseMatch(v, ['types', k]);
    checkTables(spec, ['types', k]);
    types[k as LeafKind] = spec;
  }
  const rules: FieldRule[] = [];
  Object.entries(d.fields ?? {}).forEach(([pattern, raw], order) => {
    let segs: Seg[];
    try {
      segs = parsePattern(pattern);
    } catch (e) {
      throw new PolicyError({ path: ['fields', pattern], message: `bad path: ${(e as Error).message}` });
    }
    const entry = parseEntry(raw, ['fields', pattern]);
    checkTables(entry.match, ['fields', pattern]);
    rules.push({
      pattern,
      segs,
      entry,
      literal: segs.filter((s) => 'key' in s).length,
      deep: segs.filter((s) => 'deep' in s).length,
      order,
    });
  });
  // Most specific first: more literal keys, fewer `**`, then file order.
  rules.sort((a, b) => b.literal - a.literal || a.deep - b.deep || a.order - b.order);
  return {
    name,
    useJudge: d.use_judge ?? true,
    floor: d.floor ?? DEFAULT_FLOOR,
    align: d.align === undefined ? { align: 'auto' } : parseAlign(d.align, ['align']),
    types,
    tables,
    rules,
    roots: new WeakMap(),
  };
}

/** The default policy: built-in matchers by leaf type and schema hints, `auto` alignment. */
export function defaultPolicy(): Policy {
  return compilePolicy({}, 'default');
}

/** The same policy with every judge matcher replaced by its first matcher ("lenient without judge"). */
export function withoutJudge(p: Policy): Policy {
  return {
    ...p,
    name: `${p.name} (no judge)`,
    useJudge: false,
    roots: new WeakMap(),
    noSchemaRoot: undefined,
  };
}

// -- Resolution ------------------------------------------------------------------------------------

/** Where a matcher or alignment came from, for the audit. */
export type Source = 'policy' | 'schema' | 'types' | 'default';

export interface ResolvedMatch {
  spec: MatchSpec;
  source: Source;
}
export interface ResolvedAlign {
  spec: AlignSpec;
  source: Source;
}

/** A position in the ground truth (indices wildcarded), with its schema node; built once. */
export class PathInfo {
  private readonly kids = new Map<string, PathInfo>();
  private itemInfo?: PathInfo;
  private alignMemo?: ResolvedAlign;
  private hintsMemo?: LeafHints;
  private annotationMemo?: Entry | null;
  /** Matcher memo by the leaf's value type, filled by the scorer. */
  readonly matcherMemo = new Map<string, unknown>();
  /** Problems with this node's `x-sob-match` annotation (reported, then ignored). */
  warning?: string;
  /** A root's variants for records declaring a field policy, by its JSON text. */
  readonly withFieldPolicy = new Map<string, PathInfo>();

  constructor(
    readonly policy: Policy,
    readonly schemaDoc: unknown,
    readonly node: SchemaNode | undefined,
    readonly steps: readonly WStep[],
    readonly wild: string,
    /** The comparators the record declares (`declaredRules`), shared by every path of it. */
    readonly declared: readonly FieldRule[] = [],
  ) {}

  /**
   * The root of a record's paths. `fieldPolicy`: the record's `metadata.field_policy` (comparators
   * declared by data path); with the schema's own `evaluation_config`s they rank below the
   * policy's `fields` and above `x-sob-match`, `types` and the defaults.
   */
  static root(policy: Policy, schema: unknown, fieldPolicy?: unknown): PathInfo {
    if (schema !== null && typeof schema === 'object') {
      const make = (fp: unknown) => {
        const d = declaredRules(schema, fp);
        const info = new PathInfo(policy, schema, schemaRoot(schema), [], '', d.rules);
        if (d.notes.length > 0) info.warning = `declared comparators: ${d.notes.join('; ')}`;
        return info;
      };
      let r = policy.roots.get(schema);
      if (!r) policy.roots.set(schema, (r = make(undefined)));
      if (fieldPolicy === undefined) return r;
      // Records sharing a schema object may declare different field policies: one root each.
      const key = JSON.stringify(fieldPolicy);
      let v = r.withFieldPolicy.get(key);
      if (!v) r.withFieldPolicy.set(key, (v = make(fieldPolicy)));
      return v;
    }
    if (fieldPolicy !== undefined && isPlainObject(fieldPolicy))
      return new PathInfo(policy, undefined, undefined, [], '', declaredRules(undefined, fieldPolicy).rules);
    if (!policy.noSchemaRoot) policy.noSchemaRoot = new PathInfo(policy, undefined, undefined, [], '');
    return policy.noSchemaRoot;
  }

  child(key: string): PathInfo {
    let c = this.kids.get(key);
    if (!c) {
      const step = { key };
      c = new PathInfo(
        this.policy,
        this.schemaDoc,
        schemaChild(this.schemaDoc, this.node, step),
        [...this.steps, step],
        this.wild ? `${this.wild}.${key}` : key,
        this.declared,
      );
      this.kids.set(key, c);
    }
    return c;
  }

  item(): PathInfo {
    if (!this.itemInfo) {
      const step = { index: true } as const;
      this.itemInfo = new PathInfo(
        this.policy,
        this.schemaDoc,
        schemaChild(this.schemaDoc, this.node, step),
        [...this.steps, step],
        `${this.wild}[*]`,
        this.declared,
      );
    }
    return this.itemInfo;
  }

  /** The child at a relative key path (`sku`, `meta.id`). */
  descend(keyPath: string): PathInfo {
    let cur: PathInfo = this;
    for (const k of keyPath.split('.')) cur = cur.child(k);
    return cur;
  }

  get hints(): LeafHints {
    if (!this.hintsMemo) this.hintsMemo = hintsOf(this.schemaDoc, this.node);
    return this.hintsMemo;
  }

  /** The last key on the path (an array's name for its items). */
  get keyName(): string | undefined {
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const s = this.steps[i];
      if ('key' in s) return s.key;
    }
    return undefined;
  }

  private annotation(): Entry | null {
    if (this.annotationMemo === undefined) {
      const raw = this.hints.annotation;
      this.annotationMemo = null;
      if (raw !== undefined) {
        try {
          const e = parseEntry(raw, []);
          for (const t of e.match && 'tables' in e.match ? (e.match.tables ?? []) : []) {
            if (!this.policy.tables.has(t))
              throw new PolicyError({ path: ['tables'], message: `unknown table "${t}"` });
          }
          this.annotationMemo = e;
        } catch (err) {
          this.warning = `x-sob-match at ${this.wild || '(root)'}: ${(err as Error).message} (ignored)`;
        }
      }
    }
    return this.annotationMemo;
  }

  private rule(aspect: 'match' | 'align'): FieldRule | undefined {
    for (const r of this.policy.rules) if (r.entry[aspect] && matchSegs(r.segs, this.steps)) return r;
    return undefined;
  }

  /** The matcher for a leaf here (kind: the leaf's kind by schema, else by value). */
  resolveMatch(kind: LeafKind): ResolvedMatch {
    const r = this.rule('match');
    if (r) return { spec: r.entry.match!, source: 'policy' };
    for (const d of this.declared)
      if (d.entry.match && matchSegs(d.segs, this.steps)) return { spec: d.entry.match, source: 'schema' };
    const a = this.annotation();
    if (a?.match) return { spec: a.match, source: 'schema' };
    const t = this.policy.types[kind];
    if (t) return { spec: t, source: 'types' };
    return { spec: { match: 'default' }, source: 'default' };
  }

  resolveAlign(): ResolvedAlign {
    if (!this.alignMemo) {
      const r = this.rule('align');
      const a = r ? undefined : this.annotation();
      this.alignMemo = r
        ? { spec: r.entry.align!, source: 'policy' }
        : a?.align
          ? { spec: a.align, source: 'schema' }
          : { spec: this.policy.align, source: this.policy.align.align === 'auto' ? 'default' : 'types' };
    }
    return this.alignMemo;
  }
}

/** Words of a key or description: `countryCode` -> country, code. */
function words(s: string | undefined): string[] {
  if (!s) return [];
  return s
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);
}

const TABLE_HINTS: [string, RegExp][] = [
  ['countries', /^(?:country|countries|nation|nations|nationality|nationalities|citizenship|demonym)$/],
  ['currencies', /^(?:currency|currencies)$/],
  ['us_states', /^(?:state|states)$/],
];

/** Shipped tables a field's name or description points at ("country", "currency", "state"). */
export function hintedTables(info: PathInfo): string[] {
  const ws = new Set([...words(info.keyName), ...words(info.hints.description)]);
  const out: string[] = [];
  for (const [table, re] of TABLE_HINTS) if ([...ws].some((w) => re.test(w))) out.push(table);
  return out;
}

/** The kind of a leaf for matcher defaults: from the schema when it says, else from the value. */
export function leafKind(hints: LeafHints, valueType: string): LeafKind {
  const t = hints.type ?? valueType;
  if (t === 'string') {
    if (hints.format === 'date' || hints.format === 'date-time') return 'date';
    if (hints.enum) return 'enum';
    return 'string';
  }
  if (t === 'number' || t === 'integer' || t === 'boolean' || t === 'null') return t;
  return valueType === 'integer' || valueType === 'number' || valueType === 'boolean' || valueType === 'null'
    ? (valueType as LeafKind)
    : 'string';
}

export { SHIPPED_TABLES };

// -- Comparators declared in the schema ---------------------------------------------------------

/** ExtractBench's presets (`presets.py`): a name alone carries these parameters. */
const EB_PRESET_PARAMS: Partial<Record<ExtractBenchMetric, ExtractBenchParams>> = {
  string_fuzzy: { threshold: 0.8 },
  number_tolerance: { tolerance: 1e-3 },
};

/**
 * An `evaluation_config` as one of our entries: a preset name (`"string_fuzzy"`) or
 * `{"metrics": [{"metric_id", "params"}]}` (the first metric; its params, else the metric's own
 * defaults). The LLM-judged ones (`string_semantic`, `string_llm`, `array_llm`) become a judge
 * entry naming them: asked with a judge, "needs a judge" without one. `skip` and unknown names:
 * undefined (the policy's own matcher decides), with why.
 */
export function evaluationConfigEntry(cfg: unknown): { entry?: Entry; why?: string } {
  let id: unknown;
  let params: Record<string, unknown> | undefined;
  let preset = false;
  if (typeof cfg === 'string') {
    id = cfg;
    preset = true;
  } else if (isPlainObject(cfg) && Array.isArray(cfg.metrics) && cfg.metrics.length > 0) {
    const m = cfg.metrics[0] as Record<string, unknown>;
    id = isPlainObject(m) ? m.metric_id : undefined;
    params = isPlainObject(m) && isPlainObject(m.params) ? m.params : undefined;
  } else return { why: `evaluation_config ${JSON.stringify(cfg)}: neither a name nor {"metrics": [...]}` };
  if (typeof id !== 'string') return { why: 'evaluation_config: a metric without a metric_id' };
  if (id === 'skip') return { why: 'evaluation_config "skip": not skipped here, the policy decides' };
  if ((EXTRACTBENCH_LLM_METRICS as readonly string[]).includes(id))
    return { entry: { match: { match: 'judge', first: { match: 'exact' }, metric: id } } };
  if (!(EXTRACTBENCH_METRICS as readonly string[]).includes(id))
    return { why: `evaluation_config "${id}": not a comparator sob knows (the policy decides)` };
  const metric = id as ExtractBenchMetric;
  const spec: Record<string, unknown> = { match: metric, ...(preset ? EB_PRESET_PARAMS[metric] : {}) };
  for (const k of ['threshold', 'case_sensitive', 'tolerance'])
    if (params?.[k] !== undefined) spec[k] = params[k];
  try {
    return { entry: { match: parseMatch(spec, []) } };
  } catch (e) {
    return { why: `evaluation_config "${id}": ${(e as Error).message}` };
  }
}

/**
 * The rules a record declares (the schema's `evaluation_config`s, and the record's
 * `metadata.field_policy` of `sob build extractbench`), most specific first. An array's entry
 * (`array_llm`) also covers every leaf under its items (`path[*].**`).
 */
export function declaredRules(
  schema: unknown,
  fieldPolicy: unknown,
): { rules: FieldRule[]; notes: string[] } {
  const declared: Record<string, unknown> = {
    ...declaredComparators(schema, ['evaluation_config']),
    ...(isPlainObject(fieldPolicy) ? fieldPolicy : {}),
  };
  const rules: FieldRule[] = [];
  const notes: string[] = [];
  let order = 0;
  for (const [path, cfg] of Object.entries(declared)) {
    const { entry, why } = evaluationConfigEntry(cfg);
    if (!entry) {
      if (why) notes.push(`${path || '(root)'}: ${why}`);
      continue;
    }
    const patterns = path === '' ? ['**'] : [path];
    if (entry.match?.match === 'judge' && path !== '') patterns.push(`${path}[*].**`);
    for (const pattern of patterns) {
      let segs: Seg[];
      try {
        segs = parsePattern(pattern);
      } catch {
        notes.push(`${path}: a path sob cannot write as a pattern (ignored)`);
        continue;
      }
      rules.push({
        pattern,
        segs,
        entry,
        literal: segs.filter((s) => 'key' in s).length,
        deep: segs.filter((s) => 'deep' in s).length,
        order: order++,
      });
    }
  }
  rules.sort((a, b) => b.literal - a.literal || a.deep - b.deep || a.order - b.order);
  return { rules, notes };
}
