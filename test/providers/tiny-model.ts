/**
 * Builds a tiny causal LM folder for transformers.js with no onnx package: the ONNX protobuf
 * bytes are written here by hand. The model is a bigram table: logits = W[input_ids], one
 * Gather node, so the next token depends only on the current one. With a WordPiece tokenizer
 * whose vocabulary holds three answer pieces, every prompt (its last word is unknown) makes the
 * model answer `{"id": "local" }` and then end with <eos>.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// --- protobuf wire format -------------------------------------------------------------------
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}
const tag = (field: number, wire: number) => varint((field << 3) | wire);
const fInt = (field: number, n: number | bigint) => [...tag(field, 0), ...varint(n)];
const fBytes = (field: number, bytes: Uint8Array | number[]) => [
  ...tag(field, 2),
  ...varint(bytes.length),
  ...bytes,
];
const fStr = (field: number, s: string) => fBytes(field, [...Buffer.from(s, 'utf8')]);
const fMsg = (field: number, msg: number[]) => fBytes(field, msg);

const FLOAT = 1;
const INT64 = 7;

function valueInfo(name: string, elemType: number, dims: (number | string)[]): number[] {
  const shape = dims.flatMap((d) => fMsg(1, typeof d === 'number' ? fInt(1, d) : fStr(2, d)));
  const tensorType = [...fInt(1, elemType), ...fMsg(2, shape)];
  return [...fStr(1, name), ...fMsg(2, fMsg(1, tensorType))];
}

/** ONNX ModelProto bytes: logits[b, s, V] = Gather(W[V, V], input_ids[b, s]). */
export function bigramOnnx(weights: Float32Array, vocab: number): Uint8Array {
  const init = [
    ...fInt(1, vocab),
    ...fInt(1, vocab),
    ...fInt(2, FLOAT),
    ...fStr(8, 'W'),
    ...fBytes(9, new Uint8Array(weights.buffer)),
  ];
  const node = [
    ...fStr(1, 'W'),
    ...fStr(1, 'input_ids'),
    ...fStr(2, 'logits'),
    ...fStr(3, 'lookup'),
    ...fStr(4, 'Gather'),
  ];
  const graph = [
    ...fMsg(1, node),
    ...fStr(2, 'bigram'),
    ...fMsg(5, init),
    ...fMsg(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length'])),
    ...fMsg(11, valueInfo('attention_mask', INT64, ['batch_size', 'sequence_length'])),
    ...fMsg(12, valueInfo('logits', FLOAT, ['batch_size', 'sequence_length', vocab])),
  ];
  const model = [
    ...fInt(1, 7),
    ...fStr(2, 'sob-eval-test'),
    ...fMsg(7, graph),
    ...fMsg(8, [...fStr(1, ''), ...fInt(2, 13)]),
  ];
  return new Uint8Array(model);
}

export const TINY_ANSWER = '{"id": "local" }';

/** Writes the model folder `<parent>/<name>` and returns its path. */
export function writeTinyModel(parent: string, name = 'tiny-bigram'): string {
  const vocab: Record<string, number> = { '[UNK]': 0, '<eos>': 1, '{"id":': 2, '"local"': 3, '}': 4 };
  const V = Object.keys(vocab).length;
  // next[token] = the token that follows it.
  const next: Record<number, number> = { 0: 2, 1: 1, 2: 3, 3: 4, 4: 1 };
  const W = new Float32Array(V * V);
  for (let t = 0; t < V; t++) W[t * V + next[t]] = 10;
  const dir = join(parent, name);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', 'model.onnx'), bigramOnnx(W, V));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'gpt2',
      architectures: ['GPT2LMHeadModel'],
      vocab_size: V,
      n_layer: 1,
      n_head: 1,
      n_embd: 4,
      n_positions: 4096,
      bos_token_id: 1,
      eos_token_id: 1,
      pad_token_id: 1,
    }),
  );
  writeFileSync(
    join(dir, 'generation_config.json'),
    JSON.stringify({ eos_token_id: 1, pad_token_id: 1, bos_token_id: 1 }),
  );
  writeFileSync(
    join(dir, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [
        {
          id: 0,
          content: '[UNK]',
          single_word: false,
          lstrip: false,
          rstrip: false,
          normalized: false,
          special: true,
        },
        {
          id: 1,
          content: '<eos>',
          single_word: false,
          lstrip: false,
          rstrip: false,
          normalized: false,
          special: true,
        },
      ],
      normalizer: null,
      pre_tokenizer: { type: 'WhitespaceSplit' },
      post_processor: null,
      decoder: { type: 'WordPiece', prefix: '##', cleanup: false },
      model: {
        type: 'WordPiece',
        unk_token: '[UNK]',
        continuing_subword_prefix: '##',
        max_input_chars_per_word: 100,
        vocab,
      },
    }),
  );
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'PreTrainedTokenizerFast',
      unk_token: '[UNK]',
      eos_token: '<eos>',
      model_max_length: 4096,
    }),
  );
  return dir;
}
