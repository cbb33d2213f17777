/**
 * A minimal writer of ONNX model files: the protobuf messages a graph of standard operators needs
 * (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto), with the field
 * numbers of onnx.proto. No library: protobufjs is only a transitive dependency here, and no installed
 * package ships the ONNX schema to load into it; the encoding itself is a few lines (varints and
 * length-delimited fields). The same graph gives the same bytes.
 */

/** TensorProto.DataType values used here. */
export const FLOAT = 1;
export const INT64 = 7;

/** One protobuf message being written: fields in the order they are added. */
class Message {
  private readonly parts: Uint8Array[] = [];

  varint(field: number, value: number | bigint): this {
    this.key(field, 0);
    this.parts.push(varint(value));
    return this;
  }

  float(field: number, value: number): this {
    this.key(field, 5);
    const bytes = Buffer.alloc(4);
    bytes.writeFloatLE(value);
    this.parts.push(bytes);
    return this;
  }

  bytes(field: number, value: Uint8Array | string | Message): this {
    const data =
      typeof value === 'string' ? Buffer.from(value, 'utf8') : value instanceof Message ? value.finish() : value;
    this.key(field, 2);
    this.parts.push(varint(data.length), data);
    return this;
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }

  private key(field: number, wireType: number): void {
    this.parts.push(varint((field << 3) | wireType));
  }
}

/** Base-128 varint; a negative int64 takes its two's complement (10 bytes), as protobuf writes it. */
function varint(value: number | bigint): Uint8Array {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    out.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Uint8Array.from(out);
}

export type Attribute = number | number[] | { float: number };

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, Attribute>;
}

export interface OnnxTensor {
  name: string;
  dims: number[];
  data: Float32Array | BigInt64Array;
}

export interface OnnxValue {
  name: string;
  type: typeof FLOAT | typeof INT64;
  /** A number: a fixed size; a string: a dimension named by the caller (any size). */
  shape: (number | string)[];
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValue[];
  outputs: OnnxValue[];
}

/** AttributeProto.AttributeType values. */
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

function attribute(name: string, value: Attribute): Message {
  const message = new Message().bytes(1, name);
  if (typeof value === 'number') {
    return message.varint(3, value).varint(20, ATTRIBUTE_INT);
  }
  if (Array.isArray(value)) {
    value.forEach((item) => message.varint(8, item));
    return message.varint(20, ATTRIBUTE_INTS);
  }
  return message.float(2, value.float).varint(20, ATTRIBUTE_FLOAT);
}

function node({ op, inputs, outputs, attributes = {} }: OnnxNode): Message {
  const message = new Message();
  inputs.forEach((input) => message.bytes(1, input));
  outputs.forEach((output) => message.bytes(2, output));
  message.bytes(4, op);
  Object.entries(attributes).forEach(([name, value]) => message.bytes(5, attribute(name, value)));
  return message;
}

function tensor({ name, dims, data }: OnnxTensor): Message {
  const message = new Message();
  dims.forEach((dim) => message.varint(1, dim));
  // raw_data is little-endian, as typed arrays are on every platform Node runs on here.
  return message
    .varint(2, data instanceof Float32Array ? FLOAT : INT64)
    .bytes(8, name)
    .bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

function valueInfo({ name, type, shape }: OnnxValue): Message {
  const dims = new Message();
  for (const dim of shape) {
    dims.bytes(1, typeof dim === 'number' ? new Message().varint(1, dim) : new Message().bytes(2, dim));
  }
  const tensorType = new Message().varint(1, type).bytes(2, dims);
  return new Message().bytes(1, name).bytes(2, new Message().bytes(1, tensorType));
}

/** The bytes of an ONNX model (IR version 8, default domain at `opset`) holding one graph. */
export function writeOnnxModel(graph: OnnxGraph, options: { opset: number; producer: string }): Uint8Array {
  const body = new Message();
  graph.nodes.forEach((item) => body.bytes(1, node(item)));
  body.bytes(2, graph.name);
  graph.initializers.forEach((item) => body.bytes(5, tensor(item)));
  graph.inputs.forEach((item) => body.bytes(11, valueInfo(item)));
  graph.outputs.forEach((item) => body.bytes(12, valueInfo(item)));
  return new Message()
    .varint(1, 8)
    .bytes(2, options.producer)
    .bytes(7, body)
    .bytes(8, new Message().bytes(1, '').varint(2, options.opset))
    .finish();
}
