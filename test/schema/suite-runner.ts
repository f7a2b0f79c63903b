/**
 * Runs the official JSON-Schema-Test-Suite through the compliance validator: pass rates per
 * draft and per keyword file, required and optional apart, and every failure. Used by the
 * suite test and printed by it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkAnswer } from '../../src/core/constraints.ts';
import { compileSchema, type Dialect, localRemotes } from '../../src/core/validator.ts';
import { sharedData } from '../kit/shared-data.ts';

export const SUITE = sharedData('json-schema-test-suite');
export const DRAFTS: [string, Dialect][] = [
  ['draft4', 'draft-04'],
  ['draft7', 'draft-07'],
  ['draft2020-12', '2020-12'],
];

export interface Failure {
  draft: string;
  file: string;
  group: string;
  test: string;
  expected: boolean;
  got: string;
}

export interface FileRate {
  file: string;
  passed: number;
  total: number;
}

export interface SuiteRun {
  draft: string;
  optional: boolean;
  passed: number;
  total: number;
  files: FileRate[];
  failures: Failure[];
  /** Tests where the constraint walk and ajv disagree (partial validity 1 vs invalid or the reverse). */
  walkDisagreements: Failure[];
}

function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...listFiles(p, `${rel}${f}/`));
    else if (f.endsWith('.json')) out.push(`${rel}${f}`);
  }
  return out;
}

/**
 * One draft, required (`tests/<draft>/*.json`) or optional (`tests/<draft>/optional/**`). Format
 * tests (`optional/format/*`) run with formats asserted; everything else with the specification's
 * default (annotation only), so the required `format.json` tests mean what they say.
 */
export function runSuite(dir: string, dialect: Dialect, optional: boolean): SuiteRun {
  const remotes = localRemotes(join(SUITE, 'remotes'), 'http://localhost:1234/');
  const base = join(SUITE, 'tests', dir);
  const files = optional
    ? listFiles(join(base, 'optional'), 'optional/')
    : readdirSync(base)
        .filter((f) => f.endsWith('.json'))
        .sort();
  const run: SuiteRun = {
    draft: dir,
    optional,
    passed: 0,
    total: 0,
    files: [],
    failures: [],
    walkDisagreements: [],
  };
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(base, file), 'utf8')) as {
      description: string;
      schema: unknown;
      tests: { description: string; data: unknown; valid: boolean }[];
    }[];
    const assertFormats = file.startsWith('optional/format/');
    const rate: FileRate = { file, passed: 0, total: 0 };
    for (const g of groups) {
      const c = compileSchema(g.schema, { defaultDialect: dialect, assertFormats, remotes });
      for (const t of g.tests) {
        rate.total++;
        let got: string;
        let disagrees = false;
        if (!c.ok) got = c.reason;
        else {
          const r = checkAnswer(c.compiled, t.data);
          got = r.error ?? String(r.valid);
          const tally = r.tally;
          disagrees = !r.error && tally !== null && (tally.satisfied === tally.applicable) !== r.valid;
        }
        const at: Failure = {
          draft: dir,
          file,
          group: g.description,
          test: t.description,
          expected: t.valid,
          got,
        };
        if (disagrees) run.walkDisagreements.push(at);
        if (got === String(t.valid)) rate.passed++;
        else run.failures.push(at);
      }
    }
    run.files.push(rate);
    run.passed += rate.passed;
    run.total += rate.total;
  }
  return run;
}
