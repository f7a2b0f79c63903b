/**
 * Validation time per schema record on JSONSchemaBench's 600 shared schemas, against a
 * baseline measured in the same run: plain ajv (draft-07 class, first error only, no formats).
 *
 *   node --import tsx bench/validate.ts [--data DIR] [--repeat 3]
 *
 * Per schema, with the answer `baseline:instance` builds for it (built first, not timed):
 * - baseline: `new Ajv({strict: false}).compile(schema)` then validate;
 * - compliance: what scoring one record costs here: compile for the schema's draft (formats
 *   asserted), validate with all errors, tally the constraints (complianceOfRecord);
 * - check only: the schema compiled already (it recurs in every model's file): validate + tally.
 * Each is the best of `--repeat` runs. Prints medians, p99, totals, their ratios, and the slowest
 * schemas with what makes them slow (size, subschemas, constraints, compile vs check).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { complianceOfRecord, quantile } from '../metrics/compliance.ts';
import { checkAnswer } from '../src/core/constraints.ts';
import { compileSchema, mapSubschemas } from '../src/core/validator.ts';
import { buildInstance } from '../src/providers/instance.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const DATA = flag('--data', join(import.meta.dirname, '../../shared/data/jsonschemabench'));
const REPEAT = Math.max(1, Number(flag('--repeat', '3')));

interface Row {
  name: string;
  bytes: number;
  subschemas: number;
  baseline: number;
  compliance: number;
  compile: number;
  check: number;
  constraints: number;
  valid: boolean;
}

function best(fn: () => void): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

const rows: Row[] = [];
for (const dataset of readdirSync(DATA).sort()) {
  for (const f of readdirSync(join(DATA, dataset)).sort()) {
    const text = readFileSync(join(DATA, dataset, f), 'utf8');
    const schema = JSON.parse(text);
    const answer = JSON.parse(buildInstance({ schema, seed: 1 }).text);
    let subschemas = 0;
    mapSubschemas(schema, (s) => {
      subschemas++;
      return s;
    });
    const baseline = best(() => {
      try {
        const v = new Ajv({
          strict: false,
          logger: false,
          validateSchema: false,
          validateFormats: false,
        }).compile(JSON.parse(text));
        v(answer);
      } catch {
        // an uncompilable schema costs what it cost to find out
      }
    });
    let constraints = 0;
    let valid = false;
    const compliance = best(() => {
      const c = complianceOfRecord({ schema: JSON.parse(text), answer: { parsed: true, value: answer } });
      constraints = c.constraints?.applicable ?? 0;
      valid = c.valid;
    });
    const compiled = compileSchema(JSON.parse(text));
    const compile = best(() => {
      compileSchema(JSON.parse(text));
    });
    const check = compiled.ok ? best(() => checkAnswer(compiled.compiled, answer)) : 0;
    rows.push({
      name: `${dataset}/${f}`,
      bytes: text.length,
      subschemas,
      baseline,
      compliance,
      compile,
      check,
      constraints,
      valid,
    });
  }
}

const col = (k: keyof Row) => rows.map((r) => r[k] as number);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(2));
const line = (label: string, xs: number[]) =>
  `${label.padEnd(28)} median ${fmt(quantile(xs, 0.5)).padStart(7)} ms   p99 ${fmt(quantile(xs, 0.99)).padStart(8)} ms   max ${fmt(Math.max(...xs)).padStart(8)} ms   total ${fmt(sum(xs)).padStart(9)} ms`;

console.log(
  `validation time per schema record, ${rows.length} schemas, best of ${REPEAT} (node ${process.version})`,
);
console.log(line('baseline (plain ajv)', col('baseline')));
console.log(line('compliance (per record)', col('compliance')));
console.log(line('  compile', col('compile')));
console.log(line('  check (validate + tally)', col('check')));
console.log(
  `ratios vs baseline: median ${(quantile(col('compliance'), 0.5)! / quantile(col('baseline'), 0.5)!).toFixed(2)}x, p99 ${(quantile(col('compliance'), 0.99)! / quantile(col('baseline'), 0.99)!).toFixed(2)}x, total ${(sum(col('compliance')) / sum(col('baseline'))).toFixed(2)}x; check only, total ${(sum(col('check')) / sum(col('baseline'))).toFixed(2)}x`,
);
console.log('slowest schemas (compliance, per record):');
for (const r of [...rows].sort((a, b) => b.compliance - a.compliance).slice(0, 5)) {
  console.log(
    `  ${r.name.padEnd(44)} ${fmt(r.compliance).padStart(8)} ms (compile ${fmt(r.compile)}, check ${fmt(r.check)}; plain ajv ${fmt(r.baseline)}) ${(r.bytes / 1024).toFixed(0)} KB, ${r.subschemas} subschemas, ${r.constraints} constraints${r.valid ? '' : ', answer invalid'}`,
  );
}
