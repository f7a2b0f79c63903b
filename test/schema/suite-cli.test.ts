/**
 * The official JSON-Schema-Test-Suite (../shared/data/json-schema-test-suite) measured as a user's
 * schemas go: every test becomes a schema record (`sob build schemas`), its data the answer of a
 * response line, and `sob score` validates it (its remote documents served from the suite's
 * `remotes/` folder with `--remote`). Pass rates per draft, required tests apart from the
 * required `format.json` (format as annotation, which the papers' protocol does not follow) and
 * from the optional format tests; floors asserted.
 *
 * Drafts 4 and 7 are read with `--protocol dialect` (each test schema given its draft's
 * `$schema`), as Python's Draft4Validator / Draft7Validator read them; Draft 2020-12 with the
 * default `--protocol jsonschemabench`, the papers' own validation.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sob } from '../report/run.ts';

/** `sob` with room for a long run's progress lines on stderr. */
function sobBig(...args: string[]) {
  return spawnSync(process.execPath, [join(import.meta.dirname, '../../bin/sob.js'), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
}

const SUITE = join(import.meta.dirname, '../../../shared/data/json-schema-test-suite');
const present = existsSync(join(SUITE, 'tests'));
if (!present) console.log(`# skipped: ${SUITE} is absent`);

const tmp = process.env.SOB_KEEP_TMP ?? mkdtempSync(join(tmpdir(), 'sob-suite-cli-'));
after(() => {
  if (!process.env.SOB_KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
});

interface Expected {
  file: string;
  valid: boolean;
  data: unknown;
}

const META: Record<string, string> = {
  draft4: 'http://json-schema.org/draft-04/schema#',
  draft7: 'http://json-schema.org/draft-07/schema#',
};

/** Schema items (one per test) for `sob build schemas`, and what each test expects. */
function suiteItems(dir: string, files: string[]): { lines: string[]; expected: Map<string, Expected> } {
  const lines: string[] = [];
  const expected = new Map<string, Expected>();
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(SUITE, 'tests', dir, file), 'utf8')) as {
      schema: unknown;
      tests: { data: unknown; valid: boolean }[];
    }[];
    groups.forEach((g, gi) => {
      // A record's schema is an object: a boolean root schema is written as its object twin.
      let schema = g.schema === true ? {} : g.schema === false ? { not: {} } : g.schema;
      const meta = META[dir];
      if (meta && schema !== null && typeof schema === 'object' && !('$schema' in schema))
        schema = { $schema: meta, ...schema };
      g.tests.forEach((t, ti) => {
        const id = `${file}|${gi}|${ti}`;
        expected.set(id, { file, valid: t.valid, data: t.data });
        lines.push(JSON.stringify({ id, category: file.replace(/\.json$/, ''), json_schema: schema }));
      });
    });
  }
  return { lines, expected };
}

interface Rate {
  passed: number;
  total: number;
  failures: string[];
}

/** Builds, answers and scores one set of suite files; the pass rate per file. */
function measure(name: string, dir: string, files: string[], protocol: string): Map<string, Rate> {
  const work = join(tmp, name);
  mkdirSync(work, { recursive: true });
  const { lines, expected } = suiteItems(dir, files);
  writeFileSync(join(work, 'schemas.jsonl'), `${lines.join('\n')}\n`);
  const records = join(work, 'records.jsonl');
  const b = sob('build', 'schemas', join(work, 'schemas.jsonl'), '--out', records);
  assert.equal(b.status, 0, b.stderr);
  const answers: string[] = [];
  for (const l of readFileSync(records, 'utf8').trim().split('\n')) {
    const r = JSON.parse(l);
    const e = expected.get(r.metadata.record_id);
    assert.ok(e, `record ${r.metadata.record_id}`);
    r.metadata.model_id = 'suite';
    r.output.candidate_response = e.data;
    r.output.raw_response = JSON.stringify(e.data);
    answers.push(JSON.stringify(r));
  }
  assert.equal(answers.length, expected.size, 'every test became a record');
  writeFileSync(join(work, 'response_suite.jsonl'), `${answers.join('\n')}\n`);
  const out = join(work, 'eval');
  const s = sobBig(
    'score',
    join(work, 'response_suite.jsonl'),
    '--out',
    out,
    '--protocol',
    protocol,
    '--remote',
    `http://localhost:1234/=${join(SUITE, 'remotes')}`,
    '--bootstrap-samples',
    '0',
    // A record over its budget is a failure of the validator: 3 s reports one sooner.
    '--record-timeout-ms',
    '3000',
  );
  // A record over its budget is reported (a row, invalid, with the reason) and the exit is 1.
  const overruns = s.stderr.split('\n').filter((l) => /scoring exceeded 3000 ms/.test(l));
  if (overruns.length > 0)
    console.log(
      `# ${overruns.length} records over the scoring budget: ${overruns.map((l) => /record ([^)]*)/.exec(l)?.[1]).join(', ')}`,
    );
  const failed = s.stderr.split('\n').filter((l) => /scoring failed/.test(l));
  assert.ok(s.status === 0 || (s.status === 1 && overruns.length > 0 && failed.length === 0), s.stderr);
  const rates = new Map<string, Rate>();
  for (const l of readFileSync(join(out, 'schema/suite/eval_records.jsonl'), 'utf8').trim().split('\n')) {
    const row = JSON.parse(l);
    const e = expected.get(row.record_id)!;
    const r = rates.get(e.file) ?? { passed: 0, total: 0, failures: [] };
    r.total++;
    if (row.compliance.valid === e.valid) r.passed++;
    else r.failures.push(row.record_id);
    rates.set(e.file, r);
  }
  return rates;
}

