import { stemmer } from 'stemmer';
import type { WordVectors } from './embeddings/word-vectors.js';
import { normalize } from './embeddings/embedding-provider.js';

/**
 * Query expansion by word-vector neighbours: each typed word adds the index terms whose word vectors
 * are nearest to its own, weighted below the typed words. This bridges the user's words to the
 * provider's ("apartments" → unit, "drive" → route) where WordNet and spelling do not reach.
 */
export interface NeighbourOptions {
  /** Neighbours added per typed word (0: none). */
  count: number;
  /** Weight of a neighbour next to a typed word (times its similarity). */
  weight: number;
  /** Cosine similarity under which a term is no neighbour. */
  minSimilarity: number;
}

/** Off unless the ranking's settings turn it on (chosen by cross-validation: bench/cross-validate.ts). */
export const NO_NEIGHBOURS: NeighbourOptions = { count: 0, weight: 0, minSimilarity: 1 };

/** Per word-vector file: each stem's most frequent word (the index holds stems, the vectors words). */
const wordsByStem = new WeakMap<WordVectors, Map<string, number>>();

function stemRanks(vectors: WordVectors): Map<string, number> {
  let ranks = wordsByStem.get(vectors);
  if (!ranks) {
    ranks = new Map();
    for (let rank = 0; rank < vectors.size; rank++) {
      const word = vectors.words[rank];
      if (!/^[a-z]{3,}$/.test(word)) {
        continue;
      }
      // The stemmer directly, not text-analysis's cached stem: 100k words would only churn its cache.
      const stem = stemmer(word);
      if (!ranks.has(stem)) {
        ranks.set(stem, rank);
      }
    }
    wordsByStem.set(vectors, ranks);
  }
  return ranks;
}

/**
 * The index terms that have a word vector, as one matrix of unit vectors. A lookup is a linear scan
 * (a few thousand terms × 100 dimensions at 1k functions, well under a millisecond per word); a
 * catalogue of 100k functions has some 30k such terms, still a few milliseconds per intent.
 */
export class WordNeighbours {
  private readonly terms: string[] = [];
  private readonly matrix: Float32Array;

  constructor(
    private readonly vectors: WordVectors,
    indexTerms: Iterable<string>,
  ) {
    const ranks = stemRanks(vectors);
    const found: Float32Array[] = [];
    for (const term of indexTerms) {
      const rank = ranks.get(term);
      if (rank !== undefined) {
        const vector = vectors.vector(vectors.words[rank]);
        if (vector) {
          this.terms.push(term);
          found.push(normalize(vector));
        }
      }
    }
    this.matrix = new Float32Array(found.length * vectors.dimensions);
    found.forEach((vector, i) => this.matrix.set(vector, i * vectors.dimensions));
  }

  /** Up to `count` index terms nearest to `word` (not its own stem), most similar first. */
  of(word: string, stem: string, count: number, minSimilarity: number): { term: string; similarity: number }[] {
    if (count <= 0) {
      return [];
    }
    const rank = this.vectors.rank(word) ?? stemRanks(this.vectors).get(stem);
    if (rank === undefined) {
      return [];
    }
    const query = normalize(this.vectors.vector(this.vectors.words[rank]) as Float32Array);
    const d = this.vectors.dimensions;
    const best: { term: string; similarity: number }[] = [];
    for (let i = 0; i < this.terms.length; i++) {
      let similarity = 0;
      const base = i * d;
      for (let j = 0; j < d; j++) {
        similarity += this.matrix[base + j] * query[j];
      }
      if (similarity < minSimilarity || this.terms[i] === stem) {
        continue;
      }
      if (best.length === count && similarity <= best[count - 1].similarity) {
        continue;
      }
      best.push({ term: this.terms[i], similarity });
      best.sort((a, b) => b.similarity - a.similarity || (a.term < b.term ? -1 : 1));
      if (best.length > count) {
        best.pop();
      }
    }
    return best;
  }
}
