/**
 * The built-in baselines: `baseline:gold` answers with the ground truth (the ceiling) and
 * `baseline:skeleton` with a schema-valid answer of placeholder values derived from the schema
 * alone (how far structure without content scores).
 */
import { dumpsPy } from '../core/pyjson.ts';
import type { Provider, ProviderRequest, ProviderResponse } from './types.ts';

type Schema = Record<string, unknown>;

const MAX_DEPTH = 24;
/**
 * What one skeleton may hold: an untrusted schema (`minItems: 1e8`, `minProperties: 3e5`,
 * `minLength: 1e9`, a `$ref` that doubles at every level) must not exhaust memory or block the
 * event loop (Ctrl-C and SIGTERM must still be heard). Past these the placeholder is cut short.
 */
export const SKELETON_LIMITS = { values: 50_000, chars: 1_000_000 };

/** What is left of a skeleton's allowance (values and string characters). */
interface Budget {
  values: number;
  chars: number;
}

const newBudget = (): Budget => ({ ...SKELETON_LIMITS });

function isObj(v: unknown): v is Schema {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A local `$ref` (`#/definitions/x`, `#/$defs/x`, `#`) resolved against the root schema. */
function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObj(cur)) return undefined;
    cur = cur[key];
  }
  return isObj(cur) ? cur : undefined;
}

function typesOf(s: Schema): string[] {
  const t = s.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  if (isObj(s.properties) || s.required !== undefined || s.additionalProperties !== undefined)
    return ['object'];
  if (s.items !== undefined || s.minItems !== undefined) return ['array'];
  return [];
}

function placeholderNumber(s: Schema, integer: boolean, salt: number): number {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  if (typeof s.minimum === 'number') lo = s.minimum;
  if (typeof s.exclusiveMinimum === 'number') lo = Math.max(lo, s.exclusiveMinimum + (integer ? 1 : 1e-9));
  if (typeof s.maximum === 'number') hi = s.maximum;
  if (typeof s.exclusiveMaximum === 'number') hi = Math.min(hi, s.exclusiveMaximum - (integer ? 1 : 1e-9));
  let v = salt;
  if (v < lo) v = lo;
  if (v > hi) v = Number.isFinite(lo) ? lo : hi;
  if (integer) v = Math.ceil(v);
  const m = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : undefined;
  if (m) {
    v = Math.ceil(v / m) * m;
    if (v > hi) v = Math.floor(hi / m) * m;
  }
  return v;
}

function placeholderString(s: Schema, salt: number, budget: Budget): string {
  const fmt = typeof s.format === 'string' ? s.format : '';
  let v =
    fmt === 'date'
      ? '1970-01-01'
      : fmt === 'date-time'
        ? '1970-01-01T00:00:00Z'
        : fmt === 'time'
          ? '00:00:00'
          : fmt === 'email'
            ? 'x@example.com'
            : fmt === 'uri'
              ? 'https://example.com'
              : salt > 0
                ? String(salt)
                : '';
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
  if (v.length < min) v = v + 'x'.repeat(Math.max(0, Math.min(min, budget.chars) - v.length));
  if (v.length > max) v = v.slice(0, max);
  budget.chars = Math.max(0, budget.chars - v.length);
  return v;
}

/**
 * A placeholder instance for `schema`: the first enum/const value, the first branch of
 * anyOf/oneOf, every declared property of an object (required or not), `minItems` array items
 * (at least one, at most `maxItems`), zero-like scalars within bounds. `salt` makes sibling
 * array items differ (uniqueItems).
 */
