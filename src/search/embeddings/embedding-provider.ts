/** Turns texts into vectors. Implementations: offline (hashed features) and any OpenAI-compatible endpoint. */
export interface EmbeddingProvider {
  /**
   * Identifies the model and its settings; stored with every embedding, so that a change of model
   * (or of dimensions) makes the stored vectors stale instead of silently mixing spaces.
   */
  readonly model: string;
  /**
   * Cosine similarity below which a document is not considered related to a query at all: such
   * documents are ranked by name after the related ones rather than by noise.
   */
  readonly minSimilarity: number;
  /**
   * Weight of the vector similarity next to the lexical score, for a provider whose vectors were
   * tuned with one of their own; absent: the engine's default.
   */
  readonly vectorWeight?: number;
  /** Vectors of catalogue documents, in the order of `texts`. */
  embedDocuments(texts: string[]): Promise<Float32Array[]>;
  /** Vector of a search intent. */
  embedQuery(text: string): Promise<Float32Array>;
  close?(): Promise<void>;
}

export const EMBEDDING_PROVIDER = Symbol('EMBEDDING_PROVIDER');

/** Scales a vector to unit length in place (cosine similarity then is a dot product). */
export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) {
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) {
    for (let i = 0; i < vector.length; i++) {
      vector[i] /= norm;
    }
  }
  return vector;
}
