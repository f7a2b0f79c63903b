/**
 * Agreement of the `jsonschemabench` protocol (src/core/validator.ts) with the reference itself:
 * Python `jsonschema` validating as JSONSchemaBench's harness does (`Draft202012Validator.check_schema`,
 * then `Draft202012Validator(schema, format_checker=...)` with the harness's ipv4/ipv6/uuid
 * checks; any exception is "invalid"), on the 600 shared JSONSchemaBench schemas, each with the
 * `baseline:instance` answer and mutations of it (below). Prints the agreement per mutation kind
 * and per dataset, and every disagreement.
 *
 * Python is called here only, never from the product. The Python on this machine may lack some
 * of `jsonschema[format]`'s optional packages; the formats it does not check are asked of it
 * (`FormatChecker().checkers`) and our side is run twice: with the protocol's full format set
 * (the paper's environment) and with those formats unchecked (this Python's), so each
 * disagreement is either explained by the missing packages or not.
 *
 * With `--suite <json-schema-test-suite folder>`, the Draft 2020-12 tests of the official suite
 * (required and optional, each test's schema and data) are compared too, as dataset `suite`.
 *
 *   node --import tsx bench/protocol-agreement.ts [--data ../shared/data/jsonschemabench]
 *     [--python python3] [--out runs/protocol-agreement.json] [--limit N] [--suite DIR]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { JSONSCHEMABENCH_FORMATS } from '../src/core/py-formats.ts';
import { compileSchema, decodePointerToken, validateCompiled } from '../src/core/validator.ts';
import { buildInstance } from '../src/providers/instance.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const DATA = arg('--data', join(import.meta.dirname, '../../shared/data/jsonschemabench'));
const PYTHON = arg('--python', 'python3');
const OUT = arg('--out', join(import.meta.dirname, '../runs/protocol-agreement.json'));
const LIMIT = Number(arg('--limit', '0'));
const SUITE = arg('--suite', '');

// -- The reference, in Python -----------------------------------------------------------------

const PY = String.raw`
import json, signal, sys
from uuid import UUID
from ipaddress import IPv4Address, IPv6Address
from jsonschema import Draft202012Validator, FormatChecker, SchemaError

format_checker = FormatChecker()

@format_checker.checks("ipv4")
def ipv4_check(value):
    IPv4Address(value)

@format_checker.checks("ipv6")
def ipv6_check(value):
    IPv6Address(value)

@format_checker.checks("uuid")
def uuid_check(value):
    UUID(value)

class Timeout(Exception):
    pass

def on_alarm(signum, frame):
    raise Timeout()

signal.signal(signal.SIGALRM, on_alarm)

def verdict(schema, instance):
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return "schema-invalid"
    validator = Draft202012Validator(schema, format_checker=format_checker)
    try:
        validator.validate(instance)
    except Exception:
        return "invalid"
    return "valid"

if sys.argv[1] == "formats":
    print(json.dumps(sorted(FormatChecker().checkers)))
    sys.exit(0)
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        item = json.loads(line)
        signal.alarm(40)
        try:
            v = verdict(item["schema"], item["instance"])
        except Timeout:
            v = "timeout"
        except RecursionError:
            v = "error"
        finally:
            signal.alarm(0)
        out.write(v + "\n")
`;

function python(...argv: string[]): string {
  const r = spawnSync(PYTHON, ['-c', PY, ...argv], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${PYTHON} failed: ${r.stderr}`);
  return r.stdout;
}

// -- Mutations ----------------------------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** A local `$ref` (`#/...`) resolved in the root document; undefined otherwise. */
function resolveLocal(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  const frag = ref.slice(1);
  if (frag === '') return root;
  if (!frag.startsWith('/')) return undefined;
  for (const tok of frag.slice(1).split('/').map(decodePointerToken)) {
    if (Array.isArray(node)) node = node[Number(tok)];
    else if (isObj(node)) node = node[tok];
    else return undefined;
  }
  return node;
}

/** A place in the answer with the subschema that governs it (properties / items / local $ref / allOf). */
interface Pair {
  parent: Obj | Json[] | null;
  key: string | number;
  value: unknown;
  schema: Obj;
  /** The subschema as written, before its `$ref` was followed. */
  written: Obj;
}

