import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { InvalidConfigError } from '../../config/app-config.js';
import type { EmbeddingProvider } from './embedding-provider.js';

/** The package that runs the model; ~470 MB with ONNX Runtime, so the operator installs it (not a dependency). */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers';

export interface LocalEmbeddingOptions {
  /** EMBEDDINGS_MODEL_DIR. */
  dir: string;
  batchSize: number;
  queryPrefix?: string;
  documentPrefix?: string;
}

/** The parts of @huggingface/transformers used here; typed locally because the package is optional. */
interface Transformers {
  env: {
    allowRemoteModels: boolean;
    allowLocalModels: boolean;
    localModelPath: string;
    useFSCache: boolean;
  };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options: {
      local_files_only: boolean;
      device: 'cpu';
      dtype: 'fp32' | 'q8';
      session_options: { intraOpNumThreads: number; interOpNumThreads: number };
    },
  ): Promise<FeatureExtractor>;
}

type FeatureExtractor = ((
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ dims: number[]; data: Float32Array }>) & { dispose(): Promise<void> };

/** Model files by the dtype transformers.js reads them under (fp32 → model.onnx, q8 → model_quantized.onnx). */
const MODEL_FILES = [
  { dtype: 'fp32', file: join('onnx', 'model.onnx') },
  { dtype: 'q8', file: join('onnx', 'model_quantized.onnx') },
] as const;
const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];

/**
 * A sentence-embedding model (all-MiniLM-L6-v2, bge-small, e5-small…) exported to ONNX and run
 * in-process by @huggingface/transformers: mean pooling over the tokens, then L2 normalisation — what
 * sentence-transformers does for these models. Files are only ever read from EMBEDDINGS_MODEL_DIR.
 */
export class LocalEmbeddingProvider implements EmbeddingProvider {
  /** `local:<folder>:<digest of the model's files>`: another model, or the same one changed, is re-embedded. */
  readonly model: string;
  /** Dense models give every pair of texts some similarity: nothing is cut off. */
  readonly minSimilarity = -1;
  private readonly dir: string;
  private readonly dtype: 'fp32' | 'q8';
  private loading?: Promise<FeatureExtractor>;

  constructor(private readonly options: LocalEmbeddingOptions) {
    this.dir = resolve(options.dir);
    const problems = REQUIRED_FILES.filter((file) => !existsSync(join(this.dir, file))).map(
      (file) => `EMBEDDINGS_MODEL_DIR=${JSON.stringify(options.dir)} has no ${file}`,
    );
    const modelFile = MODEL_FILES.find(({ file }) => existsSync(join(this.dir, file)));
    if (!modelFile) {
      problems.push(
        `EMBEDDINGS_MODEL_DIR=${JSON.stringify(options.dir)} has no ${MODEL_FILES.map(({ file }) => file).join(' or ')}`,
      );
    }
    if (problems.length > 0 || !modelFile) {
      throw new InvalidConfigError(problems);
    }
    assertPackageInstalled(TRANSFORMERS_PACKAGE);
    this.dtype = modelFile.dtype;
    const digest = hashFiles([...REQUIRED_FILES, modelFile.file].map((file) => join(this.dir, file)))
      .update(options.documentPrefix ?? '')
      .digest('hex');
    this.model = `local:${basename(this.dir)}:${digest.slice(0, 12)}`;
  }

  async embedDocuments(texts: string[]): Promise<Float32Array[]> {
    const prefix = this.options.documentPrefix ?? '';
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) {
      const batch = texts.slice(i, i + this.options.batchSize).map((text) => prefix + text);
      out.push(...(await this.embed(batch)));
    }
    return out;
  }

  async embedQuery(text: string): Promise<Float32Array> {
    const [vector] = await this.embed([(this.options.queryPrefix ?? '') + text]);
    return vector;
  }

  async close(): Promise<void> {
    const extractor = await this.loading?.catch(() => undefined);
    await extractor?.dispose();
  }

  private async embed(texts: string[]): Promise<Float32Array[]> {
    // Loaded on first use: commands that never search never pay for the model.
    this.loading ??= this.load();
    const extractor = await this.loading;
    const output = await extractor(texts, { pooling: 'mean', normalize: true });
    const [rows, dimensions] = output.dims;
    const vectors: Float32Array[] = [];
    for (let row = 0; row < rows; row++) {
      vectors.push(output.data.slice(row * dimensions, (row + 1) * dimensions));
    }
    return vectors;
  }

  private async load(): Promise<FeatureExtractor> {
    let transformers: Transformers;
    try {
      // A variable specifier: the build and type check do not need the optional package.
      const specifier: string = TRANSFORMERS_PACKAGE;
      transformers = (await import(specifier)) as Transformers;
    } catch (error) {
      throw new Error(`${missingPackageMessage(TRANSFORMERS_PACKAGE)} (${(error as Error).message})`);
    }
    const { env } = transformers;
    // Never the Hub, never a cache written next to the package: the folder is read as it is. An
    // absolute path is not a Hub id, so transformers.js reads it directly rather than under localModelPath.
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = dirname(this.dir);
    env.useFSCache = false;
    try {
      return await transformers.pipeline('feature-extraction', this.dir, {
        local_files_only: true,
        device: 'cpu',
        dtype: this.dtype,
        // One thread: the service shares its cores with requests, and catalogue embedding runs in the background.
        session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
      });
    } catch (error) {
      throw new Error(
        `the model in EMBEDDINGS_MODEL_DIR=${JSON.stringify(this.options.dir)} could not be loaded: ${(error as Error).message}`,
      );
    }
  }
}

/** Fails at start, naming the setting and the remedy, when the optional package is not installed. */
export function assertPackageInstalled(name: string): void {
  try {
    createRequire(import.meta.url).resolve(name);
  } catch {
    throw new InvalidConfigError([missingPackageMessage(name)]);
  }
}

function missingPackageMessage(name: string): string {
  return (
    `EMBEDDINGS_PROVIDER=local needs the optional package ${name}, which is not installed: ` +
    `install ${name} (ONNXRUNTIME_NODE_INSTALL=skip npm install ${name}@4.3.1; it is not among Patchbay's dependencies)`
  );
}

/** SHA-256 of the files' contents, read in chunks: model files may be hundreds of megabytes. */
function hashFiles(paths: string[]) {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (const path of paths) {
    const fd = openSync(path, 'r');
    try {
      let read: number;
      while ((read = readSync(fd, chunk, 0, chunk.length, null)) > 0) {
        hash.update(chunk.subarray(0, read));
      }
    } finally {
      closeSync(fd);
    }
    // Files are delimited, so that bytes moving from one file to the next change the digest.
    hash.update('\0');
  }
  return hash;
}
