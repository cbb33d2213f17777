/**
 * Dot products of 8-bit document vectors with a 16-bit query, many documents per call, in
 * WebAssembly SIMD: 16 dimensions per step (sign-extended to 16 bits, multiplied and added pairwise
 * into 32-bit lanes by `i32x4.dot_i16x8_s`).
 *
 * Why by hand: exact similarities are computed for every allowed document up to 3,000 of them, so at
 * 987 functions each search scored 351,000 products. In JavaScript that took 0.55–0.72 ms per pass
 * (typed arrays, 4 accumulators or not) and was more than half of the search engine's CPU in a profile of
 * 900 searches (2026-11-28); this kernel does the same pass in a tenth of that (see the spec). No npm
 * package offers an int8 dot product over our own layout without a native build: the vector-search
 * libraries (usearch, hnswlib-node, faiss-node) bring their own index and storage.
 *
 * The module is 238 bytes, written out below with its instructions; it reads a memory the caller
 * creates. Layout of a row: `stride` bytes (the dimensions rounded up to 16, the rest zeros).
 */

/** dots(data, stride, query, ids, n, out): out[k] = Σ_j data[ids[k] × stride + j] × query[j], as i32. */
const BODY = [
  // locals: 3 × i32 (6 k, 7 row, 8 j), 2 × v128 (9 acc, 10 v)
  0x02, 0x03, 0x7f, 0x02, 0x7b,
  // block, loop (over the ids)
  0x02, 0x40, 0x03, 0x40,
  // if k >= n: leave the block
  0x20, 0x06, 0x20, 0x04, 0x4f, 0x0d, 0x01,
  // row = data + ids[k] × stride
  0x20, 0x00, 0x20, 0x03, 0x20, 0x06, 0x41, 0x02, 0x74, 0x6a, 0x28, 0x02, 0x00, 0x20, 0x01, 0x6c, 0x6a, 0x21, 0x07,
  // acc = 0 (v128.const of 16 zero bytes); j = 0
  0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x21, 0x09, 0x41, 0x00, 0x21, 0x08,
  // loop (over the row, 16 bytes a step)
  0x03, 0x40,
  // v = v128.load(row + j)
  0x20, 0x07, 0x20, 0x08, 0x6a, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x0a,
  // acc
  0x20, 0x09,
  // + dot(extend_low_s(v), v128.load(query + 2j))
  0x20, 0x0a, 0xfd, 0x87, 0x01, 0x20, 0x02, 0x20, 0x08, 0x41, 0x01, 0x74, 0x6a, 0xfd, 0x00, 0x00, 0x00, 0xfd, 0xba,
  0x01, 0xfd, 0xae, 0x01,
  // + dot(extend_high_s(v), v128.load(query + 2j + 16))
  0x20, 0x0a, 0xfd, 0x88, 0x01, 0x20, 0x02, 0x20, 0x08, 0x41, 0x01, 0x74, 0x6a, 0xfd, 0x00, 0x00, 0x10, 0xfd, 0xba,
  0x01, 0xfd, 0xae, 0x01,
  // → acc
  0x21, 0x09,
  // j += 16; again while j < stride
  0x20, 0x08, 0x41, 0x10, 0x6a, 0x22, 0x08, 0x20, 0x01, 0x49, 0x0d, 0x00,
  // end of the row's loop
  0x0b,
  // out[k] = the sum of acc's four lanes
  0x20, 0x05, 0x20, 0x06, 0x41, 0x02, 0x74, 0x6a, 0x20, 0x09, 0xfd, 0x1b, 0x00, 0x20, 0x09, 0xfd, 0x1b, 0x01, 0x6a,
  0x20, 0x09, 0xfd, 0x1b, 0x02, 0x6a, 0x20, 0x09, 0xfd, 0x1b, 0x03, 0x6a, 0x36, 0x02, 0x00,
  // k += 1; next id
  0x20, 0x06, 0x41, 0x01, 0x6a, 0x21, 0x06, 0x0c, 0x00,
  // end loop, end block, end function
  0x0b, 0x0b, 0x0b,
];

/** `value` as an unsigned LEB128 number. */
function leb(value: number): number[] {
  const out: number[] = [];
  do {
    out.push((value & 0x7f) | (value >= 0x80 ? 0x80 : 0));
    value >>>= 7;
  } while (value > 0);
  return out;
}