function pairs(root: unknown, answer: unknown): Pair[] {
  const out: Pair[] = [];
  const visit = (
    schema: unknown,
    parent: Pair['parent'],
    key: string | number,
    value: unknown,
    depth: number,
  ) => {
    if (!isObj(schema) || depth > 24) return;
    let s: Obj = schema;
    for (let hops = 0; typeof s.$ref === 'string' && hops < 8; hops++) {
      const r = resolveLocal(root, s.$ref);
      if (!isObj(r)) break;
      s = { ...r, ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')) };
    }
    out.push({ parent, key, value, schema: s, written: schema });
    if (Array.isArray(s.allOf)) for (const sub of s.allOf) visit(sub, parent, key, value, depth + 1);
    if (isObj(value) && isObj(s.properties))
      for (const [k, sub] of Object.entries(s.properties))
        if (Object.hasOwn(value, k)) visit(sub, value, k, value[k], depth + 1);
    if (Array.isArray(value)) {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
      value.forEach((item, i) => {
        const sub = i < prefix.length ? prefix[i] : isObj(s.items) ? s.items : undefined;
        visit(sub, value as Json[], i, item, depth + 1);
      });
    }
  };
  visit(root, null, '', answer, 0);
  return out;
}

/** Sets the value at a pair's place in a copy made by `mutate`. */
function set(p: Pair, v: unknown, root: { value: unknown }): true {
  if (p.parent === null) root.value = v;
  else (p.parent as Record<string | number, unknown>)[p.key] = v;
  return true;
}

type Mutation = (schema: unknown, answer: unknown) => unknown | undefined;

function mutate(schema: unknown, answer: unknown, pick: (ps: Pair[], root: { value: unknown }) => boolean) {
  const root = { value: clone(answer) };
  return pick(pairs(schema, root.value), root) ? root.value : undefined;
}

function otherType(v: unknown): unknown {
  if (typeof v === 'string') return 12345;
  if (typeof v === 'number') return 'not a number';
  if (typeof v === 'boolean') return 'true';
  if (v === null) return 0;
  if (Array.isArray(v)) return { not: 'an array' };
  return ['not', 'an', 'object'];
}

export const MUTATIONS: Record<string, Mutation> = {
  none: (_s, a) => a,
  key_dropped: (_s, a) => {
    if (!isObj(a) || Object.keys(a).length === 0) return undefined;
    const copy = clone(a);
    delete copy[Object.keys(copy)[0]];
    return copy;
  },
  key_added: (_s, a) => (isObj(a) ? { ...clone(a), sob_added_key: 'x' } : undefined),
  wrong_type: (s, a) =>
    mutate(s, a, (ps, root) => {
      const leaf = ps.find((p) => p.parent !== null && (p.value === null || typeof p.value !== 'object'));
      const p = leaf ?? ps[0];
      set(p, otherType(p.value), root);
      return true;
    }),
  format_broken: (s, a) =>
    mutate(s, a, (ps, root) => {
      const hits = ps.filter((p) => typeof p.schema.format === 'string' && typeof p.value === 'string');
      for (const p of hits) set(p, `%% not a ${p.schema.format} %%`, root);
      return hits.length > 0;
    }),
  bound_crossed: (s, a) =>
    mutate(s, a, (ps, root) => {
      for (const p of ps) {
        const sc = p.schema;
        const v = p.value;
        if (typeof v === 'number') {
          if (typeof sc.maximum === 'number') return set(p, sc.maximum + 1, root);
          if (typeof sc.exclusiveMaximum === 'number') return set(p, sc.exclusiveMaximum, root);
          if (typeof sc.minimum === 'number') return set(p, sc.minimum - 1, root);
          if (typeof sc.exclusiveMinimum === 'number') return set(p, sc.exclusiveMinimum, root);
        }
        if (typeof v === 'string') {
          if (typeof sc.maxLength === 'number' && sc.maxLength < 10_000)
            return set(p, 'x'.repeat(sc.maxLength + 1), root);
          if (typeof sc.minLength === 'number' && sc.minLength > 0) return set(p, '', root);
        }
        if (Array.isArray(v)) {
          if (typeof sc.maxItems === 'number' && sc.maxItems < 1000 && v.length > 0)
            return set(
              p,
              Array.from({ length: sc.maxItems + 1 }, () => v[0]),
              root,
            );
          if (typeof sc.minItems === 'number' && sc.minItems > 0) return set(p, [], root);
        }
      }
      return false;
    }),
  array_duplicated: (s, a) =>
    mutate(s, a, (ps, root) => {
      const p = ps.find((x) => Array.isArray(x.value) && x.value.length > 0);
      if (!p) return false;
      const v = p.value as unknown[];
      set(p, [...v, ...clone(v)], root);
      return true;
    }),
  array_emptied: (s, a) =>
    mutate(s, a, (ps, root) => {
      const p = ps.find((x) => Array.isArray(x.value) && x.value.length > 0);
      if (!p) return false;
      set(p, [], root);
      return true;
    }),
  enum_left: (s, a) =>
    mutate(s, a, (ps, root) => {
      const hits = ps.filter((p) => Array.isArray(p.schema.enum) && p.parent !== null);
      for (const p of hits) set(p, 'sob-not-in-enum', root);
      return hits.length > 0;
    }),
  ref_reached: (s, a) =>
    mutate(s, a, (ps) => {
      // Add every absent property whose subschema is a `$ref`, so the answer reaches it.
      let added = false;
      for (const p of ps) {
        if (!isObj(p.value) || !isObj(p.schema.properties)) continue;
        for (const [k, sub] of Object.entries(p.schema.properties))
          if (isObj(sub) && typeof sub.$ref === 'string' && !Object.hasOwn(p.value, k)) {
            p.value[k] = {};
            added = true;
          }
      }
      return added;
    }),
};

// -- The run ------------------------------------------------------------------------------------

interface Item {
  dataset: string;
  id: string;
  kind: string;
  schema: unknown;
  instance: unknown;
}

function ours(schema: unknown, instance: unknown, unchecked: readonly string[]): string {
  const c = compileSchema(schema, { protocol: 'jsonschemabench', uncheckedFormats: unchecked });
  if (!c.ok)
    return c.reason.startsWith('schema is not valid under the Draft 2020-12')
      ? 'schema-invalid'
      : 'uncompilable';
  return validateCompiled(c.compiled, instance).valid ? 'valid' : 'invalid';
}

/** Python's verdict as ours would say it: a schema that fails check_schema admits no answer. */
const same = (o: string, p: string) =>
  o === p ||
  (o === 'invalid' && (p === 'error' || p === 'timeout')) ||
  (o === 'schema-invalid' && p === 'schema-invalid');

const pyFormats = JSON.parse(python('formats')) as string[];
const unchecked = Object.keys(JSONSCHEMABENCH_FORMATS).filter((f) => !pyFormats.includes(f));
console.log(`# Python jsonschema checks: ${pyFormats.join(', ')}`);
console.log(`# formats of jsonschema[format] this Python lacks: ${unchecked.join(', ') || 'none'}`);

const items: Item[] = [];
const datasets = readdirSync(DATA)
  .filter((d) => !d.includes('.'))
  .sort();
const started = Date.now();
for (const dataset of datasets) {
  let files = readdirSync(join(DATA, dataset))
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (LIMIT > 0) files = files.slice(0, LIMIT);
  for (const f of files) {
    const schema = JSON.parse(readFileSync(join(DATA, dataset, f), 'utf8')) as unknown;
    const answer = JSON.parse(buildInstance({ schema, seed: 42 }).text) as unknown;
    for (const [kind, m] of Object.entries(MUTATIONS)) {
      const instance = m(schema, answer);
      if (instance !== undefined)
        items.push({ dataset, id: f.replace(/\.json$/, ''), kind, schema, instance });
    }
  }
}
if (SUITE) {
  const base = join(SUITE, 'tests', 'draft2020-12');
  const files = (dir: string): string[] =>
    readdirSync(join(base, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
    );
  for (const f of files('').sort()) {
    const groups = JSON.parse(readFileSync(join(base, f), 'utf8')) as {
      schema: unknown;
      tests: { data: unknown }[];
    }[];
    const kind = f.startsWith('optional') ? 'suite:optional' : 'suite:required';
    for (const [gi, g] of groups.entries())
      for (const [ti, t] of g.tests.entries())
        items.push({ dataset: 'suite', id: `${f}|${gi}|${ti}`, kind, schema: g.schema, instance: t.data });
  }
}
console.log(
  `# ${items.length} (schema, answer) pairs built in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);

const tmp = mkdtempSync(join(tmpdir(), 'sob-agreement-'));
try {
  const inFile = join(tmp, 'items.jsonl');
  const outFile = join(tmp, 'verdicts.txt');
  writeFileSync(
    inFile,
    `${items.map((i) => JSON.stringify({ schema: i.schema, instance: i.instance })).join('\n')}\n`,
  );
  const t0 = Date.now();
  python(inFile, outFile);
  const pyVerdicts = readFileSync(outFile, 'utf8').trim().split('\n');
  const t1 = Date.now();
  const full = items.map((i) => ours(i.schema, i.instance, []));
  const t2 = Date.now();
  const asInstalled = items.map((i) => ours(i.schema, i.instance, unchecked));
  console.log(
    `# Python ${((t1 - t0) / 1000).toFixed(1)} s; ours ${((t2 - t1) / 1000).toFixed(1)} s (full format set), ${((Date.now() - t2) / 1000).toFixed(1)} s (as installed)`,
  );

  type Tally = { n: number; agree: number; agreeInstalled: number };
  const byKind = new Map<string, Tally>();
  const byDataset = new Map<string, Tally>();
  const disagreements: Record<string, unknown>[] = [];
  items.forEach((it, k) => {
    const p = pyVerdicts[k];
    const a = same(asInstalled[k], p);
    const f = same(full[k], p);
    for (const [m, key] of [
      [byKind, it.kind],
      [byDataset, it.dataset],
    ] as const) {
      const t = m.get(key) ?? { n: 0, agree: 0, agreeInstalled: 0 };
      t.n++;
      if (f) t.agree++;
      if (a) t.agreeInstalled++;
      m.set(key, t);
    }
    if (!a || !f)
      disagreements.push({
        dataset: it.dataset,
        id: it.id,
        kind: it.kind,
        python: p,
        ours_as_installed: asInstalled[k],
        ours_full_formats: full[k],
        explained_by_missing_format_packages: a && !f,
      });
  });
  const row = (name: string, t: Tally) =>
    `#   ${name.padEnd(18)} ${String(t.agreeInstalled).padStart(5)}/${String(t.n).padEnd(5)} ${(t.agreeInstalled / t.n).toFixed(4)}   ${String(t.agree).padStart(5)}/${String(t.n).padEnd(5)} ${(t.agree / t.n).toFixed(4)}`;
  console.log(
    '# agreement with Python jsonschema: as this Python is installed | with the full jsonschema[format] set',
  );
  console.log('# per mutation kind');
  for (const [k, t] of byKind) console.log(row(k, t));
  console.log('# per dataset');
  for (const [k, t] of byDataset) console.log(row(k, t));
  const tot = [...byKind.values()].reduce(
    (a, t) => ({
      n: a.n + t.n,
      agree: a.agree + t.agree,
      agreeInstalled: a.agreeInstalled + t.agreeInstalled,
    }),
    { n: 0, agree: 0, agreeInstalled: 0 },
  );
  console.log(row('overall', tot));
  const unexplained = disagreements.filter((d) => !d.explained_by_missing_format_packages);
  console.log(
    `# ${disagreements.length} disagreements, ${disagreements.length - unexplained.length} of them only with formats this Python does not check`,
  );
  for (const d of unexplained.slice(0, 60))
    console.log(`#   ${d.dataset}/${d.id} ${d.kind}: python ${d.python}, ours ${d.ours_as_installed}`);
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(
    OUT,
    `${JSON.stringify({ python_formats: pyFormats, unchecked, by_kind: Object.fromEntries(byKind), by_dataset: Object.fromEntries(byDataset), disagreements }, null, 2)}\n`,
  );
  console.log(`# written ${OUT}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
