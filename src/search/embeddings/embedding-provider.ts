/**
 * Turns texts into vectors, in process: the offline embedding (hashed features, beside the shipped
 * word vectors' sentence vector when they are present). Catalogue texts and intents are embedded alike.
 */
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
  /** Vector of a catalogue document's text or of a search intent. */
  embed(text: string): Float32Array;
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
