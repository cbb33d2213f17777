import type { WordNet } from '../wordnet.js';
import type { EmbeddingProvider } from './embedding-provider.js';
import { HASHED_EMBEDDING_DEFAULTS, hashedEmbedding, type HashedEmbeddingOptions } from './hashed-embedding.js';

/** Bumped whenever the features or their weights change: stored vectors of an older version are recomputed. */
const VERSION = 2;

/** The default: needs no network and no model files. */
export class OfflineEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly minSimilarity = 0.12;

  constructor(
    private readonly wordnet: WordNet | undefined,
    private readonly options: HashedEmbeddingOptions = HASHED_EMBEDDING_DEFAULTS,
  ) {
    this.model = `patchbay-hashed-v${VERSION}-${options.dimensions}${wordnet ? '-wordnet' : ''}`;
  }

  embed(text: string): Float32Array {
    return hashedEmbedding(text, this.options, this.wordnet);
  }
}