export function skeletonFor(
  schema: unknown,
  root: Schema = isObj(schema) ? schema : {},
  depth = 0,
  salt = 0,
  budget: Budget = newBudget(),
): unknown {
  if (schema === true || schema === undefined) return null;
  if (!isObj(schema)) return null;
  if (depth > MAX_DEPTH || budget.values <= 0) return null;
  budget.values--;
  let s = schema;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    return target ? skeletonFor(target, root, depth + 1, salt, budget) : null;
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[Math.min(salt, s.enum.length - 1)];
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    // Merge the branches shallowly: enough for the usual "base object + extra keys" use.
    const merged: Schema = { ...s, allOf: undefined };
    for (const b of s.allOf) {
      if (!isObj(b)) continue;
      const bb = typeof b.$ref === 'string' ? (resolveRef(root, b.$ref) ?? {}) : b;
      for (const [k, v] of Object.entries(bb)) {
        if (k === 'properties' && isObj(v))
          merged.properties = { ...(isObj(merged.properties) ? merged.properties : {}), ...v };
        else if (k === 'required' && Array.isArray(v))
          merged.required = [...(Array.isArray(merged.required) ? merged.required : []), ...v];
        else if (merged[k] === undefined) merged[k] = v;
      }
    }
    delete merged.allOf;
    s = merged;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (
      Array.isArray(branches) &&
      branches.length > 0 &&
      s.type === undefined &&
      s.properties === undefined
    ) {
      // Prefer a non-null branch: a placeholder should show structure.
      const pick = branches.find((b) => !(isObj(b) && b.type === 'null')) ?? branches[0];
      return skeletonFor(pick, root, depth + 1, salt, budget);
    }
  }
  const types = typesOf(s);
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'object': {
      // Keys such as `__proto__` are data here, not the prototype.
      const out: Record<string, unknown> = {};
      let count = 0;
      const put = (k: string, v: unknown) => {
        if (!Object.hasOwn(out, k)) count++;
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      };
      const extra = isObj(s.additionalProperties) ? s.additionalProperties : {};
      const props = isObj(s.properties) ? s.properties : {};
      for (const [k, sub] of Object.entries(props)) {
        if (budget.values <= 0) break;
        put(k, skeletonFor(sub, root, depth + 1, salt, budget));
      }
      const required = Array.isArray(s.required)
        ? s.required.filter((k): k is string => typeof k === 'string')
        : [];
      for (const k of required) {
        if (budget.values <= 0) break;
        if (!Object.hasOwn(out, k)) put(k, skeletonFor(extra, root, depth + 1, 0, budget));
      }
      const minProps = typeof s.minProperties === 'number' ? s.minProperties : 0;
      for (let i = 0; count < minProps && budget.values > 0; i++) {
        if (!Object.hasOwn(out, `key_${i}`)) put(`key_${i}`, skeletonFor(extra, root, depth + 1, 0, budget));
      }
      return out;
    }
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const max = typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY;
      const n = Math.min(Math.max(min, 1), max);
      const out: unknown[] = [];
      const tuple = Array.isArray(s.items) ? s.items : undefined;
      // Tuple form: one placeholder per position, then `additionalItems`.
      const length = tuple ? Math.max(n, Math.min(tuple.length, max)) : n;
      for (let i = 0; i < length && budget.values > 0; i++) {
        const sub = tuple ? (i < tuple.length ? tuple[i] : s.additionalItems) : s.items;
        out.push(skeletonFor(sub, root, depth + 1, i, budget));
      }
      return out;
    }
    case 'string':
      return placeholderString(s, salt, budget);
    case 'integer':
      return placeholderNumber(s, true, salt);
    case 'number':
      return placeholderNumber(s, false, salt);
    case 'boolean':
      return salt % 2 === 1;
    default:
      return null;
  }
}

function respond(text: string): ProviderResponse {
  return { text, inputTokens: 0, outputTokens: 0, finishReason: 'stop', cost: 0 };
}

export class GoldBaseline implements Provider {
  readonly id = 'baseline:gold';
  readonly kind = 'baseline';
  readonly model = 'gold';
  describe(): Record<string, unknown> {
    return { answers: 'the ground truth (the ceiling)' };
  }
  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    // dumpsPy keeps each number's lexeme (1 vs 1.0), so Perfect Response sees the ground truth exactly.
    return respond(dumpsPy(req.groundTruth, { ensureAscii: false }));
  }
}

export class SkeletonBaseline implements Provider {
  readonly id = 'baseline:skeleton';
  readonly kind = 'baseline';
  readonly model = 'skeleton';
  describe(): Record<string, unknown> {
    return {
      answers: 'a schema-valid answer with placeholder values, from the schema alone',
      limits: SKELETON_LIMITS,
    };
  }
  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    return respond(JSON.stringify(skeletonFor(req.schema)));
  }
}
