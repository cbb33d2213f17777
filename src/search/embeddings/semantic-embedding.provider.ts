import type { WordNet } from '../wordnet.js';
import type { EmbeddingProvider } from './embedding-provider.js';
import { HASHED_EMBEDDING_DEFAULTS, hashedEmbedding } from './hashed-embedding.js';
import { OfflineEmbeddingProvider } from './offline-embedding.provider.js';
import { SENTENCE_VECTOR_DEFAULTS, sentenceVector, type SentenceVectorOptions, WordVectors } from './word-vectors.js';

export interface SemanticEmbeddingOptions extends SentenceVectorOptions {
  /** Share of the cosine similarity that comes from the word-vector part (the rest: hashed features). */
  semanticShare: number;
}

/**
 * Half of the cosine from the word vectors: chosen by cross-validation on the dev sets among 222
 * settings (share, components removed, a); the vector's weight next to the lexical score is
 * DEFAULT_ENGINE_OPTIONS's, chosen by `npm run eval:search`'s cross-validation.
 */
export const SEMANTIC_EMBEDDING_DEFAULTS: SemanticEmbeddingOptions = {
  ...SENTENCE_VECTOR_DEFAULTS,
  semanticShare: 0.5,
};

/**
 * The default offline embedding when the word vectors are installed: the hashed features (spelling,
 * word forms, WordNet synonyms) and a sentence vector from pre-trained word vectors (meaning: "badge"
 * near "credential"), side by side in one vector. Each part is unit length and scaled by the square
 * root of its share, so the cosine of two such vectors is the share-weighted sum of the parts' cosines.
 */
export class SemanticEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly minSimilarity = 0.12;

  constructor(
    private readonly vectors: WordVectors,
    private readonly wordnet: WordNet | undefined,
    private readonly options: SemanticEmbeddingOptions = SEMANTIC_EMBEDDING_DEFAULTS,
  ) {
    const hashed = new OfflineEmbeddingProvider(wordnet).model;
    this.model = `${hashed}+${vectors.id}-sif${options.sifA}-pc${options.removeComponents}-s${options.semanticShare}`;
  }

  embed(text: string): Float32Array {
    const hashed = hashedEmbedding(text, HASHED_EMBEDDING_DEFAULTS, this.wordnet);
    const semantic = sentenceVector(text, this.vectors, this.options);
    const out = new Float32Array(hashed.length + semantic.length);
    const a = Math.sqrt(1 - this.options.semanticShare);
    const b = Math.sqrt(this.options.semanticShare);
    hashed.forEach((value, i) => (out[i] = a * value));
    semantic.forEach((value, i) => (out[hashed.length + i] = b * value));
    return out;
  }
}
