import type { WordNet } from '../wordnet.js';
import type { EmbeddingProvider } from './embedding-provider.js';
import { HASHED_EMBEDDING_DEFAULTS, hashedEmbedding } from './hashed-embedding.js';

/** Bumped whenever the features or their weights change: stored vectors of an older version are recomputed. */
const VERSION = 2;

/** The hashed features alone: the embedding when the word vectors are missing (src/search/search.module.ts). */
export class OfflineEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly minSimilarity = 0.12;

  constructor(private readonly wordnet: WordNet | undefined) {
    this.model = `patchbay-hashed-v${VERSION}-${HASHED_EMBEDDING_DEFAULTS.dimensions}${wordnet ? '-wordnet' : ''}`;
  }

  embed(text: string): Float32Array {
    return hashedEmbedding(text, HASHED_EMBEDDING_DEFAULTS, this.wordnet);
  }
}
