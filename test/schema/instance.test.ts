/**
 * `baseline:instance`: a valid instance of each schema, the compliance track's ceiling. Its
 * empirical coverage per JSONSchemaBench dataset on the 600 shared schemas, printed, with the
 * floor it reaches; its caps; and `sob run` with it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  aggregateCompliance,
  complianceOfRecord,
  complianceRow,
  parseAnswerText,
} from '../../metrics/compliance.ts';
import { createProvider } from '../../src/providers/index.ts';
import { buildInstance, cappedForGeneration } from '../../src/providers/instance.ts';
import type { Provider, ProviderRequest } from '../../src/providers/types.ts';
import { needsData, sharedData } from '../kit/shared-data.ts';

const ROOT = join(import.meta.dirname, '../..');
const BENCH = sharedData('jsonschemabench');
const tmp = mkdtempSync(join(tmpdir(), 'sob-instance-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function request(schema: unknown, recordId = 'r'): ProviderRequest {
  return {
    recordId,
    system: '',
    user: '',
    schema: schema as Record<string, unknown>,
    constrained: false,
    temperature: 0,
    maxTokens: 2048,
    signal: new AbortController().signal,
    groundTruth: null,
  };
}

/** Empirical coverage floors per dataset (what the baseline reaches; see README). */
const FLOORS: Record<string, number> = {
  Github_easy: 0.98,
  Github_hard: 0.95,
  Github_medium: 0.96,
  Github_trivial: 1,
  Github_ultra: 0.93,
  Glaiveai2K: 0.98,
  JsonSchemaStore: 0.93,
  Kubernetes: 1,
  Snowplow: 1,
  WashingtonPost: 0.98,
};

test('baseline:instance reaches its empirical coverage on the 600 JSONSchemaBench schemas', {
  skip: needsData('jsonschemabench'),
}, async () => {
  const p: Provider = await createProvider('baseline:instance');
  const rows = [];
  const sources = new Map<string, number>();
  try {
    for (const dataset of readdirSync(BENCH).sort()) {
      for (const f of readdirSync(join(BENCH, dataset)).sort()) {
        const schema = JSON.parse(readFileSync(join(BENCH, dataset, f), 'utf8'));
        const res = await p.complete(request(schema, f));
        const c = complianceOfRecord({ schema, answer: parseAnswerText(res.text) });
        rows.push(complianceRow(dataset, c));
      }
    }
  } finally {
    await p.close?.();
  }
  const s = aggregateCompliance(rows, { bootstrapSamples: 200 });
  console.log('# baseline:instance empirical coverage (valid / records) per dataset');
  for (const [name, g] of Object.entries(s.datasets)) {
    const e = g.empirical_coverage;
    console.log(
      `#   ${name.padEnd(16)} ${String(e.count).padStart(3)}/${e.of}  ${e.rate.toFixed(3)}  [${e.ci95?.map((x) => x.toFixed(3)).join(', ')}]`,
    );
  }
  const o = s.overall.empirical_coverage;
  console.log(`#   ${'overall'.padEnd(16)} ${o.count}/${o.of}  ${o.rate.toFixed(3)}`);
  assert.equal(o.of, 600);
  for (const [name, floor] of Object.entries(FLOORS)) {
    const r = s.datasets[name].empirical_coverage.rate;
    assert.ok(r >= floor, `${name}: ${r.toFixed(3)} < ${floor}`);
  }
  assert.ok(o.rate >= 0.975, `overall ${o.rate}`);
  void sources;
});

test('the same schema and seed give the same instance', () => {
  const schema = {
    type: 'object',
    required: ['a', 'b'],
    properties: {
      a: { type: 'string', format: 'email' },
      b: { type: 'array', minItems: 2, items: { type: 'integer', minimum: 3 } },
    },
  };
  const one = buildInstance({ schema, seed: 1 });
  const two = buildInstance({ schema, seed: 1 });
  assert.equal(one.text, two.text);
  assert.equal(one.valid, true);
  assert.equal(one.source, 'json-schema-faker:required');
  const v = JSON.parse(one.text);
  assert.ok(v.b.length >= 2 && v.b.every((x: number) => Number.isInteger(x) && x >= 3));
});

test('huge minimums are capped: the answer stays small (and is honestly invalid)', async () => {
  const schema = {
    type: 'object',
    required: ['xs', 's'],
    properties: {
      xs: { type: 'array', minItems: 1e9, items: { type: 'integer' } },
      s: { type: 'string', minLength: 1e9 },
    },
  };
  const capped = cappedForGeneration(schema) as {
    properties: { xs: { minItems: number }; s: { minLength: number } };
  };
  assert.equal(capped.properties.xs.minItems, 100);
  assert.equal(capped.properties.s.minLength, 10_000);
  // The input schema is not modified.
  assert.equal(schema.properties.xs.minItems, 1e9);
  const p = await createProvider('baseline:instance');
  try {
    const res = await p.complete(request(schema));
    assert.ok(res.text.length < 100_000, `${res.text.length} characters`);
    const v = JSON.parse(res.text);
    assert.equal(v.xs.length, 100);
    assert.equal(complianceOfRecord({ schema, answer: parseAnswerText(res.text) }).valid, false);
  } finally {
    await p.close?.();
  }
});

test('an unbuildable answer within budget falls back to the skeleton; remote $refs are not fetched', () => {
  // json-schema-faker throws on a remote $ref (it would have to fetch): the skeleton answers.
  const r = buildInstance({ schema: { $ref: 'https://example.com/never.json' }, seed: 1 });
  assert.equal(r.source, 'skeleton');
  assert.equal(r.valid, null, 'the schema does not compile offline: unchecked');
  assert.match(r.tried[0], /failed/);
});

test('sob run --model baseline:instance answers every record with a valid instance', () => {
  const schemas = [
    {
      type: 'object',
      required: ['when', 'n'],
      properties: {
        when: { type: 'string', format: 'date' },
        n: { type: 'integer', multipleOf: 7, minimum: 10 },
      },
    },
    { type: 'array', minItems: 3, uniqueItems: true, items: { enum: ['a', 'b', 'c', 'd'] } },
    {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: { id: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' } },
      required: ['id'],
    },
  ];
  const bench = join(tmp, 'bench.jsonl');
  writeFileSync(
    bench,
    schemas
      .map((s, i) =>
        JSON.stringify({
          metadata: { record_id: `s${i}`, source: 'schema', source_category: 'handmade' },
          input: { context: '', question: 'Give a valid instance of the schema.', json_schema: s },
          output: { ground_truth: null },
        }),
      )
      .join('\n'),
  );
  const runDir = join(tmp, 'run');
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin/sob.js'),
      'run',
      '--model',
      'baseline:instance',
      '--benchmark',
      bench,
      '--run-dir',
      runDir,
    ],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(join(runDir, 'responses.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  for (const line of lines) {
    const i = Number(line.metadata.record_id.slice(1));
    const c = complianceOfRecord({ schema: schemas[i], answer: parseAnswerText(line.output.raw_response) });
    assert.ok(c.valid, `${line.metadata.record_id}: ${JSON.stringify(c.violations)}`);
  }
  const manifest = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
  assert.match(JSON.stringify(manifest), /json-schema-faker/);
});