const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (text: string) => [text.length, ...Array.from(text, (c) => c.charCodeAt(0))];

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // magic, version 1
  ...section(1, [0x01, 0x60, 0x06, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]), // one type: (i32 × 6) → ()
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x00]), // import env.memory (≥ 0 pages)
  ...section(3, [0x01, 0x00]), // one function, of type 0
  ...section(7, [0x01, ...name('dots'), 0x00, 0x00]), // export it as "dots"
  ...section(10, [0x01, ...leb(BODY.length), ...BODY]), // its body
]);

/** The part of WebAssembly used here (its types ship with TypeScript's DOM library, which this project does not load). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

type Dots = (data: number, stride: number, query: number, ids: number, n: number, out: number) => void;

/** The compiled module, or undefined where WebAssembly SIMD is not available (the JavaScript loop serves). */
const compiled = wasm.validate(MODULE) ? new wasm.Module(MODULE) : undefined;

/** Whether this runtime runs the kernel (Node.js has WebAssembly SIMD since 16.4). */
export const KERNEL_AVAILABLE = compiled !== undefined;

const PAGE = 65_536;
/** The query's largest magnitude becomes this: 32,767 × 127 × 4,096 dimensions stay below 2^31. */
const QUERY_MAX = 32_767;

/**
 * A table's rows and the buffers a call needs, in one WebAssembly memory: the query (16-bit), the
 * ids, the results, then `count` rows of `stride` bytes.
 */
export class Int8Rows {
  readonly stride: number;
  readonly data: Int8Array;
  private readonly query: Int16Array;
  private readonly ids: Int32Array;
  private readonly out: Int32Array;
  private readonly dots?: Dots;
  private readonly offsets: { query: number; ids: number; out: number; data: number };

  /** `kernel` false: the JavaScript loop even where WebAssembly SIMD is available (for the tests). */
  constructor(
    readonly count: number,
    readonly dimensions: number,
    kernel = true,
  ) {
    if (dimensions > 4096) {
      throw new RangeError(`Vectors of ${dimensions} dimensions: at most 4,096 are kept`);
    }
    const stride = Math.ceil(dimensions / 16) * 16;
    this.stride = stride;
    const query = 0;
    const ids = query + stride * 2;
    const out = ids + count * 4;
    const data = out + count * 4;
    const bytes = data + count * stride;
    this.offsets = { query, ids, out, data };
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    const buffer = memory.buffer;
    this.query = new Int16Array(buffer, query, stride);
    this.ids = new Int32Array(buffer, ids, count);
    this.out = new Int32Array(buffer, out, count);
    this.data = new Int8Array(buffer, data, count * stride);
    if (compiled && kernel) {
      this.dots = new wasm.Instance(compiled, { env: { memory } }).exports.dots as Dots;
    }
  }

  /** Row `id` (its `dimensions` values, without the padding). */
  row(id: number): Int8Array {
    return this.data.subarray(id * this.stride, id * this.stride + this.dimensions);
  }

  /**
   * The dot product of each id's row with `vector` (of `dimensions` values), into `into[k]` for
   * ids[k]: the rows' 8-bit values times the vector quantised to 16 bits (relative error of the
   * vector's values below 2·10⁻⁵).
   */
  dotProducts(ids: readonly number[], vector: Float32Array, into: Float64Array): void {
    let max = 0;
    for (let i = 0; i < this.dimensions; i++) {
      max = Math.max(max, Math.abs(vector[i]));
    }
    if (max === 0) {
      into.fill(0, 0, ids.length);
      return;
    }
    const scale = QUERY_MAX / max;
    for (let i = 0; i < this.dimensions; i++) {
      this.query[i] = Math.round(vector[i] * scale);
    }
    const n = ids.length;
    if (!this.dots) {
      this.dotProductsInJs(ids, into, scale);
      return;
    }
    for (let k = 0; k < n; k++) {
      this.ids[k] = ids[k];
    }
    this.dots(this.offsets.data, this.stride, this.offsets.query, this.offsets.ids, n, this.offsets.out);
    for (let k = 0; k < n; k++) {
      into[k] = this.out[k] / scale;
    }
  }

  private dotProductsInJs(ids: readonly number[], into: Float64Array, scale: number): void {
    const { data, query, stride, dimensions } = this;
    for (let k = 0; k < ids.length; k++) {
      const at = ids[k] * stride;
      let sum = 0;
      for (let i = 0; i < dimensions; i++) {
        sum += data[at + i] * query[i];
      }
      into[k] = sum / scale;
    }
  }
}
