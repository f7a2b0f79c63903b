/**
 * issue 11 item 1: `sob build jsonschemabench <dir>` and `sob build schemas <dir-or-file>` turn
 * JSON Schemas into schema-only records (source `schema`, category = dataset, the
 * JSONSchemaBench prompt, `ground_truth: null`, `track: "compliance"`); a schema our validator
 * cannot compile is kept and flagged, never dropped.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { deriveComplexity } from '../../sources/checks.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const JSB = sharedData('jsonschemabench');
const PROMPT = 'You need to generate a JSON object that matches the schema below.';
const dir = mkdtempSync(join(tmpdir(), 'sob-schema-records-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sob(...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin/sob.js'), ...args], { encoding: 'utf8' });
}

interface SchemaRec {
  metadata: Record<string, unknown> & {
    record_id: string;
    source_category: string;
    schema_compiles: boolean;
  };
  input: { context: string; question: string; json_schema: unknown };
  output: { ground_truth: unknown };
}

function records(file: string): SchemaRec[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SchemaRec);
}

describe('sob build jsonschemabench on the 600 shared schemas', {
  skip: needsData('jsonschemabench'),
}, () => {
  const out = join(dir, 'jsb', 'records.jsonl');
  const r = sob('build', 'jsonschemabench', JSB, '--out', out);

  test('600 records, 60 per dataset, none rejected; the manifest counts them as source schema', () => {
    assert.equal(r.status, 0, r.stderr);
    // Seven schemas ask for a format no value satisfies under the jsonschemabench protocol (the
    // default for these records): one warning each, naming the field.
    assert.match(r.stdout, /^600 records written, 0 rejected, 7 warnings/);
    const never = r.stderr.split('\n').filter((l) => l.includes('no value can satisfy'));
    assert.equal(never.length, 7, r.stderr);
    for (const l of never)
      assert.match(
        l,
        /^warning: jsb-\S+: formats? no value can satisfy under the jsonschemabench protocol .*: #\/\S* \((ipv4|ipv6|uuid)\)/,
      );
    assert.match(
      r.stdout,
      /benchmark now holds 600 records: text 0 \(weight 0\), image 0 \(weight 0\), audio 0 \(weight 0\), schema 600 /,
    );
    const recs = records(out);
    const perDataset = new Map<string, number>();
    for (const rec of recs)
      perDataset.set(rec.metadata.source_category, (perDataset.get(rec.metadata.source_category) ?? 0) + 1);
    const datasets = readdirSync(JSB).sort();
    assert.equal(datasets.length, 10);
    assert.deepEqual(
      [...perDataset].sort(),
      datasets.map((d) => [d, 60]),
    );
    const m = JSON.parse(readFileSync(join(dir, 'jsb', 'manifest.json'), 'utf8'));
    assert.equal(m.sources.schema.records, 600);
    assert.equal(m.records, 600);
    assert.equal(new Set(recs.map((x) => x.metadata.record_id)).size, 600);
  });

  test('each record: the paper prompt, no context, ground truth null, track compliance, the schema as its file has it', () => {
    for (const rec of records(out)) {
      const md = rec.metadata;
      assert.equal(md.source, 'schema');
      assert.equal(md.track, 'compliance');
      assert.equal(md.dataset, 'jsonschemabench');
      assert.equal(rec.input.question, PROMPT);
      assert.equal(rec.input.context, '');
      assert.equal(rec.output.ground_truth, null);
      const file = join(JSB, md.schema_file as string);
      assert.equal(md.record_id, `jsb-${md.source_category}-${md.schema_id}`);
      assert.deepEqual(rec.input.json_schema, JSON.parse(readFileSync(file, 'utf8')));
      assert.equal(md.schema_complexity, deriveComplexity(rec.input.json_schema as Record<string, unknown>));
    }
    // Numbers keep their lexeme: Github_easy/o90809 says "minimum": 64.0.
    const line = readFileSync(out, 'utf8')
      .split('\n')
      .find((l) => l.includes('"jsb-Github_easy-o90809"'))!;
    assert.match(line, /"minimum":64\.0[,}]/);
  });

  test("2 schemas our validator cannot compile are kept and flagged, with the validator's reason", () => {
    // Measured with the compliance track's validator (src/core/validator.ts: the $schema's
    // draft, formats asserted, ECMA-262 patterns, remote $refs never fetched).
    const flagged: [string, string][] = [];
    let compiles = 0;
    for (const rec of records(out)) {
      const md = rec.metadata;
      assert.equal(typeof md.schema_compiles, 'boolean');
      assert.match(String(md.schema_dialect), /^(draft-04|draft-06|draft-07|2019-09|2020-12)$/);
      if (md.schema_compiles) {
        assert.equal(md.schema_compile_error, undefined);
        compiles++;
        continue;
      }
      flagged.push([`${md.source_category}/${md.schema_id}`, String(md.schema_compile_error)]);
    }
    assert.equal(compiles, 598);
    assert.deepEqual(
      flagged.map(([id]) => id),
      ['Github_hard/o62382', 'Github_ultra/o76156'],
    );
    // Both give one $id to two subschemas, so a $ref to it is ambiguous.
    for (const [, why] of flagged)
      assert.match(why, /^schema cannot be compiled: reference ".+" resolves to more than one schema$/);
    assert.match(
      r.stderr,
      /\nGithub_ultra: 60 schemas \(1 flagged: it does not compile in our validator; kept\)\n/,
    );
    assert.match(r.stderr, /\nKubernetes: 60 schemas\n/);
  });
});

describe("sob build schemas on a user's own schemas", { skip: needsData('jsonschemabench') }, () => {
  const good = {
    type: 'object',
    properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['name'],
  };
  // A remote $ref is never fetched: the schema cannot compile offline.
  const remoteRef = {
    type: 'object',
    properties: { code: { $ref: 'https://schemas.example.net/code.json' } },
  };

  test('a folder: category = first sub-folder (else the folder), broken JSON rejected, an uncompilable schema flagged', () => {
    const root = join(dir, 'mine');
    mkdirSync(join(root, 'orders', 'v2'), { recursive: true });
    writeFileSync(join(root, 'orders', 'order.json'), JSON.stringify(good));
    writeFileSync(
      join(root, 'orders', 'v2', 'order.json'),
      JSON.stringify({ ...good, $schema: 'https://json-schema.org/draft/2020-12/schema' }),
    );
    writeFileSync(join(root, 'top.json'), JSON.stringify(remoteRef));
    writeFileSync(join(root, 'broken.json'), '{"type": "object",');
    const out = join(dir, 'mine-out', 'records.jsonl');
    const r = sob('build', 'schemas', root, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^3 records written, 1 rejected/);
    assert.match(r.stderr, /rejected .*broken\.json: not valid JSON/);
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => [
        x.metadata.record_id,
        x.metadata.source_category,
        x.metadata.schema_compiles,
        x.metadata.schema_dialect,
      ]),
      [
        ['orders/order', 'orders', true, 'draft-07'],
        ['orders/v2/order', 'orders', true, '2020-12'],
        ['top', 'mine', false, 'draft-07'],
      ],
    );
    assert.equal(
      recs[2].metadata.schema_compile_error,
      'schema cannot be compiled: remote $ref https://schemas.example.net/code.json is not available offline',
    );
    assert.ok(recs.every((x) => x.output.ground_truth === null && x.metadata.track === 'compliance'));
  });

  test('hostile schemas do not stop the build: a 3,000-level schema is rejected with its reason, a $ref cycle kept and flagged with the cycle named', () => {
    const root = join(dir, 'hostile');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'good.json'), JSON.stringify(good));
    // Before: "sob: Maximum call stack size exceeded", exit 1, nothing written.
    writeFileSync(
      join(root, 'deep.json'),
      `${'{"type":"object","properties":{"x":'.repeat(3000)}{"type":"string"}${'}}'.repeat(3000)}`,
    );
    writeFileSync(
      join(root, 'cycle.json'),
      JSON.stringify({
        $ref: '#/definitions/a',
        definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } },
      }),
    );
    const out = join(dir, 'hostile-out', 'records.jsonl');
    const r = sob('build', 'schemas', root, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^2 records written, 1 rejected/);
    assert.match(r.stderr, /rejected deep: nested too deeply to write as JSON/);
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => [x.metadata.record_id, x.metadata.schema_compiles]),
      [
        ['cycle', false],
        ['good', true],
      ],
    );
    // Before: "schema cannot be compiled: Maximum call stack size exceeded".
    assert.equal(
      recs[0].metadata.schema_compile_error,
      'schema cannot be compiled: $ref cycle that never reaches a schema: #/definitions/a -> #/definitions/b -> #/definitions/a',
    );
    const rejected = readFileSync(join(dir, 'hostile-out', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(rejected.length, 1);
    assert.equal(JSON.parse(rejected[0]).record_id, 'deep');
  });

  test('a JSONL file: schemas or {id, category, question, json_schema} lines; a bad line and a boolean schema rejected by line', () => {
    const file = join(dir, 'list.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify(good),
        JSON.stringify({
          id: 'invoice',
          category: 'billing',
          question: 'Give one invoice as JSON.',
          json_schema: good,
        }),
        'not json',
        'true',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'list-out', 'records.jsonl');
    const r = sob('build', 'schemas', file, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^2 records written, 2 rejected/);
    const rejected = readFileSync(join(dir, 'list-out', 'rejected.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rejected.map((x) => [x.origin, x.reasons[0].replace(/:.*/, '')]),
      [
        [`${file}:3`, 'not valid JSON'],
        [`${file}:4`, 'record shape'],
      ],
    );
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => [x.metadata.record_id, x.metadata.source_category, x.input.question]),
      [
        ['list-1', 'list', PROMPT],
        ['invoice', 'billing', 'Give one invoice as JSON.'],
      ],
    );
  });

  test('usage: schemas needs an input and takes no annotations (exit 2)', () => {
    assert.equal(sob('build', 'schemas', '--out', join(dir, 'x.jsonl')).status, 2);
    assert.equal(
      sob('build', 'jsonschemabench', JSB, '--annotations', 'a.jsonl', '--out', join(dir, 'y.jsonl')).status,
      2,
    );
  });
});
