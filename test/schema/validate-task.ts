/**
 * A test's job for `BudgetedWorker` (src/core/budget.ts), moved here from src/core where nothing
 * used it: one validation: compile (cached by schema text within the worker),
 * validate with all errors, tally the constraints. For validating untrusted answers outside the
 * scoring workers with a time budget:
 *
 *   const w = new BudgetedWorker<ValidateJob, ValidateResult>({ module: VALIDATE_TASK, timeoutMs });
 *   const outcome = await w.run({ schema, instance });
 */
import { type AnswerCheck, checkAnswer } from '../../src/core/constraints.ts';
import {
  type CompileResult,
  compileSchema,
  type Dialect,
  localRemotes,
  type RemoteResolver,
} from '../../src/core/validator.ts';

export const VALIDATE_TASK = new URL(import.meta.url);

export interface ValidateJob {
  schema: unknown;
  instance: unknown;
  dialect?: Dialect;
  defaultDialect?: Dialect;
  assertFormats?: boolean;
  /** Remote `$ref`s under `baseUri` resolve from files under `dir`. */
  remotes?: { dir: string; baseUri: string };
  maxViolations?: number;
}

export type ValidateResult =
  | { compiles: false; dialect: Dialect; reason: string }
  | ({ compiles: true; dialect: Dialect } & AnswerCheck);

const compiledCache = new Map<string, CompileResult>();
const resolvers = new Map<string, RemoteResolver>();

export function handle(job: ValidateJob): ValidateResult {
  let remotes: RemoteResolver | undefined;
  if (job.remotes) {
    const k = `${job.remotes.baseUri}\u0000${job.remotes.dir}`;
    remotes = resolvers.get(k);
    if (!remotes) {
      remotes = localRemotes(job.remotes.dir, job.remotes.baseUri);
      resolvers.set(k, remotes);
    }
  }
  const key = `${job.dialect}:${job.defaultDialect}:${job.assertFormats}:${job.remotes?.dir}:${JSON.stringify(job.schema)}`;
  let c = compiledCache.get(key);
  if (!c) {
    c = compileSchema(job.schema, {
      dialect: job.dialect,
      defaultDialect: job.defaultDialect,
      assertFormats: job.assertFormats,
      remotes,
    });
    if (compiledCache.size >= 64) compiledCache.clear();
    compiledCache.set(key, c);
  }
  if (!c.ok) return { compiles: false, dialect: c.dialect, reason: c.reason };
  return {
    compiles: true,
    dialect: c.compiled.dialect,
    ...checkAnswer(c.compiled, job.instance, { maxViolations: job.maxViolations }),
  };
}
