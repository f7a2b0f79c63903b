/**
 * `replay:<responses.jsonl>`: answers each record with what an existing response file says for
 * the same record id (its `raw_response` when there is one, else its `candidate_response`), so
 * a response file from elsewhere can go through the runner and the run directory unchanged.
 */
import { UserError } from '../core/errors.ts';
import { checkResponseLine } from '../core/formats/response-line.ts';
import { readJsonl } from '../core/jsonl.ts';
import { dumpsPy, getField, type PyValue } from '../core/pyjson.ts';
import { type Provider, ProviderError, type ProviderRequest, type ProviderResponse } from './types.ts';

interface Answer {
  text: string;
  inputTokens?: number;
  outputTokens?: number;
}

function num(v: PyValue | undefined): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

export class ReplayProvider implements Provider {
  readonly kind = 'replay';
  readonly id: string;
  private answers = new Map<string, Answer>();
  private loaded = false;
  constructor(readonly model: string) {
    this.id = `replay:${model}`;
  }

  describe(): Record<string, unknown> {
    return { file: this.model, records: this.answers.size };
  }

  /** Reads the file once (record id -> answer text); the first answer for an id wins. */
  async load(): Promise<void> {
    if (this.loaded) return;
    for await (const l of readJsonl(this.model)) {
      if (!l.ok) throw new UserError(`${this.model}:${l.line}: not JSON: ${l.error}`);
      checkResponseLine(l.value, `${this.model}:${l.line}`);
      const id = getField(getField(l.value, 'metadata'), 'record_id');
      if (typeof id !== 'string' || this.answers.has(id)) continue;
      const output = getField(l.value, 'output');
      const raw = getField(output, 'raw_response');
      const cand = getField(output, 'candidate_response');
      let text: string;
      if (typeof raw === 'string') text = raw;
      else if (typeof cand === 'string') text = cand;
      else if (cand === undefined) continue;
      else text = dumpsPy(cand, { ensureAscii: false });
      const info = getField(l.value, 'eval_info');
      this.answers.set(id, {
        text,
        inputTokens: num(getField(info, 'input_tokens')),
        outputTokens: num(getField(info, 'output_tokens')),
      });
    }
    this.loaded = true;
  }

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    await this.load();
    const a = this.answers.get(req.recordId);
    if (!a) throw new ProviderError('bad_request', `${this.model} has no answer for record ${req.recordId}`);
    return { text: a.text, inputTokens: a.inputTokens, outputTokens: a.outputTokens, finishReason: 'stop' };
  }
}