function total(rates: Map<string, Rate>, keep: (file: string) => boolean = () => true): Rate {
  const t: Rate = { passed: 0, total: 0, failures: [] };
  for (const [f, r] of rates)
    if (keep(f)) {
      t.passed += r.passed;
      t.total += r.total;
      t.failures.push(...r.failures);
    }
  return t;
}

function print(title: string, rates: Map<string, Rate>, keep?: (file: string) => boolean): Rate {
  const t = total(rates, keep);
  console.log(`# ${title}: ${t.passed}/${t.total} = ${(t.passed / t.total).toFixed(4)}`);
  for (const [f, r] of rates)
    if ((!keep || keep(f)) && r.passed < r.total) console.log(`#   ${f.padEnd(40)} ${r.passed}/${r.total}`);
  return t;
}

const jsonFiles = (dir: string) =>
  readdirSync(join(SUITE, 'tests', dir))
    .filter((f) => f.endsWith('.json'))
    .sort();
const formatFiles = (dir: string) =>
  readdirSync(join(SUITE, 'tests', dir, 'optional/format'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => `optional/format/${f}`);

/** Required pass rates (format.json apart): Python jsonschema 4.26's own rate, per draft. */
const FLOORS = { draft4: 0.998, draft7: 0.999, 'draft2020-12': 0.995 };

for (const dir of ['draft4', 'draft7'] as const) {
  test(`${dir} through sob build schemas + sob score --protocol dialect: required tests at or above ${FLOORS[dir]}`, {
    skip: !present,
  }, () => {
    const rates = measure(dir, dir, jsonFiles(dir), 'dialect');
    const req = print(`${dir} required (format.json apart)`, rates, (f) => f !== 'format.json');
    print(
      `${dir} format.json (annotation only in the specification; asserted here)`,
      rates,
      (f) => f === 'format.json',
    );
    assert.ok(req.passed / req.total >= FLOORS[dir], `${dir} ${req.passed}/${req.total}`);
  });
}

test('draft2020-12 through sob build schemas + sob score (jsonschemabench protocol): required tests at or above 0.995, $dynamicRef / unevaluated* / $id beside $ref all pass', {
  skip: !present,
}, () => {
  const rates = measure(
    'draft2020-12',
    'draft2020-12',
    [...jsonFiles('draft2020-12'), ...formatFiles('draft2020-12')],
    'jsonschemabench',
  );
  const req = print(
    'draft2020-12 required (format.json apart)',
    rates,
    (f) => f.indexOf('/') < 0 && f !== 'format.json',
  );
  print('draft2020-12 format.json', rates, (f) => f === 'format.json');
  const fmt = print(
    'draft2020-12 optional/format (Python FormatChecker() as the harness sets it)',
    rates,
    (f) => f.startsWith('optional/format/'),
  );
  const rate = req.passed / req.total;
  console.log(
    `# required 2020-12 pass rate ${rate.toFixed(4)}; Python jsonschema 4.26 passes 0.995 of the suite (1,293/1,299)`,
  );
  // Python's own rate. What still fails is Python's verdict too (docs/compliance-protocols.md):
  // `\p{Letter}` is no Python pattern (4 tests) and `$vocabulary` is not read (1 test).
  assert.ok(rate >= FLOORS['draft2020-12'], `2020-12 required ${req.passed}/${req.total}`);
  const byFile = new Map([...rates].map(([f, r]) => [f, r.total - r.passed]));
  for (const f of ['dynamicRef.json', 'unevaluatedItems.json', 'unevaluatedProperties.json', 'ref.json'])
    assert.equal(byFile.get(f), 0, `${f}: ${rates.get(f)?.failures.join(', ')}`);
  assert.ok(fmt.total > 0);
});
