import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TinyModelOptions {
  /** Hidden size; at least the number of concepts plus one. */
  dimensions: number;
  /** Groups of words the model relates (lower case, one token each). */
  concepts: string[][];
}

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
/** A few ordinary words, so that the vocabulary is not only concepts; they get the shared direction. */
const FILLER_WORDS = ['a', 'an', 'the', 'of', 'for', 'at', 'to', 'and', 'in', 'on', 'with', 'by', '##s'];
/** Weight of the direction shared by every token that is no concept word. */
const BASELINE = 0.1;

/**
 * Writes a tiny BERT-like sentence-embedding model in the Hugging Face folder layout that
 * `@huggingface/transformers` loads (config.json, tokenizer.json, tokenizer_config.json,
 * onnx/model.onnx), so that the real loading code is tested without downloading a model.
 *
 * The "network" is one embedding lookup: last_hidden_state = E_word[input_ids] + E_type[token_type_ids].
 * Word vectors are chosen so that the model understands a little: every word of a concept gets the
 * same direction, and all other tokens a small shared one. Mean pooling then makes a text's vector
 * point towards the concepts its words belong to, e.g. "stripes" towards a text about a zebra.
 */
export function writeTinyModel(dir: string, options: TinyModelOptions): void {
  const { dimensions, concepts } = options;
  if (dimensions < concepts.length + 1) {
    throw new Error(`a tiny model of ${concepts.length} concepts needs at least ${concepts.length + 1} dimensions`);
  }
  const conceptOf = new Map<string, number>();
  concepts.forEach((words, index) => words.forEach((word) => conceptOf.set(word, index)));
  const vocab = [...SPECIAL_TOKENS, ...FILLER_WORDS, ...conceptOf.keys()];

  const words = new Float32Array(vocab.length * dimensions);
  vocab.forEach((token, row) => {
    const concept = conceptOf.get(token);
    // Padding contributes nothing; mean pooling ignores it anyway through the attention mask.
    if (token === '[PAD]') {
      return;
    }
    if (concept === undefined) {
      words[row * dimensions + dimensions - 1] = BASELINE;
    } else {
      words[row * dimensions + concept] = 1;
    }
  });
  // Segment embeddings: zero, but consumed, as in BERT (transformers.js feeds token_type_ids when declared).
  const types = new Float32Array(2 * dimensions);

  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', 'model.onnx'), encodeModel(vocab.length, dimensions, words, types));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertModel'],
      hidden_size: dimensions,
      vocab_size: vocab.length,
      type_vocab_size: 2,
      num_hidden_layers: 1,
      num_attention_heads: 1,
      max_position_embeddings: 512,
    }),
  );
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
    }),
  );
}

/** A WordPiece tokenizer in the `tokenizers` JSON format, with BERT's normaliser and [CLS] … [SEP] template. */
function tokenizerJson(vocab: string[]): unknown {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = (content: string) => ({
    id: ids[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

// --- ONNX, hand-encoded ---------------------------------------------------------------------------
// The graph is a handful of protobuf messages: encoding them here takes less code than a protobuf
// library plus the ONNX schema, and keeps the test free of another dependency. Field numbers are
// those of onnx/onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto, TypeProto).

const ONNX_FLOAT = 1;
const ONNX_INT64 = 7;

function encodeModel(vocabSize: number, dimensions: number, words: Float32Array, types: Float32Array): Uint8Array {
  const tokens = (name: string) => valueInfo(name, ONNX_INT64, ['batch', 'sequence']);
  const graph = [
    ...bytesField(1, node('Gather', ['word_embeddings', 'input_ids'], ['words'])),
    ...bytesField(1, node('Gather', ['token_type_embeddings', 'token_type_ids'], ['segments'])),
    ...bytesField(1, node('Add', ['words', 'segments'], ['last_hidden_state'])),
    ...stringField(2, 'tiny-bert'),
    ...bytesField(5, tensor('word_embeddings', [vocabSize, dimensions], words)),
    ...bytesField(5, tensor('token_type_embeddings', [2, dimensions], types)),
    ...bytesField(11, tokens('input_ids')),
    // Declared like BERT's; mean pooling applies the mask outside the model.
    ...bytesField(11, tokens('attention_mask')),
    ...bytesField(11, tokens('token_type_ids')),
    ...bytesField(12, valueInfo('last_hidden_state', ONNX_FLOAT, ['batch', 'sequence', dimensions])),
  ];
  const opset = [...stringField(1, ''), ...varintField(2, 13)];
  return Uint8Array.from([
    ...varintField(1, 8), // ir_version
    ...stringField(2, 'patchbay-tests'), // producer_name
    ...bytesField(7, graph),
    ...bytesField(8, opset),
  ]);
}

function node(opType: string, inputs: string[], outputs: string[]): number[] {
  return [
    ...inputs.flatMap((name) => stringField(1, name)),
    ...outputs.flatMap((name) => stringField(2, name)),
    ...stringField(3, `${opType}_${outputs[0]}`),
    ...stringField(4, opType),
  ];
}

function tensor(name: string, dims: number[], data: Float32Array): number[] {
  return [
    ...dims.flatMap((dim) => varintField(1, dim)),
    ...varintField(2, ONNX_FLOAT),
    ...stringField(8, name),
    ...bytesField(9, [...new Uint8Array(data.buffer, data.byteOffset, data.byteLength)]),
  ];
}

function valueInfo(name: string, elemType: number, shape: (number | string)[]): number[] {
  const dims = shape.flatMap((dim) =>
    bytesField(1, typeof dim === 'number' ? varintField(1, dim) : stringField(2, dim)),
  );
  const tensorType = [...varintField(1, elemType), ...bytesField(2, dims)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

function varint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

function varintField(field: number, value: number): number[] {
  return [...varint(field << 3), ...varint(value)];
}

function bytesField(field: number, bytes: number[]): number[] {
  return [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
}

function stringField(field: number, value: string): number[] {
  return bytesField(field, [...Buffer.from(value, 'utf8')]);
}
