/**
 * `local:<model-dir>`: a causal language model in ONNX form run on the CPU by transformers.js,
 * with the hub switched off (`env.allowRemoteModels = false`): the folder holds config.json,
 * tokenizer.json (+ tokenizer_config.json) and onnx/model.onnx. Loaded once per run; one
 * generation at a time (the CPU is the limit), greedy at temperature 0.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, UserError } from '../core/errors.ts';
import { type Provider, ProviderError, type ProviderRequest, type ProviderResponse } from './types.ts';

type Transformers = typeof import('@huggingface/transformers');
// biome-ignore lint/suspicious/noExplicitAny: transformers.js model and tokenizer classes are loosely typed
type Loose = any;

export class LocalProvider implements Provider {
  readonly kind = 'local';
  readonly id: string;
  private readonly dir: string;
  private loading?: Promise<{ tf: Transformers; tokenizer: Loose; model: Loose }>;
  private queue: Promise<unknown> = Promise.resolve();
  loads = 0;

  constructor(readonly model: string) {
    this.id = `local:${model}`;
    this.dir = resolve(model);
    if (!model) throw new UserError('local: give a model folder, e.g. --model local:models/qwen2.5-0.5b', 2);
    if (!existsSync(this.dir) || !statSync(this.dir).isDirectory())
      throw new UserError(`local: no such model folder: ${model}`);
    for (const f of ['config.json', 'tokenizer.json', join('onnx', 'model.onnx')]) {
      if (!existsSync(join(this.dir, f))) throw new UserError(`local: ${join(model, f)} is missing`);
    }
  }

  describe(): Record<string, unknown> {
    return {
      folder: this.dir,
      runtime: 'transformers.js (onnxruntime-node, CPU)',
      dtype: 'fp32',
      decoding: 'greedy',
    };
  }

  /** Loads tokenizer and model once; later calls share the same promise. */
  load(): Promise<{ tf: Transformers; tokenizer: Loose; model: Loose }> {
    this.loading ??= (async () => {
      const tf = await import('@huggingface/transformers');
      tf.env.allowRemoteModels = false;
      tf.env.allowLocalModels = true;
      tf.env.localModelPath = `${dirname(this.dir)}/`;
      const name = basename(this.dir);
      try {
        const tokenizer = await tf.AutoTokenizer.from_pretrained(name, { local_files_only: true });
        const model = await tf.AutoModelForCausalLM.from_pretrained(name, {
          local_files_only: true,
          dtype: 'fp32',
          device: 'cpu',
        });
        this.loads++;
        return { tf, tokenizer, model };
      } catch (e) {
        throw new UserError(`local: cannot load ${this.model}: ${errorMessage(e).split('\n')[0]}`);
      }
    })();
    return this.loading;
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    const run = this.queue.then(() => this.generate(req));
    this.queue = run.catch(() => {});
    return run;
  }

  private async generate(req: ProviderRequest): Promise<ProviderResponse> {
    const { tf, tokenizer, model } = await this.load();
    if (req.signal.aborted) throw new ProviderError('timeout', 'aborted before generation');
    const messages = [
      ...(req.system ? [{ role: 'system', content: req.system }] : []),
      { role: 'user', content: req.user },
    ];
    const text: string = tokenizer.chat_template
      ? tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true })
      : messages.map((m) => m.content).join('\n\n');
    const inputs = tokenizer(text);
    const promptLen: number = inputs.input_ids.dims[1];
    // Stop between tokens when the request is aborted (timeout, Ctrl-C).
    const signal = req.signal;
    class AbortCriteria extends tf.StoppingCriteria {
      override _call(ids: number[][]): boolean[] {
        return ids.map(() => signal.aborted);
      }
    }
    const criteria = new tf.StoppingCriteriaList();
    criteria.push(new AbortCriteria());
    const out = await model.generate({
      ...inputs,
      max_new_tokens: req.maxTokens,
      do_sample: req.temperature > 0,
      temperature: req.temperature > 0 ? req.temperature : undefined,
      stopping_criteria: criteria,
    });
    if (signal.aborted) throw new ProviderError('timeout', 'generation stopped by abort');
    const all: bigint[] = Array.from(out.slice(0, null).data as BigInt64Array);
    const fresh = all.slice(promptLen);
    const eos = [model.generation_config?.eos_token_id ?? model.config.eos_token_id]
      .flat()
      .filter((x) => x !== undefined)
      .map(BigInt);
    const stopped = fresh.length > 0 && eos.includes(fresh[fresh.length - 1]);
    const answer: string = tokenizer.decode(fresh.map(Number), { skip_special_tokens: true });
    return {
      text: answer,
      inputTokens: promptLen,
      outputTokens: fresh.length,
      finishReason: stopped || fresh.length < req.maxTokens ? 'stop' : 'length',
      cost: 0,
    };
  }
}
