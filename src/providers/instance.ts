/**
 * `baseline:instance`: answers every record with a valid instance of its schema, built from the
 * schema alone — the ceiling of the schema compliance track (what `baseline:gold` is to value
 * accuracy). The instance comes from json-schema-faker (seeded, so runs repeat; remote `$ref`s
 * are never fetched), checked with the compliance track's validator (src/core/validator.ts);
 * where the generator throws or its instance does not validate, the next attempt is tried, and
 * last the skeleton baseline's answer.
 *
 * Caps: a schema's `minItems` / `minProperties` / `minContains` above 100 and `minLength` above
 * 10,000 are lowered before generating (a `minItems: 1e9` must not exhaust memory: the answer is
 * then invalid, honestly), an answer above 1,000,000 characters of JSON is discarded, and all of
 * it runs on a worker thread with a time and memory budget (src/core/budget.ts): a record whose
 * generation runs over gets the skeleton, and if even that runs over, a `bad_request` error.
 */
import { generateSync } from 'json-schema-faker';
import { BudgetedWorker } from '../core/budget.ts';
import { compileSchema, mapSubschemas, validateCompiled } from '../core/validator.ts';
import { skeletonFor } from './baseline.ts';
import { type Provider, ProviderError, type ProviderRequest, type ProviderResponse } from './types.ts';

const CAPS = {
  minItems: 100,
  minProperties: 100,
  minContains: 100,
  minLength: 10_000,
  answerChars: 1_000_000,
};

/** The generator's settings per attempt, in order (measured on JSONSchemaBench's schemas: the first alone is valid for 585 of 600). */
const ATTEMPTS: [string, Record<string, unknown>][] = [
  // Required properties only, deterministic choices: the fewest places to go wrong.
  ['json-schema-faker:required', { fixedProbabilities: true, optionalsProbability: 0 }],
  ['json-schema-faker:random-required', { optionalsProbability: 0 }],
  ['json-schema-faker:default', {}],
];

/** A copy of `schema` with the generator's caps applied. */
export function cappedForGeneration(schema: unknown): unknown {
  return mapSubschemas(schema, (s) => {
    let out = s;
    for (const [k, cap] of [
      ['minItems', CAPS.minItems],
      ['minProperties', CAPS.minProperties],
      ['minContains', CAPS.minContains],
      ['minLength', CAPS.minLength],
    ] as const) {
      const v = out[k];
      if (typeof v === 'number' && v > cap) out = { ...out, [k]: cap };
    }
    return out;
  });
}

export interface InstanceJob {
  schema: unknown;
  seed: number;
  /** Only the skeleton (after the full job ran over its budget). */
  skeletonOnly?: boolean;
}

export interface InstanceResult {
  /** The answer's JSON text. */
  text: string;
  /** Which attempt built it. */
  source: string;
  /** Valid under the compliance validator; null when the schema does not compile there. */
  valid: boolean | null;
  /** Every attempt, with what became of it. */
  tried: string[];
}

/** Builds the answer (runs on the worker; exported for tests). */
export function buildInstance(job: InstanceJob): InstanceResult {
  const compiled = compileSchema(job.schema);
  const check = (v: unknown): boolean | null =>
    compiled.ok ? validateCompiled(compiled.compiled, v).valid : null;
  const tried: string[] = [];
  let first: InstanceResult | undefined;
  const consider = (source: string, build: () => unknown): InstanceResult | undefined => {
    let text: string | undefined;
    try {
      text = JSON.stringify(build());
    } catch (e) {
      tried.push(`${source}: failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
      return undefined;
    }
    if (text === undefined) {
      tried.push(`${source}: no value`);
      return undefined;
    }
    if (text.length > CAPS.answerChars) {
      tried.push(`${source}: over ${CAPS.answerChars} characters`);
      return undefined;
    }
    const valid = check(JSON.parse(text));
    tried.push(`${source}: ${valid === null ? 'unchecked' : valid ? 'valid' : 'invalid'}`);
    const r: InstanceResult = { text, source, valid, tried };
    first ??= r;
    return valid === false ? undefined : r;
  };
  const capped = cappedForGeneration(job.schema) as Parameters<typeof generateSync>[0];
  if (!job.skeletonOnly) {
    for (const [name, opts] of ATTEMPTS) {
      const r = consider(name, () =>
        generateSync(capped, { seed: job.seed, refDepthMax: 3, maxItems: 5, ...opts }),
      );
      if (r) return r;
    }
  }
  // The skeleton sees the capped schema too: its `minItems` placeholders cannot run away.
  const r = consider('skeleton', () => skeletonFor(capped));
  if (r) return r;
  if (first) return first;
  return { text: 'null', source: 'none', valid: check(null), tried };
}

/** The worker's entry point (see BudgetedWorker). */
export function handle(job: InstanceJob): InstanceResult {
  return buildInstance(job);
}

export interface InstanceOptions {
  seed?: number;
  /** Time budget per record (default 10 s), twice at most (the full attempt, then the skeleton). */
  timeoutMs?: number;
  memoryMb?: number;
}

export class InstanceBaseline implements Provider {
  readonly id = 'baseline:instance';
  readonly kind = 'baseline';
  readonly model = 'instance';
  private readonly seed: number;
  private readonly timeoutMs: number;
  private readonly worker: BudgetedWorker<InstanceJob, InstanceResult>;

  constructor(opts: InstanceOptions = {}) {
    this.seed = opts.seed ?? 1;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.worker = new BudgetedWorker({
      module: new URL(import.meta.url),
      timeoutMs: this.timeoutMs,
      memoryMb: opts.memoryMb ?? 1024,
    });
  }

  describe(): Record<string, unknown> {
    return {
      answers: 'a valid instance of the schema from json-schema-faker (seeded), else the skeleton baseline',
      generator: 'json-schema-faker 0.6.3',
      seed: this.seed,
      timeout_ms: this.timeoutMs,
      caps: { ...CAPS },
    };
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    let out = await this.worker.run({ schema: req.schema, seed: this.seed });
    if (!out.ok) out = await this.worker.run({ schema: req.schema, seed: this.seed, skeletonOnly: true });
    if (!out.ok) {
      throw new ProviderError('bad_request', `baseline:instance could not build an answer: ${out.reason}`);
    }
    return { text: out.value.text, inputTokens: 0, outputTokens: 0, finishReason: 'stop', cost: 0 };
  }

  async close(): Promise<void> {
    await this.worker.close();
  }
}
