/**
 * `baseline:instance` on the 600 shared JSONSchemaBench schemas through the real commands:
 * `sob build jsonschemabench` then `sob eval --model baseline:instance --benchmark ...` (run,
 * score, compliance leaderboard, report). Its empirical coverage per dataset is what the schema
 * helper measured in process: 594 / 600 under the jsonschemabench protocol.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { needsData, sharedData } from '../kit/shared-data.ts';
import { reportData } from '../report/run.ts';
import { sob } from '../runner/sob-cli.ts';
import { json } from './fixtures.ts';

const DATA = sharedData('jsonschemabench');
const tmp = mkdtempSync(join(tmpdir(), 'sob-compliance-instance-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * Valid answers per dataset (of 60 each), under the default jsonschemabench protocol: every one
 * of these 600 verdicts equals Python jsonschema's (bench/protocol-agreement.ts, kind `none`).
 * Under the dialect reading it was 592 (2 schemas with a `$ref` that resolves nowhere).
 */
const VALID: Record<string, number> = {
  Github_easy: 60,
  Github_hard: 59,
  Github_medium: 59,
  Github_trivial: 60,
  Github_ultra: 58,
  Glaiveai2K: 59,
  JsonSchemaStore: 59,
  Kubernetes: 60,
  Snowplow: 60,
  WashingtonPost: 60,
};

test('sob eval with baseline:instance on the 600 JSONSchemaBench schemas: 594/600 empirical coverage (jsonschemabench protocol), per dataset', {
  skip: needsData('jsonschemabench'),
}, async () => {
  const bench = join(tmp, 'bench', 'records.jsonl');
  const b = await sob(['build', 'jsonschemabench', DATA, '--out', bench], { cwd: tmp }).done;
  assert.equal(b.code, 0, b.stderr);
  const evalDir = join(tmp, 'eval');
  const started = Date.now();
  const r = await sob(['eval', '--model', 'baseline:instance', '--benchmark', bench, '--eval-dir', evalDir], {
    cwd: tmp,
  }).done;
  assert.equal(r.code, 0, r.stderr);
  const s = json(join(evalDir, 'evaluation/schema/baseline_instance/eval_summary.json'));
  const c = s.compliance;
  console.log(
    `# sob eval --model baseline:instance over 600 schemas: ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log('# empirical coverage (valid / records) per dataset');
  for (const [name, g] of Object.entries(c.datasets) as [
    string,
    { empirical_coverage: { count: number; of: number; rate: number; ci95: number[] } },
  ][])
    console.log(
      `#   ${name.padEnd(16)} ${g.empirical_coverage.count}/${g.empirical_coverage.of}  ${g.empirical_coverage.rate.toFixed(3)}  [${g.empirical_coverage.ci95.map((x) => x.toFixed(3)).join(', ')}]`,
    );
  console.log(
    `#   overall          ${c.overall.empirical_coverage.count}/${c.overall.empirical_coverage.of}`,
  );
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(c.datasets).map(([k, g]) => [
        k,
        (g as { empirical_coverage: { count: number } }).empirical_coverage.count,
      ]),
    ),
    VALID,
  );
  for (const g of Object.values(c.datasets) as { n: number; declared_coverage: { count: number } }[])
    assert.deepEqual([g.n, g.declared_coverage.count], [60, 60]);
  assert.deepEqual([c.overall.empirical_coverage.count, c.overall.empirical_coverage.of], [594, 600]);
  assert.equal(s.protocol, 'jsonschemabench');
  // Every one of the 600 passes Draft 2020-12 meta-validation; lazy references compile.
  assert.equal(s.data_quality.uncompilable_schema_count, 0);
  // The leaderboard and the report were written, with the same figure.
  const [row] = json(join(evalDir, 'leaderboard-compliance.json'));
  assert.equal(row.empirical_coverage, 594 / 600);
  assert.ok(existsSync(join(evalDir, 'report.html')));
  const d = reportData<{ compliance: { datasets: string[]; rows: [number, unknown[][]][] } }>(
    join(evalDir, 'report.html'),
  );
  assert.deepEqual(d.compliance.datasets, Object.keys(VALID));
  assert.equal(d.compliance.rows[0][1].filter((x) => x[1] === 0).length, 594);
});
