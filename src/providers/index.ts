/** Provider ids (`<kind>:<model>`) to providers. SDKs load only when their provider is used. */
import { UserError } from '../core/errors.ts';
import { GoldBaseline, SkeletonBaseline } from './baseline.ts';
import type { PoolOptions } from './endpoints.ts';
import { type Provider, splitModelId } from './types.ts';

export interface ProviderOptions {
  baseUrls?: string[];
  pool?: PoolOptions;
  /** Largest reply accepted from a remote provider (bytes); default 16 MB. */
  maxResponseBytes?: number;
  /** Stream answers where the provider can (default true). */
  stream?: boolean;
}

const PROVIDER_KINDS = ['openai', 'gemini', 'anthropic', 'local', 'replay', 'baseline'] as const;

const BASELINES = ['gold', 'skeleton', 'instance'];
/** Providers whose model part names a file or a model and cannot be empty. */
const NEEDS_MODEL = new Set(['openai', 'gemini', 'anthropic', 'replay', 'local']);

/**
 * A model id checked without building anything (no SDK loaded, no file read): a known provider
 * and a model name. Throws the one line `createProvider` would (exit 2), so a command can refuse
 * `--model foo:bar` before it builds a benchmark or asks anyone.
 */
export function checkModelId(id: string): void {
  const { kind, model } = splitModelId(id);
  if (!(PROVIDER_KINDS as readonly string[]).includes(kind))
    throw new UserError(
      `--model ${id}: unknown provider "${kind}": use one of ${PROVIDER_KINDS.map((k) => `${k}:`).join(', ')}`,
      2,
    );
  if (kind === 'baseline' && !BASELINES.includes(model))
    throw new UserError(
      `--model ${id}: unknown baseline "${model}": use baseline:gold, baseline:skeleton or baseline:instance`,
      2,
    );
  if (NEEDS_MODEL.has(kind) && model.trim() === '')
    throw new UserError(`--model ${id}: no model name after "${kind}:" (e.g. ${kind}:${EXAMPLE[kind]})`, 2);
}

const EXAMPLE: Record<string, string> = {
  openai: 'gpt-4.1-mini',
  gemini: 'gemini-2.5-flash',
  anthropic: 'claude-sonnet-4-5',
  replay: 'responses.jsonl',
  local: 'models/qwen2.5-0.5b',
};

export async function createProvider(id: string, opts: ProviderOptions = {}): Promise<Provider> {
  const { kind, model } = splitModelId(id);
  switch (kind) {
    case 'openai': {
      const { OpenAIProvider } = await import('./openai.ts');
      return new OpenAIProvider(model, {
        baseUrls: opts.baseUrls,
        pool: opts.pool,
        maxResponseBytes: opts.maxResponseBytes,
        stream: opts.stream,
      });
    }
    case 'gemini': {
      if ((opts.baseUrls?.length ?? 0) > 1) throw new UserError('gemini takes one --base-url', 2);
      const { GeminiProvider } = await import('./gemini.ts');
      return new GeminiProvider(model, {
        baseUrl: opts.baseUrls?.[0],
        maxResponseBytes: opts.maxResponseBytes,
        stream: opts.stream,
      });
    }
    case 'anthropic': {
      if ((opts.baseUrls?.length ?? 0) > 1) throw new UserError('anthropic takes one --base-url', 2);
      const { AnthropicProvider } = await import('./anthropic.ts');
      return new AnthropicProvider(model, {
        baseUrl: opts.baseUrls?.[0],
        maxResponseBytes: opts.maxResponseBytes,
        stream: opts.stream,
      });
    }
    case 'replay': {
      if (!model) throw new UserError('replay: give a response file, e.g. --model replay:responses.jsonl', 2);
      const { ReplayProvider } = await import('./replay.ts');
      const p = new ReplayProvider(model);
      await p.load();
      return p;
    }
    case 'baseline':
      if (model === 'gold') return new GoldBaseline();
      if (model === 'skeleton') return new SkeletonBaseline();
      if (model === 'instance') return new (await import('./instance.ts')).InstanceBaseline();
      throw new UserError(
        `unknown baseline "${model}": use baseline:gold, baseline:skeleton or baseline:instance`,
        2,
      );
    case 'local': {
      const { LocalProvider } = await import('./local.ts');
      const p = new LocalProvider(model);
      await p.load();
      return p;
    }
    default:
      throw new UserError(
        `unknown provider "${kind}" in "${id}": use one of ${PROVIDER_KINDS.map((k) => `${k}:`).join(', ')}`,
        2,
      );
  }
}
