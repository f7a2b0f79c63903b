/**
 * The compliance validator on the official JSON-Schema-Test-Suite (../shared/data): pass rates
 * per draft and per keyword file, printed; floors asserted; every required-test failure is a
 * known one (docs/compliance.md, the known validator failures).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { needsData } from '../kit/shared-data.ts';
import { DRAFTS, runSuite, type SuiteRun } from './suite-runner.ts';

/** Required-test failures by `draft | file | group`, with how many tests and why (docs/compliance.md). */
const KNOWN: Record<string, [number, string]> = {
  'draft2020-12 | enum.json | empty enum': [
    6,
    'ajv refuses enum: [] (the dialect reading; the jsonschemabench protocol rewrites it)',
  ],
  'draft2020-12 | vocabulary.json | schema that uses custom metaschema with with no validation vocabulary': [
    1,
    'ajv ignores $vocabulary',
  ],
};

/**
 * Floors: what this configuration reaches. Draft 2020-12 schemas with `$dynamicRef`,
 * `unevaluated*` or `$id` beside `$ref` are validated by hyperjump (src/core/validator-hyperjump.ts).
 */
const FLOORS: Record<string, { required: number; optional: number }> = {
  draft4: { required: 0.998, optional: 0.97 },
  draft7: { required: 0.999, optional: 0.85 },
  'draft2020-12': { required: 0.994, optional: 0.87 },
};

function print(run: SuiteRun): void {
  const kind = run.optional ? 'optional' : 'required';
  console.log(`# ${run.draft} ${kind}: ${run.passed}/${run.total} = ${(run.passed / run.total).toFixed(4)}`);
  for (const f of run.files) {
    const mark = f.passed < f.total ? '  <-' : '';
    console.log(
      `#   ${f.file.padEnd(44)} ${String(f.passed).padStart(4)}/${String(f.total).padEnd(4)} ${(f.passed / f.total).toFixed(3)}${mark}`,
    );
  }
}

for (const [dir, dialect] of DRAFTS) {
  test(`${dir}: required tests pass at the floor, every failure a known one`, {
    skip: needsData('json-schema-test-suite'),
  }, () => {
    const run = runSuite(dir, dialect, false);
    print(run);
    const rate = run.passed / run.total;
    assert.ok(
      rate >= FLOORS[dir].required,
      `${dir} required pass rate ${rate.toFixed(4)} < ${FLOORS[dir].required}`,
    );
    const byGroup = new Map<string, number>();
    for (const f of run.failures) {
      const g = `${dir} | ${f.file} | ${f.group}`;
      byGroup.set(g, (byGroup.get(g) ?? 0) + 1);
    }
    for (const [g, n] of byGroup) {
      assert.ok(
        KNOWN[g],
        `unexpected failure: ${g} (${n} tests): ${run.failures.find((f) => `${dir} | ${f.file} | ${f.group}` === g)?.got}`,
      );
      assert.equal(n, KNOWN[g][0], `failures in ${g}`);
    }
    for (const [g, [n]] of Object.entries(KNOWN)) {
      if (g.startsWith(`${dir} |`))
        assert.equal(
          byGroup.get(g) ?? 0,
          n,
          `known failure no longer fails: ${g} (update the list in docs/compliance.md)`,
        );
    }
  });

  test(`${dir}: optional tests (formats asserted) pass at the floor`, {
    skip: needsData('json-schema-test-suite'),
  }, () => {
    const run = runSuite(dir, dialect, true);
    print(run);
    const rate = run.passed / run.total;
    assert.ok(
      rate >= FLOORS[dir].optional,
      `${dir} optional pass rate ${rate.toFixed(4)} < ${FLOORS[dir].optional}`,
    );
  });
}

test('the constraint walk agrees with ajv on every suite test but a property named __proto__ (the walk does not count it)', {
  skip: needsData('json-schema-test-suite'),
}, () => {
  let n = 0;
  const odd: string[] = [];
  for (const [dir, dialect] of DRAFTS) {
    for (const optional of [false, true]) {
      const run = runSuite(dir, dialect, optional);
      n += run.total;
      for (const d of run.walkDisagreements) odd.push(`${dir} ${d.file} ${d.group} / ${d.test}`);
    }
  }
  console.log(`# walk vs ajv: ${odd.length} disagreements over ${n} tests`);
  for (const o of odd) console.log(`#   ${o}`);
  assert.ok(n > 4800, `${n} tests`);
  assert.equal(odd.length, 3);
  assert.ok(odd.every((o) => o.includes('__proto__ not valid')));
});
