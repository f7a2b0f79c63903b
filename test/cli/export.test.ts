/**
 * issue 33 item 5: `sob export <eval-dir> --format parquet`: records.parquet and fields.parquet,
 * read back row for row with hyparquet (types kept: ints INT64, numbers DOUBLE, booleans
 * BOOLEAN, nested values as JSON text) and queried with DuckDB (the docs' "worst fields by model").
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { type PyValue, parsePyJson, toPlain } from '../../src/core/pyjson.ts';
import { ROOT, sobAsync } from '../kit/cli.ts';
import { tempDir } from '../kit/temp.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    vendor: { type: 'string' },
    total: { type: 'number' },
    paid: { type: 'boolean' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
    },
  },
  required: ['vendor', 'total', 'paid', 'items'],
};
const GOLDS = [
  {
    vendor: 'Acme',
    total: 12.5,
    paid: true,
    items: [
      { sku: 'A-1', qty: 2 },
      { sku: 'B-2', qty: 1 },
    ],
  },
  { vendor: 'Globex', total: 99.0, paid: false, items: [{ sku: 'G-7', qty: 10 }] },
  { vendor: 'Initech', total: 7.25, paid: true, items: [{ sku: 'I-1', qty: 3 }] },
];

describe('sob export --format parquet', () => {
  const tmp = tempDir('sob-export-');
  const evalDir = join(tmp, 'eval');
  const out = join(tmp, 'export');
  let exported: { code: number | null; stdout: string; stderr: string };

  before(async () => {
    const bench = join(tmp, 'records.jsonl');
    writeFileSync(
      bench,
      GOLDS.map((g, i) =>
        JSON.stringify({
          metadata: { record_id: `inv-${i}`, source: 'text', schema_complexity: 'medium' },
          input: {
            context: `Invoice: ${JSON.stringify(g)}`,
            question: 'Extract the invoice.',
            json_schema: SCHEMA,
          },
          output: { ground_truth: g },
        }),
      )
        .join('\n')
        .concat('\n')
        // 99.0 written as a float, as a user's file would.
        .replace('"total":99,', '"total":99.0,'),
    );
    const ev = await sobAsync(
      [
        'eval',
        '--model',
        'baseline:gold',
        '--model',
        'baseline:skeleton',
        '--benchmark',
        bench,
        '--eval-dir',
        evalDir,
        '--match',
        'default',
      ],
      { cwd: ROOT, timeoutMs: 300_000 },
    );
    assert.equal(ev.code, 0, ev.stderr.slice(-2000));
    exported = await sobAsync(['export', evalDir, '--format', 'parquet', '--out', out], { cwd: ROOT });
    assert.equal(exported.code, 0, exported.stderr);
  });

  /** Every line of a JSONL file, read losslessly, led by the folder's source and model. */
  function jsonl(file: string, source: string, model: string): Map<string, PyValue>[] {
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          new Map<string, PyValue>([
            ['source', source],
            ['model', model],
            ...(parsePyJson(l) as Map<string, PyValue>),
          ]),
      );
  }

  /** The value a Parquet cell should hold for a JSON value: nested ones as their JSON text. */
  function cell(v: PyValue | undefined): unknown {
    if (v === undefined || v === null) return null;
    if (v instanceof Map || Array.isArray(v)) return JSON.stringify(toPlain(v));
    return v;
  }

  test('records.parquet: the rows of every eval_records.jsonl, row for row, types kept', async () => {
    const file = join(out, 'records.parquet');
    const rows = (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as Record<
      string,
      unknown
    >[];
    const want = ['baseline_gold', 'baseline_skeleton'].flatMap((m) =>
      jsonl(join(evalDir, 'evaluation/text', m, 'eval_records.jsonl'), 'text', m),
    );
    assert.equal(rows.length, 6);
    assert.equal(want.length, 6);
    assert.match(exported.stdout, /^6 record rows -> .*records\.parquet\n/);
    for (const [i, w] of want.entries()) {
      for (const [k, v] of w) assert.deepEqual(rows[i][k], cell(v), `row ${i} ${k}`);
    }
    // Types: a float column is DOUBLE (1.0 stays 1.0), a count INT64, a flag BOOLEAN.
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(file));
    const type = (n: string) => meta.schema.find((s) => s.name === n)?.type;
    assert.equal(type('leaf_value_em'), 'DOUBLE');
    assert.equal(type('format_version'), 'INT64');
    assert.equal(type('record_id'), 'BYTE_ARRAY');
    assert.equal(rows[0].leaf_value_em, 1);
    assert.equal(rows[3].leaf_value_em, 0);
  });

  test('fields.parquet: the rows of every fields.jsonl, row for row', async () => {
    const rows = (await parquetReadObjects({
      file: await asyncBufferFromFile(join(out, 'fields.parquet')),
    })) as Record<string, unknown>[];
    const want = ['baseline_gold', 'baseline_skeleton'].flatMap((m) =>
      jsonl(join(evalDir, 'evaluation/text', m, 'fields.jsonl'), 'text', m),
    );
    // Per model: 3 scalar leaves and 2 per item (2, 1 and 1 items): 7 + 5 + 5 = 17 leaves.
    assert.equal(want.length, 34);
    assert.equal(rows.length, 34);
    for (const [i, w] of want.entries())
      for (const [k, v] of w) assert.deepEqual(rows[i][k], cell(v), `row ${i} ${k}`);
    // gold as JSON text: 99.0 keeps its float lexeme.
    assert.ok(rows.some((r) => r.path === 'total' && r.gold === '99.0'));
    assert.equal(rows.filter((r) => r.model === 'baseline_gold' && r.exact === true).length, 17);
    // The skeleton's placeholder `false` is right once (Globex is not paid); its missing second item is null.
    assert.equal(rows.filter((r) => r.model === 'baseline_skeleton' && r.exact === true).length, 1);
    assert.equal(
      rows.find((r) => r.model === 'baseline_skeleton' && r.path === 'items[1].sku')?.answer,
      null,
    );
  });

  test('DuckDB reads both and answers "worst fields by model"', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const f = join(out, 'fields.parquet').replaceAll("'", "''");
    const worst = (
      await c.runAndReadAll(
        `SELECT model, field, count(*) AS n, avg(exact::INT) AS accuracy FROM '${f}'
         GROUP BY model, field ORDER BY accuracy, n DESC, model, field`,
      )
    ).getRowObjects();
    // The skeleton answers placeholders: four of its fields at 0 (the most leaves first), `paid`
    // right once in three (its `false` for Globex).
    assert.deepEqual(
      worst.slice(0, 5).map((r) => [r.model, r.field, Number(r.n), r.accuracy]),
      [
        ['baseline_skeleton', 'items[].qty', 4, 0],
        ['baseline_skeleton', 'items[].sku', 4, 0],
        ['baseline_skeleton', 'total', 3, 0],
        ['baseline_skeleton', 'vendor', 3, 0],
        ['baseline_skeleton', 'paid', 3, 1 / 3],
      ],
    );
    assert.deepEqual(
      worst.filter((r) => r.model === 'baseline_gold').map((r) => r.accuracy),
      [1, 1, 1, 1, 1],
    );
    const r = join(out, 'records.parquet').replaceAll("'", "''");
    const types = (
      await c.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '${r}')`)
    )
      .getRowObjects()
      .reduce<Record<string, unknown>>(
        (o, x) => Object.assign(o, { [String(x.column_name)]: x.column_type }),
        {},
      );
    assert.equal(types.leaf_value_em, 'DOUBLE');
    assert.equal(types.format_version, 'BIGINT');
    const mean = (
      await c.runAndReadAll(
        `SELECT model, avg(leaf_value_em) AS va FROM '${r}' GROUP BY model ORDER BY model`,
      )
    ).getRowObjects();
    // The skeleton's Value Accuracy: 0, 1/5 (Globex's `paid`), 0.
    assert.deepEqual(
      mean.map((x) => [x.model, x.va]),
      [
        ['baseline_gold', 1],
        ['baseline_skeleton', (0 + 0.2 + 0) / 3],
      ],
    );
    c.closeSync();
  });

  test('a folder that is not an evaluation: one line, exit 2', async () => {
    const r = await sobAsync(['export', tmp, '--format', 'parquet'], { cwd: ROOT });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no <source>\/<model>\/eval_records\.jsonl in it/);
  });
});
